--[[
  spec/optim/adam_capturable_spec.lua — Adam and AdamW with capturable = true (issue #35: the
  optimizer step a CUDA graph can capture) against PyTorch 2.11's capturable arithmetic.

  PyTorch accepts capturable only for parameters on a CUDA-like device and raises its
  AssertionError's message otherwise; ltorch raises the same message, at the caller's line.
  To compare the arithmetic on this CPU-only machine both sides add "cpu" to the devices
  capturable accepts, as PyTorch's own tests patch _get_capturable_supported_devices: then
  PyTorch's _single_tensor_adam and _multi_tensor_adam capturable paths (bias corrections as
  device tensors, no step count read on the host) run on the CPU, and so do ltorch's.

  Covers: Adam and AdamW, foreach true and false, weight decay, amsgrad, maximize, a tensor lr,
  5 steps of the same gradients; parameters, moments and the step tensors (on the parameter's
  device). Tolerance: bitwise — the same kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/adam_capturable_spec.lua
]]
local torch = require "torch"
local cjson = require "cjson"
local adam = require "torch.optim.adam"
local pytorch = require "spec.support.pytorch"

local STEPS = 5
torch.manual_seed(7)
local P0 = { torch.randn(3, 4), torch.randn(5) }
local G = {}
for t = 1, STEPS do G[t] = { torch.randn(3, 4) * t, torch.randn(5) / t } end

local CASES = {
  { name = "adam", cls = "Adam", opts = { lr = 0.01 } },
  { name = "adam_all", cls = "Adam", opts = { lr = 0.02, weight_decay = 0.1, amsgrad = true, maximize = true,
    betas = { 0.8, 0.95 }, eps = 1e-6 } },
  { name = "adamw", cls = "AdamW", opts = { lr = 0.01 } },
  { name = "adamw_amsgrad", cls = "AdamW", opts = { lr = 0.03, weight_decay = 0.2, amsgrad = true } },
  { name = "adam_tensor_lr", cls = "Adam", opts = { lr = torch.tensor(0.01), weight_decay = 0.1 }, single_only = true },
}

local function py_value(v)
  if torch.is_tensor(v) then return ("torch.tensor(%.17g)"):format(v:item()) end
  if type(v) == "table" then
    local items = {}
    for i, x in ipairs(v) do items[i] = py_value(x) end
    return "(" .. table.concat(items, ", ") .. ")"
  end
  if type(v) == "boolean" then return v and "True" or "False" end
  return ("%.17g"):format(v)
end

local function kwargs(opts)
  local parts = {}
  for k, v in pairs(opts) do parts[#parts + 1] = k .. "=" .. py_value(v) end
  table.sort(parts)
  return table.concat(parts, ", ")
end

local function run_lua(case, foreach)
  local params = {}
  for i, p in ipairs(P0) do params[i] = p:clone():requires_grad_(true) end
  local opts = { capturable = true, foreach = foreach }
  for k, v in pairs(case.opts) do opts[k] = v end
  local opt = torch.optim[case.cls](params, opts)
  for t = 1, STEPS do
    for i, p in ipairs(params) do p.grad = G[t][i]:clone() end
    opt:step()
  end
  return params, opt
end

local ref
setup(function()
  local data = { p0 = {}, g = {} }
  for i, p in ipairs(P0) do data.p0[i] = p:tolist() end
  for t = 1, STEPS do
    data.g[t] = {}
    for i, g in ipairs(G[t]) do data.g[t][i] = g:tolist() end
  end
  local runs = {}
  for _, c in ipairs(CASES) do
    for _, foreach in ipairs(c.single_only and { false } or { false, true }) do
      runs[#runs + 1] = ("(%q, torch.optim.%s, dict(%s, capturable=True, foreach=%s))"):format(
        c.name .. (foreach and "_foreach" or ""), c.cls, kwargs(c.opts), foreach and "True" or "False")
    end
  end
  ref = pytorch.run(([==[
import torch.optim.adam as adam_module
devices = adam_module._get_capturable_supported_devices
adam_module._get_capturable_supported_devices = lambda supports_xla=True: devices(supports_xla) + ["cpu"]
data = json.loads(%q)
out = {}
for name, cls, kw in [%s]:
    params = [torch.tensor(p, dtype=torch.float32).requires_grad_() for p in data["p0"]]
    opt = cls(params, **kw)
    for grads in data["g"]:
        for p, g in zip(params, grads):
            p.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
    st = [opt.state[p] for p in params]
    out[name] = {"params": [p.detach().flatten().tolist() for p in params],
                 "exp_avg": [s["exp_avg"].flatten().tolist() for s in st],
                 "exp_avg_sq": [s["exp_avg_sq"].flatten().tolist() for s in st],
                 "step": [s["step"].item() for s in st], "step_device": str(st[0]["step"].device)}
print(json.dumps(out))
]==]):format(cjson.encode(data), table.concat(runs, ", ")))
end)

describe("optim.Adam / AdamW with capturable = true", function()
  it("raises PyTorch's error for parameters on the CPU, at the caller's line, in both paths", function()
    for _, foreach in ipairs({ true, false }) do
      local p = torch.nn.Parameter(torch.randn(3))
      local opt = torch.optim.AdamW({ p }, { capturable = true, foreach = foreach })
      p.grad = torch.randn(3)
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() opt:step() end)
      assert.is_false(ok)
      local devices = foreach and "['cuda', 'xpu', 'hpu', 'privateuseone']" or "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"
      assert.are.equal(("%s:%d: If capturable=True, params and state_steps must be on supported devices: %s.")
        :format(debug.getinfo(1, "S").short_src, line, devices), err)
      assert.is_true(opt.param_groups[1].capturable)
    end
  end)

  describe("with the CPU admitted on both sides (PyTorch's test patch)", function()
    setup(function() table.insert(adam.capturable_devices, "cpu") end)
    teardown(function() table.remove(adam.capturable_devices) end)

    for _, c in ipairs(CASES) do
      for _, foreach in ipairs(c.single_only and { false } or { false, true }) do
        local name = c.name .. (foreach and "_foreach" or "")
        it(name .. ": parameters, moments and steps equal PyTorch's, bit for bit", function()
          local params, opt = run_lua(c, foreach)
          local want = ref[name]
          for i, p in ipairs(params) do
            local s = opt.state[p]
            assert.are.same(want.params[i], p:detach():flatten():tolist(), name .. " param " .. i)
            assert.are.same(want.exp_avg[i], s.exp_avg:flatten():tolist(), name .. " exp_avg " .. i)
            assert.are.same(want.exp_avg_sq[i], s.exp_avg_sq:flatten():tolist(), name .. " exp_avg_sq " .. i)
            assert.are.equal(want.step[i], s.step:item())
            assert.are.equal(want.step_device, tostring(s.step.device))
          end
        end)
      end
    end
  end)
end)
