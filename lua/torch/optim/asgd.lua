--[[
  torch.optim.asgd — averaged stochastic gradient descent (Polyak & Juditsky 1992), as PyTorch
  2.11's torch.optim.ASGD (https://pytorch.org/docs/2.11/generated/torch.optim.ASGD.html).

      local opt = optim.ASGD(model:parameters(), {lr = 1e-2, t0 = 100})
      -- the averaged parameters are opt.state[p].ax

  Options: lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weight_decay = 0, maximize = false,
  foreach = true (accepted as PyTorch's; the update runs parameter by parameter either way,
  PyTorch's foreach=False arithmetic). capturable and differentiable are not supported (an error).
  State per parameter: step, eta, mu (float32 0-dim tensors, as PyTorch's), ax (the average).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

--[[ asgd(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient g (γ = lr, λ = lambd, α = alpha, ω = weight_decay):
         if maximize: g ← −g
         t ← t + 1
         if ω ≠ 0:    g ← g + ω θ
         θ ← θ (1 − λ η) − η g                (η: the eta of the previous step, γ at first)
         if μ ≠ 1:    ax ← ax + μ (θ − ax)    else: ax ← θ
         η ← γ / (1 + λ γ t)^α;   μ ← 1 / max(1, t − t0)
]]
function M.asgd(params, grads, states, n, o)
  local lr, lambd, alpha, t0, wd = U.hp(o.lr), o.lambd, o.alpha, o.t0, o.weight_decay
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    s.step:add_(1)
    if wd ~= 0 then g = g:add(p, { alpha = wd }) end
    local eta = s.eta:item()
    p:mul_(1 - lambd * eta)
    p:add_(g, { alpha = -eta })
    if s.mu:item() ~= 1 then
      s.ax:add_(p:sub(s.ax):mul_(s.mu))
    else
      s.ax:copy_(p)
    end
    local step = s.step:item()
    local eta_next = lr / ((1 + lambd * lr * step) ^ alpha)   -- a 0-dim Tensor for a Tensor lr
    if torch.is_tensor(eta_next) then s.eta:copy_(eta_next) else s.eta:fill_(eta_next) end
    s.mu:fill_(1 / math.max(1, step - t0))
  end
end

local function check(o)
  local nn = U.non_negative
  return U.lr(o, "learning rate") or U.number(o, "weight_decay", "weight_decay value", nn)
    or U.number(o, "lambd", "lambd value", U.any) or U.number(o, "alpha", "alpha value", U.any)
    or U.number(o, "t0", "t0 value", U.any)
    or U.boolean(o, "maximize") or U.boolean(o, "foreach")
end

local ASGD = base.Optimizer:extend("ASGD", { lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weight_decay = 0,
  maximize = false, foreach = true }, check,
  "params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0, foreach=None, maximize=False, "
  .. "differentiable=False, capturable=False")
M.ASGD = ASGD

function ASGD:init_state(p, group)
  return { step = torch.zeros({}), eta = torch.tensor(U.scalar(group.lr), { dtype = torch.float32 }), mu = torch.ones({}),
    ax = torch.zeros_like(p) }
end

function ASGD:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.asgd(params, grads, states, n, group)
  U.free(grads, n)
end

return M
