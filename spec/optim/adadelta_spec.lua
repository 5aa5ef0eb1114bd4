--[[
  spec/optim/adadelta_spec.lua — optim.Adadelta (lua/torch/optim/adadelta.lua) against PyTorch 2.11.

  Covers: lr, rho, eps, weight_decay, maximize and their combinations over 6 steps of identical
  gradients (one parameter skips steps 2 and 4), foreach on and off (both run PyTorch's
  single-tensor arithmetic), against PyTorch's foreach=False implementation; state and its
  state_dict layout; per-group options; state_dict round trip; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/adadelta_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local cases = {
  { name = "default", cls = "Adadelta", opts = {} },
  { name = "lr_rho_eps", cls = "Adadelta", opts = { lr = 0.5, rho = 0.8, eps = 1e-4 } },
  { name = "weight_decay", cls = "Adadelta", opts = { lr = 0.7, weight_decay = 0.1 } },
  { name = "maximize", cls = "Adadelta", opts = { maximize = true } },
  { name = "all", cls = "Adadelta", opts = { lr = 0.3, rho = 0.95, weight_decay = 0.05, maximize = true } },
  { name = "groups", cls = "Adadelta", opts = { lr = 0.9 },
    groups = { { idx = { 3, 1 }, opts = { rho = 0.5 } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01 } } } },
  { name = "tensor_lr", cls = "Adadelta", opts = { lr = torch.tensor(0.5), rho = 0.8, weight_decay = 0.1 } },   -- PyTorch's lr: float | Tensor
}

describe("optim.Adadelta", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { 6, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.Adadelta({ p }, 0.5, 0.8).param_groups[1]
    assert.equals(0.5, g.lr); assert.equals(0.8, g.rho); assert.equals(1e-6, g.eps)
    assert.matches("Adadelta: invalid learning rate: %-1", err(optim.Adadelta, { p }, { lr = -1 }))
    assert.matches("Adadelta: invalid rho value: 1.5", err(optim.Adadelta, { p }, { rho = 1.5 }))
    assert.matches("Adadelta: invalid epsilon value: %-1", err(optim.Adadelta, { p }, { eps = -1 }))
    assert.matches("Adadelta: invalid weight_decay value", err(optim.Adadelta, { p }, { weight_decay = -1 }))
    assert.matches("capturable=True %(.-%) is not supported by ltorch's", err(optim.Adadelta, { p }, { capturable = true }))
    assert.matches("unexpected keyword argument 'betas'", err(optim.Adadelta, { p }, { betas = { 0.9, 0.9 } }))
  end)
end)
