--[[
  torch.optim.adadelta — Adadelta (Zeiler 2012), as PyTorch 2.11's torch.optim.Adadelta
  (https://pytorch.org/docs/2.11/generated/torch.optim.Adadelta.html).

      local opt = optim.Adadelta(model:parameters(), {lr = 1.0, rho = 0.9})

  Options: lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false, foreach = true
  (accepted as PyTorch's; the update runs parameter by parameter either way, PyTorch's
  foreach=False arithmetic). capturable and differentiable are not supported (an error).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), square_avg, acc_delta.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ adadelta(params, grads, states, n, o): one step for n parameters; states[i] holds step,
     square_avg, acc_delta.

       for each parameter θ with gradient g (γ = lr, ρ = rho, λ = weight_decay, ε = eps):
         t ← t + 1
         if maximize: g ← −g
         if λ ≠ 0:    g ← g + λ θ
         v ← ρ v + (1 − ρ) g²
         Δ ← √(u + ε) / √(v + ε) · g
         u ← ρ u + (1 − ρ) Δ²
         θ ← θ − γ Δ
]]
function M.adadelta(params, grads, states, n, o)
  local lr, rho, eps, wd = U.scalar(o.lr), o.rho, o.eps, o.weight_decay
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    s.step:add_(1)
    if o.maximize then g = g:neg() end
    if wd ~= 0 then g = g:add(p, { alpha = wd }) end
    s.square_avg:mul_(rho):addcmul_(g, g, { value = 1 - rho })
    local std = s.square_avg:add(eps):sqrt_()
    local delta = s.acc_delta:add(eps):sqrt_()
    delta:div_(std):mul_(g)
    s.acc_delta:mul_(rho):addcmul_(delta, delta, { value = 1 - rho })
    p:add_(delta, { alpha = -lr })
  end
end

local function check(o)
  local nn = U.non_negative
  return U.lr(o, "learning rate")
    or U.number(o, "rho", "rho value", function(v) return v >= 0 and v <= 1 end)
    or U.number(o, "eps", "epsilon value", nn)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.boolean(o, "maximize") or U.boolean(o, "foreach")
end

local Adadelta = base.Optimizer:extend("Adadelta", { lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0,
  maximize = false, foreach = true }, check,
  "params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *, capturable=False, maximize=False, "
  .. "differentiable=False")
M.Adadelta = Adadelta

function Adadelta:init_state(p)
  return { step = torch.zeros({}), square_avg = torch.zeros_like(p), acc_delta = torch.zeros_like(p) }
end

function Adadelta:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.adadelta(params, grads, states, n, group)
  U.free(grads, n)
end

return M
