--[[
  spec/nn/utils_spec.lua — nn.utils (lua/torch/nn/utils.lua): clip_grad_norm_ and clip_grad_value_
  against PyTorch, and the grad_flow report.

  Covers: clip_grad_norm_ with norm types 2, 1, inf and 3, clipping and not clipping (max_norm
  above the total), a parameter without .grad (skipped), one tensor instead of a list, no grads
  at all, error_if_nonfinite; clip_grad_value_; grad_flow on a small model with a detached
  branch (no grad), a zeroed branch (zero), a frozen layer, thresholds (vanishing/exploding),
  and its printed form; argument errors.

  The gradients are set by backward() of sum(p * G) (so p.grad = G exactly) from literal values
  shared with one pytorch.run. Tolerance: float32, atol 1e-6 + rtol 1e-5 for norms and grads.

  Run:  build/ltorch /usr/bin/busted spec/nn/utils_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local TOL = { atol = 1e-6, rtol = 1e-5 }

-- Gradients for three parameters of shapes (3, 4), (4,), (2, 2); a fourth parameter gets none.
local function values(n, phase, scale)
  local v = {}
  for i = 1, n do v[i] = math.floor(math.sin(i * 1.7 + phase) * scale * 1000) / 1000 end
  return v
end
local G = { values(12, 0.3, 2), values(4, 1.1, 5), values(4, 2.9, 0.5) }
local SHAPES = { { 3, 4 }, { 4 }, { 2, 2 } }

-- { max_norm, norm_type (nil = default 2; "inf" = math.huge) }
local CLIPS = { { 1.0 }, { 0.5, 1 }, { 0.25, "inf" }, { 100.0 }, { 2.0, 3 } }

local function params_with_grads()
  local ps = {}
  for i, g in ipairs(G) do
    local p = torch.ones(SHAPES[i], { requires_grad = true })
    local l = (p * torch.tensor(g, { dtype = torch.float32 }):view(SHAPES[i])):sum()
    l:backward()
    ps[i] = p
  end
  ps[#ps + 1] = torch.ones(3, { requires_grad = true })  -- never used: no .grad
  return ps
end

describe("nn.utils.clip_grad_norm_ and clip_grad_value_", function()
  local ref

  setup(function()
    local code = {
      "import torch.nn.utils as U",
      "G = " .. py(G),
      "S = " .. py(SHAPES),
      "def params():",
      "    ps = []",
      "    for g, s in zip(G, S):",
      "        p = torch.ones(s, requires_grad=True)",
      "        (p * torch.tensor(g, dtype=torch.float32).view(s)).sum().backward()",
      "        ps.append(p)",
      "    ps.append(torch.ones(3, requires_grad=True))",
      "    return ps",
      "out = {'norm': [], 'value': []}",
    }
    for _, c in ipairs(CLIPS) do
      local nt = c[2] == "inf" and "float('inf')" or (c[2] and py(c[2]) or "2")
      code[#code + 1] = "ps = params()"
      code[#code + 1] = ("n = U.clip_grad_norm_(ps, %s, norm_type=%s)"):format(py(c[1]), nt)
      code[#code + 1] = "out['norm'].append([n.item(), [p.grad.reshape(-1).tolist() for p in ps[:3]]])"
    end
    code[#code + 1] = "ps = params(); U.clip_grad_value_(ps, 0.8)"
    code[#code + 1] = "out['value'] = [p.grad.reshape(-1).tolist() for p in ps[:3]]"
    code[#code + 1] = "ps = params(); out['single'] = U.clip_grad_norm_(ps[0], 1.0).item()"
    code[#code + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, c in ipairs(CLIPS) do
    it(("clip_grad_norm_(params, %s, norm_type=%s) matches PyTorch"):format(c[1], tostring(c[2] or 2)), function()
      local ps = params_with_grads()
      local nt = c[2] == "inf" and math.huge or c[2]
      local total = nn.utils.clip_grad_norm_(ps, c[1], nt and { norm_type = nt } or nil)
      assert.is_true(torch.is_tensor(total))
      assert.are.equal(0, total:dim())
      approx.check(total:item(), ref.norm[i][1], TOL)
      for k = 1, 3 do approx.check(ps[k].grad:reshape(-1), ref.norm[i][2][k], TOL) end
      assert.is_nil(ps[4].grad)
    end)
  end

  it("accepts one tensor, the string 'inf', and no grads at all", function()
    local ps = params_with_grads()
    approx.check(nn.utils.clip_grad_norm_(ps[1], 1.0):item(), ref.single, TOL)
    local a = params_with_grads()
    local b = params_with_grads()
    approx.check(nn.utils.clip_grad_norm_(a, 0.25, { norm_type = "inf" }),
      nn.utils.clip_grad_norm_(b, 0.25, { norm_type = math.huge }):item(), 0)
    local none = nn.utils.clip_grad_norm_({ torch.ones(2, { requires_grad = true }) }, 1.0)
    assert.are.equal(0, none:item())
    assert.are.equal(torch.float32, none.dtype)
  end)

  it("scales the parameters' own .grad (through model:parameters())", function()
    local lin = nn.Linear(3, 2)
    local l = lin(torch.ones(4, 3)):sum()
    l:backward()
    local before = lin.weight.grad:norm():item()
    nn.utils.clip_grad_norm_(lin:parameters(), 0.1)
    assert(before > 0.1)
    local after = torch.linalg.vector_norm(torch.stack({ lin.weight.grad:norm(), lin.bias.grad:norm() })):item()
    approx.check(after, 0.1, { atol = 1e-6, rtol = 1e-5 })
  end)

  it("raises on a non-finite total norm only when asked", function()
    local p = torch.ones(2, { requires_grad = true })
    local l = (p * torch.tensor({ math.huge, 1.5 })):sum()
    l:backward()
    assert.has_error(function() nn.utils.clip_grad_norm_({ p }, 1.0, { error_if_nonfinite = true }) end,
      "clip_grad_norm_: the total norm of order 2 for gradients from `parameters` is non-finite, so it cannot be "
      .. "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set error_if_nonfinite = false")
    assert.are.equal(math.huge, nn.utils.clip_grad_norm_({ p }, 1.0):item())
  end)

  it("clip_grad_value_ matches PyTorch", function()
    local ps = params_with_grads()
    assert.is_nil(nn.utils.clip_grad_value_(ps, 0.8))
    for k = 1, 3 do approx.check(ps[k].grad:reshape(-1), ref.value[k], TOL) end
    assert.is_nil(ps[4].grad)
  end)

  it("checks its arguments", function()
    assert.has_error(function() nn.utils.clip_grad_norm_(nil, 1.0) end,
      "bad argument #1 to 'clip_grad_norm_' (array of tensors expected, got nil)")
    assert.has_error(function() nn.utils.clip_grad_norm_({ 1 }, 1.0) end,
      "bad argument #1 to 'clip_grad_norm_' (array of tensors expected, item 1 is a number)")
    assert.has_error(function() nn.utils.clip_grad_norm_({}, "1") end,
      "bad argument #2 to 'clip_grad_norm_' (number expected, got string)")
    assert.has_error(function() nn.utils.clip_grad_norm_({}, 1, { norm_type = {} }) end,
      "clip_grad_norm_: norm_type must be a number (math.huge for inf), got table")
    assert.has_error(function() nn.utils.clip_grad_value_({}, nil) end,
      "bad argument #2 to 'clip_grad_value_' (number expected, got nil)")
  end)
end)

describe("nn.utils.grad_flow", function()
  local Net = nn.Module:extend("GradFlowNet")
  function Net:__init()
    self.fc1 = nn.Linear(4, 8)
    self.fc2 = nn.Linear(8, 2)
    self.branch = nn.Linear(4, 2)   -- its output is detached: no gradient reaches it
    self.dead = nn.Linear(4, 2)     -- multiplied by zero: zero gradient
    self.frozen = nn.Linear(4, 2)
    self.frozen:requires_grad_(false)
  end
  function Net:forward(x)
    local h = self.fc2(self.fc1(x):relu())
    return h + self.branch(x):detach() + self.dead(x) * 0 + self.frozen(x)
  end

  local function run()
    torch.manual_seed(0)
    local net = Net()
    local l = net(torch.randn(5, 4)):pow(2):sum()
    l:backward()
    return net
  end

  it("reports every parameter with its norms and status", function()
    local net = run()
    local report = nn.utils.grad_flow(net)
    local names, status = {}, {}
    for i, e in ipairs(report) do names[i], status[e.name] = e.name, e.status end
    assert.are.same({ "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "branch.weight", "branch.bias",
      "dead.weight", "dead.bias", "frozen.weight", "frozen.bias" }, names)
    assert.are.same({ ["fc1.weight"] = "ok", ["fc1.bias"] = "ok", ["fc2.weight"] = "ok", ["fc2.bias"] = "ok",
      ["branch.weight"] = "no grad", ["branch.bias"] = "no grad", ["dead.weight"] = "zero", ["dead.bias"] = "zero",
      ["frozen.weight"] = "frozen", ["frozen.bias"] = "frozen" }, status)
    local e = report[1]
    approx.check(e.grad_norm, net.fc1.weight.grad:norm():item(), TOL)
    approx.check(e.param_norm, net.fc1.weight:norm():item(), TOL)
    approx.check(e.ratio, e.grad_norm / e.param_norm, 0)
    assert.are.equal("[8, 4]", e.shape)
    assert.is_nil(report[5].grad_norm)
    assert.is_nil(report[5].ratio)
    assert.are.equal(4, #report.flagged)
    assert.are.equal("branch.weight", report.flagged[1].name)
  end)

  it("prints a table that marks the flagged parameters", function()
    local report = nn.utils.grad_flow(run())
    local text = tostring(report)
    assert.are.equal(text, nn.utils.format_grad_flow(report))
    local lines = {}
    for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal("grad flow: 10 parameters, 4 flagged", lines[1])
    assert.truthy(lines[2]:find("^  parameter%s+shape%s+grad_norm%s+param_norm%s+ratio%s+status$"))
    assert.truthy(lines[3]:find("^  fc1%.weight%s+%[8, 4%]%s+%d%.%d%d%de[+-]%d%d%s+.* ok$"))
    assert.truthy(lines[7]:find("^  branch%.weight%s+%[2, 4%]%s+%-%s+%d%.%d%d%de[+-]%d%d%s+%-%s+NO GRAD  <%-%-$"))
    assert.truthy(lines[9]:find("ZERO  <%-%-$"))
    assert.truthy(lines[11]:find(" frozen$"))
  end)

  it("flags vanishing and exploding gradients by the given thresholds", function()
    local net = run()
    local big = nn.utils.grad_flow(net, { exploding = 1e-9 })
    local small = nn.utils.grad_flow(net, { vanishing = 1e9 })
    assert.are.equal("exploding", big[1].status)
    assert.are.equal("vanishing", small[1].status)
    assert.are.equal("no grad", small[5].status)
    net.fc1.bias.grad:fill_(0 / 0)
    assert.are.equal("nonfinite", nn.utils.grad_flow(net)[2].status)
  end)

  it("handles a module without parameters and rejects non-modules", function()
    local report = nn.utils.grad_flow(nn.ReLU())
    assert.are.equal(0, #report)
    assert.are.equal("grad flow: 0 parameters, 0 flagged\n  parameter  shape  grad_norm  param_norm  ratio  status", tostring(report))
    assert.has_error(function() nn.utils.grad_flow({}) end, "bad argument #1 to 'grad_flow' (Module expected, got table)")
    assert.has_error(function() nn.utils.format_grad_flow(1) end,
      "bad argument #1 to 'format_grad_flow' (a report from nn.utils.grad_flow expected)")
  end)
end)
