--[[
  spec/optim/optimizer_switches_spec.lua — the Optimizer base's PyTorch switches
  (lua/torch/optim/optimizer.lua): capturable, differentiable and fused join each optimizer's
  defaults where PyTorch's signature has them, so every optimizer's param_groups (and state_dict)
  carry exactly PyTorch 2.11's keys; their PyTorch defaults (false, or None for fused) are
  accepted, explicitly too, and the values ltorch does not run (true) are errors that say so;
  Adam's and AdamW's capturable=True runs (spec/optim/adam_capturable_spec.lua).

  Run:  build/ltorch /usr/bin/busted spec/optim/optimizer_switches_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local pytorch = require "spec.support.pytorch"

local NAMES = { "SGD", "Adam", "AdamW", "Adadelta", "Adafactor", "Adagrad", "Adamax", "ASGD", "LBFGS", "NAdam",
  "RAdam", "RMSprop", "Rprop", "Muon" }

-- the switches an optimizer implements (true accepted)
local SUPPORTED = { Adam = { capturable = true }, AdamW = { capturable = true } }

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("optimizer switches (capturable, differentiable, fused)", function()
  local ref
  setup(function()
    ref = pytorch.run(([[
import inspect
out = {}
for n in %s:
    cls = getattr(torch.optim, n)
    p = [torch.nn.Parameter(torch.randn(3, 3))]
    opt = cls(p, lr=0.1) if n == 'SGD' else cls(p)
    sig = inspect.signature(cls.__init__).parameters
    out[n] = dict(keys=sorted(k for k in opt.state_dict()['param_groups'][0] if k != 'params'),
                  switches=[s for s in ('capturable', 'differentiable', 'fused') if s in sig])
print(json.dumps(out))]]):format("['" .. table.concat(NAMES, "', '") .. "']"))
  end)

  it("param_groups carry exactly PyTorch's keys, for every optimizer", function()
    for _, n in ipairs(NAMES) do
      local opt = optim[n]({ torch.nn.Parameter(torch.randn(3, 3)) }, n == "SGD" and { lr = 0.1 } or nil)
      local keys = {}
      for k in pairs(opt:state_dict().param_groups[1]) do if k ~= "params" then keys[#keys + 1] = k end end
      table.sort(keys)
      assert.same(ref[n].keys, keys, n)
    end
  end)

  it("PyTorch's defaults are accepted explicitly; true is an error that says what to write", function()
    for _, n in ipairs(NAMES) do
      local has = {}
      for _, s in ipairs(ref[n].switches) do has[s] = true end
      for _, s in ipairs({ "capturable", "differentiable", "fused" }) do
        local p = torch.nn.Parameter(torch.randn(3, 3))
        if has[s] then
          local opt = optim[n]({ p }, { [s] = false })
          assert.equals(false, opt.param_groups[1][s], n .. " " .. s)
          if SUPPORTED[n] and SUPPORTED[n][s] then   -- implemented: spec/optim/adam_capturable_spec.lua
            assert.equals(true, optim[n]({ p }, { [s] = true }).param_groups[1][s], n .. " " .. s)
          else
            assert.matches(n .. ": " .. s .. "=True %(.-%) is not supported by ltorch's " .. n .. ": leave " .. s
              .. " out", err(optim[n], { p }, { [s] = true }))
          end
          assert.matches("invalid " .. s .. ": expected a boolean, got string", err(optim[n], { p }, { [s] = "yes" }))
        else
          assert.is_false(pcall(optim[n], { p }, { [s] = false }), n .. " has no " .. s .. " in PyTorch")
        end
      end
    end
  end)

  it("a tensor lr must hold one element, as PyTorch's", function()
    local p = torch.nn.Parameter(torch.randn(3, 3))
    assert.matches("SGD: Tensor lr must be 1%-element", err(optim.SGD, { p }, { lr = torch.tensor({ 0.1, 0.2 }) }))
    assert.matches("Adagrad: invalid learning rate: %-0.5", err(optim.Adagrad, { p }, { lr = torch.tensor(-0.5) }))
    local opt = optim.SGD({ p }, { lr = torch.tensor({ 0.5 }) })
    p.grad = torch.ones(3, 3)
    local before = p:detach():clone()
    opt:step()
    assert.is_true(p:detach():equal(before:add(torch.ones(3, 3), { alpha = -0.5 })))   -- a 1-element lr, squeezed
  end)
end)
