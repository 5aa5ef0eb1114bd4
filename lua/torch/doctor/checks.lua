--[[
  torch.doctor.checks — the checks `torch.doctor.run` performs, one function each. A check takes
  the context (ctx: setup, cached batches, options, task facts) and returns findings:
    { id = "init_loss", verdict = "ok"|"warn"|"fail"|"skip", title = "...",
      evidence = "numbers", cause = "likely cause / what to do" }
  The ids are stable (specs and users match on them):
    nonfinite, target_format, softmax_before_loss, init_loss, bn_after_bias, eval_mode,
    grad_flow, zero_grad, overfit_batch, input_independent, output_bias, batch_view,
    lr_schedule, split_leak
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
-- Returns the list of per-step losses.
local function train(ctx, model, batches, steps, xform)
  local opt = S.new_optimizer(ctx.setup, model)
  model:train()
  local losses = {}
  for i = 1, steps do
    local b = batches[(i - 1) % #batches + 1]
    local x = xform and xform(b.x) or b.x
    opt:zero_grad()
    local loss = S.call_loss(ctx.setup, model(x), b.y)
    loss:backward()
    opt:step()
    losses[i] = num(loss:detach())
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

function M.init_loss(ctx)
  local st = ctx.stats
  local losses = {}
  local model = S.new_model(ctx.setup, ctx.seed)
  for i = 1, math.min(4, #ctx.batches) do
    local l, err = eval_loss(ctx, model, ctx.batches[i].x, ctx.batches[i].y)
    if not l then return finding("init_loss", "fail", "the loss cannot be computed", tostring(err),
      "see target_format") end
    losses[#losses + 1] = l
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

---------------------------------------------------------------- model structure
local function is_bn(m) local n = m.__name; return n == "BatchNorm1d" or n == "BatchNorm2d" or n == "BatchNorm3d" end
local function is_affine(m)
  local n = m.__name
  return n == "Linear" or n == "Conv1d" or n == "Conv2d" or n == "Conv3d"
end

function M.bn_after_bias(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  local prev, prev_name, hits = nil, nil, {}
  for _, nm in ipairs(model:named_modules()) do
    local name, m = nm[1], nm[2]
    if #m:children() == 0 then
      if is_bn(m) and prev and is_affine(prev) and prev.bias ~= nil then
        hits[#hits + 1] = ("%s (%s) -> %s"):format(prev_name, prev.__name, name)
      end
      prev, prev_name = m, name
    end
  end
  if #hits == 0 then return finding("bn_after_bias", "ok", "no biased Linear/Conv directly before a BatchNorm") end
  return finding("bn_after_bias", "warn", "biased layer directly before BatchNorm", table.concat(hits, "; "),
    "BatchNorm subtracts the mean and adds its own beta, so the bias is a dead parameter: use {bias = false}")
end

function M.eval_mode(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  local x = ctx.batches[1].x
  -- one training step so BatchNorm running stats are not at their init
  nograd(function() model:train(); model(x) end)
  model:eval()
  local bufs_before = {}
  for i, nb in ipairs(model:named_buffers()) do bufs_before[i] = nb[2]:clone() end
  local a, b = nograd(function() return model(x), model(x) end)
  local problems = {}
  local diff = num((a:double() - b:double()):abs():max())
  if diff > 1e-6 then
    problems[#problems + 1] = ("two eval() forwards of the same batch differ by up to %.3g"):format(diff)
  end
  for i, nb in ipairs(model:named_buffers()) do
    if bufs_before[i] and nb[2]:is_floating_point() and not torch.equal(bufs_before[i], nb[2]) then
      problems[#problems + 1] = ("buffer %s changed during an eval() forward"):format(nb[1])
    end
  end
  local ev_extra = ""
  if ctx.setup.evaluate then
    -- the user's evaluation function, called on a model left in train mode (as after an epoch):
    -- it must switch to eval itself
    local m2 = S.new_model(ctx.setup, ctx.seed)
    m2:train()
    local bufs = {}
    for i, nb in ipairs(m2:named_buffers()) do bufs[i] = nb[2]:clone() end
    local o1 = nograd(function() return ctx.setup.evaluate(m2, x) end)
    m2:train()
    local o2 = nograd(function() return ctx.setup.evaluate(m2, x) end)
    local d2 = num((o1:double() - o2:double()):abs():max())
    local changed = false
    for i, nb in ipairs(m2:named_buffers()) do
      if bufs[i] and nb[2]:is_floating_point() and not torch.equal(bufs[i], nb[2]) then changed = true end
    end
    if d2 > 1e-6 or changed then
      problems[#problems + 1] = ("setup.evaluate on a model left in train mode: %s"):format(
        d2 > 1e-6 and ("two calls differ by up to %.3g"):format(d2) or "BatchNorm running stats changed")
      ctx.eval_fn_bad = true
    else
      ev_extra = "; setup.evaluate is deterministic"
    end
  end
  if #problems == 0 then
    return finding("eval_mode", "ok", "eval() is deterministic and leaves buffers alone",
      ("max |difference| between two eval forwards %.3g"):format(diff) .. ev_extra)
  end
  if ctx.eval_fn_bad and #problems == 1 then
    return finding("eval_mode", "fail", "evaluation runs in training mode", table.concat(problems, "; "),
      "call model:eval() at the start of evaluation (and model:train() before training again): "
        .. "dropout stays on and BatchNorm uses and updates batch statistics otherwise")
  end
  return finding("eval_mode", "fail", "dropout/BatchNorm still active in eval mode", table.concat(problems, "; "),
    "a layer ignores self.training: e.g. F.dropout(x, p, true) or F.batch_norm(..., training=true) in a "
      .. "custom forward; pass self.training through")
end

function M.grad_flow(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  local b = ctx.batches[1]
  model:train()
  local ok, err = pcall(function() S.call_loss(ctx.setup, model(b.x), b.y):backward() end)
  if not ok then return finding("grad_flow", "skip", "backward failed", tostring(err)) end
  local rep = torch.nn.utils.grad_flow(model)
  if #rep.flagged == 0 then
    return finding("grad_flow", "ok", "every trainable parameter gets a healthy gradient",
      ("%d parameters"):format(#rep))
  end
  local items = {}
  for i = 1, math.min(5, #rep.flagged) do
    local e = rep.flagged[i]
    items[i] = ("%s %s (|g| %s)"):format(e.name, e.status, e.grad_norm and ("%.3g"):format(e.grad_norm) or "-")
  end
  local verdict = "warn"
  for _, e in ipairs(rep.flagged) do if e.status == "nonfinite" or e.status == "no grad" then verdict = "fail" end end
  return finding("grad_flow", verdict, ("%d of %d parameters have a suspicious gradient"):format(#rep.flagged, #rep),
    table.concat(items, "; "),
    "'no grad': the parameter is not on the loss's path (unused layer, detach(), a tensor op outside "
      .. "autograd); 'zero'/'vanishing': dead ReLUs, saturated activations; 'exploding': LR/init too large")
end

function M.zero_grad(ctx)
  local s = ctx.setup
  if not s.train_step then
    return finding("zero_grad", "skip", "no setup.train_step given",
      "doctor's own loop zeroes the gradients; pass your train_step(model, x, y, loss_fn, optimizer) to check yours")
  end
  local model = S.new_model(s, ctx.seed)
  local opt = S.new_optimizer(s, model)
  for _, g in ipairs(opt.param_groups) do g.lr = 0 end      -- the weights stay put between the calls
  local snaps, orig = {}, opt.step
  opt.step = function(self, ...)
    local snap = {}
    for i, p in ipairs(model:parameters()) do snap[i] = p.grad and p.grad:clone() or false end
    snaps[#snaps + 1] = snap
    return orig(self, ...)
  end
  local b = ctx.batches[1]
  -- dropout would make the two gradients differ for other reasons
  model:train()
  torch.manual_seed(ctx.seed); s.train_step(model, b.x, b.y, s.loss_fn, opt)
  torch.manual_seed(ctx.seed); s.train_step(model, b.x, b.y, s.loss_fn, opt)
  if #snaps < 2 then
    return finding("zero_grad", "skip", "train_step did not call optimizer:step() twice")
  end
  local num1, d_same, d_double = 0, 0, 0
  for i, g1 in ipairs(snaps[1]) do
    local g2 = snaps[2][i]
    if g1 and g2 then
      num1 = num1 + num(g1:double():norm())
      d_same = d_same + num((g2 - g1):double():norm())
      d_double = d_double + num((g2 - g1 * 2):double():norm())
    end
  end
  local ev = ("same batch twice, lr 0: |g2 - g1| = %.3g, |g2 - 2 g1| = %.3g (|g1| = %.3g)"):format(d_same, d_double, num1)
  if d_double < d_same then
    return finding("zero_grad", "fail", "gradients accumulate across steps (missing zero_grad)", ev,
      "call optimizer:zero_grad() (or model:zero_grad()) before loss:backward() in every step")
  end
  return finding("zero_grad", "ok", "gradients are reset between steps", ev)
end

---------------------------------------------------------------- training probes
function M.overfit_batch(ctx)
  local b = ctx.batches[1]
  local n = math.min(b.x:size(0), ctx.opts.overfit_samples or 32)
  local one = { { x = b.x:narrow(0, 0, n), y = b.y:narrow(0, 0, n) } }
  local steps = ctx.opts.overfit_steps or 150
  local function attempt(make_opt)
    local model = S.new_model(ctx.setup, ctx.seed)
    local saved = ctx.setup.optimizer
    if make_opt then ctx.setup.optimizer = make_opt end
    local ok, losses = pcall(train, ctx, model, one, steps)
    ctx.setup.optimizer = saved
    if not ok then return nil, losses end
    model:eval()
    local final = eval_loss(ctx, model, one[1].x, one[1].y)
    return losses[1], final
  end
  local first, final = attempt(nil)
  if not first then return finding("overfit_batch", "fail", "training on one batch raised an error", tostring(final)) end
  local target
  if ctx.task == "regression" then target = math.max(0.05 * ctx.stats.var, 1e-6) else target = 0.1 * ctx.stats.uniform_loss end
  local ev = ("%d samples, %d steps with your optimizer: loss %.4g -> %.4g (pass below %.3g)"):format(n, steps, first, final, target)
  if final == final and final <= target then
    return finding("overfit_batch", "ok", "the model overfits one batch", ev)
  end
  -- Retry with Adam at a known-good lr: if that works, the optimizer/lr is the problem, not the model.
  local _, final2 = attempt(function(params) return torch.optim.Adam(params, { lr = 3e-3 }) end)
  if final2 and final2 == final2 and final2 <= target then
    return finding("overfit_batch", "warn", "one batch is overfitted only with Adam(lr=3e-3)",
      ev .. ("; Adam(lr=3e-3): -> %.4g"):format(final2),
      "your optimizer/learning rate is too weak (or too strong) for this model; tune the LR")
  end
  return finding("overfit_batch", "fail", "the model cannot overfit a single batch",
    ev .. ("; Adam(lr=3e-3): -> %s"):format(final2 and ("%.4g"):format(final2) or "error"),
    "a bug in the model, the loss or the data: outputs not connected to inputs, a softmax before the "
      .. "loss, labels not matching inputs, frozen parameters, a capacity far too small")
end

function M.input_independent(ctx)
  if #ctx.batches < 2 then return finding("input_independent", "skip", "need at least 2 batches") end
  local trainb, held = {}, ctx.batches[#ctx.batches]
  for i = 1, #ctx.batches - 1 do trainb[i] = ctx.batches[i] end
  local steps = ctx.opts.baseline_steps or 60
  local zero = function(x) return torch.zeros_like(x) end
  local real = S.new_model(ctx.setup, ctx.seed)
  train(ctx, real, trainb, steps)
  real:eval()
  local l_real = eval_loss(ctx, real, held.x, held.y)
  local blind = S.new_model(ctx.setup, ctx.seed)
  train(ctx, blind, trainb, steps, zero)
  blind:eval()
  local l_zero = eval_loss(ctx, blind, zero(held.x), held.y)
  local ev = ("%d steps; held-out batch loss: real inputs %.4g, zeroed inputs %.4g"):format(steps, l_real, l_zero)
  local cause = "the model is not using its inputs: the data pipeline feeds constants/wrong tensors, the "
    .. "inputs are detached or overwritten in forward, or the labels are unrelated to the inputs"
  if not (l_real == l_real) or l_real > 0.99 * l_zero then
    return finding("input_independent", "fail", "real inputs do no better than zeroed inputs", ev, cause)
  end
  if l_real > 0.95 * l_zero then
    return finding("input_independent", "warn", "real inputs barely beat zeroed inputs", ev,
      "a hard task early in training (raise baseline_steps to be sure), or: " .. cause)
  end
  return finding("input_independent", "ok", "real inputs beat the input-independent baseline", ev)
end

-- The layer whose bias produces the outputs: the last Linear/Conv with a bias (registration order).
local function output_layer(model)
  local last
  for _, nm in ipairs(model:named_modules()) do
    local m = nm[2]
    if is_affine(m) and m.bias ~= nil then last = nm end
  end
  return last
end
M.output_layer = output_layer

-- The bias the data suggests: log-prior (classification), logit(p) (binary), mean (regression).
function M.suggested_bias(ctx)
  local st = ctx.stats
  if ctx.task == "classification" and st.prior then
    local b = {}
    for i, p in ipairs(st.prior) do b[i] = math.log(math.max(p, 1e-6)) end
    return b
  elseif ctx.task == "binary" then
    local p = math.min(math.max(st.p, 1e-6), 1 - 1e-6)
    return { math.log(p / (1 - p)) }
  else
    return { st.mean }
  end
end

function M.apply_bias(model, bias)
  local nm = output_layer(model)
  if not nm then return false end
  local bt = nm[2].bias
  nograd(function()
    if #bias == 1 then bt:fill_(bias[1]) else bt:copy_(torch.tensor(bias, { dtype = bt.dtype })) end
  end)
  return nm[1]
end

function M.output_bias(ctx)
  local st = ctx.stats
  local needed, why
  if ctx.task == "classification" then
    needed = st.imbalance and st.imbalance > 3
    why = ("class frequencies range %.3g..%.3g (imbalance %.1fx)"):format(
      math.min(unpack(st.prior)), math.max(unpack(st.prior)), st.imbalance or 0)
  elseif ctx.task == "binary" then
    needed = st.p < 0.25 or st.p > 0.75
    why = ("positive rate %.3g"):format(st.p)
  else
    needed = math.abs(st.mean) > math.sqrt(st.var) + 1e-12
    why = ("target mean %.4g, std %.4g"):format(st.mean, math.sqrt(st.var))
  end
  local bias = M.suggested_bias(ctx)
  local model = S.new_model(ctx.setup, ctx.seed)
  local layer = output_layer(model)
  if not layer then
    return finding("output_bias", needed and "warn" or "ok", "no output layer with a bias found", why)
  end
  if not needed then
    return finding("output_bias", "ok", "output bias init not needed", why .. ("; output layer %s"):format(layer[1]))
  end
  -- already initialised (e.g. the recipe sets it)? then the suggested bias does not lower the loss
  local probe = S.new_model(ctx.setup, ctx.seed)
  M.apply_bias(probe, bias)
  local as_is, with = 0, 0
  for i = 1, math.min(4, #ctx.batches) do
    local b = ctx.batches[i]
    as_is = as_is + (eval_loss(ctx, model, b.x, b.y) or 0 / 0)
    with = with + (eval_loss(ctx, probe, b.x, b.y) or 0 / 0)
  end
  if as_is <= with * 1.02 + 1e-12 then
    return finding("output_bias", "ok", "the output bias already fits the data",
      why .. ("; loss at init %.4g as is, %.4g with the suggested bias"):format(as_is / math.min(4, #ctx.batches),
        with / math.min(4, #ctx.batches)))
  end
  local steps = ctx.opts.bias_steps or 20
  local plain = train(ctx, model, ctx.batches, steps)
  local fixed_model = S.new_model(ctx.setup, ctx.seed)
  M.apply_bias(fixed_model, bias)
  local fixed = train(ctx, fixed_model, ctx.batches, steps)
  local shown = {}
  for i = 1, math.min(#bias, 10) do shown[i] = ("%.3g"):format(bias[i]) end
  local ev = ("%s; suggested %s.bias = {%s}%s; mean loss over the first %d steps: %.4g as is, %.4g with the bias")
    :format(why, layer[1], table.concat(shown, ", "), #bias > 10 and ", ..." or "", steps, mean(plain), mean(fixed))
  ctx.fix_bias = bias
  return finding("output_bias", "warn", "initialise the output bias from the data", ev,
    ctx.task == "regression" and "the first steps only learn the target mean (a hockey-stick loss curve): set the bias to it"
      or "the first steps only learn the class prior (a hockey-stick loss curve): set the bias to log(prior); "
      .. "torch.doctor.run(setup, {fix = true}) applies it")
end

---------------------------------------------------------------- look at the data
local function write_grid(path, x, nshow)
  local img = require "torch.data.image"
  -- x: (N, C, H, W) or (N, H, W) float/uint8 -> uint8 grid, min-max scaled over the shown images
  if x:dim() == 3 then x = x:unsqueeze(1) end
  local n = math.min(nshow, x:size(0))
  local xs = x:narrow(0, 0, n):double()
  local C, H, W = xs:size(1), xs:size(2), xs:size(3)
  if C ~= 1 and C ~= 3 then xs = xs:narrow(1, 0, 1); C = 1 end
  local lo, hi = num(xs:min()), num(xs:max())
  xs = (xs - lo) / math.max(hi - lo, 1e-12) * 255
  local cols = math.min(8, n)
  local rows = math.ceil(n / cols)
  local grid = torch.zeros(rows * (H + 2), cols * (W + 2), C, { dtype = torch.float64 })
  for i = 0, n - 1 do
    local r, c = math.floor(i / cols), i % cols
    grid:narrow(0, r * (H + 2) + 1, H):narrow(1, c * (W + 2) + 1, W):copy_(xs[i]:permute(1, 2, 0))
  end
  img.write_png(path, grid:round():clamp(0, 255):to(torch.uint8))
  return rows, cols, lo, hi
end

function M.batch_view(ctx)
  local b = ctx.batches[1]
  local x, y = b.x, b.y
  local n = math.min(16, x:size(0))
  local labels = {}
  local yl = y:narrow(0, 0, n)
  local names = ctx.setup.class_names
  if yl:dim() == 1 then
    for i, v in ipairs(yl:double():tolist()) do
      local name = type(names) == "table" and v % 1 == 0 and names[v + 1]
      labels[i] = name and ("%g:%s"):format(v, tostring(name)) or ("%g"):format(v)
    end
  else
    for i = 1, n do labels[i] = shape(yl[i - 1]) end
  end
  local ev = ("input %s %s, target %s %s"):format(shape(x), tostring(x.dtype), shape(y), tostring(y.dtype))
  local image_like
  if x:dim() == 4 and (x:size(1) == 1 or x:size(1) == 3) then image_like = x
  elseif x:dim() == 3 and x:size(1) >= 8 and x:size(2) >= 8 and x:is_floating_point() then image_like = x
  elseif x:dim() == 2 and x:is_floating_point() then
    local side = math.floor(math.sqrt(x:size(1)) + 0.5)
    if side >= 8 and side * side == x:size(1) then image_like = x:view(x:size(0), 1, side, side) end
  end
  local notes = {}
  if ctx.setup.decode then
    for i = 0, math.min(4, x:size(0)) - 1 do
      notes[#notes + 1] = ("  [%s] %s"):format(labels[i + 1], tostring(ctx.setup.decode(x[i])))
    end
  elseif image_like and ctx.opts.out_dir ~= false then
    local dir = ctx.opts.out_dir or "runs/doctor"
    os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'")
    local path = dir .. "/batch.png"
    local ok, rows, cols, lo, hi = pcall(write_grid, path, image_like, n)
    if ok then
      ev = ev .. ("; %d images written to %s (%dx%d grid, pixel range %.3g..%.3g)"):format(n, path, rows, cols, lo, hi)
      ctx.batch_png = path
      for r = 0, rows - 1 do
        local row = {}
        for c = 1, cols do row[#row + 1] = labels[r * cols + c] end
        notes[#notes + 1] = ("  labels row %d: %s"):format(r + 1, table.concat(row, " "))
      end
    else
      notes[#notes + 1] = "  (grid not written: " .. tostring(rows) .. ")"
    end
  elseif not x:is_floating_point() and x:dim() >= 2 then
    -- token ids (or other integer codes) without setup.decode: the raw ids of the first rows
    for i = 0, math.min(3, x:size(0)) - 1 do
      local row = x[i]:flatten()
      local ids = row:narrow(0, 0, math.min(24, row:numel())):tolist()
      notes[#notes + 1] = ("  [%s] %s%s"):format(labels[i + 1], table.concat(ids, " "), row:numel() > 24 and " ..." or "")
    end
    notes[#notes + 1] = "  (integer inputs: pass setup.decode(row) -> string to see them as text)"
  elseif x:dim() == 2 and x:is_floating_point() then
    local xd = x:double()
    local mu, sd = xd:mean(0), xd:std(0)
    local const, big = 0, 0
    for _, v in ipairs(sd:tolist()) do if v == 0 then const = const + 1 end end
    for _, v in ipairs(mu:abs():tolist()) do if v > 10 then big = big + 1 end end
    ev = ev .. ("; features: mean %.3g..%.3g, std %.3g..%.3g; %d constant, %d with |mean| > 10")
      :format(num(mu:min()), num(mu:max()), num(sd:min()), num(sd:max()), const, big)
    notes[#notes + 1] = "  first labels: " .. table.concat(labels, " ")
  else
    notes[#notes + 1] = "  first labels: " .. table.concat(labels, " ")
  end
  ev = ev .. "\n" .. table.concat(notes, "\n")
  return finding("batch_view", "ok", "the batch the model sees", ev,
    "look at it: wrong normalisation, flipped/rotated images, labels that do not match are visible here")
end

---------------------------------------------------------------- LR schedule over the planned run
function M.lr_schedule(ctx)
  local s = ctx.setup
  if not s.scheduler then return finding("lr_schedule", "ok", "no scheduler: constant LR") end
  local epochs = s.epochs
  if not epochs then return finding("lr_schedule", "skip", "setup.epochs not given; cannot plan the schedule") end
  local per_step = s.scheduler_step == "step"
  local spe = s.steps_per_epoch
  if per_step and not spe then
    -- a DataLoader knows its length; a builder returning one is asked once
    local ok, l = pcall(function()
      local v = type(s.train_loader) == "function" and s.train_loader() or s.train_loader
      if type(v) == "table" and type(v.len) == "function" then return v:len() end
      if type(v) == "table" and #v > 0 then return #v end
    end)
    spe = ok and l or nil
    if not spe then
      return finding("lr_schedule", "skip", "scheduler_step = \"step\" needs setup.steps_per_epoch")
    end
  end
  local total = per_step and epochs * spe or epochs
  local dummy = torch.nn.Linear(1, 1)
  local opt = S.new_optimizer(s, dummy)
  local sched = s.scheduler(opt)
  local base = opt.param_groups[1].lr
  local lrs = {}
  local okr, why = pcall(function()
    for t = 1, total do
      lrs[t] = opt.param_groups[1].lr
      opt:step()
      sched:step()
    end
  end)
  if not okr then
    return finding("lr_schedule", "skip", "the scheduler cannot be stepped without a metric or failed",
      tostring(why))
  end
  local unit = per_step and "step" or "epoch"
  local problems = {}
  local tiny_at
  for t, lr in ipairs(lrs) do if lr < 0.01 * base then tiny_at = t; break end end
  if tiny_at and tiny_at <= 0.5 * total then
    problems[#problems + 1] = ("LR falls below 1%% of its start (%.3g) at %s %d of %d"):format(base, unit, tiny_at - 1, total)
  end
  local ms = rawget(sched, "milestones")
  if type(ms) == "table" then
    local beyond = {}
    for m in pairs(ms) do if type(m) == "number" and m >= total then beyond[#beyond + 1] = m end end
    table.sort(beyond)
    if #beyond > 0 then
      problems[#problems + 1] = ("milestones %s lie beyond the planned %d %ss (never reached)"):format(
        table.concat(beyond, ", "), total, unit)
    end
  end
  local step_size = rawget(sched, "step_size")
  if type(step_size) == "number" and step_size >= total then
    problems[#problems + 1] = ("step_size %d >= the planned %d %ss: the LR never decays"):format(step_size, total, unit)
  end
  local T_max = rawget(sched, "T_max")
  if type(T_max) == "number" and T_max < total then
    problems[#problems + 1] = ("T_max %d < the planned %d %ss: cosine restarts upwards after T_max"):format(T_max, total, unit)
  end
  local q = {}
  for _, f in ipairs({ 0, 0.25, 0.5, 0.75, 1 }) do
    local t = math.max(1, math.min(total, math.floor(f * (total - 1)) + 1))
    q[#q + 1] = ("%d: %.3g"):format(t - 1, lrs[t])
  end
  local ev = ("%d %ss; LR at %s"):format(total, unit, table.concat(q, ", "))
  if #problems == 0 then return finding("lr_schedule", "ok", "LR schedule fits the planned run", ev) end
  return finding("lr_schedule", "warn", "LR schedule does not fit the planned run", ev .. "; " .. table.concat(problems, "; "),
    "schedules borrowed from long runs (decay at epoch 30, ...) decay by epoch number; on a shorter run "
      .. "they drive the LR to ~0 early or never fire; start with a constant LR and tune it")
end

---------------------------------------------------------------- duplicates and leaks
-- One fingerprint per sample: a fixed projection (weights frac(k * 0.7549) + 0.5, no RNG
-- touched) + the sum of the flattened row, in float64.
local function fingerprints(batches)
  local keys = {}
  local proj
  for _, b in ipairs(batches) do
    local x = b.x:dim() == 1 and b.x:unsqueeze(1) or b.x:flatten(1)
    x = x:to("cpu"):double()
    if not proj then
      proj = (torch.arange(x:size(1), { dtype = torch.float64 }) + 1):mul(0.7548776662466927):frac():add(0.5)
    end
    local p = x:matmul(proj):tolist()
    local s = x:sum(1):tolist()
    for i = 1, #p do keys[#keys + 1] = ("%.12g|%.12g"):format(p[i], s[i]) end
  end
  return keys
end

function M.split_leak(ctx)
  local s = ctx.setup
  local tr = ctx.scan_batches or ctx.batches
  local keys = fingerprints(tr)
  local seen, dup = {}, 0
  for _, k in ipairs(keys) do
    if seen[k] then dup = dup + 1 else seen[k] = true end
  end
  local ev = ("%d train samples scanned: %d exact duplicates (%.2f%%)"):format(#keys, dup, 100 * dup / #keys)
  local problems = {}
  if dup / #keys > (ctx.opts.dup_tolerance or 0.01) then problems[#problems + 1] = "duplicates within train" end
  if s.val_loader then
    local vb = S.take(s, s.val_loader, ctx.opts.scan_batches or 50)
    local vkeys = fingerprints(vb)
    local leak = 0
    for _, k in ipairs(vkeys) do if seen[k] then leak = leak + 1 end end
    ev = ev .. ("; %d val samples: %d also in train (%.2f%%)"):format(#vkeys, leak, 100 * leak / math.max(#vkeys, 1))
    if leak / math.max(#vkeys, 1) > (ctx.opts.leak_tolerance or 0.005) then problems[#problems + 1] = "val samples leak from train" end
  end
  if #problems == 0 then return finding("split_leak", "ok", "no duplicates or train/val leak found", ev) end
  return finding("split_leak", "fail", table.concat(problems, "; "), ev,
    "the split was made after augmentation/duplication, or val is drawn from the train pool; "
      .. "dedupe before splitting (tool: `ltorch tool check-splits`)")
end

return M
