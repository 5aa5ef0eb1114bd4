--[[
  spec/optim/asgd_spec.lua — optim.ASGD (lua/torch/optim/asgd.lua) against PyTorch 2.11.

  Covers: lr, lambd, alpha, t0 (small, so the averaging starts within the run), weight_decay, maximize and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, eta and mu float32 tensors as PyTorch.

  Run:  build/ltorch /usr/bin/busted spec/optim/asgd_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "ASGD"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "averaging", cls = C, opts = { lr = 0.05, lambd = 0.01, alpha = 0.5, t0 = 2 } },
  { name = "weight_decay", cls = C, opts = { lr = 0.02, weight_decay = 0.1, t0 = 3 } },
  { name = "maximize", cls = C, opts = { maximize = true, t0 = 1 } },
  { name = "groups", cls = C, opts = { lr = 0.01, t0 = 2 },
    groups = { { idx = { 3, 1 }, opts = { lambd = 0.1 } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01, maximize = true } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.05), lambd = 0.01, alpha = 0.5, t0 = 2 } },   -- PyTorch's lr: float | Tensor
}

describe("optim.ASGD", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.ASGD({ p }, 0.5, 0.1, 0.6, 10).param_groups[1]
    assert.equals(0.1, g.lambd); assert.equals(0.6, g.alpha); assert.equals(10, g.t0)
    assert.equals(1e6, optim.ASGD({ p }).param_groups[1].t0)
    assert.matches("ASGD: invalid learning rate: %-1", err(optim.ASGD, { p }, { lr = -1 }))
    assert.matches("ASGD: invalid weight_decay value: %-1", err(optim.ASGD, { p }, { weight_decay = -1 }))
    assert.matches("ASGD: invalid t0 value: expected a number", err(optim.ASGD, { p }, { t0 = "x" }))
    assert.matches("capturable=True %(.-%) is not supported by ltorch's", err(optim.ASGD, { p }, { capturable = true }))
  end)
end)
