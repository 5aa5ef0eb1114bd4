--[[
  spec/nn/lazy_spec.lua — the lazy modules (lua/torch/nn/lazy.lua) against PyTorch.

  Per case, both sides: manual_seed(seed); build the Lazy module; its repr; one forward in
  training mode on the same input (which infers the size and makes the module the ordinary
  class); the repr after, the state_dict (keys, order, shapes, values), the output, and the
  gradients of input and parameters from sum(y * linspace(-1, 1)). Init and the forward are
  compared bit for bit (tolerance 0: the same libtorch ops on the same generator state), the
  gradients to 1e-6 (float32). An SGD optimizer built on the parameters before the first
  forward must step as PyTorch's. Also the UninitializedParameter errors, and state_dict / load_state_dict
  before the first forward (the six lazy convolutions, LazyLinear, LazyBatchNorm1d): PyTorch's keys with
  uninitialized entries; loading real tensors materializes the module, whose output then equals PyTorch's.

  Run:  build/ltorch /usr/bin/busted spec/nn/lazy_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local GRAD_TOL = { atol = 1e-6, rtol = 1e-6 }

local CASES = {
  { "LazyLinear", function() return nn.LazyLinear(3) end, "nn.LazyLinear(3)", { 2, 5 } },
  { "LazyLinear no bias, 3-d input", function() return nn.LazyLinear(4, false) end, "nn.LazyLinear(4, False)", { 2, 3, 6 } },
  { "LazyConv1d", function() return nn.LazyConv1d(4, 3, { padding = 1 }) end, "nn.LazyConv1d(4, 3, padding=1)", { 2, 3, 7 } },
  { "LazyConv2d groups, unbatched", function() return nn.LazyConv2d(4, 3, { groups = 2, bias = false }) end,
    "nn.LazyConv2d(4, 3, groups=2, bias=False)", { 6, 5, 5 } },
  { "LazyConv3d", function() return nn.LazyConv3d(2, 2, 1) end, "nn.LazyConv3d(2, 2, 1)", { 1, 3, 3, 4, 3 } },
  { "LazyConvTranspose1d", function() return nn.LazyConvTranspose1d(3, 3, 2) end, "nn.LazyConvTranspose1d(3, 3, 2)", { 2, 4, 5 } },
  { "LazyConvTranspose2d", function() return nn.LazyConvTranspose2d(4, 2, { groups = 2 }) end,
    "nn.LazyConvTranspose2d(4, 2, groups=2)", { 2, 2, 3, 3 } },
  { "LazyConvTranspose3d", function() return nn.LazyConvTranspose3d(2, 2) end, "nn.LazyConvTranspose3d(2, 2)", { 1, 3, 2, 3, 2 } },
  { "LazyBatchNorm1d", function() return nn.LazyBatchNorm1d() end, "nn.LazyBatchNorm1d()", { 4, 3 } },
  { "LazyBatchNorm2d momentum", function() return nn.LazyBatchNorm2d(1e-3, 0.3) end, "nn.LazyBatchNorm2d(1e-3, 0.3)",
    { 2, 3, 4, 4 } },
  { "LazyBatchNorm3d no affine", function() return nn.LazyBatchNorm3d({ affine = false }) end,
    "nn.LazyBatchNorm3d(affine=False)", { 2, 2, 3, 2, 2 } },
  { "LazyInstanceNorm1d", function() return nn.LazyInstanceNorm1d() end, "nn.LazyInstanceNorm1d()", { 2, 3, 5 } },
  { "LazyInstanceNorm2d", function() return nn.LazyInstanceNorm2d({ track_running_stats = false }) end,
    "nn.LazyInstanceNorm2d(track_running_stats=False)", { 2, 3, 4, 4 } },
  { "LazyInstanceNorm3d", function() return nn.LazyInstanceNorm3d() end, "nn.LazyInstanceNorm3d()", { 2, 2, 3, 2, 2 } },
  { "LazyLinear made float64 before the first forward", function() return nn.LazyLinear(3):double() end,
    "nn.LazyLinear(3).double()", { 2, 4 }, "float64" },
  { "LazyConv1d built as float64", function() return nn.LazyConv1d(2, 2, { dtype = torch.float64 }) end,
    "nn.LazyConv1d(2, 2, dtype=torch.float64)", { 1, 3, 4 }, "float64" },
}

local DRIVER = [[
import torch.nn as nn
def run(seed, ctor, x, dt):
    torch.manual_seed(seed)
    m = eval(ctor)
    r = {'repr0': repr(m)}
    x = torch.tensor(x, dtype=getattr(torch, dt), requires_grad=True)
    y = m(x)
    r['repr1'] = repr(m)
    r['cls'] = type(m).__name__
    r['sd'] = [[k, list(v.shape), v.tolist()] for k, v in m.state_dict().items()]
    r['y'] = y.tolist()
    (y * torch.linspace(-1, 1, y.numel(), dtype=y.dtype).view_as(y)).sum().backward()
    r['gx'] = x.grad.tolist()
    r['gp'] = [p.grad.tolist() for p in m.parameters()]
    return r
print(json.dumps([run(*c) for c in CASES]))
]]

local function run_lua(seed, ctor, x, dt)
  torch.manual_seed(seed)
  local m = ctor()
  local r = { repr0 = tostring(m) }
  x = torch.tensor(x, { dtype = torch[dt], requires_grad = true })
  local y = m(x)
  r.repr1, r.cls = tostring(m), m._class.__name
  r.sd = {}
  local sd = m:state_dict()
  for _, k in ipairs(m:state_dict_keys()) do r.sd[#r.sd + 1] = { k, sd[k]:size(), sd[k]:tolist() } end
  r.y = y:tolist()
  local loss = (y * torch.linspace(-1, 1, y:numel(), { dtype = y.dtype }):view_as(y)):sum()
  loss:backward()
  r.gx, r.gp = x.grad:tolist(), {}
  for i, p in ipairs(m:parameters()) do r.gp[i] = p.grad:tolist() end
  return r
end

describe("lazy modules against PyTorch", function()
  local ref, inputs = nil, {}
  setup(function()
    local rows = {}
    for i, c in ipairs(CASES) do
      inputs[i] = parity.values(c[4], i)
      rows[i] = ("(%d, %q, %s, %q)"):format(i * 7, c[3], approx.py(inputs[i]), c[5] or "float32")
    end
    ref = pytorch.run("CASES = [" .. table.concat(rows, ",\n") .. "]\n" .. DRIVER)
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. ": infers the size at the first forward, becomes the ordinary class, bit for bit", function()
      local r, p = run_lua(i * 7, c[2], inputs[i], c[5] or "float32"), ref[i]
      assert.are.equal(p.repr0, r.repr0)
      assert.are.equal(p.repr1, r.repr1)
      assert.are.equal(p.cls, r.cls)
      assert.are.equal(#p.sd, #r.sd)
      for k, e in ipairs(p.sd) do
        assert.are.same({ e[1], e[2] }, { r.sd[k][1], r.sd[k][2] })
        approx.check(r.sd[k][3], e[3], 0)
      end
      approx.check(r.y, p.y, 0)
      approx.check(r.gx, p.gx, GRAD_TOL)
      assert.are.equal(#p.gp, #r.gp)
      for k = 1, #p.gp do approx.check(r.gp[k], p.gp[k], GRAD_TOL) end
    end)
  end

  it("an optimizer built before the first forward steps the materialized parameters, as PyTorch's", function()
    local x = parity.values({ 4, 6 }, 99)
    local p = pytorch.run(([[
torch.manual_seed(3)
m = torch.nn.LazyLinear(2)
opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
x = torch.tensor(%s)
for _ in range(3):
    opt.zero_grad(); m(x).pow(2).sum().backward(); opt.step()
print(json.dumps([m.weight.tolist(), m.bias.tolist()]))
]]):format(approx.py(x)))
    torch.manual_seed(3)
    local m = nn.LazyLinear(2)
    local opt = torch.optim.SGD(m:parameters(), { lr = 0.5, momentum = 0.9 })
    local xt = torch.tensor(x)
    for _ = 1, 3 do
      opt:zero_grad()
      local loss = m(xt):pow(2):sum()
      loss:backward()
      opt:step()
    end
    approx.check(m.weight, p[1], 1e-6)
    approx.check(m.bias, p[2], 1e-6)
  end)
end)

describe("lazy modules before the first forward", function()
  it("list placeholders as parameters and report has_uninitialized_params", function()
    local m = nn.LazyBatchNorm1d()
    assert.is_true(m:has_uninitialized_params())
    assert.are.equal(2, #m:parameters())
    assert.are.equal("<UninitializedParameter>", tostring(m.weight))
    assert.are.equal("<UninitializedBuffer>", tostring(m.running_mean))
    m:initialize_parameters(torch.randn(2, 5))
    assert.are.equal("BatchNorm1d", m._class.__name)
    assert.are.same({ 5 }, m.weight:size())
  end)

  it("raise clear errors on use of an uninitialized parameter", function()
    local m = nn.LazyLinear(3)
    assert.matches("LazyLinear%.weight is an uninitialized parameter %(UninitializedParameter%): its shape is "
      .. "inferred at the module's first forward", err(function() return m.weight:size() end))
    assert.matches("LazyLinear%.bias is an uninitialized parameter", err(function() return m.bias + 1 end))
    assert.matches("LazyLinear%.weight is an uninitialized parameter", err(function() return m:state_dict().weight:size() end))
    assert.matches("save: value%.%a+ is an uninitialized parameter or buffer of a lazy module",
      err(torch.save, m:state_dict(), os.tmpname()))
    assert.matches("value for weight is an uninitialized parameter or buffer",
      err(function() return nn.Linear(2, 3):load_state_dict(m:state_dict()) end))
  end)

  it("check the constructor arguments and the first input", function()
    assert.matches("LazyConv2d: missing required argument 'kernel_size'", err(nn.LazyConv2d, 4))
    assert.matches("LazyLinear: unexpected keyword argument 'bais'", err(nn.LazyLinear, 3, { bais = false }))
    assert.matches("Expected 3D %(unbatched%) or 4D %(batched%) input to LazyConv2d, but got input of size: %[2, 3%]",
      err(nn.LazyConv2d(4, 3), torch.randn(2, 3)))
    assert.matches("in_channels must be divisible by groups", err(nn.LazyConv1d(4, 3, { groups = 2 }), torch.randn(1, 3, 5)))
  end)
end)

-- The six lazy convolutions (and LazyLinear, LazyBatchNorm1d) before their first forward: state_dict and
-- load_state_dict as PyTorch's (uninitialized entries; a load materializes the parameters from the tensors).
local SD_CASES = {
  { "LazyConv1d", function() return nn.LazyConv1d(4, 3) end, "nn.LazyConv1d(4, 3)",
    function() return nn.Conv1d(2, 4, 3) end, "nn.Conv1d(2, 4, 3)", { 2, 2, 7 } },
  { "LazyConv2d groups", function() return nn.LazyConv2d(4, 3, { groups = 2 }) end, "nn.LazyConv2d(4, 3, groups=2)",
    function() return nn.Conv2d(6, 4, 3, { groups = 2 }) end, "nn.Conv2d(6, 4, 3, groups=2)", { 1, 6, 5, 5 } },
  { "LazyConv3d no bias", function() return nn.LazyConv3d(2, 2, { bias = false }) end, "nn.LazyConv3d(2, 2, bias=False)",
    function() return nn.Conv3d(3, 2, 2, { bias = false }) end, "nn.Conv3d(3, 2, 2, bias=False)", { 1, 3, 3, 3, 3 } },
  { "LazyConvTranspose1d", function() return nn.LazyConvTranspose1d(3, 2) end, "nn.LazyConvTranspose1d(3, 2)",
    function() return nn.ConvTranspose1d(5, 3, 2) end, "nn.ConvTranspose1d(5, 3, 2)", { 2, 5, 4 } },
  { "LazyConvTranspose2d groups", function() return nn.LazyConvTranspose2d(4, 2, { groups = 2 }) end,
    "nn.LazyConvTranspose2d(4, 2, groups=2)", function() return nn.ConvTranspose2d(2, 4, 2, { groups = 2 }) end,
    "nn.ConvTranspose2d(2, 4, 2, groups=2)", { 1, 2, 3, 3 } },
  { "LazyConvTranspose3d", function() return nn.LazyConvTranspose3d(2, 2) end, "nn.LazyConvTranspose3d(2, 2)",
    function() return nn.ConvTranspose3d(3, 2, 2) end, "nn.ConvTranspose3d(3, 2, 2)", { 1, 3, 2, 2, 2 } },
  { "LazyLinear", function() return nn.LazyLinear(3) end, "nn.LazyLinear(3)",
    function() return nn.Linear(5, 3) end, "nn.Linear(5, 3)", { 2, 5 } },
  { "LazyBatchNorm1d", function() return nn.LazyBatchNorm1d() end, "nn.LazyBatchNorm1d()",
    function() return nn.BatchNorm1d(4) end, "nn.BatchNorm1d(4)", { 3, 4 } },
}

describe("lazy modules' state_dict and load_state_dict before the first forward", function()
  local ref, sources
  setup(function()
    local lines = { "import torch.nn as nn", "from torch.nn.parameter import UninitializedTensorMixin", "out = []" }
    sources = {}
    for i, c in ipairs(SD_CASES) do
      torch.manual_seed(i)
      local src = c[4]()
      src:eval()
      sources[i] = src
      local sd = {}
      for k, v in src:state_dict() do sd[#sd + 1] = ("%q: %s"):format(k, approx.py(v)) end
      lines[#lines + 1] = ([[
m = %s
keys = [[k, type(v).__name__] for k, v in m.state_dict().items()]
fresh = %s.load_state_dict(m.state_dict())
r = m.load_state_dict({%s})
m.eval()
x = torch.tensor(%s, dtype=torch.float32)
y = m(x)
out.append(dict(keys=keys, fresh=[list(fresh.missing_keys), list(fresh.unexpected_keys)], missing=list(r.missing_keys),
                y=y.tolist(), x=x.tolist()))]]):format(c[3], c[3], table.concat(sd, ", "), approx.py(parity.values(c[6], i)))
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  for i, c in ipairs(SD_CASES) do
    it(c[1] .. ": state_dict keys and uninitialized entries, a load that materializes, as PyTorch", function()
      local m = c[2]()
      local keys = {}
      for k, v in m:state_dict() do
        keys[#keys + 1] = { k, torch.is_tensor(v) and "Tensor" or tostring(v):match("<(%w+)>") }
      end
      assert.same(ref[i].keys, keys)
      local fresh = c[2]():load_state_dict(m:state_dict())   -- uninitialized into uninitialized: all keys match
      assert.same(ref[i].fresh, { fresh.missing_keys, fresh.unexpected_keys })
      local r = m:load_state_dict(sources[i]:state_dict())
      assert.same(ref[i].missing, r.missing_keys)
      assert.equal(sources[i]._class.__name, m._class.__name)   -- ltorch: the ordinary class at once
      m:eval()
      for k, v in sources[i]:state_dict() do assert.is_true(m:state_dict()[k]:equal(v), k) end
      approx.check(m(torch.tensor(ref[i].x)), ref[i].y, 0)
    end)
  end
end)
