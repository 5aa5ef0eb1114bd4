--[[
  torch.doctor.baselines — the held-out baselines that decide whether a model uses its inputs
  (input_independent) and whether its labels belong to its inputs (label_alignment), with
  evidence sized to the data and to the spread of repeated runs.

  How the probe is sized: the cached batches are split into training batches and a held-out
  quarter (at least one batch); for each of `repeats` seeds (opts.baseline_repeats, 3) three
  fresh models train for `steps` optimizer steps (opts.baseline_steps, default at least two
  passes over the training batches and at least 60): on real inputs and labels, on zeroed
  inputs, and on labels permuted across the training samples (a different permutation per
  seed). Their held-out losses are compared paired by seed. When a round cannot decide, one
  more round runs at four times the steps (a model that needs many steps before it beats the
  baseline); what still cannot be decided is reported as "inconclusive", never as a failure.

  The input-independent reference (the best constant predictor) is computed on the same
  held-out samples the models are scored on (the training targets' mean for MSE), so every
  number in the evidence is comparable.

    local B = require "torch.doctor.baselines"
    B.input_independent(ctx), B.label_alignment(ctx)  -- findings; ctx.baselines holds the runs
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local U = require "torch.doctor.check_util"
local DC = require "torch.doctor.data_checks"

local M = {}
local finding, train, eval_loss, num = U.finding, U.train, U.eval_loss, U.num

local function with_conf(f, c) f.confidence = c; return f end
local function bad(v) return v == nil or v ~= v or v == math.huge end

-- The batches with their targets permuted across all of them (sample i gets the label of pi(i)).
function M.shuffle_labels(batches, seed)
  local ys, sizes = {}, {}
  for i, b in ipairs(batches) do ys[i] = b.y; sizes[i] = b.y:size(0) end
  local y = torch.cat(ys)
  torch.manual_seed(seed + 7)
  local perm = torch.randperm(y:size(0))
  y = y:index_select(0, perm:to(y.device))
  local out, at = {}, 0
  for i, b in ipairs(batches) do
    out[i] = { x = b.x, y = y:narrow(0, at, sizes[i]) }
    at = at + sizes[i]
  end
  return out
end

-- Sample-weighted mean loss of `model` over the held-out batches (inputs through xform).
local function held_loss(ctx, model, held, xform)
  local total, n = 0, 0
  for _, b in ipairs(held) do
    local l = eval_loss(ctx, model, xform and xform(b.x) or b.x, b.y)
    if bad(l) then return 0 / 0 end
    local k = b.y:size(0)
    total, n = total + l * k, n + k
  end
  return total / n
end

-- The MSE of the best constant (the training targets' mean) on the held-out samples; nil when
-- the loss is not MSELoss.
local function held_prior(ctx, trainb, held)
  if ctx.task ~= "regression" or S.loss_name(ctx.setup) ~= "MSELoss" then return nil end
  local ys, hs = {}, {}
  for i, b in ipairs(trainb) do ys[i] = b.y:double() end
  for i, b in ipairs(held) do hs[i] = b.y:double() end
  local m = num(torch.cat(ys):mean())
  return num((torch.cat(hs) - m):pow(2):mean())
end

local function mean_sd(list)
  local s = 0
  for _, v in ipairs(list) do s = s + v end
  local m = s / #list
  local q = 0
  for _, v in ipairs(list) do q = q + (v - m) ^ 2 end
  return m, #list > 1 and math.sqrt(q / (#list - 1)) or 0
end

-- One round: `repeats` seeds x {real, zeroed inputs, shuffled labels} at `steps`.
local function round(ctx, trainb, held, steps, repeats)
  local zero = function(x) return torch.zeros_like(x) end
  local r = { steps = steps, real = {}, zero = {}, shuffled = {}, fit_real = {}, fit_zero = {} }
  for k = 1, repeats do
    local seed = ctx.seed + 101 * (k - 1)
    local m = S.new_model(ctx.setup, seed)
    -- each repeat sees the training batches in another order (and, where the setup's model
    -- depends on the seed, another init): the spread of the repeats is the probe's noise
    local order = {}
    for i = 1, #trainb do order[i] = trainb[(i + k - 2) % #trainb + 1] end
    local losses = train(ctx, m, order, steps)
    m:eval()
    r.real[k] = held_loss(ctx, m, held)
    r.fit_real[k] = U.mean(losses, math.max(1, math.floor(0.8 * steps)), steps)
    m = S.new_model(ctx.setup, seed)
    losses = train(ctx, m, order, steps, zero)
    m:eval()
    r.zero[k] = held_loss(ctx, m, held, zero)
    r.fit_zero[k] = U.mean(losses, math.max(1, math.floor(0.8 * steps)), steps)
    m = S.new_model(ctx.setup, seed)
    train(ctx, m, M.shuffle_labels(order, seed), steps)
    m:eval()
    r.shuffled[k] = held_loss(ctx, m, held)
  end
  r.real_m, r.real_sd = mean_sd(r.real)
  r.zero_m, r.zero_sd = mean_sd(r.zero)
  r.shuf_m, r.shuf_sd = mean_sd(r.shuffled)
  r.fit_real_m, r.fit_zero_m = mean_sd(r.fit_real), mean_sd(r.fit_zero)
  return r
end

-- `a` is below `b` in every paired repeat and on average by more than `rel` of b.
local function clearly_below(a, b, rel)
  local ma, mb = 0, 0
  for k = 1, #a do
    if bad(a[k]) or bad(b[k]) or a[k] >= b[k] then return false end
    ma, mb = ma + a[k], mb + b[k]
  end
  return ma < (1 - rel) * mb
end

local function decided(r)
  return clearly_below(r.real, r.zero, 0.03) and clearly_below(r.real, r.shuffled, 0.02)
end

-- The cached batches without those that repeat earlier samples (a full-batch script steps on
-- the same tensor every time; so does a loop that cycles a few batches).
local function distinct(batches)
  local seen, out = {}, {}
  for _, b in ipairs(batches) do
    local keys, old = DC.fingerprints({ b }), 0
    for _, k in ipairs(keys) do if seen[k] then old = old + 1 end end
    if old <= 0.5 * #keys then
      out[#out + 1] = b
      for _, k in ipairs(keys) do seen[k] = true end
    end
  end
  return out
end

-- Training batches and the held-out quarter: of the distinct batches, or of one batch's rows
-- when there is only one (full-batch training).
function M.split(batches)
  local d = distinct(batches)
  if #d == 1 and d[1].y:size(0) >= 8 then
    local b, n = d[1], d[1].y:size(0)
    local h = math.max(2, math.floor(n / 4))
    return { { x = b.x:narrow(0, 0, n - h), y = b.y:narrow(0, 0, n - h) } },
      { { x = b.x:narrow(0, n - h, h), y = b.y:narrow(0, n - h, h) } }
  end
  local nb = #d
  local h = math.max(1, math.floor(nb / 4))
  local trainb, held = {}, {}
  for i = 1, nb do
    if i <= nb - h then trainb[#trainb + 1] = d[i] else held[#held + 1] = d[i] end
  end
  return trainb, held
end

-- Runs the rounds once per doctor run; ctx.baselines = the last round (+ prior, trainb size).
local function baselines(ctx)
  if ctx.baselines ~= nil then return ctx.baselines end
  local trainb, held = M.split(ctx.batches)
  local steps = ctx.opts.baseline_steps or math.max(60, 2 * #trainb)
  local repeats = ctx.opts.baseline_repeats or 3
  local r = round(ctx, trainb, held, steps, repeats)
  if not decided(r) and not ctx.opts.baseline_steps then r = round(ctx, trainb, held, 4 * steps, repeats) end
  r.prior = held_prior(ctx, trainb, held)
  r.held = 0
  for _, b in ipairs(held) do r.held = r.held + b.y:size(0) end
  r.repeats = repeats
  ctx.baselines = r
  return r
end

local function fmt(m, sd) return ("%.4g ± %.2g"):format(m, sd) end

local function evidence(r)
  local ev = ("%d held-out samples, %d runs x %d steps each; held-out loss (mean ± sd): real %s, zeroed inputs %s, "
    .. "labels shuffled %s"):format(r.held, r.repeats, r.steps, fmt(r.real_m, r.real_sd), fmt(r.zero_m, r.zero_sd),
    fmt(r.shuf_m, r.shuf_sd))
  if r.prior then ev = ev .. ("; the training mean predicts the held-out targets at %.4g"):format(r.prior) end
  return ev
end

-- Whether the one-batch probe fitted (the script's optimizer or Adam).
local function fits_one_batch(ctx)
  local o = ctx.overfit
  return o and ((not bad(o.final) and o.final <= o.target) or (not bad(o.adam_final) and o.adam_final <= o.target))
end

local function inconclusive(id, title, ev)
  return finding(id, "inconclusive", "inconclusive: " .. title, ev,
    "the probe cannot tell at this size; raise baseline_steps/baseline_repeats or cache more batches (batches =)")
end

local function too_few(ctx)
  local trainb, held = M.split(ctx.batches)
  return #trainb == 0 or #held == 0
end

function M.input_independent(ctx)
  if too_few(ctx) then return finding("input_independent", "skip", "need at least 2 batches") end
  local r = baselines(ctx)
  local ev = evidence(r)
  if bad(r.real_m) then
    return finding("input_independent", "fail", "training on real inputs gives a non-finite held-out loss", ev)
  end
  if clearly_below(r.real, r.zero, 0.03) then
    return finding("input_independent", "ok", "real inputs beat the input-independent baseline", ev)
  end
  -- the model ignores its inputs only if it cannot even fit one batch: a slow learner fits it
  if r.real_m >= 0.99 * r.zero_m and ctx.overfit and not fits_one_batch(ctx) then
    return with_conf(finding("input_independent", "fail", "real inputs do no better than zeroed inputs", ev,
      "the model is not using its inputs: the data pipeline feeds constants/wrong tensors, the inputs are "
        .. "detached or overwritten in forward, or the labels are unrelated to the inputs"), 0.6)
  end
  return inconclusive("input_independent", "real inputs do not yet beat zeroed inputs on held-out data", ev)
end

function M.label_alignment(ctx)
  if too_few(ctx) then return finding("label_alignment", "skip", "need at least 2 batches") end
  if ctx.constant_inputs or ctx.lr_too_small then
    return finding("label_alignment", "skip", "the model cannot learn here (see input_pipeline, learning_rate)")
  end
  local r = baselines(ctx)
  local ev = evidence(r)
  if bad(r.real_m) or bad(r.shuf_m) then return finding("label_alignment", "skip", "a baseline run failed", ev) end
  if clearly_below(r.real, r.shuffled, 0.02) then
    return finding("label_alignment", "ok", "real labels beat shuffled labels in every repeat", ev)
  end
  ev = ev .. ("; training loss (last 20%% of steps): real %.4g, zeroed inputs %.4g"):format(r.fit_real_m, r.fit_zero_m)
  -- misaligned labels: the model memorises its training samples (training loss well below the
  -- zeroed-input model's) and can fit one batch, yet nothing carries over: held-out, real labels
  -- do no better than shuffled ones nor than the input-independent model
  local gap = r.shuf_m - r.real_m
  local noise = math.max(2 * math.sqrt((r.real_sd ^ 2 + r.shuf_sd ^ 2) / r.repeats), 0.02 * r.shuf_m)
  local memorises = r.fit_real_m < 0.9 * r.fit_zero_m
  if gap <= noise and r.real_m >= 0.98 * r.zero_m and memorises and fits_one_batch(ctx) then
    return with_conf(finding("label_alignment", "fail",
      "the labels do not belong to their inputs: real labels do no better than shuffled ones", ev,
      "the model memorises its training samples but nothing carries over to unseen ones: inputs and labels "
        .. "were shuffled, sorted or filtered separately, or come from different files/orders; check that "
        .. "sample i's label is the label of input i"), 0.8)
  end
  return inconclusive("label_alignment", "real labels do not clearly beat shuffled ones on held-out data", ev)
end

return M
