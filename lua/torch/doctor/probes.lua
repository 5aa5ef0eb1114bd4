--[[
  torch.doctor.probes — the training probes and the checks that tell apart the causes of a
  model that does no better than an input-independent baseline:
    overfit_batch      can the model drive the loss to ~0 on one batch (the script's optimizer,
                       then Adam 3e-3)? (ctx.overfit)
    input_independent  held-out loss after training on real inputs, on zeroed inputs and on
                       labels shuffled across the samples (ctx.baselines)
    input_pipeline     every sample of a batch is the same tensor (constant inputs: the
                       pipeline feeds zeros/constants)
    learning_rate      an LR sweep on one batch: the loss barely moves at the script's LR but
                       falls at a larger one (too small), or blows up where a smaller one fits
    label_alignment    real labels do no better on held-out data than shuffled labels, the
                       zeroed-input model or the prior, while the model fits one batch
    loss_coverage      the samples whose loss gradient is zero (masking, an ignore_index that
                       is a real class)
  The differential checks read what the probes left in ctx (ctx.overfit, ctx.baselines) and
  return findings with a confidence.
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local C = require "torch.doctor.checks"
local B = require "torch.doctor.baselines"
local U = require "torch.doctor.check_util"

local M = {}
local finding, num, train, eval_loss = C.finding, C.num, C.train, C.eval_loss

local function with_conf(f, c) f.confidence = c; return f end

---------------------------------------------------------------- training probes
local function n_params(ctx)
  local n = 0
  for _, p in ipairs(S.new_model(ctx.setup, ctx.seed):parameters()) do
    if p.requires_grad then n = n + p:numel() end
  end
  return n
end

-- The lowest loss any output reaches on batch b: 0 for plain cross-entropy, the smoothed
-- targets' entropy under label smoothing (0.20 at 0.05 over 4 classes). Measured on one-hot
-- logits at a few scales, so the loss's own options count.
local function loss_floor(ctx, b)
  local nc = ctx.num_classes
  if ctx.task ~= "classification" or not nc or b.y:is_floating_point() then return 0 end
  local ok, onehot = pcall(function()
    return torch.nn.functional.one_hot(b.y:clamp(0, nc - 1), nc):movedim(-1, 1):float()
  end)
  if not ok then return 0 end
  local best = math.huge
  for _, k in ipairs({ 2, 4, 8, 16 }) do
    local l = U.eval_plain(ctx, onehot * k, b.y)
    if l and l < best then best = l end
  end
  return best < math.huge and best or 0
end

local function inconclusive_fit(ev, why)
  return finding("overfit_batch", "inconclusive", "inconclusive: " .. why, ev,
    "raise overfit_steps to give the probe more steps")
end

function M.overfit_batch(ctx)
  local b = ctx.batches[1]
  local n = math.min(b.x:size(0), ctx.opts.overfit_samples or 32)
  local one = { { x = b.x:narrow(0, 0, n), y = b.y:narrow(0, 0, n) } }
  local steps = ctx.opts.overfit_steps or 150
  local start
  local function attempt(make_opt, nsteps)
    local model = S.new_model(ctx.setup, ctx.seed)
    if not start then
      model:eval()
      start = eval_loss(ctx, model, one[1].x, one[1].y)
    end
    local saved = ctx.setup.optimizer
    if make_opt then ctx.setup.optimizer = make_opt end
    local ok, losses = pcall(train, ctx, model, one, nsteps or steps)
    ctx.setup.optimizer = saved
    if not ok then return nil, losses end
    model:eval()
    local final = eval_loss(ctx, model, one[1].x, one[1].y)
    return losses[1], final
  end
  local first, final = attempt(nil)
  if not first then return finding("overfit_batch", "fail", "training on one batch raised an error", tostring(final)) end
  local target
  if ctx.task == "regression" then target = math.max(0.05 * ctx.stats.var, 1e-6)
  else target = loss_floor(ctx, one[1]) + 0.1 * ctx.stats.uniform_loss end
  ctx.overfit = { first = first, start = start, final = final, target = target, steps = steps, batch = one[1] }
  local ev = ("%d samples, %d steps with your optimizer: loss %.4g -> %.4g (pass below %.3g)"):format(n, steps, first, final, target)
  if final == final and final <= target then
    return finding("overfit_batch", "ok", "the model overfits one batch", ev)
  end
  -- A loss still falling at the script's (small) LR is given four times the steps before judging.
  if final == final and final < 0.5 * start then
    local _, long = attempt(nil, 4 * steps)
    ev = ev .. ("; %d steps: -> %s"):format(4 * steps, long and ("%.4g"):format(long) or "error")
    if long and long == long and long <= target then
      ctx.overfit.final, ctx.overfit.steps = long, 4 * steps
      return finding("overfit_batch", "ok", "the model overfits one batch (given more steps)", ev)
    end
  end
  -- Retry with Adam at a known-good lr: if that works, the optimizer/lr is the problem, not the model.
  local _, final2 = attempt(function(params) return torch.optim.Adam(params, { lr = 3e-3 }) end)
  ctx.overfit.adam_final = final2
  if final2 and final2 == final2 and final2 <= target then
    -- a loss that falls steadily at the script's LR (a schedule's warm-up start, or a small LR
    -- the script runs for many epochs) is not a weak optimizer: the probe is too short to tell
    if final == final and final < 0.75 * start then
      return inconclusive_fit(ev .. ("; Adam(lr=3e-3): -> %.4g"):format(final2),
        "the loss falls at the script's LR but needs more steps than the probe runs to reach the target")
    end
    return finding("overfit_batch", "warn", "one batch is overfitted only with Adam(lr=3e-3)",
      ev .. ("; Adam(lr=3e-3): -> %.4g"):format(final2),
      "your optimizer/learning rate is too weak (or too strong) for this model; tune the LR")
  end
  -- a model with fewer parameters than the batch has target values cannot memorise noisy
  -- labels: a loss that clearly falls is all one batch can show
  local params, targets = n_params(ctx), one[1].y:numel()
  if params < targets then
    ev = ev .. ("; Adam(lr=3e-3): -> %s; %d parameters for %d target values"):format(
      final2 and ("%.4g"):format(final2) or "error", params, targets)
    if final == final and final < 0.75 * start then
      return finding("overfit_batch", "ok", "the loss falls as far as the model's capacity allows", ev)
    end
    return inconclusive_fit(ev, "a model this small cannot memorise one batch")
  end
  return finding("overfit_batch", "fail", "the model cannot overfit a single batch",
    ev .. ("; Adam(lr=3e-3): -> %s"):format(final2 and ("%.4g"):format(final2) or "error"),
    "a bug in the model, the loss or the data: outputs not connected to inputs, a softmax before the "
      .. "loss, labels not matching inputs, frozen parameters, a capacity far too small")
end

-- The held-out baselines (sized to the data, repeated, with an inconclusive verdict) live in
-- torch.doctor.baselines.
M.input_independent, M.shuffle_labels = B.input_independent, B.shuffle_labels

---------------------------------------------------------------- the differential

function M.input_pipeline(ctx)
  local const, all_zero, n = 0, 0, 0
  for _, b in ipairs(ctx.batches) do
    local x = b.x
    if torch.is_tensor(x) and x:dim() >= 1 and x:size(0) > 1 then
      n = n + 1
      local xd = x:double()
      local spread = num((xd - xd:narrow(0, 0, 1)):abs():max())
      if spread == 0 then
        const = const + 1
        if num(xd:abs():max()) == 0 then all_zero = all_zero + 1 end
      end
    end
  end
  local ev = ("%d of %d batches have identical inputs for every sample%s"):format(const, n,
    all_zero > 0 and (" (%d all zero)"):format(all_zero) or "")
  if n == 0 or const < n then
    return finding("input_pipeline", "ok", "inputs vary across samples", ev)
  end
  ctx.constant_inputs = true
  return with_conf(finding("input_pipeline", "fail", "the model's inputs are constant: the data pipeline feeds no signal",
    ev, "the tensor that reaches model(x) does not depend on the sample: a buffer never filled, a "
      .. "normalisation that zeroes it (x - x, a std of 0, integer division), the wrong variable passed; "
      .. "print the batch right before model(x)"), 0.97)
end

-- Trains a fresh model on one batch for `steps` at `lr` (the script's optimizer class); returns
-- the first and final (eval) losses.
local function one_batch(ctx, batch, steps, lr)
  local saved = ctx.setup.optimizer
  ctx.setup.optimizer = function(params)
    local opt = saved and saved(params) or torch.optim.SGD(params, { lr = lr })
    for _, g in ipairs(opt.param_groups) do g.lr = lr end
    return opt
  end
  local model = S.new_model(ctx.setup, ctx.seed)
  local ok, losses = pcall(train, ctx, model, { batch }, steps)
  ctx.setup.optimizer = saved
  if not ok then return nil end
  model:eval()
  return losses[1], eval_loss(ctx, model, batch.x, batch.y)
end

local function script_lr(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  return S.new_optimizer(ctx.setup, model).param_groups[1].lr
end

local function bad(v) return v == nil or v ~= v or v == math.huge end

function M.learning_rate(ctx)
  local o = ctx.overfit
  if not o or bad(o.first) then return finding("learning_rate", "skip", "no one-batch run to judge (see overfit_batch)") end
  local lr = script_lr(ctx)
  local start = bad(o.start) and o.first or o.start
  local moved = bad(o.final) and math.huge or (start - o.final) / math.max(math.abs(start), 1e-12)
  local ev = ("one batch, %d steps at the script's lr %.3g: loss %.4g -> %.4g (%.1f%% lower)")
    :format(o.steps, lr, start, o.final, 100 * (bad(o.final) and 0 / 0 or moved))
  if not bad(o.final) and o.final <= o.target then
    return finding("learning_rate", "ok", "the script's LR trains", ev)
  end
  local steps = ctx.opts.sweep_steps or 60
  local best, sweep = nil, {}
  for _, s_lr in ipairs(ctx.opts.sweep_lrs or { 1e-4, 1e-3, 1e-2, 1e-1 }) do
    local first, final = one_batch(ctx, o.batch, steps, s_lr)
    sweep[#sweep + 1] = ("%.0e: %s"):format(s_lr, bad(final) and "diverged" or ("%.3g"):format(final))
    if first and not bad(final) and (not best or final < best.final) then best = { lr = s_lr, final = final, first = first } end
  end
  ev = ev .. ("; sweep over %d steps, final loss by lr: %s"):format(steps, table.concat(sweep, ", "))
  local fits = best and (best.final <= o.target or best.final < 0.5 * best.first)
  if fits and moved < 0.05 and lr < best.lr / 10 then
    ctx.lr_too_small = true
    return with_conf(finding("learning_rate", "fail", "the learning rate is too small: the loss barely moves",
      ev, ("at lr %.3g the weights hardly change; lr %.0e fits the batch: raise the LR (tune it: an LR range "
        .. "test, then a constant LR)"):format(lr, best.lr)), moved < 0.01 and 0.95 or 0.85)
  end
  if fits and (bad(o.final) or o.final > start) and lr > best.lr * 10 then
    return with_conf(finding("learning_rate", "fail", "the learning rate is too large: the loss diverges",
      ev, ("lr %.0e fits the batch: lower the LR (and check the init and input scale)"):format(best.lr)), 0.85)
  end
  return finding("learning_rate", "ok", "no LR in the sweep does clearly better than the script's", ev)
end

M.label_alignment = B.label_alignment

-- Per-sample |d loss / d output| on the first batch: the rows that get none, and for class
-- targets the classes none of whose samples get any.
local function zero_rows(ctx, model, b)
  local out = torch.no_grad(function() return model(b.x) end):detach():requires_grad_(true)
  local loss = S.call_loss(ctx.setup, out, b.y)
  local g = torch.autograd.grad(loss, out, { allow_unused = true })[1]
  local n = out:size(0)
  if g == nil then return n, n, {} end
  local dead = g:reshape(n, -1):abs():sum(1):eq(0)
  local classes = {}
  if ctx.task == "classification" and not b.y:is_floating_point() and b.y:dim() == 1 and out:dim() == 2 then
    local nclasses = out:size(1)
    for c = 0, nclasses - 1 do
      local is_c = b.y:eq(c)
      local k = num(is_c:sum())
      if k > 0 and num(dead:logical_and(is_c):sum()) == k then classes[#classes + 1] = c end
    end
  end
  return n, num(dead:sum()), classes
end

function M.loss_coverage(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  model:train()
  local ok, rows, zero, classes = pcall(zero_rows, ctx, model, ctx.batches[1])
  if not ok then return finding("loss_coverage", "skip", "the loss's gradient could not be taken", tostring(rows)) end
  local frac = zero / rows
  local ev = ("%d of %d samples of the first batch get no gradient from the loss"):format(zero, rows)
  if #classes > 0 then
    ev = ev .. ("; every sample of class %s is ignored, though the model outputs that class")
      :format(table.concat(classes, ", "))
  end
  local cause = "masking, an ignore_index that is a real class, or a loss over a slice of the output drop samples "
    .. "from training: keep ignore_index for padding only (-100) and check the mask"
  if #classes > 0 or frac >= 0.5 then
    return with_conf(finding("loss_coverage", "fail", "the loss ignores part of the batch", ev, cause), #classes > 0 and 0.9 or 0.7)
  end
  if frac >= 0.1 then return with_conf(finding("loss_coverage", "warn", "the loss ignores some samples", ev, cause), 0.5) end
  return finding("loss_coverage", "ok", "the loss covers the batch", ev)
end

return M
