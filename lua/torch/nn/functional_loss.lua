--[[
  torch.nn.functional's losses, with PyTorch's Python signatures, defaults and checks
  (https://pytorch.org/docs/stable/nn.functional.html#loss-functions). Each is written here as
  Python writes it; arguments are positional or in a trailing keyword table:

      F.mse_loss(x, y)                          F.mse_loss(x, y, {reduction = "sum"})
      F.poisson_nll_loss(x, y, false)           F.cross_entropy(x, t, {label_smoothing = 0.1})

  reduction is the string 'none' | 'mean' | 'sum' (kl_div also 'batchmean'); the legacy
  size_average / reduce booleans override it where PyTorch still takes them.
  Element-wise losses (l1, mse, smooth_l1, huber) broadcast input and target first
  (torch.broadcast_tensors, with PyTorch's warning), so an (N, 1) input against an (N) target has
  PyTorch's value and gradient.

  Shapes: class losses take input (N, C) or (N, C, d1, ...) and int64 targets (N) / (N, d1, ...)
  (cross_entropy also float probabilities shaped like the input); weight (C).

  M._loss[name](who, ...) is the same loss for the nn loss modules (lua/torch/nn/loss.lua), their
  errors naming the module ("BCELoss: ...").
]]
local torch = require "torch"
local _C = require "torch._C"
local memory = require "torch._memory"
local A = require "torch.nn._fargs"

local C = _C.C
local wrap = memory.wrap
local out = _C.TensorOut()
local fail, shape, same = A.fail, A.shape, A.same

local M = { _loss = {} }

-- A failed status from the hand-written C entry points, as "<who>: <libtorch's message>".
local function check(status, who)
  if status ~= 0 then fail(who .. ": " .. _C.last_error()) end
end

--[[ The ATen op `name` through the generated surface, its errors read "<display>: ..." and blame
     the user's line; cached. ]]
local aten_cache = {}
local function aten(name, display)
  local key = name .. "\0" .. display
  local f = aten_cache[key]
  if f == nil then
    local op = require("torch._dispatch").function_for(name, display)
    f = function(...) return A.call(op, ...) end
    aten_cache[key] = f
  end
  return f
end

-- Defines loss `name` from its Python signature; impl(who, sig, a) gets the bound arguments.
local function loss(name, text, impl)
  local sig = A.signature(name, text)
  M[name] = function(...) return impl(name, sig, A.bind(sig, ...)) end
  M._loss[name] = function(who, ...) return impl(who, sig, A.bind(sig, ...)) end
end

local function tensors(sig, a, ...)
  for i = 1, select("#", ...) do A.tensor(sig, a, (select(i, ...))) end
end

-- A reduced "none" loss: mean, sum or itself.
local function reduce(l, r)
  if r == "mean" then return l:mean() end
  if r == "sum" then return l:sum() end
  return l
end

---------------------------------------------------------------- class targets
-- int64 class indices; cross_entropy also takes floating probabilities shaped like the input.
local function check_target(who, input, target, probabilities_ok)
  local dt = target.dtype
  if dt.name == "int64" then return end
  if probabilities_ok and dt.is_floating_point and same(input:size(), target:size()) then return end
  fail("%s: target must be int64 class indices%s, got %s of shape %s", who,
    probabilities_ok and " (or floating class probabilities shaped like the input)" or "", tostring(dt), shape(target))
end

loss("cross_entropy", "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
  .. "reduction='mean', label_smoothing=0.0", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local smoothing = A.number(sig, a, "label_smoothing")
  if smoothing < 0 or smoothing > 1 then fail("%s: label_smoothing must be in [0, 1], got %s", who, smoothing) end
  check_target(who, a.input, a.target, true)
  local _, r = A.reduction(who, a)
  local ignore = A.int(sig, a, "ignore_index")
  if weight ~= nil then return aten("cross_entropy_loss", who)(a.input, a.target, weight, r, ignore, smoothing) end
  check(C.lt_cross_entropy(out, a.input.h, a.target.h, r, ignore, smoothing), who)
  return wrap(out[0])
end)

loss("nll_loss", "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  check_target(who, a.input, a.target, false)
  local _, r = A.reduction(who, a)
  local ignore = A.int(sig, a, "ignore_index")
  if weight ~= nil then return aten("nll_loss_nd", who)(a.input, a.target, weight, r, ignore) end
  check(C.lt_nll_loss(out, a.input.h, a.target.h, r, ignore), who)
  return wrap(out[0])
end)

---------------------------------------------------------------- element-wise, broadcasting
--[[ PyTorch 2.11's optional element-wise weight (shaped like the input): the unreduced loss
     times weight; 'mean' divides by weight's sum for l1 and mse, by the element count for huber. ]]
local function weighted(who, l, weight, input, r, mean_by_weight)
  if not same(weight:size(), input:size()) then fail("%s: weights and input must have the same size", who) end
  l = l * weight
  if r == "mean" and mean_by_weight then return l:sum() / weight:sum() end
  return reduce(l, r)
end

loss("l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', weight=None", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local rs, r = A.reduction(who, a)
  local x, y = A.broadcast(who, a.input, a.target)
  if weight ~= nil then return weighted(who, (x - y):abs(), weight, a.input, rs, true) end
  return aten("l1_loss", who)(x, y, r)
end)

loss("mse_loss", "input, target, size_average=None, reduce=None, reduction='mean', weight=None", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local rs, r = A.reduction(who, a)
  local x, y = A.broadcast(who, a.input, a.target)
  if weight ~= nil then return weighted(who, (x - y):pow(2), weight, a.input, rs, true) end
  check(C.lt_mse_loss(out, x.h, y.h, r), who)
  return wrap(out[0])
end)

-- 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: l1_loss)
loss("smooth_l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', beta=1.0", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local beta = A.number(sig, a, "beta")
  local _, r = A.reduction(who, a)
  local x, y = A.broadcast(who, a.input, a.target)
  if beta == 0 then return aten("l1_loss", who)(x, y, r) end
  return aten("smooth_l1_loss", who)(x, y, r, beta)
end)

-- 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)
loss("huber_loss", "input, target, reduction='mean', delta=1.0, weight=None", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local delta = A.number(sig, a, "delta")
  local weight = A.tensor(sig, a, "weight", true)
  local rs, r = A.reduction(who, a)
  local x, y = A.broadcast(who, a.input, a.target)
  if weight ~= nil then return weighted(who, aten("huber_loss", who)(x, y, 0, delta), weight, a.input, rs, false) end
  return aten("huber_loss", who)(x, y, r, delta)
end)

---------------------------------------------------------------- probabilities
--[[ kl_div: input holds log-probabilities; pointwise target (log target - input)
     (log_target: exp(target) (target - input)). 'batchmean' is the sum over the batch size
     input:size(0), the true KL divergence per sample; 'mean' averages elements (PyTorch warns). ]]
local kl_mean_warned = false
loss("kl_div", "input, target, size_average=None, reduce=None, reduction='mean', log_target=False", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local log_target = A.boolean(sig, a, "log_target")
  local rs = A.reduction(who, a, "batchmean")
  if rs == "mean" and not kl_mean_warned then
    kl_mean_warned = true
    A.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
      .. "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
      .. "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
  end
  local l = aten("kl_div", who)(a.input, a.target, A.CODES[rs == "batchmean" and "sum" or rs], { log_target = log_target })
  if rs == "batchmean" and a.input:dim() ~= 0 then return l / a.input:size(0) end
  return l
end)

-- BCE targets are floating probabilities shaped like the input.
local function check_probability_target(who, input, target)
  local dt = target.dtype
  if not dt.is_floating_point or not same(input:size(), target:size()) then
    fail("%s: target must be a floating tensor of probabilities shaped like input; got %s %s for input %s", who,
      dt.name, shape(target), shape(input))
  end
end

-- -w (y log p + (1 - y) log(1 - p)); the weight broadcasts to the target's shape
loss("binary_cross_entropy", "input, target, weight=None, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local _, r = A.reduction(who, a)
  check_probability_target(who, a.input, a.target)
  if weight ~= nil then
    local s = A.broadcast_shape(a.target:size(), weight:size())
    if s == nil or not same(s, a.target:size()) then
      fail("%s: weight %s does not broadcast to the target's shape %s", who, shape(weight), shape(a.target))
    end
    weight = weight:expand(s)
  end
  return aten("binary_cross_entropy", who)(a.input, a.target, weight, r)
end)

-- -w (pos_weight y log s(x) + (1 - y) log(1 - s(x))), stable from the logits
loss("binary_cross_entropy_with_logits", "input, target, weight=None, size_average=None, reduce=None, "
  .. "reduction='mean', pos_weight=None", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight, pos_weight = A.tensor(sig, a, "weight", true), A.tensor(sig, a, "pos_weight", true)
  local _, r = A.reduction(who, a)
  check_probability_target(who, a.input, a.target)
  return aten("binary_cross_entropy_with_logits", who)(a.input, a.target, weight, pos_weight, r)
end)

-- log_input: exp(x) - y x; else x - y log(x + eps); full adds Stirling's y log y - y + 0.5 log(2 pi y)
loss("poisson_nll_loss", "input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, "
  .. "reduction='mean'", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local log_input, full, eps = A.boolean(sig, a, "log_input"), A.boolean(sig, a, "full"), A.number(sig, a, "eps")
  local _, r = A.reduction(who, a)
  return aten("poisson_nll_loss", who)(a.input, a.target, log_input, full, eps, r)
end)

--[[ gaussian_nll_loss: 0.5 (log max(var, eps) + (input - target)^2 / max(var, eps)) (+ 0.5 log 2 pi
     with full). var is shaped like input, or input's shape without the last dim (unsqueezed), or
     differs from it in one dim of size 1, or a number; it must not be negative. ]]
loss("gaussian_nll_loss", "input, target, var, full=False, eps=1e-6, reduction='mean'", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local input, var = a.input, a.var
  local full, eps = A.boolean(sig, a, "full"), A.number(sig, a, "eps")
  if type(var) == "number" then
    if var < 0 then fail("%s: var has negative entry/entries", who) end
    var = torch.ones_like(input) * var
  else
    A.tensor(sig, a, "var")
    if var:lt(0):any():item() then fail("%s: var has negative entry/entries", who) end
  end
  local si, sv = input:size(), var:size()
  if not same(si, sv) then
    local head = { unpack(si, 1, #si - 1) }
    if same(head, sv) then
      var = var:unsqueeze(-1)
    else
      local mismatched = 0
      if #si == #sv then for i = 1, #si do if si[i] ~= sv[i] then mismatched = mismatched + sv[i] end end end
      if mismatched ~= 1 then fail("%s: var is of incorrect size", who) end
    end
  end
  local rs = A.reduction(who, a)
  var = var:clone()
  torch.no_grad(function() var:clamp_({ min = eps }) end)
  local l = (var:log() + (input - a.target):pow(2) / var) * 0.5
  if full then l = l + 0.5 * math.log(2 * math.pi) end
  return reduce(l, rs)
end)

---------------------------------------------------------------- margins
loss("margin_ranking_loss", "input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input1", "input2", "target")
  local _, r = A.reduction(who, a)
  if a.input1:dim() ~= a.input2:dim() or a.input1:dim() ~= a.target:dim() then
    fail("%s: all input tensors should have the same dimension but got sizes: input1: %s, input2: %s, target: %s",
      who, shape(a.input1), shape(a.input2), shape(a.target))
  end
  return aten("margin_ranking_loss", who)(a.input1, a.input2, a.target, A.number(sig, a, "margin"), r)
end)

loss("hinge_embedding_loss", "input, target, margin=1.0, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input", "target")
  local _, r = A.reduction(who, a)
  return aten("hinge_embedding_loss", who)(a.input, a.target, A.number(sig, a, "margin"), r)
end)

loss("multilabel_margin_loss", "input, target, size_average=None, reduce=None, reduction='mean'", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local _, r = A.reduction(who, a)
  return aten("multilabel_margin_loss", who)(a.input, a.target, r)
end)

loss("soft_margin_loss", "input, target, size_average=None, reduce=None, reduction='mean'", function(who, sig, a)
  tensors(sig, a, "input", "target")
  local _, r = A.reduction(who, a)
  return aten("soft_margin_loss", who)(a.input, a.target, r)
end)

-- -(y log s(x) + (1 - y) log s(-x)) (times weight), averaged over the class (last) dim
loss("multilabel_soft_margin_loss", "input, target, weight=None, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local rs = A.reduction(who, a)
  local x, y = a.input, a.target
  local l = -(y * torch.log_sigmoid(x) + (1 - y) * torch.log_sigmoid(-x))
  if weight ~= nil then l = l * weight end
  local class_dim = x:dim() - 1
  return reduce(l:sum(class_dim) / x:size(class_dim), rs)
end)

loss("cosine_embedding_loss", "input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input1", "input2", "target")
  local _, r = A.reduction(who, a)
  return aten("cosine_embedding_loss", who)(a.input1, a.input2, a.target, A.number(sig, a, "margin"), r)
end)

loss("multi_margin_loss", "input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction='mean'",
  function(who, sig, a)
  tensors(sig, a, "input", "target")
  local weight = A.tensor(sig, a, "weight", true)
  local _, r = A.reduction(who, a)
  local p = A.number(sig, a, "p")
  if p ~= 1 and p ~= 2 then fail("%s: only p == 1 and p == 2 supported", who) end
  if weight ~= nil and weight:dim() ~= 1 then fail("%s: weight must be one-dimensional", who) end
  return aten("multi_margin_loss", who)(a.input, a.target, p, A.number(sig, a, "margin"), weight, r)
end)

local function same_dims(who, x, y, z)
  if x:dim() ~= y:dim() or y:dim() ~= z:dim() then
    fail("%s: the anchor, positive, and negative tensors are expected to have the same number of dimensions, "
      .. "but got: anchor %dD, positive %dD, and negative %dD inputs", who, x:dim(), y:dim(), z:dim())
  end
end

loss("triplet_margin_loss", "anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None, "
  .. "reduce=None, reduction='mean'", function(who, sig, a)
  tensors(sig, a, "anchor", "positive", "negative")
  local _, r = A.reduction(who, a)
  local margin = A.number(sig, a, "margin")
  if margin <= 0 then fail("%s: margin must be greater than 0, got %s", who, margin) end
  same_dims(who, a.anchor, a.positive, a.negative)
  return aten("triplet_margin_loss", who)(a.anchor, a.positive, a.negative, A.number(sig, a, "margin"),
    A.number(sig, a, "p"), A.number(sig, a, "eps"), A.boolean(sig, a, "swap"), r)
end)

-- max(margin + d(a, p) - d(a, n), 0), d = distance_function (pairwise_distance by default)
loss("triplet_margin_with_distance_loss", "anchor, positive, negative, *, distance_function=None, margin=1.0, "
  .. "swap=False, reduction='mean'", function(who, sig, a)
  tensors(sig, a, "anchor", "positive", "negative")
  local rs = A.reduction(who, a)
  local margin, swap = A.number(sig, a, "margin"), A.boolean(sig, a, "swap")
  if margin <= 0 then fail("%s: margin must be greater than 0, got %s", who, margin) end
  same_dims(who, a.anchor, a.positive, a.negative)
  local d = a.distance_function or torch.pairwise_distance
  local pos, neg = d(a.anchor, a.positive), d(a.anchor, a.negative)
  if swap then neg = torch.minimum(neg, d(a.positive, a.negative)) end
  return reduce(torch.clamp_min(pos - neg + margin, 0), rs)
end)

loss("ctc_loss", "log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False",
  function(who, sig, a)
  tensors(sig, a, "log_probs", "targets")
  local _, r = A.reduction(who, a)
  return aten("ctc_loss", who)(a.log_probs, a.targets, a.input_lengths, a.target_lengths, A.number(sig, a, "blank"),
    r, A.boolean(sig, a, "zero_infinity"))
end)

return M
