--[[
  torch.optim.radam — RAdam (rectified Adam, Liu et al. 2019), as PyTorch 2.11's
  torch.optim.RAdam (https://pytorch.org/docs/2.11/generated/torch.optim.RAdam.html).

      local opt = optim.RAdam(model:parameters(), {lr = 1e-3, decoupled_weight_decay = true})

  Options: lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
  decoupled_weight_decay = false (true: θ ← θ (1 − γ λ) as AdamW), maximize = false,
  foreach = true (accepted as PyTorch's; the update runs parameter by parameter either way,
  PyTorch's foreach=False arithmetic). capturable and differentiable are not supported (an error).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), exp_avg, exp_avg_sq.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ radam(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient g (γ = lr, β1, β2 = betas, λ = weight_decay, ε = eps):
         if maximize: g ← −g
         t ← t + 1
         if λ ≠ 0:  θ ← θ (1 − γ λ) when decoupled, else g ← g + λ θ
         m ← m + (1 − β1) (g − m)             (lerp_)
         v ← β2 v + (1 − β2) g²
         m̂ ← m / (1 − β1^t)
         ρ∞ ← 2 / (1 − β2) − 1;   ρ_t ← ρ∞ − 2 t β2^t / (1 − β2^t)
         if ρ_t > 5:
           r ← √((ρ_t − 4)(ρ_t − 2) ρ∞ / ((ρ∞ − 4)(ρ∞ − 2) ρ_t))
           l ← √(1 − β2^t) / (√v + ε)
           θ ← θ − γ m̂ l r
         else:
           θ ← θ − γ m̂
]]
function M.radam(params, grads, states, n, o)
  local lr, beta1, beta2, eps, wd = U.hp(o.lr), o.betas[1], o.betas[2], o.eps, o.weight_decay
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    local step = s.step:item()
    if wd ~= 0 then
      if o.decoupled_weight_decay then p:mul_(1 - lr * wd) else g = g:add(p, { alpha = wd }) end
    end
    s.exp_avg:lerp_(g, 1 - beta1)
    s.exp_avg_sq:mul_(beta2):addcmul_(g, g, { value = 1 - beta2 })
    local bias_correction1 = 1 - beta1 ^ step
    local bias_correction2 = 1 - beta2 ^ step
    local corrected = s.exp_avg:div(bias_correction1)
    local rho_inf = 2 / (1 - beta2) - 1
    local rho_t = rho_inf - 2 * step * (beta2 ^ step) / bias_correction2
    if rho_t > 5.0 then
      local rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ^ 0.5
      -- Python's `scalar / tensor` is tensor.reciprocal() * scalar
      local adaptive_lr = s.exp_avg_sq:sqrt():add_(eps):reciprocal_():mul_(bias_correction2 ^ 0.5)
      p:add_(corrected:mul_(lr):mul_(adaptive_lr):mul_(rect), { alpha = -1.0 })
    else
      p:add_(corrected:mul_(lr), { alpha = -1.0 })
    end
  end
end

local function check(o)
  return U.check_adam_family(o) or U.boolean(o, "decoupled_weight_decay")
end

local RAdam = base.Optimizer:extend("RAdam", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0,
  decoupled_weight_decay = false, maximize = false, foreach = true }, check,
  "params, lr=0.001, betas=None, eps=1e-08, weight_decay=0, decoupled_weight_decay=False, *, foreach=None, "
  .. "maximize=False, capturable=False, differentiable=False")
M.RAdam = RAdam

function RAdam:init_state(p)
  return { step = torch.zeros({}), exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p) }
end

function RAdam:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.radam(params, grads, states, n, group)
  U.free(grads, n)
end

return M
