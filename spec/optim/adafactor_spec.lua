--[[
  spec/optim/adafactor_spec.lua — optim.Adafactor (lua/torch/optim/adafactor.lua) against PyTorch 2.11.

  Covers: lr, beta2_decay, eps (ε1 given and nil), d (small, so the update clipping acts), weight_decay, maximize on matrices (row/column factors) and vectors and their combinations over 6 steps of identical gradients (one parameter skips
  steps 2 and 4, so its state lags), foreach on and off (both run PyTorch's single-tensor
  arithmetic), against PyTorch's foreach=False implementation; state and its state_dict layout;
  per-group options; state_dict round trip; the signature; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, the step-size scalars in double precision as Python.

  Run:  build/ltorch /usr/bin/busted spec/optim/adafactor_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local err = require("spec.support.errors").err

local TOL = 0

local C = "Adafactor"
local cases = {
  { name = "default", cls = C, opts = {} },
  { name = "beta2_eps", cls = C, opts = { lr = 0.05, beta2_decay = -0.5, eps = { 1e-20, 1e-2 } } },
  { name = "clipping", cls = C, opts = { lr = 0.1, d = 1.0, eps = { 1e-30, 1e-3 } } },
  { name = "weight_decay", cls = C, opts = { lr = 0.02, weight_decay = 0.1 } },
  { name = "maximize", cls = C, opts = { maximize = true } },
  { name = "groups", cls = C, opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { d = 2.0 } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01, maximize = true } } } },
  { name = "tensor_lr", cls = C, opts = { lr = torch.tensor(0.05), weight_decay = 0.1 } },   -- PyTorch's lr: float | Tensor
}

describe("optim.Adafactor", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { #cases, false, 2 } })

  it("binds PyTorch's signature and checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.Adafactor({ p }, 0.5, -0.6, { 1e-30, 1e-3 }, 2.0, 0.1).param_groups[1]
    assert.equals(-0.6, g.beta2_decay); assert.equals(2.0, g.d); assert.equals(1e-30, g.eps[1])
    local d = optim.Adafactor({ p }).param_groups[1]
    assert.equals(torch.serialization.None, d.eps[1]); assert.equals(1e-3, d.eps[2])
    assert.equals(torch.serialization.None, optim.Adafactor({ p }, { eps = { nil, 1e-2 } }).param_groups[1].eps[1] or torch.serialization.None)
    assert.matches("Adafactor: invalid learning rate", err(optim.Adafactor, { p }, { lr = -1 }))
    assert.matches("Adafactor: invalid beta2_decay %(should be <= 0%): 0.5", err(optim.Adafactor, { p }, { beta2_decay = 0.5 }))
    assert.matches("Adafactor: invalid epsilon1", err(optim.Adafactor, { p }, { eps = { -1, 1e-3 } }))
    assert.matches("Adafactor: invalid clipping threshold d %(should be >= 1%): 0.5", err(optim.Adafactor, { p }, { d = 0.5 }))
    assert.matches("Adafactor: invalid eps", err(optim.Adafactor, { p }, { eps = 1e-3 }))
    local m = torch.zeros(3, 4, { requires_grad = true })
    local o = optim.Adafactor({ m })
    m.grad = torch.ones(3, 4)
    o:step()
    local row, col = o.state[m].row_var, o.state[m].col_var
    assert.same({ 3, 1, 1, 4 }, { row:size(0), row:size(1), col:size(0), col:size(1) })
  end)
end)
