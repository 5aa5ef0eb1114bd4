--[[
  spec/optim/adagrad_spec.lua — optim.Adagrad (lua/torch/optim/adagrad.lua) against PyTorch 2.11.

  Covers: lr_decay, weight_decay, initial_accumulator_value, eps, maximize over 6 steps of
  identical gradients (one parameter skips steps 2 and 4, so with lr_decay its decayed lr
  differs from the others'), foreach on and off, against PyTorch's foreach=False
  implementation; state made at construction (step tensor, sum) and its state_dict layout;
  per-group options and add_param_group; state_dict round trip; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/adagrad_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"

local TOL = 0

local cases = {
  { name = "default", cls = "Adagrad", opts = {} },
  { name = "lr_decay", cls = "Adagrad", opts = { lr = 0.1, lr_decay = 0.05 } },
  { name = "tensor_lr", cls = "Adagrad", opts = { lr = torch.tensor(0.1), lr_decay = 0.05 } },
  { name = "weight_decay", cls = "Adagrad", opts = { lr = 0.1, weight_decay = 0.1 } },
  { name = "initial_accumulator", cls = "Adagrad", opts = { lr = 0.1, initial_accumulator_value = 0.5, eps = 1e-6 } },
  { name = "maximize", cls = "Adagrad", opts = { lr = 0.1, maximize = true, lr_decay = 0.01 } },
  { name = "groups", cls = "Adagrad", opts = { lr = 0.1 },
    groups = { { idx = { 1, 3 }, opts = { lr_decay = 0.1 } }, { idx = { 2 }, opts = { lr = 0.3, eps = 1e-3 } } } },
}

describe("optim.Adagrad", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { 6, false, 2 } })

  -- PyTorch 2.11 fills every group's sum with the constructor's initial_accumulator_value and
  -- ignores a group's own; ltorch honours the group's value (the documented meaning).
  it("makes its state when built (each group's initial_accumulator_value), and for groups added later", function()
    local ps = H.fresh_params()
    local opt = optim.Adagrad({ ps[1] }, { initial_accumulator_value = 0.25 })
    assert.equals(0.25, opt.state[ps[1]].sum:mean():item())
    assert.equals(0, opt.state[ps[1]].step:item())
    local opt_g = optim.Adagrad({ { params = { ps[3] }, initial_accumulator_value = 3 } })
    assert.equals(3, opt_g.state[ps[3]].sum:mean():item())
    opt:add_param_group({ params = { ps[2] }, initial_accumulator_value = 2 })
    assert.equals(2, opt.state[ps[2]].sum:mean():item())
  end)

  it("checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local function err(o) return require("spec.support.errors").err(optim.Adagrad, { p }, o) end
    assert.matches("Adagrad: invalid learning rate: %-1", err({ lr = -1 }))
    assert.matches("Adagrad: invalid lr_decay value: %-1", err({ lr_decay = -1 }))
    assert.matches("Adagrad: invalid initial_accumulator_value value: %-1", err({ initial_accumulator_value = -1 }))
    assert.matches("Adagrad: invalid epsilon value: %-1", err({ eps = -1 }))
  end)
end)
