--[[
  spec/optim/rmsprop_spec.lua — optim.RMSprop (lua/torch/optim/rmsprop.lua) against PyTorch 2.11.

  Covers: alpha, eps, momentum, centered, weight_decay, maximize and their combinations over 6
  steps of identical gradients (one parameter skips steps 2 and 4), foreach on and off, against
  PyTorch's foreach=False implementation; state (step as a float32 0-dim tensor, square_avg,
  momentum_buffer, grad_avg) and its state_dict layout; per-group options; state_dict round
  trip; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/rmsprop_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"

local TOL = 0

local cases = {
  { name = "default", cls = "RMSprop", opts = {} },
  { name = "alpha_eps", cls = "RMSprop", opts = { lr = 0.003, alpha = 0.9, eps = 1e-5 } },
  { name = "momentum", cls = "RMSprop", opts = { lr = 0.01, momentum = 0.9 } },
  { name = "centered", cls = "RMSprop", opts = { lr = 0.01, centered = true } },
  { name = "centered_momentum", cls = "RMSprop", opts = { lr = 0.01, centered = true, momentum = 0.5 } },
  { name = "weight_decay", cls = "RMSprop", opts = { lr = 0.01, weight_decay = 0.1 } },
  { name = "all", cls = "RMSprop", opts = { lr = 0.02, alpha = 0.95, centered = true, momentum = 0.3,
    weight_decay = 0.05, maximize = true } },
  { name = "groups", cls = "RMSprop", opts = { lr = 0.01 },
    groups = { { idx = { 2, 3 }, opts = { momentum = 0.9 } }, { idx = { 1 }, opts = { centered = true, lr = 0.001 } } } },
  { name = "tensor_lr", cls = "RMSprop", opts = { lr = torch.tensor(0.003), momentum = 0.9, centered = true } },   -- PyTorch's lr: float | Tensor
}

describe("optim.RMSprop", function()
  H.describe_cases(cases, TOL, { { 5, true, 3 }, { 8, false, 2 } })

  it("keeps step as a float32 0-dim tensor, as PyTorch 2.11; a number step (1.x checkpoint) becomes one", function()
    local ps = H.fresh_params()
    local opt = H.make(cases[3], ps, true)
    H.steps(opt, ps, 1, 4)
    local s1, s3 = opt.state[ps[1]].step, opt.state[ps[3]].step
    assert.equals(torch.float32, s1.dtype)
    assert.equals(0, s1:dim())
    assert.equals(4, s1:item())
    assert.equals(2, s3:item())
    local sd = opt:state_dict()
    for _, st in pairs(sd.state) do st.step = st.step:item() end
    local ps2 = H.fresh_params()
    local opt2 = H.make(cases[3], ps2, false)
    opt2:load_state_dict(sd)
    H.steps(opt2, ps2, 5, 5)
    assert.equals(torch.float32, opt2.state[ps2[1]].step.dtype)
    assert.equals(5, opt2.state[ps2[1]].step:item())
  end)

  it("checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local function err(o) return require("spec.support.errors").err(optim.RMSprop, { p }, o) end
    assert.matches("RMSprop: invalid learning rate: %-1", err({ lr = -1 }))
    assert.matches("RMSprop: invalid alpha value: %-0.1", err({ alpha = -0.1 }))
    assert.matches("RMSprop: invalid momentum value: %-1", err({ momentum = -1 }))
    assert.matches("RMSprop: invalid epsilon value: %-1", err({ eps = -1 }))
    assert.matches("RMSprop: invalid centered: expected a boolean", err({ centered = 1 }))
  end)
end)
