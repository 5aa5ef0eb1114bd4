--[[
  torch.optim.nadam — NAdam (Adam with Nesterov momentum, Dozat 2016), as PyTorch 2.11's
  torch.optim.NAdam (https://pytorch.org/docs/2.11/generated/torch.optim.NAdam.html).

      local opt = optim.NAdam(model:parameters(), {lr = 2e-3, momentum_decay = 4e-3})

  Options: lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3,
  decoupled_weight_decay = false (true: NAdamW's θ ← θ (1 − γ λ)), maximize = false,
  foreach = true (accepted as PyTorch's; the update runs parameter by parameter either way,
  PyTorch's foreach=False arithmetic). capturable and differentiable are not supported (an error).
  State per parameter: step and mu_product (float32 0-dim tensors, as PyTorch's), exp_avg,
  exp_avg_sq.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ nadam(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient g (γ = lr, β1, β2 = betas, λ = weight_decay, ε = eps,
       ψ = momentum_decay):
         if maximize: g ← −g
         t ← t + 1
         if λ ≠ 0:  θ ← θ (1 − γ λ) when decoupled, else g ← g + λ θ
         μ_t ← β1 (1 − ½ · 0.96^(t ψ));   μ_{t+1} ← β1 (1 − ½ · 0.96^((t + 1) ψ))
         Π ← Π · μ_t                          (mu_product, a float32 tensor)
         m ← m + (1 − β1) (g − m)             (lerp_)
         v ← β2 v + (1 − β2) g²
         d ← √(v / (1 − β2^t)) + ε
         θ ← θ − γ (1 − μ_t) / (1 − Π) · g / d − γ μ_{t+1} / (1 − Π μ_{t+1}) · m / d
]]
function M.nadam(params, grads, states, n, o)
  local lr, beta1, beta2, eps, wd, psi = U.hp(o.lr), o.betas[1], o.betas[2], o.eps, o.weight_decay, o.momentum_decay
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    local step = s.step:item()
    local bias_correction2 = 1 - beta2 ^ step
    if wd ~= 0 then
      if o.decoupled_weight_decay then p:mul_(1 - lr * wd) else g = g:add(p, { alpha = wd }) end
    end
    local mu = beta1 * (1.0 - 0.5 * (0.96 ^ (step * psi)))
    local mu_next = beta1 * (1.0 - 0.5 * (0.96 ^ ((step + 1) * psi)))
    s.mu_product:mul_(mu)
    s.exp_avg:lerp_(g, 1 - beta1)
    s.exp_avg_sq:mul_(beta2):addcmul_(g, g, { value = 1 - beta2 })
    local denom = s.exp_avg_sq:div(bias_correction2):sqrt()
    local mu_product = s.mu_product:item()
    local mu_product_next = mu_product * mu_next
    denom:add_(eps)
    p:addcdiv_(g, denom, { value = U.scalar(-lr * (1.0 - mu) / (1.0 - mu_product)) })
    p:addcdiv_(s.exp_avg, denom, { value = U.scalar((-lr * mu_next) / (1.0 - mu_product_next)) })
  end
end

local function check(o)
  return U.check_adam_family(o)
    or U.number(o, "momentum_decay", "momentum_decay value", U.non_negative)
    or U.boolean(o, "decoupled_weight_decay")
end

local NAdam = base.Optimizer:extend("NAdam", { lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0,
  momentum_decay = 4e-3, decoupled_weight_decay = false, maximize = false, foreach = true }, check,
  "params, lr=0.002, betas=None, eps=1e-08, weight_decay=0, momentum_decay=0.004, "
  .. "decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False")
M.NAdam = NAdam

function NAdam:init_state(p)
  return { step = torch.zeros({}), mu_product = torch.ones({}), exp_avg = torch.zeros_like(p),
    exp_avg_sq = torch.zeros_like(p) }
end

function NAdam:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.nadam(params, grads, states, n, group)
  U.free(grads, n)
end

return M
