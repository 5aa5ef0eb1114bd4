--[[
  torch.optim.adafactor — Adafactor (Shazeer & Stern 2018), as PyTorch 2.11's
  torch.optim.Adafactor (https://pytorch.org/docs/2.11/generated/torch.optim.Adafactor.html):
  the second moment of a matrix kept as a row factor and a column factor (sublinear memory).

      local opt = optim.Adafactor(model:parameters(), {lr = 1e-2, weight_decay = 1e-2})

  Options: lr = 1e-2 (the ceiling of the relative step size and the weight-decay factor),
  beta2_decay = -0.8, eps = {torch.None, 1e-3} (ε1: None or nil means the parameter dtype's
  machine epsilon; ε2), d = 1.0 (the update clipping threshold), weight_decay = 0.0, maximize = false,
  foreach = true (accepted as PyTorch's; the update runs parameter by parameter either way,
  PyTorch's foreach=False arithmetic, which is also PyTorch's default for Adafactor).
  State per parameter: step (a float32 0-dim tensor, as PyTorch's); for a parameter of 2 or more
  dimensions row_var (last dimension 1) and col_var (second-to-last dimension 1), else variance.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"
local None = require "torch.serialization.none"

local M = {}

-- torch.finfo(dtype).eps, for ε1 = None.
local MACHINE_EPS = { float32 = 2 ^ -23, float64 = 2 ^ -52, float16 = 2 ^ -10, bfloat16 = 2 ^ -7 }

local function machine_eps(p)
  local e = MACHINE_EPS[tostring(p.dtype):match("([%w]+)$")]
  if e == nil then error("Adafactor: parameters must be floating point, got " .. tostring(p.dtype), 0) end
  return e
end

local norm = torch.linalg.vector_norm

--[[ adafactor(params, grads, states, n, o): one step for n parameters.

       for each parameter θ with gradient G (γ = lr, τ = beta2_decay, ε1, ε2 = eps, λ = weight_decay):
         if maximize: G ← −G
         t ← t + 1;   β̂ ← t^τ   (1 − β2 of this step)
         ρ ← min(γ, 1/√t);   α ← max(ε2, RMS(θ)) ρ
         θ ← θ (1 − γ λ)
         matrix:  R ← lerp(R, mean(G², last dim), β̂);  C ← lerp(C, mean(G², second-to-last dim), β̂)
                  V̂ ← R C / max(mean(R, second-to-last dim), ε1)
         else:    V ← lerp(V, G², β̂);  V̂ ← V
         U ← G / √(max(V̂, ε1²));   θ ← θ − α U / max(1, RMS(U) / d)
]]
-- Python's min(a, b): a unless b < a (a Tensor lr stays a Tensor).
local function py_min(a, b)
  if b < U.scalar(a) then return b end
  return a
end

function M.adafactor(params, grads, states, n, o)
  local lr, tau, d, wd = U.hp(o.lr), o.beta2_decay, o.d, o.weight_decay
  local eps1, eps2 = o.eps[1], o.eps[2]
  if eps1 == None then eps1 = nil end
  for i = 1, n do
    local p, g, s = params[i], grads[i], states[i]
    if o.maximize then g = g:neg() end
    eps1 = eps1 or machine_eps(p)   -- as PyTorch: the first parameter's dtype decides for the group
    s.step:add_(1)
    local step = s.step:item()
    local one_minus_beta2 = step ^ tau
    local rho = py_min(lr, 1 / (step ^ 0.5))
    local alpha = math.max(eps2, norm(p, 2):item() / (p:numel() ^ 0.5)) * rho
    if wd ~= 0 then p:mul_(1 - lr * wd) end
    local var
    if g:dim() > 1 then
      s.row_var:lerp_(norm(g, 2, -1, true):square_():div_(g:size(-1)), one_minus_beta2)
      s.col_var:lerp_(norm(g, 2, -2, true):square_():div_(g:size(-2)), one_minus_beta2)
      var = torch.matmul(s.row_var, s.col_var)
      var:div_(s.row_var:mean(-2, true):clamp_({ min = eps1 }))
    else
      s.variance:lerp_(g * g, one_minus_beta2)
      var = s.variance:clone()
    end
    local update = var:clamp_({ min = eps1 * eps1 }):rsqrt_()
    update:mul_(g)
    local denom = math.max(1.0, norm(update, 2):item() / ((update:numel() ^ 0.5) * d))
    p:add_(update, { alpha = U.scalar(-alpha / denom) })
  end
end

local function check(o)
  local e = o.eps
  if type(e) ~= "table" or type(e[2]) ~= "number" or not (e[1] == nil or e[1] == None or type(e[1]) == "number") then
    return "invalid eps: expected a table {epsilon1 or nil, epsilon2}, e.g. {nil, 1e-3}"
  end
  return U.lr(o, "learning rate (should be >= 0)")
    or U.number(o, "beta2_decay", "beta2_decay (should be <= 0)", function(v) return v <= 0 end)
    or (type(e[1]) == "number" and U.number(e, 1, "epsilon1 (should be >= 0)", U.non_negative))
    or U.number(e, 2, "epsilon2 (should be >= 0)", U.non_negative)
    or U.number(o, "d", "clipping threshold d (should be >= 1)", function(v) return v >= 1 end)
    or U.number(o, "weight_decay", "weight_decay (should be >= 0)", U.non_negative)
    or U.boolean(o, "maximize") or U.boolean(o, "foreach")
end

local Adafactor = base.Optimizer:extend("Adafactor", { lr = 1e-2, beta2_decay = -0.8, eps = { None, 1e-3 }, d = 1.0,
  weight_decay = 0.0, maximize = false, foreach = true }, check,
  "params, lr=0.01, beta2_decay=-0.8, eps=None, d=1.0, weight_decay=0.0, *, foreach=None, maximize=False")
M.Adafactor = Adafactor

function Adafactor:init_state(p)
  if p:is_complex() then error("Adafactor does not support complex parameters", 0) end
  local s = { step = torch.zeros({}) }
  if p:dim() > 1 then
    local row, col, k = {}, {}, p:dim()
    for j = 1, k do row[j], col[j] = p:size(j - 1), p:size(j - 1) end
    row[k], col[k - 1] = 1, 1
    s.row_var, s.col_var = p:new_zeros(row), p:new_zeros(col)
  else
    s.variance = torch.zeros_like(p)
  end
  return s
end

function Adafactor:update_group(group)
  local params, grads, states, n = self:collect(group)
  M.adafactor(params, grads, states, n, group)
  U.free(grads, n)
end

return M
