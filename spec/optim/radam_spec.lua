--[[
  spec/optim/radam_spec.lua — optim.RAdam (lua/torch/optim/radam.lua) against PyTorch 2.11.

  Covers: lr, betas (beta2 chosen so that the rectified branch (rho_t > 5) is taken at step 6 and the plain one before), eps, weight_decay (coupled and decoupled_weight_decay), maximize and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, the rectification in double precision as Python.

  Run:  build/ltorch /usr/bin/busted spec/optim/radam_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "RAdam"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "rectified", cls = C, opts = { lr = 0.01, betas = { 0.8, 0.9 }, eps = 1e-4 } },
  { name = "weight_decay", cls = C, opts = { lr = 0.02, weight_decay = 0.1, betas = { 0.9, 0.95 } } },
  { name = "decoupled", cls = C, opts = { lr = 0.02, weight_decay = 0.1, decoupled_weight_decay = true } },
  { name = "maximize", cls = C, opts = { maximize = true, betas = { 0.9, 0.85 } } },
  { name = "all", cls = C, opts = { lr = 0.03, betas = { 0.5, 0.9 }, weight_decay = 0.05, maximize = true,
    decoupled_weight_decay = true } },
  { name = "groups", cls = C, opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { betas = { 0.9, 0.9 } } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01 } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.01), betas = { 0.8, 0.9 }, weight_decay = 0.1, decoupled_weight_decay = true } },   -- PyTorch's lr: float | Tensor
}

describe("optim.RAdam", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.RAdam({ p }, 0.5, { 0.8, 0.9 }, 1e-6, 0.1, true).param_groups[1]
    assert.is_true(g.decoupled_weight_decay); assert.equals(0.1, g.weight_decay)
    assert.equals(1e-3, optim.RAdam({ p }).param_groups[1].lr)
    assert.matches("RAdam: invalid learning rate: %-1", err(optim.RAdam, { p }, { lr = -1 }))
    assert.matches("RAdam: invalid beta parameter at index 1: 1", err(optim.RAdam, { p }, { betas = { 0.9, 1 } }))
    assert.matches("RAdam: invalid betas: expected a table of two numbers", err(optim.RAdam, { p }, { betas = 0.9 }))
    assert.matches("differentiable=True %(.-%) is not supported by ltorch's", err(optim.RAdam, { p }, { differentiable = true }))
  end)
end)
