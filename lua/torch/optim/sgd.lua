--[[
  torch.optim.sgd — stochastic gradient descent with momentum, dampening, Nesterov momentum,
  weight decay and maximize, as PyTorch 2.11's torch.optim.SGD
  (https://pytorch.org/docs/2.11/generated/torch.optim.SGD.html).

      local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9, weight_decay = 5e-4})
      local opt = optim.SGD(model:parameters(), 0.1, 0.9)   -- PyTorch's positional order

  Options: lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false,
  maximize = false, foreach = true (one multi-tensor libtorch call per group; false updates
  parameter by parameter — both give PyTorch's foreach=False results bit for bit).
  State per parameter: momentum_buffer, only in a group with momentum ~= 0; without momentum a
  parameter gets no state at all (PyTorch's state_dict()["state"] is then empty).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ sgd(params, grads, bufs, n, o): one SGD step for n parameters; bufs[i] is the momentum buffer
     (nil before the first step; filled in here). o holds the hyper-parameters.

       for each parameter θ with gradient g (γ = lr, λ = weight_decay, μ = momentum, τ = dampening):
         if maximize: g ← −g
         if λ ≠ 0:    g ← g + λ θ
         if μ ≠ 0:
           if first step: b ← g            else: b ← μ b + (1 − τ) g
           if nesterov:   g ← g + μ b      else: g ← b
         θ ← θ − γ g
]]
function M.sgd(params, grads, bufs, n, o)
  local lr, wd, mu, damp = U.scalar(o.lr), o.weight_decay, o.momentum, o.dampening   -- a tensor lr: alpha=-lr.item()
  if n == 0 then return end
  if not o.foreach then
    for i = 1, n do
      local p, d_p = params[i], grads[i]
      if o.maximize then d_p = d_p:neg() end
      if wd ~= 0 then d_p = d_p:add(p, { alpha = wd }) end
      if mu ~= 0 then
        local buf = bufs[i]
        if buf == nil then
          buf = U.clone(d_p)
          bufs[i] = buf
        else
          buf:mul_(mu):add_(d_p, { alpha = 1 - damp })
        end
        if o.nesterov then d_p = d_p:add(buf, { alpha = mu }) else d_p = buf end
      end
      p:add_(d_p, { alpha = -lr })
    end
    return
  end
  local temps = {}   -- handles made here, released at the end
  local d_p = grads
  if o.maximize then d_p = torch._foreach_neg(d_p); temps[#temps + 1] = d_p end
  if wd ~= 0 then d_p = torch._foreach_add(d_p, params, { alpha = wd }); temps[#temps + 1] = d_p end
  if mu ~= 0 then
    local all = true
    for i = 1, n do if bufs[i] == nil then all = false break end end
    if all then
      torch._foreach_mul_(bufs, mu)
      torch._foreach_add_(bufs, d_p, { alpha = 1 - damp })
    else
      for i = 1, n do
        if bufs[i] == nil then bufs[i] = U.clone(d_p[i])
        else bufs[i]:mul_(mu):add_(d_p[i], { alpha = 1 - damp }) end
      end
    end
    -- Out of place: PyTorch's foreach path adds into the .grad tensors themselves here.
    if o.nesterov then d_p = torch._foreach_add(d_p, bufs, { alpha = mu }); temps[#temps + 1] = d_p
    else d_p = bufs end
  end
  torch._foreach_add_(params, d_p, { alpha = -lr })
  for _, list in ipairs(temps) do U.free(list) end
end

local function check(o)
  local nn = U.non_negative
  local msg = U.lr(o, "learning rate") or U.number(o, "momentum", "momentum value", nn)
    or U.number(o, "dampening", "dampening value", function() return true end)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.boolean(o, "nesterov") or U.boolean(o, "maximize") or U.boolean(o, "foreach")
  if msg then return msg end
  if o.nesterov and (o.momentum == U.required or o.momentum <= 0 or o.dampening ~= 0) then
    return "Nesterov momentum requires a momentum and zero dampening"
  end
end

local SGD = base.Optimizer:extend("SGD", { lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0,
  nesterov = false, maximize = false, foreach = true }, check,
  "params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False, foreach=None, "
  .. "differentiable=False, fused=None")
M.SGD = SGD

function SGD:init_state() return {} end

-- Only a group with momentum reads or makes per-parameter state, as PyTorch's SGD.
function SGD:update_group(group)
  local with_state = group.momentum ~= 0
  local params, grads, states, n = self:collect(group, not with_state)
  local bufs = {}
  if with_state then
    for i = 1, n do bufs[i] = states[i].momentum_buffer end
  end
  M.sgd(params, grads, bufs, n, group)
  if with_state then
    for i = 1, n do states[i].momentum_buffer = bufs[i] end
  end
  U.free(grads, n)
end

return M
