--[[
  torch.optim.adam — Adam and AdamW (decoupled weight decay), as PyTorch 2.11's torch.optim.Adam
  and torch.optim.AdamW (https://pytorch.org/docs/2.11/generated/torch.optim.Adam.html,
  .../torch.optim.AdamW.html).

      local opt = optim.AdamW(model:parameters(), {lr = 3e-4, weight_decay = 0.01})

  Options: lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0 (AdamW: 1e-2),
  amsgrad = false, maximize = false, decoupled_weight_decay = false (true: Adam is AdamW; AdamW
  always has true), foreach = true (multi-tensor libtorch calls, one set per group, made in one
  C call; false updates parameter by parameter — both give PyTorch's foreach=False results bit
  for bit), capturable = false (true: PyTorch's capturable arithmetic, which reads no step count
  on the host, so a CUDA graph can capture the step; like PyTorch, it needs the parameters on a
  CUDA-like device and raises PyTorch's error on the CPU).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's; on the parameter's device when
  capturable), exp_avg, exp_avg_sq, and max_exp_avg_sq with amsgrad.
]]
local torch = require "torch"
local _C = require "torch._C"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

local is_tensor, item, scalar_t = torch.is_tensor, U.scalar, U.hp
local C, check_status = _C.C, _C.check
local table_new = require "table.new"

--[[ adam(params, grads, states, n, o, decoupled): one step for n parameters; states[i] holds
     step, exp_avg, exp_avg_sq (and max_exp_avg_sq). decoupled = true is AdamW.

       for each parameter θ with gradient g (γ = lr, β1, β2 = betas, λ = weight_decay, ε = eps):
         if maximize: g ← −g
         t ← t + 1
         if λ ≠ 0:  Adam: g ← g + λ θ          AdamW: θ ← θ (1 − γ λ)
         m ← m + (1 − β1) (g − m)              (lerp: β1 m + (1 − β1) g, rounded as lerp_)
         v ← β2 v + (1 − β2) g²
         if amsgrad: v_max ← max(v_max, v);  v̂ ← v_max   else v̂ ← v
         θ ← θ − (γ / (1 − β1^t)) · m / (√v̂ / (1 − β2^t)^0.5 + ε)
     The scalars are doubles, as Python's: β^t with pow(), the square root as `** 0.5`.
]]
-- The first half of both per-parameter updates (PyTorch's _single_tensor_adam): t ← t + 1, the
-- weight decay, m and v for one parameter p with gradient g and state s.
local function moments_one(p, g, s, o, decoupled, lr, beta1, beta2, wd)
  if o.maximize then g = g:neg() end
  s.step:add_(1)
  if wd ~= 0 then
    if decoupled then p:mul_(1 - lr * wd) else g = g:add(p, { alpha = wd }) end
  end
  local b1 = is_tensor(beta1) and beta1:to(p.dtype) or beta1   -- PyTorch casts beta1 to the param's dtype
  s.exp_avg:lerp_(g, 1 - b1)
  s.exp_avg_sq:mul_(beta2):addcmul_(g, g, { value = item(1 - beta2) })
end

-- The device types capturable accepts (PyTorch's _get_capturable_supported_devices; its
-- per-parameter path also names xla). A spec may add "cpu", as PyTorch's own tests patch it.
M.capturable_devices = { "cuda", "xpu", "hpu", "privateuseone" }

local LIBRARY = debug.getinfo(1, "S").source:gsub("optim/adam%.lua$", "")   -- "@<dir>/torch/"

-- The error level of the user's opt:step() line, from a function of this file: the first frame
-- outside lua/torch/ (counted from the caller of user_level's caller).
local function user_level()
  local level = 3
  while true do
    local info = debug.getinfo(level, "S")
    if info == nil or (info.what ~= "C" and info.source:sub(1, #LIBRARY) ~= LIBRARY) then break end
    level = level + 1
  end
  return level - 1
end

local function check_capturable(params, states, n, foreach)
  local list = { unpack(M.capturable_devices) }
  if not foreach then list[#list + 1] = "xla" end
  local ok = {}
  for _, d in ipairs(list) do ok[d] = true end
  for i = 1, n do
    local pt, st = params[i].device.type, states[i].step.device.type
    if pt ~= st or not ok[pt] then
      local quoted = {}
      for j, d in ipairs(list) do quoted[j] = "'" .. d .. "'" end
      error(("If capturable=True, params and state_steps must be on supported devices: [%s]."):format(
        table.concat(quoted, ", ")), user_level())
    end
  end
end

-- x / t as PyTorch's Tensor.__rtruediv__ computes a number over a tensor: t.reciprocal() * x
local function rdiv(x, t)
  if is_tensor(x) then return x / t end
  return t:reciprocal():mul(x)
end

--[[ The capturable update, parameter by parameter (PyTorch's _single_tensor_adam with
     capturable): the bias corrections stay tensors on the device, no step count is read.
       bc1 = 1 − β1^t, bc2 = 1 − β2^t (tensors), step_size_neg = −(γ / bc1)
       denom = √v̂ / (√bc2 · step_size_neg) + ε / step_size_neg;  θ ← θ + m / denom ]]
local function adam_capturable(params, grads, states, n, o, decoupled)
  check_capturable(params, states, n, false)
  local lr, beta1, beta2, wd, eps = scalar_t(o.lr), scalar_t(o.betas[1]), scalar_t(o.betas[2]), o.weight_decay, o.eps
  for i = 1, n do
    local p, s = params[i], states[i]
    moments_one(p, grads[i], s, o, decoupled, lr, beta1, beta2, wd)
    local bc1 = torch.rsub(torch.pow(beta1, s.step), 1)
    local bc2 = torch.rsub(torch.pow(beta2, s.step), 1)
    local step_size_neg = rdiv(lr, bc1):neg()
    local bc2_sqrt = bc2:sqrt()
    local v = s.exp_avg_sq
    if o.amsgrad then
      s.max_exp_avg_sq:copy_(torch.maximum(s.max_exp_avg_sq, s.exp_avg_sq))
      v = s.max_exp_avg_sq
    end
    local denom = (v:sqrt() / (bc2_sqrt * step_size_neg)):add_(rdiv(eps, step_size_neg))
    p:addcdiv_(s.exp_avg, denom)
  end
end

--[[ The first half of both foreach updates (PyTorch's _multi_tensor_adam): t ← t + 1, the weight
     decay, m and v (and v_max), and √v̂, for all parameters at once. Returns the lists steps,
     exp_avgs, denom (√v̂, to finish in place) and temps (the lists made here, to free once the
     step is done). ]]
local function foreach_moments(params, grads, states, n, o, decoupled)
  local lr, beta1, beta2, wd = item(o.lr), item(o.betas[1]), item(o.betas[2]), o.weight_decay
  local steps, exp_avgs, exp_avg_sqs = table_new(n, 0), table_new(n, 0), table_new(n, 0)
  local maxes = table_new(o.amsgrad and n or 0, 0)
  for i = 1, n do
    local s = states[i]
    steps[i], exp_avgs[i], exp_avg_sqs[i], maxes[i] = s.step, s.exp_avg, s.exp_avg_sq, s.max_exp_avg_sq
  end
  local temps = {}
  if o.maximize then grads = torch._foreach_neg(grads); temps[#temps + 1] = grads end
  torch._foreach_add_(steps, 1)
  if wd ~= 0 then
    if decoupled then
      torch._foreach_mul_(params, 1 - lr * wd)
    elseif o.maximize then
      torch._foreach_add_(grads, params, { alpha = wd })
    else
      grads = torch._foreach_add(grads, params, { alpha = wd }); temps[#temps + 1] = grads
    end
  end
  torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
  torch._foreach_mul_(exp_avg_sqs, beta2)
  torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
  local v = exp_avg_sqs
  if o.amsgrad then
    torch._foreach_maximum_(maxes, exp_avg_sqs)
    v = maxes
  end
  local denom = torch._foreach_sqrt(v)
  temps[#temps + 1] = denom
  return steps, exp_avgs, denom, temps
end

--[[ The same with _foreach_* calls (PyTorch's _multi_tensor_adam with capturable):
       step_size = 1 / ((β1^t − 1) / γ) = −γ / bc1,  bc2_sqrt = √(−(β2^t − 1))
       denom = ((√v̂ / bc2_sqrt) + ε) / step_size;  θ ← θ + m / denom ]]
local function adam_foreach_capturable(params, grads, states, n, o, decoupled)
  check_capturable(params, states, n, true)
  local lr, beta1, beta2, eps = item(o.lr), item(o.betas[1]), item(o.betas[2]), o.eps
  local steps, exp_avgs, denom, temps = foreach_moments(params, grads, states, n, o, decoupled)
  local bc1, bc2 = torch._foreach_pow(beta1, steps), torch._foreach_pow(beta2, steps)
  temps[#temps + 1], temps[#temps + 2] = bc1, bc2
  torch._foreach_sub_(bc1, 1)
  torch._foreach_sub_(bc2, 1)
  torch._foreach_neg_(bc2)
  torch._foreach_div_(bc1, lr)
  torch._foreach_reciprocal_(bc1)
  torch._foreach_sqrt_(bc2)
  torch._foreach_div_(denom, bc2)
  torch._foreach_add_(denom, eps)
  torch._foreach_div_(denom, bc1)
  torch._foreach_addcdiv_(params, exp_avgs, denom)
  for _, list in ipairs(temps) do U.free(list, n) end
end

function M.adam(params, grads, states, n, o, decoupled)
  if n == 0 then return end
  if o.capturable == true then
    if o.foreach and not U.has_tensor_hp(o) then return adam_foreach_capturable(params, grads, states, n, o, decoupled) end
    return adam_capturable(params, grads, states, n, o, decoupled)
  end
  if o.foreach and not U.has_tensor_hp(o) then return M.adam_foreach(params, grads, states, n, o, decoupled) end
  -- A Tensor lr or beta (0-dim, as PyTorch's _to_scalar leaves it) flows through the same
  -- expressions as tensor arithmetic in its dtype, as in PyTorch; a scalar argument takes its value.
  local lr, beta1, beta2, wd, eps = scalar_t(o.lr), scalar_t(o.betas[1]), scalar_t(o.betas[2]), o.weight_decay, o.eps
  for i = 1, n do
    local p, s = params[i], states[i]
    moments_one(p, grads[i], s, o, decoupled, lr, beta1, beta2, wd)
    local step = s.step:item()
    local step_size = lr / (1 - beta1 ^ step)
    local bc2_sqrt = (1 - beta2 ^ step) ^ 0.5
    local v = s.exp_avg_sq
    if o.amsgrad then
      torch.maximum(s.max_exp_avg_sq, s.exp_avg_sq, { out = s.max_exp_avg_sq })
      v = s.max_exp_avg_sq
    end
    local denom = (v:sqrt() / bc2_sqrt):add_(eps)
    p:addcdiv_(s.exp_avg, denom, { value = item(-step_size) })
  end
end

-- The same update with _foreach_* calls (PyTorch's _multi_tensor_adam), all in one C call:
-- bindings/lt_optim.cpp makes them in this order, the steps' scalars per parameter:
--   [neg], step += 1, weight decay, lerp_ m, mul_ v, addcmul_ v, [maximum_ v_max], sqrt,
--   div_ by √(1 − β2^t), add_ ε, addcdiv_ θ by −γ / (1 − β1^t)
local TensorArray = _C.TensorArray
local function freed(what)
  error(("step: %s was freed (x:free() or a finished torch.scope) and can no longer be used"):format(what),
    user_level())
end

-- The handles of list[i][key] (of list[i] when key is nil), i = 1..n, as a C array.
local function handles(list, n, key, what)
  local a = TensorArray(n)
  for i = 1, n do
    local t = list[i]
    if key ~= nil then t = t[key] end
    local h = t.h
    if h == nil then freed(what) end
    a[i - 1] = h
  end
  return a
end

function M.adam_foreach(params, grads, states, n, o, decoupled)
  local status = C.lt_optim_adam_foreach(handles(params, n, nil, "a parameter"), handles(grads, n, nil, "a gradient"),
    handles(states, n, "exp_avg", "a state tensor (exp_avg)"), handles(states, n, "exp_avg_sq", "a state tensor (exp_avg_sq)"),
    o.amsgrad and handles(states, n, "max_exp_avg_sq", "a state tensor (max_exp_avg_sq)") or nil,
    handles(states, n, "step", "a state tensor (step)"), n, o.lr, o.betas[1], o.betas[2], o.eps, o.weight_decay,
    decoupled and 1 or 0, o.amsgrad and 1 or 0, o.maximize and 1 or 0)
  if status ~= 0 then check_status(status, "step", user_level()) end
end

local function check(o, given)
  local nn = U.non_negative
  local msg = U.tensor_hp(o.lr, "lr", given) or U.lr(o, "learning rate") or U.number(o, "eps", "epsilon value", nn)
    or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.boolean(o, "amsgrad") or U.boolean(o, "maximize") or U.boolean(o, "foreach")
    or U.boolean(o, "decoupled_weight_decay")
  if msg then return msg end
  if type(o.betas) ~= "table" or #o.betas ~= 2 then
    return "invalid betas: expected a table of two numbers, e.g. {0.9, 0.999}"
  end
  local b1, b2 = o.betas[1], o.betas[2]
  if is_tensor(b1) ~= is_tensor(b2) then return "betas must be either both floats or both Tensors" end
  msg = U.tensor_hp(b1, "betas[0]", given) or U.tensor_hp(b2, "betas[1]", given)
  if msg then return msg end
  local in_range = function(v) return v >= 0 and v < 1 end
  local values = { item(b1), item(b2) }
  return U.number(values, 1, "beta parameter at index 0", in_range)
    or U.number(values, 2, "beta parameter at index 1", in_range)
end

-- AdamW is Adam with decoupled_weight_decay = true, always (PyTorch's AdamW takes no such option).
local function check_adamw(o, given)
  if o.decoupled_weight_decay ~= true then return "AdamW always decouples weight decay (use Adam)" end
  return check(o, given)
end

local function init_state(_, p, group)
  -- capturable keeps the step on the parameter's device (PyTorch's), else on the CPU
  local step = group.capturable == true and torch.zeros({}, { device = p.device }) or torch.zeros({})
  local s = { step = step, exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p) }
  if group.amsgrad then s.max_exp_avg_sq = torch.zeros_like(p) end
  return s
end

local function update_group(self, group)
  local params, grads, states, n = self:collect(group)
  if group.amsgrad then   -- a group switched to amsgrad after its first steps
    for i = 1, n do
      if states[i].max_exp_avg_sq == nil then states[i].max_exp_avg_sq = U.zeros_like(params[i]) end
    end
  end
  M.adam(params, grads, states, n, group, group.decoupled_weight_decay)
  U.free(grads, n)
end

local Adam = base.Optimizer:extend("Adam", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0,
  amsgrad = false, maximize = false, foreach = true, decoupled_weight_decay = false }, check,
  "params, lr=0.001, betas=None, eps=1e-08, weight_decay=0, amsgrad=False, *, foreach=None, maximize=False, "
  .. "capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False")
M.Adam = Adam
Adam.init_state = init_state
Adam.update_group = update_group

local AdamW = base.Optimizer:extend("AdamW", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2,
  amsgrad = false, maximize = false, foreach = true, decoupled_weight_decay = true }, check_adamw,
  "params, lr=0.001, betas=None, eps=1e-08, weight_decay=0.01, amsgrad=False, *, maximize=False, foreach=None, "
  .. "capturable=False, differentiable=False, fused=None")
M.AdamW = AdamW
Adam.supported_switches = { capturable = true }
AdamW.supported_switches = { capturable = true }
AdamW.init_state = init_state
AdamW.update_group = update_group

-- Loaded groups become decoupled, as PyTorch's AdamW sets the flag on load (an Adam checkpoint
-- loads too).
function AdamW:load_state_dict(sd)
  if type(sd) == "table" and type(sd.param_groups) == "table" then
    local groups = {}
    for i, g in ipairs(sd.param_groups) do
      groups[i] = U.copy(g)
      if type(g) == "table" then groups[i].decoupled_weight_decay = true end
    end
    sd = { state = sd.state, param_groups = groups }
  end
  return base.Optimizer.load_state_dict(self, sd)
end

return M
