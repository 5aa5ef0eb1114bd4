--[[
  torch.doctor.checks — the doctor's checks on the data and the loss at init, one function each.
  A check takes the context (ctx: setup, cached batches, options, task facts, ctx.stats) and
  returns a finding:
    { id = "init_loss", verdict = "ok"|"warn"|"fail"|"skip", title = "...",
      evidence = "numbers", cause = "likely cause / what to do", confidence = 0..1 (optional) }
  The ids are stable (specs and users match on them). Here: nonfinite, target_format,
  softmax_before_loss, init_loss. The checks of the other themes: torch.doctor.model_checks
  (bn_after_bias, eval_mode, grad_flow, zero_grad, output_bias), torch.doctor.probes (the
  training probes), torch.doctor.data_checks (the data without training), torch.doctor.trace_checks
  (a traced script's own loop); torch.doctor.registry lists them all, in order, as descriptors.

  This module also gives the shared helpers of torch.doctor.check_util (train, eval_loss,
  finding, mean, num, target_stats) and the model checks' functions under their old names here,
  so `doctor.checks.X` keeps working.
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local U = require "torch.doctor.check_util"
local MC = require "torch.doctor.model_checks"

local finding, shape, nograd, num, all_finite = U.finding, U.shape, U.nograd, U.num, U.all_finite
local all_targets, eval_loss, mean, eval_plain = U.all_targets, U.eval_loss, U.mean, U.eval_plain

local M = {}

---------------------------------------------------------------- data sanity
function M.nonfinite(ctx)
  local bad = {}
  for i, b in ipairs(ctx.batches) do
    if torch.is_tensor(b.x) and not all_finite(b.x) then bad[#bad + 1] = ("batch %d inputs"):format(i - 1) end
    if torch.is_tensor(b.y) and not all_finite(b.y) then bad[#bad + 1] = ("batch %d targets"):format(i - 1) end
  end
  local model = S.new_model(ctx.setup, ctx.seed)
  local b = ctx.batches[1]
  local out = nograd(function() return model(b.x) end)
  if torch.is_tensor(out) and not all_finite(out) then bad[#bad + 1] = "model output at init" end
  local ok, loss = pcall(S.call_loss, ctx.setup, model(b.x), b.y)
  if ok then
    if not all_finite(loss) then
      bad[#bad + 1] = "loss at init"
    else
      loss:backward()
      for _, nv in ipairs(model:named_parameters()) do
        local g = nv[2].grad
        if g ~= nil and not all_finite(g) then bad[#bad + 1] = "grad of " .. nv[1] end
      end
    end
  end
  if #bad == 0 then
    return finding("nonfinite", "ok", "no NaN/Inf in inputs, targets, outputs, loss or grads",
      ("%d batches scanned"):format(#ctx.batches))
  end
  local shown = {}
  for i = 1, math.min(5, #bad) do shown[i] = bad[i] end
  return finding("nonfinite", "fail", "NaN/Inf found",
    table.concat(shown, "; ") .. (#bad > 5 and (" (+%d more)"):format(#bad - 5) or ""),
    "non-finite values in the data (missing values, division by a zero std, log of 0) or a "
      .. "numerically unstable op in the model; tools: `ltorch tool find-nan-batches`")
end

function M.target_format(ctx)
  local s, b = ctx.setup, ctx.batches[1]
  local out = ctx.out0
  local y = b.y
  local task = ctx.task
  local problems = {}
  local ln = S.loss_name(s)
  if task == "classification" then
    if y.dtype ~= torch.int64 and not (y:is_floating_point() and y:dim() == out:dim()) then
      problems[#problems + 1] = ("targets are %s; %s wants int64 class indices"):format(tostring(y.dtype), ln)
    end
    if out:dim() >= 2 and y:dim() ~= out:dim() - 1 and not y:is_floating_point() then
      problems[#problems + 1] = ("target shape %s does not fit output %s (expected %s without the class dim)")
        :format(shape(y), shape(out), shape(out:select(1, 0)))
    end
    if not y:is_floating_point() then
      local C = ctx.num_classes
      local ys = all_targets(ctx)
      local lo, hi = num(ys:min()), num(ys:max())
      if out:dim() >= 2 and C ~= out:size(1) then
        problems[#problems + 1] = ("setup.num_classes = %d but the model outputs %d classes"):format(C, out:size(1))
      end
      if lo < 0 or hi >= out:size(1) then
        problems[#problems + 1] = ("labels span %d..%d but the model has %d outputs (0..%d)%s")
          :format(lo, hi, out:size(1), out:size(1) - 1, (lo == 1 and hi == out:size(1)) and
            " — 1-based labels? ltorch, like PyTorch, wants 0-based class indices" or "")
      end
    end
  elseif task == "binary" or task == "regression" then
    -- a loss *function* may convert/reshape the targets itself (out:view(-1), y:float()), so the
    -- dtype is only checked for loss Modules; the shape is checked by what the loss computes
    if S.is_module(s.loss_fn) and not y:is_floating_point() then
      problems[#problems + 1] = ("targets are %s; %s wants floating-point targets"):format(tostring(y.dtype), ln)
    end
    local same = out:dim() == y:dim()
    if same then for d = 0, out:dim() - 1 do if out:size(d) ~= y:size(d) then same = false end end end
    if not same then
      local broadcast = out:numel() ~= y:numel()
      if not broadcast then
        -- same number of elements: does the loss give another value once the shapes agree?
        local l1 = eval_plain(ctx, out, y)
        local l2 = eval_plain(ctx, out:reshape(y:size()), y)
        broadcast = l1 == nil or l2 == nil or math.abs(l1 - l2) > 1e-5 * (math.abs(l2) + 1e-12)
      end
      if broadcast then
        problems[#problems + 1] = ("output %s and target %s differ in shape: the loss broadcasts them "
          .. "(an (N,1) output against (N) targets becomes an (N,N) comparison)"):format(shape(out), shape(y))
      end
    end
    if task == "binary" then
      local ys = all_targets(ctx)
      if num(ys:min()) < 0 or num(ys:max()) > 1 then
        problems[#problems + 1] = ("binary targets outside [0, 1] (%g..%g)"):format(num(ys:min()), num(ys:max()))
      end
    end
  end
  if #problems == 0 then
    return finding("target_format", "ok", "targets match the loss",
      ("task %s, output %s %s, target %s %s"):format(task, shape(out), tostring(out.dtype), shape(y), tostring(y.dtype)))
  end
  return finding("target_format", "fail", "target dtype/shape does not match the loss",
    table.concat(problems, "; "), "convert the labels in the dataset/collate, or fix the model's output shape")
end

function M.softmax_before_loss(ctx)
  local out = ctx.out0
  local ln = S.loss_name(ctx.setup)
  if ctx.task ~= "classification" and ctx.task ~= "binary" then return nil end
  if ln == "BCELoss" or ln == "NLLLoss" then return nil end  -- these take probabilities / log-probs
  if not out:is_floating_point() then return nil end
  local lo, hi = num(out:min()), num(out:max())
  local probs = lo >= 0 and hi <= 1
  local rows_sum_1 = false
  if probs and ctx.task == "classification" and out:dim() >= 2 and out:size(1) > 1 then
    rows_sum_1 = num((out:sum(1) - 1):abs():max()) < 1e-3
  end
  if probs and (rows_sum_1 or ctx.task == "binary") then
    return finding("softmax_before_loss", "fail", "the model outputs probabilities, but the loss expects logits",
      ("outputs in [%.3g, %.3g]%s; loss %s"):format(lo, hi, rows_sum_1 and ", every row sums to 1" or "", ln),
      ctx.task == "binary" and "drop the sigmoid at the end of the model (BCEWithLogitsLoss applies it)"
        or "drop the softmax at the end of the model: cross_entropy applies log_softmax itself; "
        .. "a softmax before it squashes the logits and training stalls")
  end
  return finding("softmax_before_loss", "ok", "outputs look like logits",
    ("outputs in [%.3g, %.3g]"):format(lo, hi))
end

function M.init_loss(ctx)
  local st = ctx.stats
  local losses, uniform = {}, {}
  local model = S.new_model(ctx.setup, ctx.seed)
  for i = 1, math.min(4, #ctx.batches) do
    local b = ctx.batches[i]
    local l, err = eval_loss(ctx, model, b.x, b.y)
    if not l then return finding("init_loss", "fail", "the loss cannot be computed", tostring(err),
      "see target_format") end
    losses[#losses + 1] = l
    -- the script's own loss at uniform predictions (zero logits): its class weights, pos_weight
    -- and label smoothing included
    local out = U.nograd(function() return model(b.x) end)
    uniform[#uniform + 1] = U.eval_plain(ctx, torch.zeros_like(out), b.y) or false
  end
  local l = mean(losses)
  if ctx.task == "regression" then
    local ev = ("loss at init %.4g; MSE of predicting 0 = E[y^2] = %.4g; of predicting the mean = Var(y) = %.4g")
      :format(l, st.zero_loss, st.var)
    if S.loss_name(ctx.setup) == "MSELoss" and l > 3 * st.zero_loss + 1e-6 then
      return finding("init_loss", "warn", "loss at init far above the all-zero prediction", ev,
        "outputs at init are large: the output layer's weights or the input scale are too big")
    end
    return finding("init_loss", "ok", "loss at init as expected", ev)
  end
  local expect = st.uniform_loss
  local ev = ("loss at init %.4f; expected -log(1/%d) = %.4f for uniform predictions; prior entropy %.4f")
    :format(l, ctx.task == "binary" and 2 or ctx.num_classes, expect, st.prior_entropy)
  local weighted = 0
  for _, u in ipairs(uniform) do weighted = u and weighted + u / #uniform or 0 / 0 end
  if weighted == weighted and math.abs(weighted - expect) > 0.02 * expect then
    -- a weighted loss: uniform predictions score otherwise than log C
    expect = weighted
    ev = ev .. ("; your loss at uniform predictions (weights included) %.4f"):format(weighted)
  end
  if l > expect * 1.5 + 0.1 then
    return finding("init_loss", "fail", "loss at init is well above -log(1/C)", ev,
      "the model is confidently wrong at init: output layer weights/bias too large (bad head init, "
        .. "unnormalised inputs), or the targets do not belong to the inputs (mislabelled/shuffled separately)")
  end
  -- a model whose output bias already holds the log-prior starts at the prior entropy, below log C
  if l < 0.5 * math.min(expect, st.prior_entropy) then
    return finding("init_loss", "warn", "loss at init is well below -log(1/C)", ev,
      "the model already knows the answer at init: labels leak into the inputs, or the loss is not what you think")
  end
  return finding("init_loss", "ok", "loss at init matches theory", ev)
end

M.target_stats = U.target_stats
for _, name in ipairs({ "bn_after_bias", "eval_mode", "grad_flow", "zero_grad", "output_layer", "suggested_bias",
  "apply_bias", "output_bias" }) do
  M[name] = MC[name]
end
M.train, M.eval_loss, M.finding, M.mean, M.num = U.train, eval_loss, finding, mean, num
return M
