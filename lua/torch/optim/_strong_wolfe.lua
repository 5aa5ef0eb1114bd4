--[[
  torch.optim._strong_wolfe — the line search of LBFGS's line_search_fn = "strong_wolfe", as
  PyTorch 2.11's torch/optim/lbfgs.py (_strong_wolfe, _cubic_interpolate), after minFunc: bracket
  a step t satisfying the strong Wolfe conditions
      f(x + t d) ≤ f(x) + c1 t gᵀd        (sufficient decrease)
      |g(x + t d)ᵀd| ≤ −c2 gᵀd            (curvature)
  by extrapolation, then zoom in by safeguarded cubic interpolation. Scalars are Lua doubles.

  Usage (internal, from lbfgs.lua):
    local f, g, t, evals = W.strong_wolfe(obj_func, x, t, d, f, g, gtd, {tolerance_change =, max_ls =})
    -- obj_func(x, t, d) -> f(x + t d), its flat gradient (and leaves the parameters at x)
]]
local M = {}

--[[ The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (default:
     the interval between x1 and x2); the bounds' midpoint when the cubic has no minimum. ]]
function M.cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds)
  local lo, hi
  if bounds then lo, hi = bounds[1], bounds[2]
  elseif x1 <= x2 then lo, hi = x1, x2
  else lo, hi = x2, x1 end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2_square = d1 ^ 2 - g1 * g2
  if d2_square >= 0 then
    local d2 = math.sqrt(d2_square)
    local min_pos
    if x1 <= x2 then
      min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else
      min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    end
    return math.min(math.max(min_pos, lo), hi)
  end
  return (lo + hi) / 2.0
end

local cubic = M.cubic_interpolate

-- Phase 1: grow t until the minimum is bracketed (or the curvature condition already holds).
local function bracket_phase(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls, S)
  local f_new, g_new = obj_func(x, t, d)
  S.evals = 1
  local gtd_new = g_new:dot(d):item()
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local ls_iter = 0
  while ls_iter < max_ls do
    if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev) then
      return { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }, false, ls_iter
    end
    if math.abs(gtd_new) <= -c2 * gtd then
      return { t }, { f_new }, { g_new }, nil, true, ls_iter
    end
    if gtd_new >= 0 then
      return { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }, false, ls_iter
    end
    local min_step, max_step = t + 0.01 * (t - t_prev), t * 10
    local tmp = t
    t = cubic(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, { min_step, max_step })
    t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
    f_new, g_new = obj_func(x, t, d)
    S.evals = S.evals + 1
    gtd_new = g_new:dot(d):item()
    ls_iter = ls_iter + 1
  end
  return { 0, t }, { f, f_new }, { g, g_new }, nil, false, ls_iter
end

local function ends(bracket_f)
  if bracket_f[1] <= bracket_f[#bracket_f] then return 1, 2 end
  return 2, 1
end

--[[ strong_wolfe(obj_func, x, t, d, f, g, gtd, opts) -> f_new, g_new, t, evaluations.
     opts: c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9, max_ls = 25. ]]
function M.strong_wolfe(obj_func, x, t, d, f, g, gtd, opts)
  local c1, c2 = opts.c1 or 1e-4, opts.c2 or 0.9
  local tol, max_ls = opts.tolerance_change or 1e-9, opts.max_ls or 25
  local d_norm = d:abs():max():item()
  g = g:clone()
  local S = {}
  local bracket, bf, bg, bgtd, done, ls_iter = bracket_phase(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls, S)
  -- Phase 2: zoom until the conditions hold or the bracket is too small.
  local insuf_progress = false
  local low, high = ends(bf)
  while not done and ls_iter < max_ls do
    if math.abs(bracket[2] - bracket[1]) * d_norm < tol then break end
    t = cubic(bracket[1], bf[1], bgtd[1], bracket[2], bf[2], bgtd[2])
    local bmax, bmin = math.max(bracket[1], bracket[2]), math.min(bracket[1], bracket[2])
    local eps = 0.1 * (bmax - bmin)
    if math.min(bmax - t, t - bmin) < eps then
      if insuf_progress or t >= bmax or t <= bmin then
        if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - eps else t = bmin + eps end
        insuf_progress = false
      else
        insuf_progress = true
      end
    else
      insuf_progress = false
    end
    local f_new, g_new = obj_func(x, t, d)
    S.evals = S.evals + 1
    local gtd_new = g_new:dot(d):item()
    ls_iter = ls_iter + 1
    if f_new > (f + c1 * t * gtd) or f_new >= bf[low] then
      bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new:clone(), gtd_new
      low, high = ends(bf)
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (bracket[high] - bracket[low]) >= 0 then
        bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
      end
      bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new:clone(), gtd_new
    end
  end
  return bf[low], bg[low], bracket[low], S.evals
end

return M
