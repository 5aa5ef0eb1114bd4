--[[
  torch.doctor.check_util — what the doctor's checks share: the finding record, numbers out of
  tensors, the targets of the cached batches and their statistics, and the short training and
  evaluation loops the differential checks run.

    finding(id, verdict, title, evidence, cause) -> { id =, verdict =, title =, evidence =, cause = }
    train(ctx, model, batches, steps, xform) -> per-step losses, optimizer
    eval_loss(ctx, model, x, y) -> loss number, or nil, error
    target_stats(ctx) -> expected losses and label statistics (ctx.stats)

  Usage:  local U = require "torch.doctor.check_util"
]]
local torch = require "torch"
local S = require "torch.doctor.setup"

local M = {}

local function finding(id, verdict, title, evidence, cause)
  return { id = id, verdict = verdict, title = title, evidence = evidence, cause = cause }
end

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

local function nograd(f) return torch.no_grad(f) end

local function num(t) return t:double():item() end

local function all_finite(t)
  if not t:is_floating_point() then return true end
  return t:isfinite():all():item()
end

-- The targets of all cached batches, concatenated (for label statistics); class-index targets
-- equal to the loss's ignore_index (-100 by default, as in PyTorch) are left out.
local function all_targets(ctx)
  local ys = {}
  for _, b in ipairs(ctx.batches) do ys[#ys + 1] = b.y:flatten() end
  local y = torch.cat(ys)
  if ctx.task == "classification" and not y:is_floating_point() then
    local lf = ctx.setup.loss_fn
    local ignore = (type(lf) == "table" and rawget(lf, "ignore_index")) or -100
    if type(ignore) == "number" then
      local keep = y:ne(ignore)
      if not keep:all():item() then y = y[keep] end
    end
  end
  return y
end

-- loss on (x, y) with model, without grad, as a number (nil, err on error).
local function eval_loss(ctx, model, x, y)
  return nograd(function()
    local ok, l = pcall(function() return num(S.call_loss(ctx.setup, model(x), y)) end)
    if ok then return l end
    return nil, l
  end)
end

-- Train `model` for `steps` over `batches` (cycled); `xform(x)` may replace inputs.
-- Returns the list of per-step losses (each step's loss before its update).
local function train(ctx, model, batches, steps, xform)
  local opt = S.new_optimizer(ctx.setup, model)
  model:train()
  local losses = {}
  for i = 1, steps do
    local b = batches[(i - 1) % #batches + 1]
    local x = xform and xform(b.x) or b.x
    -- every optimizer takes the closure (PyTorch's step(closure)); a closure optimizer needs it
    local first
    opt:step(function()
      opt:zero_grad()
      local loss = S.call_loss(ctx.setup, model(x), b.y)
      loss:backward()
      first = first or loss:detach()
      return loss
    end)
    losses[i] = num(first)
  end
  return losses, opt
end

local function mean(list, a, b)
  a, b = a or 1, b or #list
  local s = 0
  for i = a, b do s = s + list[i] end
  return s / (b - a + 1)
end

-- the loss of an output tensor (no model), as a number; nil on error
local function eval_plain(ctx, out, y)
  local ok, l = pcall(function()
    return nograd(function() return num(S.call_loss(ctx.setup, out, y)) end)
  end)
  if ok then return l end
end

-- Expected numbers for a model whose outputs are ~0 at init, and for the best constant predictor.
function M.target_stats(ctx)
  local ys = all_targets(ctx)
  local st = {}
  if ctx.task == "classification" and not ys:is_floating_point() then
    local C = ctx.num_classes
    local counts = torch.bincount(ys, { minlength = C }):double()
    local p = counts / counts:sum()
    st.prior = p:tolist()
    st.uniform_loss = math.log(C)
    local ent = 0
    for _, pi in ipairs(st.prior) do if pi > 0 then ent = ent - pi * math.log(pi) end end
    st.prior_entropy = ent
    local mx, mn = 0, 1
    for _, pi in ipairs(st.prior) do mx = math.max(mx, pi); mn = math.min(mn, pi) end
    st.imbalance = mn > 0 and mx / mn or math.huge
  elseif ctx.task == "binary" then
    local p = num(ys:double():mean())
    st.p = p
    st.uniform_loss = math.log(2)
    st.prior_entropy = (p > 0 and p < 1) and -(p * math.log(p) + (1 - p) * math.log(1 - p)) or 0
  else
    local yd = ys:double()
    st.mean, st.var = num(yd:mean()), num(yd:var({ unbiased = false }))
    st.zero_loss = num((yd * yd):mean())   -- MSE of an all-zero prediction
  end
  return st
end

M.finding, M.shape, M.nograd, M.num, M.all_finite = finding, shape, nograd, num, all_finite
M.all_targets, M.eval_loss, M.train, M.mean, M.eval_plain = all_targets, eval_loss, train, mean, eval_plain
return M
