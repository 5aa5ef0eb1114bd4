--[[
  torch.doctor.checks — the checks `torch.doctor.run` performs on a setup, one function each. A
  check takes the context (ctx: setup, cached batches, options, task facts) and returns a finding:
    { id = "init_loss", verdict = "ok"|"warn"|"fail"|"skip", title = "...",
      evidence = "numbers", cause = "likely cause / what to do", confidence = 0..1 (optional) }
  The ids are stable (specs and users match on them):
    nonfinite, target_format, softmax_before_loss, init_loss, bn_after_bias, eval_mode,
    grad_flow, zero_grad, output_bias
  The training probes leave their numbers in ctx (ctx.overfit, ctx.baselines) for the
  differential checks of torch.doctor.probes; train, eval_loss, finding, mean and num are exported for them. The checks that look at the data without training (batch_view,
  lr_schedule, split_leak) are in torch.doctor.data_checks.
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

M.train, M.eval_loss, M.finding, M.mean, M.num = train, eval_loss, finding, mean, num
return M
