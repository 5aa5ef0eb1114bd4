--[[
  torch.optim.rmsprop — RMSprop, as PyTorch 2.11's torch.optim.RMSprop
  (https://pytorch.org/docs/2.11/generated/torch.optim.RMSprop.html).

      local opt = optim.RMSprop(model:parameters(), {lr = 1e-3, alpha = 0.9, momentum = 0.9})

  Options: lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
  maximize = false, foreach = true (multi-tensor libtorch calls, one set per group; false
  updates parameter by parameter).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), square_avg, momentum_buffer
  (with momentum > 0) and grad_avg (when centered).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ rmsprop(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient g (γ = lr, α = alpha, λ = weight_decay, μ = momentum):
         if maximize: g ← −g
         if λ ≠ 0:    g ← g + λ θ
         v ← α v + (1 − α) g²
         if centered: a ← a + (1 − α) (g − a) (lerp_);   d ← √(v − a²) + ε
         else:        d ← √v + ε
         if μ > 0:    b ← μ b + g / d;       θ ← θ − γ b
         else:        θ ← θ − γ g / d
]]
function M.rmsprop(params, grads, states, n, o)
  if n == 0 then return end
  local lr, alpha, eps, wd, mu = U.scalar(o.lr), o.alpha, o.eps, o.weight_decay, o.momentum
  if not o.foreach then
    for i = 1, n do
      local p, g, s = params[i], grads[i], states[i]
      if o.maximize then g = g:neg() end
      if wd ~= 0 then g = g:add(p, { alpha = wd }) end
      s.square_avg:mul_(alpha):addcmul_(g, g, { value = 1 - alpha })
      local avg
      if o.centered then
        s.grad_avg:lerp_(g, 1 - alpha)
        avg = s.square_avg:addcmul(s.grad_avg, s.grad_avg, { value = -1 }):sqrt_()
      else
        avg = s.square_avg:sqrt()
      end
      avg:add_(eps)
      if mu > 0 then
        s.momentum_buffer:mul_(mu):addcdiv_(g, avg)
        p:add_(s.momentum_buffer, { alpha = -lr })
      else
        p:addcdiv_(g, avg, { value = -lr })
      end
    end
    return
  end
  local function field(name)
    local list = {}
    for i = 1, n do list[i] = states[i][name] end
    return list
  end
  local temps = {}
  if o.maximize then grads = torch._foreach_neg(grads); temps[#temps + 1] = grads end
  if wd ~= 0 then
    if o.maximize then torch._foreach_add_(grads, params, { alpha = wd })
    else grads = torch._foreach_add(grads, params, { alpha = wd }); temps[#temps + 1] = grads end
  end
  local square_avgs = field("square_avg")
  torch._foreach_mul_(square_avgs, alpha)
  torch._foreach_addcmul_(square_avgs, grads, grads, 1 - alpha)
  local avg
  if o.centered then
    local grad_avgs = field("grad_avg")
    torch._foreach_lerp_(grad_avgs, grads, 1 - alpha)
    avg = torch._foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1)
    torch._foreach_sqrt_(avg)
  else
    avg = torch._foreach_sqrt(square_avgs)
  end
  temps[#temps + 1] = avg
  torch._foreach_add_(avg, eps)
  if mu > 0 then
    local bufs = field("momentum_buffer")
    torch._foreach_mul_(bufs, mu)
    torch._foreach_addcdiv_(bufs, grads, avg)
    torch._foreach_add_(params, bufs, { alpha = -lr })
  else
    torch._foreach_addcdiv_(params, grads, avg, -lr)
  end
  for _, list in ipairs(temps) do U.free(list, n) end
end

local function check(o)
  local nn = U.non_negative
  return U.lr(o, "learning rate") or U.number(o, "eps", "epsilon value", nn)
    or U.number(o, "momentum", "momentum value", nn)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.number(o, "alpha", "alpha value", nn)
    or U.boolean(o, "centered") or U.boolean(o, "maximize") or U.boolean(o, "foreach")
end

local RMSprop = base.Optimizer:extend("RMSprop", { lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0,
  momentum = 0, centered = false, maximize = false, foreach = true }, check,
  "params, lr=0.01, alpha=0.99, eps=1e-08, weight_decay=0, momentum=0, centered=False, capturable=False, "
  .. "foreach=None, maximize=False, differentiable=False")
M.RMSprop = RMSprop

function RMSprop:init_state(p) return { step = torch.zeros({}), square_avg = torch.zeros_like(p) } end

function RMSprop:update_group(group)
  local params, grads, states, n = self:collect(group)
  local steps = {}
  for i = 1, n do
    local s = states[i]
    -- made on first use, also when momentum or centered is switched on later
    if group.momentum > 0 and s.momentum_buffer == nil then s.momentum_buffer = U.zeros_like(params[i]) end
    if group.centered and s.grad_avg == nil then s.grad_avg = U.zeros_like(params[i]) end
    -- a number when loaded from a PyTorch 1.x checkpoint: a tensor from then on, as PyTorch's
    if type(s.step) == "number" then s.step = U.unscoped(torch.tensor, s.step, { dtype = torch.float32 }) end
    steps[i] = s.step
  end
  if n > 0 then torch._foreach_add_(steps, 1) end
  M.rmsprop(params, grads, states, n, group)
  U.free(grads, n)
end

return M
