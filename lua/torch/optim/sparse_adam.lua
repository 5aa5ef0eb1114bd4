--[[
  torch.optim.sparse_adam — SparseAdam, Adam masked to the rows a sparse gradient touches, as
  PyTorch 2.11's torch.optim.SparseAdam (https://pytorch.org/docs/2.11/generated/torch.optim.SparseAdam.html).
  For dense parameters whose gradients are sparse COO tensors, as nn.Embedding(..., {sparse = true})
  and nn.EmbeddingBag(..., {sparse = true}) produce:

      local emb = nn.Embedding(10000, 64, {sparse = true})
      local opt = optim.SparseAdam(emb:parameters(), {lr = 1e-3})

  Options: lr = 1e-3 (> 0; a number or a 1-element Tensor), betas = {0.9, 0.999}, eps = 1e-8 (> 0),
  maximize = false. State per parameter: step (an integer, as PyTorch's), exp_avg, exp_avg_sq
  (dense, only their touched entries change). A dense gradient is an error (use Adam).
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"

local M = {}

-- A sparse COO tensor has sparse dimensions; a strided one has none (libtorch's sparse_dim is 0).
local function is_sparse(t) return t:sparse_dim() > 0 end

--[[ sparse_adam(params, grads, states, n, o): one step; grads[i] sparse. With g the coalesced
     gradient's values at its indices I, and m_I, v_I the moments there (γ = lr, β1, β2 = betas):
       m_I ← m_I + (1 − β1) (g − m_I);   v_I ← v_I + (1 − β2) (g² − v_I)
       θ_I ← θ_I − γ √(1 − β2^t) / (1 − β1^t) · m_I / (√v_I + ε)
     Entries outside I keep their moments and values. ]]
function M.sparse_adam(params, grads, states, n, o)
  local lr, beta1, beta2, eps = U.hp(o.lr), o.betas[1], o.betas[2], o.eps
  for i = 1, n do
    local p, s = params[i], states[i]
    local grad = grads[i]
    if o.maximize then grad = grad:neg() end
    grad = grad:coalesce()   -- the update is non-linear, so indices must be unique
    local indices, values = grad:_indices(), grad:_values()
    if values:numel() > 0 then
      local size = grad:size()
      local function make_sparse(v) return torch.sparse_coo_tensor(indices, v, size) end
      local old_exp_avg = s.exp_avg:sparse_mask(grad):_values()
      local exp_avg_update = values:sub(old_exp_avg):mul_(1 - beta1)
      s.exp_avg:add_(make_sparse(exp_avg_update))
      local old_exp_avg_sq = s.exp_avg_sq:sparse_mask(grad):_values()
      local exp_avg_sq_update = values:pow(2):sub_(old_exp_avg_sq):mul_(1 - beta2)
      s.exp_avg_sq:add_(make_sparse(exp_avg_sq_update))
      local numer = exp_avg_update:add_(old_exp_avg)
      local denom = exp_avg_sq_update:add_(old_exp_avg_sq):sqrt_():add_(eps)
      local step = s.step
      local step_size = lr * math.sqrt(1 - beta2 ^ step) / (1 - beta1 ^ step)
      p:add_(make_sparse(-step_size * numer:div_(denom)))
    end
  end
end

local function check(o)
  local msg = U.lr(o, "learning rate")
  if msg then return msg end
  if U.scalar(o.lr) <= 0 then return "invalid learning rate: " .. tostring(U.scalar(o.lr)) end
  msg = U.number(o, "eps", "epsilon value", function(v) return v > 0 end)
  if msg then return msg end
  if type(o.betas) ~= "table" or #o.betas ~= 2 then
    return "invalid betas: expected a table of two numbers, e.g. {0.9, 0.999}"
  end
  local in_range = function(v) return v >= 0 and v < 1 end
  return U.number(o.betas, 1, "beta parameter at index 0", in_range)
    or U.number(o.betas, 2, "beta parameter at index 1", in_range)
    or U.boolean(o, "maximize")
end

local SparseAdam = base.Optimizer:extend("SparseAdam", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
  maximize = false }, check, "params, lr=0.001, betas=None, eps=1e-08, maximize=False")
M.SparseAdam = SparseAdam

-- PyTorch's constructor check: every parameter dense and real ("[group, index]" 0-based). params
-- as the caller gave them: tensors, or group tables; anything else is left to Optimizer.new.
local function check_params(params)
  if type(params) ~= "table" then return end
  local groups = torch.is_tensor(params[1]) and { { params = params } } or params
  local sparse, complex = {}, {}
  for gi, g in ipairs(groups) do
    for pi, p in ipairs(type(g) == "table" and type(g.params) == "table" and g.params or {}) do
      if torch.is_tensor(p) then
        local at = ("[%d, %d]"):format(gi - 1, pi - 1)
        if is_sparse(p) then sparse[#sparse + 1] = at end
        if p:is_complex() then complex[#complex + 1] = at end
      end
    end
  end
  if #sparse > 0 then
    error(("SparseAdam: Sparse params at indices [%s]: SparseAdam requires dense parameter tensors")
      :format(table.concat(sparse, ", ")), 3)
  end
  if #complex > 0 then
    error(("SparseAdam: Complex params at indices [%s]: SparseAdam does not support complex parameters")
      :format(table.concat(complex, ", ")), 3)
  end
end

function SparseAdam.new(class, params, opts)
  check_params(params)
  return base.Optimizer.new(class, params, opts)   -- a tail call: its errors blame the caller's line
end

function SparseAdam:init_state(p)
  return { step = 0, exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p) }
end

function SparseAdam:update_group(group)
  local params, grads, states, n = self:collect(group)
  for i = 1, n do
    if not is_sparse(grads[i]) then
      error("SparseAdam does not support dense gradients, please consider Adam instead", 0)
    end
    states[i].step = states[i].step + 1
  end
  M.sparse_adam(params, grads, states, n, group)
  U.free(grads, n)
end

return M
