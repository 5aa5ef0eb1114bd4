--[[
  torch.optim.lbfgs — L-BFGS, as PyTorch 2.11's torch.optim.LBFGS
  (https://pytorch.org/docs/2.11/generated/torch.optim.LBFGS.html), after minFunc.

      local opt = optim.LBFGS(model:parameters(), {lr = 1, history_size = 10, line_search_fn = "strong_wolfe"})
      opt:step(function()
        opt:zero_grad()
        local loss = loss_fn(model(x), y)
        loss:backward()
        return loss
      end)

  step(closure) runs up to max_iter iterations, each of which may re-evaluate the closure (which
  must compute the loss, call backward and return the loss). One parameter group only; the
  parameters are treated as one flat vector.
  Options: lr = 1, max_iter = 20, max_eval = max_iter * 5 // 4, tolerance_grad = 1e-7,
  tolerance_change = 1e-9, history_size = 100, line_search_fn = None or "strong_wolfe".
  State (on the first parameter, as PyTorch's): func_evals, n_iter, d, t, old_dirs, old_stps,
  ro, H_diag, prev_flat_grad, prev_loss, al. H_diag is PyTorch's: the number 1 until the first
  pair, then a 0-dim tensor in the parameters' dtype. The other scalars PyTorch keeps as 0-dim
  tensors (ro, al, t) are Lua numbers here (a loaded PyTorch state converts); for float32 parameters
  they are rounded to float32 as PyTorch's tensors are, for float64 they are exact. The line
  search's scalar arithmetic is in doubles (PyTorch's mixes float32 tensors in), so a float32 run
  with line_search_fn may differ from PyTorch's in the last bits.
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"
local P = require "torch._pysig"
local None = require "torch.serialization.none"
local wolfe = require "torch.optim._strong_wolfe"

local istype, Ref = ffi.istype, _C.Ref

local M = {}

local function num(x)
  if istype(Ref, x) then return x:item() end
  return x
end

-- Rounding of a scalar as PyTorch's 0-dim tensor of the parameters' dtype would hold it.
local function rounder(p)
  if p.dtype == torch.float32 then return function(x) return tonumber(ffi.new("float", x)) end end
  return function(x) return x end
end

---------------------------------------------------------------- the flat parameter vector
local function gather_flat_grad(params)
  local views = {}
  for i, p in ipairs(params) do
    local g = p.grad
    views[i] = g == nil and torch.zeros(p:numel(), { dtype = p.dtype, device = p.device }) or g:view(-1)
  end
  return torch.cat(views, 0)
end

local function add_grad(params, step_size, update)
  local offset = 0
  for _, p in ipairs(params) do
    local k = p:numel()
    p:add_(update:narrow(0, offset, k):view_as(p), { alpha = step_size })
    offset = offset + k
  end
end

local function clone_params(params)
  local out = {}
  for i, p in ipairs(params) do out[i] = p:clone() end
  return out
end

local function set_params(params, values)
  for i, p in ipairs(params) do p:copy_(values[i]) end
end

local function evaluate(closure)
  local loss = torch.enable_grad(closure)
  if type(loss) ~= "number" and not istype(Ref, loss) then
    error("LBFGS: the closure must return the loss (a Tensor or a number), got " .. type(loss), 0)
  end
  return loss
end

---------------------------------------------------------------- the direction
--[[ The two-loop recursion: d ← −H g with H the L-BFGS inverse Hessian estimate from the
     pairs (s_i = old_stps[i], y_i = old_dirs[i]), ρ_i = 1 / (y_i · s_i), scaled by H_diag. ]]
local function direction(st, flat_grad, r32)
  local old_dirs, old_stps, ro = st.old_dirs, st.old_stps, st.ro
  local num_old = #old_dirs
  local al = st.al
  local q = flat_grad:neg()
  for i = num_old, 1, -1 do
    al[i] = r32(old_stps[i]:dot(q):item() * ro[i])
    q:add_(old_dirs[i], { alpha = -al[i] })
  end
  local r = torch.mul(q, st.H_diag)
  for i = 1, num_old do
    local be_i = r32(old_dirs[i]:dot(r):item() * ro[i])
    r:add_(old_stps[i], { alpha = r32(al[i] - be_i) })
  end
  return r
end

-- Stores the newest (y, s) pair, dropping the oldest beyond history_size.
local function remember(st, flat_grad, history_size, r32)
  local y = flat_grad:sub(st.prev_flat_grad)
  local s = st.d:mul(st.t)
  local ys_t = y:dot(s)
  local ys = ys_t:item()
  if ys > 1e-10 then
    if #st.old_dirs == history_size then
      table.remove(st.old_dirs, 1); table.remove(st.old_stps, 1); table.remove(st.ro, 1)
    end
    st.old_dirs[#st.old_dirs + 1] = y
    st.old_stps[#st.old_stps + 1] = s
    st.ro[#st.ro + 1] = r32(1.0 / ys)
    st.H_diag = U.unscoped(torch.div, ys_t, y:dot(y))   -- a 0-dim tensor in the parameters' dtype, as PyTorch's
  end
end

-- A state loaded from PyTorch holds 0-dim tensors where this file keeps numbers.
local function numbers(st)
  for _, k in ipairs({ "t", "prev_loss" }) do st[k] = num(st[k]) end
  for _, k in ipairs({ "ro", "al" }) do
    if type(st[k]) == "table" then
      for i, v in pairs(st[k]) do if v ~= None then st[k][i] = num(v) end end
    end
  end
end

---------------------------------------------------------------- one step
--[[ lbfgs(opt, closure) -> the closure's first loss. Per iteration: the direction d (steepest
     descent at the first, the two-loop recursion after), the step t (min(1, 1/‖g‖₁) · lr at the
     first, lr after, or the strong Wolfe line search), θ ← θ + t d; stops at max_iter,
     max_eval evaluations, ‖g‖∞ ≤ tolerance_grad, or changes below tolerance_change. ]]
function M.lbfgs(opt, closure)
  local group = opt.param_groups[1]
  local params = group.params
  local lr, max_iter, max_eval = U.scalar(group.lr), group.max_iter, group.max_eval   -- a tensor lr: its value
  local tol_grad, tol_change = group.tolerance_grad, group.tolerance_change
  local r32 = rounder(params[1])
  local st = opt.state[params[1]]
  if st == nil then st = {}; opt.state[params[1]] = st end
  st.func_evals, st.n_iter = st.func_evals or 0, st.n_iter or 0
  numbers(st)
  local orig_loss = evaluate(closure)
  local loss = num(orig_loss)
  local current_evals = 1
  st.func_evals = st.func_evals + 1
  local flat_grad = gather_flat_grad(params)
  if flat_grad:abs():max():item() <= tol_grad then return orig_loss end
  local n_iter = 0
  while n_iter < max_iter do
    n_iter = n_iter + 1
    st.n_iter = st.n_iter + 1
    if st.n_iter == 1 then
      st.d = flat_grad:neg()
      st.old_dirs, st.old_stps, st.ro, st.H_diag = {}, {}, {}, 1
    else
      remember(st, flat_grad, group.history_size, r32)
      if st.al == nil then   -- PyTorch's [None] * history_size
        st.al = {}
        for i = 1, group.history_size do st.al[i] = None end
      end
      st.d = direction(st, flat_grad, r32)
    end
    if st.prev_flat_grad == nil then st.prev_flat_grad = U.clone(flat_grad) else st.prev_flat_grad:copy_(flat_grad) end
    st.prev_loss = loss
    if st.n_iter == 1 then
      local inv = r32(1.0 / flat_grad:abs():sum():item())
      st.t = inv < 1.0 and r32(inv * r32(lr)) or 1.0 * lr
    else
      st.t = lr
    end
    local d = st.d
    local gtd = flat_grad:dot(d):item()
    if gtd > -tol_change then break end
    local ls_func_evals, opt_cond = 0, false
    if group.line_search_fn ~= None and group.line_search_fn ~= nil then
      local x_init = clone_params(params)
      local function obj_func(x, t, dir)
        add_grad(params, t, dir)
        local f = num(evaluate(closure))
        local g = gather_flat_grad(params)
        set_params(params, x)
        return f, g
      end
      loss, flat_grad, st.t, ls_func_evals = wolfe.strong_wolfe(obj_func, x_init, st.t, d, loss, flat_grad, gtd,
        { tolerance_change = tol_change, max_ls = max_eval - current_evals })
      add_grad(params, st.t, d)
      opt_cond = flat_grad:abs():max():item() <= tol_grad
    else
      add_grad(params, st.t, d)
      if n_iter ~= max_iter then
        loss = num(evaluate(closure))
        flat_grad = gather_flat_grad(params)
        opt_cond = flat_grad:abs():max():item() <= tol_grad
        ls_func_evals = 1
      end
    end
    current_evals = current_evals + ls_func_evals
    st.func_evals = st.func_evals + ls_func_evals
    if n_iter == max_iter or current_evals >= max_eval or opt_cond then break end
    if d:mul(st.t):abs():max():item() <= tol_change then break end
    if math.abs(loss - st.prev_loss) < tol_change then break end
  end
  return orig_loss
end

---------------------------------------------------------------- the class
local function check(o)
  local count = function(v) return v >= 0 and v % 1 == 0 end
  local msg = U.lr(o, "learning rate") or U.number(o, "max_iter", "max_iter", count)
    or (o.max_eval ~= None and U.number(o, "max_eval", "max_eval", count))
    or U.number(o, "tolerance_grad", "tolerance_grad", U.any)
    or U.number(o, "tolerance_change", "tolerance_change", U.any)
    or U.number(o, "history_size", "history_size", count)
  if msg then return msg end
  local fn = o.line_search_fn
  if fn ~= None and fn ~= "strong_wolfe" then
    return ("only 'strong_wolfe' is supported as line_search_fn, got %s"):format(tostring(fn))
  end
end

local LBFGS = base.Optimizer:extend("LBFGS", { lr = 1, max_iter = 20, max_eval = None, tolerance_grad = 1e-7,
  tolerance_change = 1e-9, history_size = 100, line_search_fn = None }, check,
  "params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-07, tolerance_change=1e-09, history_size=100, "
  .. "line_search_fn=None")
M.LBFGS = LBFGS

function LBFGS.new(class, params, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.max_eval == nil or o.max_eval == None then
    o.max_eval = math.floor((o.max_iter or class.defaults.max_iter) * 5 / 4)
  end
  local self = base.Optimizer.new(class, params, o)
  if #self.param_groups ~= 1 then P.fail("LBFGS doesn't support per-parameter options (parameter groups)") end
  return self
end

function LBFGS:add_param_group()
  P.fail("LBFGS doesn't support per-parameter options (parameter groups)")
end

-- step(closure) -> the loss of the closure's first evaluation (closure required).
function LBFGS:step(closure)
  if type(closure) ~= "function" then
    error(("bad argument #1 to 'step' (LBFGS needs a closure that re-evaluates the model and returns the loss, "
      .. "got %s)"):format(U.typename(closure)), 2)
  end
  local loss = torch.no_grad(function() return M.lbfgs(self, closure) end)
  self._step_count = self._step_count + 1
  return loss
end

return M
