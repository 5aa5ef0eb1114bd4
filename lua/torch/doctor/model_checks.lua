--[[
  torch.doctor.model_checks — the doctor's checks on the model and its training mechanics, run on
  a fresh model from the setup: bn_after_bias (a biased layer feeding a BatchNorm), eval_mode
  (dropout/BatchNorm still active under eval(), and setup.evaluate left in train mode),
  grad_flow (parameters with no, vanishing or exploding gradients), zero_grad (gradients that
  accumulate across setup.train_step calls) and output_bias (an output bias the data's prior or
  mean would fit better), with the helpers the fix uses: output_layer, suggested_bias,
  apply_bias. Each check takes the context and returns a finding (torch.doctor.checks).

  Usage:  local MC = require "torch.doctor.model_checks"; MC.bn_after_bias(ctx)
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local U = require "torch.doctor.check_util"

local finding, nograd, num, eval_loss, train, mean = U.finding, U.nograd, U.num, U.eval_loss, U.train, U.mean

local M = {}

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
  -- advice, not a fault, when the prior costs little: the bias lowers the early loss by under
  -- a fifth, or the model without it has caught up by the probe's last steps (a language
  -- model's unigram prior, a separable binary task)
  local late = math.max(1, steps - 4)
  if mean(plain) < 1.2 * mean(fixed) or mean(plain, late, steps) <= 1.05 * mean(fixed, late, steps) then
    return finding("output_bias", "ok", "the model learns the output prior within its first steps", ev
      .. ("; last 5 steps: %.4g as is, %.4g with the bias"):format(mean(plain, late, steps), mean(fixed, late, steps)))
  end
  ctx.fix_bias = bias
  return finding("output_bias", "warn", "initialise the output bias from the data", ev,
    ctx.task == "regression" and "the first steps only learn the target mean (a hockey-stick loss curve): set the bias to it"
      or "the first steps only learn the class prior (a hockey-stick loss curve): set the bias to log(prior); "
      .. "torch.doctor.run(setup, {fix = true}) applies it")
end

return M
