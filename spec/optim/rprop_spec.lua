--[[
  spec/optim/rprop_spec.lua — optim.Rprop (lua/torch/optim/rprop.lua) against PyTorch 2.11.

  Covers: lr, etas, step_sizes (tight enough that both clamps act), maximize and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/rprop_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "Rprop"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "etas", cls = C, opts = { lr = 0.05, etas = { 0.3, 1.5 } } },
  { name = "step_sizes", cls = C, opts = { lr = 0.05, step_sizes = { 0.02, 0.08 } } },
  { name = "maximize", cls = C, opts = { maximize = true } },
  { name = "groups", cls = C, opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { etas = { 0.4, 1.1 } } }, { idx = { 2 }, opts = { lr = 0.1, maximize = true } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.05) } },   -- PyTorch's lr: float | Tensor
}

describe("optim.Rprop", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.Rprop({ p }, 0.5, { 0.4, 1.3 }, { 1e-3, 1 }).param_groups[1]
    assert.same({ 0.4, 1.3 }, g.etas); assert.same({ 1e-3, 1 }, g.step_sizes)
    assert.same({ 1e-6, 50 }, optim.Rprop({ p }).param_groups[1].step_sizes)
    assert.matches("Rprop: invalid learning rate: %-1", err(optim.Rprop, { p }, { lr = -1 }))
    assert.matches("Rprop: invalid eta values: 1.5, 1.2", err(optim.Rprop, { p }, { etas = { 1.5, 1.2 } }))
    assert.matches("Rprop: invalid etas: expected a table of two numbers", err(optim.Rprop, { p }, { etas = 0.5 }))
    assert.matches("Rprop: invalid step_sizes", err(optim.Rprop, { p }, { step_sizes = { 1 } }))
    assert.matches("capturable=True %(.-%) is not supported by ltorch's", err(optim.Rprop, { p }, { capturable = true }))
  end)
end)
