--[[
  spec/optim/adamax_spec.lua — optim.Adamax (lua/torch/optim/adamax.lua) against PyTorch 2.11.

  Covers: lr, betas, eps, weight_decay, maximize and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, the bias correction in double precision as Python.

  Run:  build/ltorch /usr/bin/busted spec/optim/adamax_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "Adamax"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "betas_eps", cls = C, opts = { lr = 0.01, betas = { 0.8, 0.95 }, eps = 1e-4 } },
  { name = "weight_decay", cls = C, opts = { lr = 0.02, weight_decay = 0.1 } },
  { name = "maximize", cls = C, opts = { maximize = true } },
  { name = "all", cls = C, opts = { lr = 0.03, betas = { 0.5, 0.9 }, weight_decay = 0.05, maximize = true } },
  { name = "groups", cls = C, opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { betas = { 0.7, 0.99 } } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01 } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.01), weight_decay = 0.1 } },   -- PyTorch's lr: float | Tensor
}

describe("optim.Adamax", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.Adamax({ p }, 0.5, { 0.8, 0.9 }).param_groups[1]
    assert.equals(0.5, g.lr); assert.same({ 0.8, 0.9 }, g.betas); assert.equals(1e-8, g.eps)
    assert.equals(2e-3, optim.Adamax({ p }).param_groups[1].lr)
    assert.matches("Adamax: invalid learning rate: %-1", err(optim.Adamax, { p }, { lr = -1 }))
    assert.matches("Adamax: invalid beta parameter at index 0: 1", err(optim.Adamax, { p }, { betas = { 1, 0.9 } }))
    assert.matches("Adamax: invalid beta parameter at index 1: %-0.5", err(optim.Adamax, { p }, { betas = { 0.9, -0.5 } }))
    assert.matches("Adamax: invalid epsilon value: %-1", err(optim.Adamax, { p }, { eps = -1 }))
    assert.matches("Adamax: invalid weight_decay value", err(optim.Adamax, { p }, { weight_decay = -1 }))
    assert.matches("differentiable=True %(.-%) is not supported by ltorch's", err(optim.Adamax, { p }, { differentiable = true }))
  end)
end)
