--[[
  torch.optim.rprop — resilient backpropagation (Riedmiller & Braun 1993), as PyTorch 2.11's
  torch.optim.Rprop (https://pytorch.org/docs/2.11/generated/torch.optim.Rprop.html).

      local opt = optim.Rprop(model:parameters(), {lr = 1e-2, etas = {0.5, 1.2}})

  Options: lr = 1e-2 (the initial step size), etas = {0.5, 1.2} (η−, η+), step_sizes =
  {1e-6, 50} (the bounds of a step), maximize = false, foreach = true (accepted as PyTorch's; the
  update runs parameter by parameter either way, PyTorch's foreach=False arithmetic). capturable
  and differentiable are not supported (an error).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's), prev (the previous
  gradient), step_size (per element).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ rprop(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient g (η−, η+ = etas, Δmin, Δmax = step_sizes):
         if maximize: g ← −g
         t ← t + 1
         per element: s ← sign(g · g_prev)
           s > 0: Δ ← min(Δ η+, Δmax)
           s < 0: Δ ← max(Δ η−, Δmin);   g ← 0     (no step, and no sign change next time)
           s = 0: Δ unchanged
         θ ← θ − sign(g) Δ;   g_prev ← g
]]
function M.rprop(params, grads, states, n, o)
  local etaminus, etaplus = o.etas[1], o.etas[2]
  local step_min, step_max = o.step_sizes[1], o.step_sizes[2]
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    local sign = g:mul(s.prev):sign()
    sign:masked_fill_(sign:gt(0), etaplus)
    sign:masked_fill_(sign:lt(0), etaminus)
    sign:masked_fill_(sign:eq(0), 1)
    s.step_size:mul_(sign):clamp_(step_min, step_max)
    g = g:clone()
    g:masked_fill_(sign:eq(etaminus), 0)
    p:addcmul_(g:sign(), s.step_size, { value = -1 })
    s.prev:copy_(g)
  end
end

local function pair(o, key, example)
  local v = o[key]
  if type(v) ~= "table" or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    return ("invalid %s: expected a table of two numbers, e.g. %s"):format(key, example)
  end
end

local function check(o)
  local msg = U.lr(o, "learning rate")
    or pair(o, "etas", "{0.5, 1.2}") or pair(o, "step_sizes", "{1e-6, 50}")
    or U.boolean(o, "maximize") or U.boolean(o, "foreach")
  if msg then return msg end
  local e = o.etas
  if not (0.0 < e[1] and e[1] < 1.0 and 1.0 < e[2]) then
    return ("invalid eta values: %s, %s"):format(tostring(e[1]), tostring(e[2]))
  end
end

local Rprop = base.Optimizer:extend("Rprop", { lr = 1e-2, etas = { 0.5, 1.2 }, step_sizes = { 1e-6, 50 },
  maximize = false, foreach = true }, check,
  "params, lr=0.01, etas=None, step_sizes=None, *, capturable=False, foreach=None, maximize=False, "
  .. "differentiable=False")
M.Rprop = Rprop

function Rprop:init_state(p, group)
  return { step = torch.zeros({}), prev = torch.zeros_like(p), step_size = torch.full_like(p, U.scalar(group.lr)) }
end

function Rprop:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.rprop(params, grads, states, n, group)
  U.free(grads, n)
end

return M
