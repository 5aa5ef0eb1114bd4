--[[
  spec/optim/nadam_spec.lua — optim.NAdam (lua/torch/optim/nadam.lua) against PyTorch 2.11.

  Covers: lr, betas, eps, weight_decay (coupled and decoupled_weight_decay), momentum_decay, maximize and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, the scalar factors in double precision as Python (mu_product a float32 tensor, as PyTorch).

  Run:  build/ltorch /usr/bin/busted spec/optim/nadam_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "NAdam"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "betas_eps", cls = C, opts = { lr = 0.01, betas = { 0.8, 0.95 }, eps = 1e-4, momentum_decay = 0.01 } },
  { name = "weight_decay", cls = C, opts = { lr = 0.02, weight_decay = 0.1 } },
  { name = "decoupled", cls = C, opts = { lr = 0.02, weight_decay = 0.1, decoupled_weight_decay = true } },
  { name = "maximize", cls = C, opts = { maximize = true } },
  { name = "all", cls = C, opts = { lr = 0.03, betas = { 0.5, 0.9 }, weight_decay = 0.05, maximize = true,
    momentum_decay = 0.1, decoupled_weight_decay = true } },
  { name = "groups", cls = C, opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { momentum_decay = 0 } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01 } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.01), weight_decay = 0.1, decoupled_weight_decay = true } },   -- PyTorch's lr: float | Tensor
}

describe("optim.NAdam", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.NAdam({ p }, 0.5, { 0.8, 0.9 }, 1e-6, 0.1, 0.01, true).param_groups[1]
    assert.equals(0.01, g.momentum_decay); assert.is_true(g.decoupled_weight_decay)
    assert.equals(2e-3, optim.NAdam({ p }).param_groups[1].lr)
    assert.matches("NAdam: invalid learning rate: %-1", err(optim.NAdam, { p }, { lr = -1 }))
    assert.matches("NAdam: invalid beta parameter at index 0: 1", err(optim.NAdam, { p }, { betas = { 1, 0.9 } }))
    assert.matches("NAdam: invalid momentum_decay value: %-1", err(optim.NAdam, { p }, { momentum_decay = -1 }))
    assert.matches("NAdam: invalid decoupled_weight_decay: expected a boolean",
      err(optim.NAdam, { p }, { decoupled_weight_decay = 1 }))
    assert.matches("capturable=True %(.-%) is not supported by ltorch's", err(optim.NAdam, { p }, { capturable = true }))
    local ps = H.fresh_params()
    local opt = optim.NAdam(ps)
    H.steps(opt, ps, 1, 2)
    assert.equals(torch.float32, opt.state[ps[1]].mu_product.dtype)
    assert.equals(0, opt.state[ps[1]].mu_product:dim())
  end)
end)
