--[[
  torch.optim.adagrad — Adagrad, as PyTorch 2.11's torch.optim.Adagrad
  (https://pytorch.org/docs/2.11/generated/torch.optim.Adagrad.html).

      local opt = optim.Adagrad(model:parameters(), {lr = 1e-2, lr_decay = 1e-4})

  Options: lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0,
  eps = 1e-10, maximize = false, foreach = true (multi-tensor libtorch calls, one set per group
  and step count; false updates parameter by parameter).
  State per parameter, made when the optimizer is built (as PyTorch's): step (a float32 0-dim
  tensor) and sum (the accumulated squared gradients, starting at the group's
  initial_accumulator_value; PyTorch 2.11 uses the constructor's value for every group, a
  difference only when a group sets its own).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ adagrad(params, grads, states, n, o): one step for n parameters; states[i] holds step, sum.

       for each parameter θ with gradient g (γ = lr, η = lr_decay, λ = weight_decay, ε = eps):
         t ← t + 1
         if maximize: g ← −g
         if λ ≠ 0:    g ← g + λ θ
         γ̃ ← γ / (1 + (t − 1) η)
         s ← s + g²
         θ ← θ − γ̃ g / (√s + ε)
]]
function M.adagrad(params, grads, states, n, o)
  if n == 0 then return end
  local lr, lr_decay, wd, eps = o.lr, o.lr_decay, o.weight_decay, o.eps
  if not o.foreach then
    for i = 1, n do
      local p, g, s = params[i], grads[i], states[i]
      s.step:add_(1)
      local step = s.step:item()
      if o.maximize then g = g:neg() end
      if wd ~= 0 then g = g:add(p, { alpha = wd }) end
      local clr = U.lr_div(lr, 1 + (step - 1) * lr_decay)
      s.sum:addcmul_(g, g, { value = 1 })
      local std = s.sum:sqrt():add_(eps)
      p:addcdiv_(g, std, { value = -clr })
    end
    return
  end
  local steps, sums, counts = {}, {}, {}
  for i = 1, n do steps[i], sums[i] = states[i].step, states[i].sum end
  torch._foreach_add_(steps, 1)
  local temps = {}
  if o.maximize then grads = torch._foreach_neg(grads); temps[#temps + 1] = grads end
  if wd ~= 0 then grads = torch._foreach_add(grads, params, { alpha = wd }); temps[#temps + 1] = grads end
  torch._foreach_addcmul_(sums, grads, grads, 1)
  local std = torch._foreach_sqrt(sums)
  temps[#temps + 1] = std
  torch._foreach_add_(std, eps)
  for i = 1, n do counts[i] = steps[i]:item() end
  for _, b in ipairs(U.buckets(counts, n)) do
    local clr = U.lr_div(lr, 1 + (b.value - 1) * lr_decay)
    torch._foreach_addcdiv_(U.pick(params, b.idx), U.pick(grads, b.idx), U.pick(std, b.idx), -clr)
  end
  for _, list in ipairs(temps) do U.free(list, n) end
end

local function check(o)
  local nn = U.non_negative
  return U.lr(o, "learning rate") or U.number(o, "lr_decay", "lr_decay value", nn)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.number(o, "initial_accumulator_value", "initial_accumulator_value value", nn)
    or U.number(o, "eps", "epsilon value", nn)
    or U.boolean(o, "maximize") or U.boolean(o, "foreach")
end

local Adagrad = base.Optimizer:extend("Adagrad", { lr = 1e-2, lr_decay = 0, weight_decay = 0,
  initial_accumulator_value = 0, eps = 1e-10, maximize = false, foreach = true }, check,
  "params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, foreach=None, *, "
  .. "maximize=False, differentiable=False, fused=None")
M.Adagrad = Adagrad

function Adagrad:init_state(p, group)
  return { step = torch.zeros({}), sum = torch.full_like(p, group.initial_accumulator_value) }
end

-- PyTorch makes Adagrad's state up front (so `sum` can be shared before the first step).
function Adagrad:init_state_eagerly()
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do
      if self.state[p] == nil then self.state[p] = U.unscoped(self.init_state, self, p, group) end
    end
  end
end

function Adagrad:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.adagrad(params, grads, states, n, group)
  U.free(grads, n)
end

return M
