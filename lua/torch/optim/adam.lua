--[[
  torch.optim.adam — Adam and AdamW (decoupled weight decay), as PyTorch 1.13's torch.optim.Adam
  and torch.optim.AdamW (https://pytorch.org/docs/1.13/generated/torch.optim.Adam.html,
  .../torch.optim.AdamW.html).

      local opt = optim.AdamW(model:parameters(), {lr = 3e-4, weight_decay = 0.01})

  Options: lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0 (AdamW: 1e-2),
  amsgrad = false, maximize = false, foreach = true (multi-tensor libtorch calls, one set per
  group and step count; false updates parameter by parameter — both give PyTorch's
  foreach=False results bit for bit).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), exp_avg, exp_avg_sq, and
  max_exp_avg_sq with amsgrad.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ adam(params, grads, states, n, o, decoupled): one step for n parameters; states[i] holds
     step, exp_avg, exp_avg_sq (and max_exp_avg_sq). decoupled = true is AdamW.

       for each parameter θ with gradient g (γ = lr, β1, β2 = betas, λ = weight_decay, ε = eps):
         if maximize: g ← −g
         t ← t + 1
         Adam:  if λ ≠ 0: g ← g + λ θ          AdamW:  θ ← θ (1 − γ λ)
         m ← β1 m + (1 − β1) g
         v ← β2 v + (1 − β2) g²
         if amsgrad: v_max ← max(v_max, v);  v̂ ← v_max   else v̂ ← v
         θ ← θ − (γ / (1 − β1^t)) · m / (√v̂ / √(1 − β2^t) + ε)
]]
function M.adam(params, grads, states, n, o, decoupled)
  if n == 0 then return end
  if o.foreach then return M.adam_foreach(params, grads, states, n, o, decoupled) end
  local lr, beta1, beta2, wd, eps = o.lr, o.betas[1], o.betas[2], o.weight_decay, o.eps
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    if decoupled then p:mul_(1 - lr * wd)
    elseif wd ~= 0 then g = g:add(p, { alpha = wd }) end
    s.exp_avg:mul_(beta1):add_(g, { alpha = 1 - beta1 })
    s.exp_avg_sq:mul_(beta2):addcmul_(g, g, { value = 1 - beta2 })
    local step = s.step:item()
    local step_size = lr / (1 - beta1 ^ step)
    local bc2_sqrt = math.sqrt(1 - beta2 ^ step)
    local v = s.exp_avg_sq
    if o.amsgrad then
      torch.maximum(s.max_exp_avg_sq, s.exp_avg_sq, { out = s.max_exp_avg_sq })
      v = s.max_exp_avg_sq
    end
    local denom = (v:sqrt() / bc2_sqrt):add_(eps)
    p:addcdiv_(s.exp_avg, denom, { value = -step_size })
  end
end

-- The same update with _foreach_* calls: one call per operation for all parameters that share
-- a step count (the bias corrections are scalars per call).
function M.adam_foreach(params, grads, states, n, o, decoupled)
  local lr, beta1, beta2, wd, eps = o.lr, o.betas[1], o.betas[2], o.weight_decay, o.eps
  local steps, exp_avgs, exp_avg_sqs, maxes = {}, {}, {}, {}
  for i = 1, n do
    local s = states[i]
    steps[i], exp_avgs[i], exp_avg_sqs[i], maxes[i] = s.step, s.exp_avg, s.exp_avg_sq, s.max_exp_avg_sq
  end
  local temps = {}
  if o.maximize then grads = torch._foreach_neg(grads); temps[#temps + 1] = grads end
  torch._foreach_add_(steps, 1)
  if decoupled then
    torch._foreach_mul_(params, 1 - lr * wd)
  elseif wd ~= 0 then
    grads = torch._foreach_add(grads, params, { alpha = wd }); temps[#temps + 1] = grads
  end
  torch._foreach_mul_(exp_avgs, beta1)
  torch._foreach_add_(exp_avgs, grads, { alpha = 1 - beta1 })
  torch._foreach_mul_(exp_avg_sqs, beta2)
  torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
  local counts = {}
  for i = 1, n do counts[i] = steps[i]:item() end
  for _, b in ipairs(U.buckets(counts, n)) do
    local step = b.value
    local step_size = lr / (1 - beta1 ^ step)
    local bc2_sqrt = math.sqrt(1 - beta2 ^ step)
    local v = U.pick(exp_avg_sqs, b.idx)
    if o.amsgrad then
      local m = U.pick(maxes, b.idx)
      torch._foreach_maximum_(m, v)
      v = m
    end
    local denom = torch._foreach_sqrt(v)
    torch._foreach_div_(denom, bc2_sqrt)
    torch._foreach_add_(denom, eps)
    torch._foreach_addcdiv_(U.pick(params, b.idx), U.pick(exp_avgs, b.idx), denom, -step_size)
    U.free(denom)
  end
  for _, list in ipairs(temps) do U.free(list, n) end
end

local function check(o)
  local nn = U.non_negative
  local msg = U.number(o, "lr", "learning rate", nn) or U.number(o, "eps", "epsilon value", nn)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.boolean(o, "amsgrad") or U.boolean(o, "maximize") or U.boolean(o, "foreach")
  if msg then return msg end
  if type(o.betas) ~= "table" or #o.betas ~= 2 then
    return "invalid betas: expected a table of two numbers, e.g. {0.9, 0.999}"
  end
  local in_range = function(v) return v >= 0 and v < 1 end
  return U.number(o.betas, 1, "beta parameter at index 0", in_range)
    or U.number(o.betas, 2, "beta parameter at index 1", in_range)
end

local function init_state(_, p, group)
  local s = { step = torch.zeros({}), exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p) }
  if group.amsgrad then s.max_exp_avg_sq = torch.zeros_like(p) end
  return s
end

local function update_with(decoupled)
  return function(self, group)
    local params, grads, states, n = self:collect(group)
    if group.amsgrad then   -- a group switched to amsgrad after its first steps
      for i = 1, n do
        if states[i].max_exp_avg_sq == nil then states[i].max_exp_avg_sq = U.zeros_like(params[i]) end
      end
    end
    M.adam(params, grads, states, n, group, decoupled)
    U.free(grads, n)
  end
end

local Adam = base.Optimizer:extend("Adam", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0,
  amsgrad = false, maximize = false, foreach = true }, check)
M.Adam = Adam
Adam.init_state = init_state
Adam.update_group = update_with(false)

local AdamW = base.Optimizer:extend("AdamW", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2,
  amsgrad = false, maximize = false, foreach = true }, check)
M.AdamW = AdamW
AdamW.init_state = init_state
AdamW.update_group = update_with(true)

return M
