--[[
  torch.optim.adamax — Adamax (Adam with the infinity norm, Kingma & Ba 2014), as PyTorch 2.11's
  torch.optim.Adamax (https://pytorch.org/docs/2.11/generated/torch.optim.Adamax.html).

      local opt = optim.Adamax(model:parameters(), {lr = 2e-3})

  Options: lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, maximize = false,
  foreach = true (accepted as PyTorch's; the update runs parameter by parameter either way,
  PyTorch's foreach=False arithmetic). capturable and differentiable are not supported (an error).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), exp_avg, exp_inf.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ adamax(params, grads, states, n, o): one step for n parameters; states[i] holds step,
     exp_avg, exp_inf.

       for each parameter θ with gradient g (γ = lr, β1, β2 = betas, λ = weight_decay, ε = eps):
         if maximize: g ← −g
         t ← t + 1
         if λ ≠ 0:    g ← g + λ θ
         m ← m + (1 − β1) (g − m)              (lerp_)
         u ← max(β2 u, |g| + ε)
         θ ← θ − (γ / (1 − β1^t)) m / u
]]
function M.adamax(params, grads, states, n, o)
  local lr, beta1, beta2, eps, wd = U.hp(o.lr), o.betas[1], o.betas[2], o.eps, o.weight_decay
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    if wd ~= 0 then g = g:add(p, { alpha = wd }) end
    s.exp_avg:lerp_(g, 1 - beta1)
    torch.maximum(s.exp_inf:mul_(beta2), g:abs():add_(eps), { out = s.exp_inf })
    local clr = lr / (1 - beta1 ^ s.step:item())
    p:addcdiv_(s.exp_avg, s.exp_inf, { value = U.scalar(-clr) })
  end
end

local Adamax = base.Optimizer:extend("Adamax", { lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0,
  maximize = false, foreach = true }, U.check_adam_family,
  "params, lr=0.002, betas=None, eps=1e-08, weight_decay=0, foreach=None, *, maximize=False, "
  .. "differentiable=False, capturable=False")
M.Adamax = Adamax

function Adamax:init_state(p)
  return { step = torch.zeros({}), exp_avg = torch.zeros_like(p), exp_inf = torch.zeros_like(p) }
end

function Adamax:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.adamax(params, grads, states, n, group)
  U.free(grads, n)
end

return M
