--[[
  torch.nn.functional — the functional ops a training loop needs before the nn modules exist:
  relu, gelu, silu, sigmoid, tanh, leaky_relu, softmax, log_softmax, one_hot, and the losses
  cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
  binary_cross_entropy and binary_cross_entropy_with_logits (reduction "mean" | "sum" | "none";
  kl_div also "batchmean"), and scaled_dot_product_attention (lua/torch/nn/functional_attention.lua,
  with _canonical_mask, the mask form the attention modules share). The nn loss modules
  (lua/torch/nn/loss.lua) call the same code through M._loss[name](who, ...) so that their
  errors name the module ("BCELoss: ...").

  Shapes: input (N, C) or (N, C, d1, ...) logits; target (N) or (N, d1, ...) int64 class indices,
  or (cross_entropy) float class probabilities shaped like the input; weight (C).
  Element-wise losses: input and target of one shape (a different shape broadcasts, with a
  warning, as in PyTorch); BCE targets are floats in [0, 1] shaped like the input.

  Usage:  local F = require "torch.nn.functional"
          local loss = F.cross_entropy(model_logits, labels, {label_smoothing = 0.1})
]]
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local T = require "torch._tensor"
local attention = require "torch.nn.functional_attention"
local creation = require "torch._creation"

local C, check = _C.C, _C.check
local wrap = memory.wrap
local Tensor = T.Tensor

local M = {}
local out = _C.TensorOut()

for _, name in ipairs({ "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "softmax", "log_softmax" }) do
  M[name] = function(...) return Tensor[name](...) end
end

local reductions = { none = 0, mean = 1, sum = 2 }

local function reduction_of(name, opts, level)
  local r = opts.reduction or "mean"
  local code = reductions[r]
  if code == nil then error(("%s: reduction must be 'mean', 'sum' or 'none', got '%s'"):format(name, tostring(r)), level or 3) end
  return code
end

local function check_known(name, opts, known, level)
  for k in pairs(opts) do
    if not known[k] then error(("%s: unknown option '%s'"):format(name, tostring(k)), level or 3) end
  end
end

-- Targets are int64 class indices (libtorch 1.13 takes no other integer type); cross_entropy
-- also takes floating class probabilities shaped like the input.
local function check_target(name, input, target, probabilities_ok)
  local dt = T.dtype_of(target)
  if dt.name == "int64" then return end
  if probabilities_ok and dt.is_floating_point then
    local a, b = T.sizes_of(input), T.sizes_of(target)
    if #a == #b and table.concat(a, ",") == table.concat(b, ",") then return end
  end
  error(("%s: target must be int64 class indices%s, got %s of shape [%s]"):format(name,
    probabilities_ok and " (or floating class probabilities shaped like the input)" or "",
    tostring(dt), table.concat(T.sizes_of(target), ", ")), 3)
end

-- The generated op `name`, raising errors as "<display>: ..."; cached per pair.
local generated_cache = {}
local function generated(name, display)
  local key = name .. "\0" .. display
  local f = generated_cache[key]
  if f == nil then
    f = require("torch._dispatch").function_for(name, display)
    generated_cache[key] = f
  end
  return f
end

-- cross_entropy(input, target, {weight=, reduction=, ignore_index=-100, label_smoothing=0});
-- a class weight goes to the ATen op cross_entropy_loss through the generated surface.
function M.cross_entropy(input, target, opts)
  T.handle("cross_entropy", 1, input); T.handle("cross_entropy", 2, target)
  opts = args.opt_table("cross_entropy", 3, opts) or {}
  check_known("cross_entropy", opts, { weight = true, reduction = true, ignore_index = true, label_smoothing = true })
  local smoothing = args.number("cross_entropy", 3, opts.label_smoothing, 0)
  if smoothing < 0 or smoothing > 1 then error("cross_entropy: label_smoothing must be in [0, 1], got " .. smoothing, 2) end
  check_target("cross_entropy", input, target, true)
  local reduction, ignore_index = reduction_of("cross_entropy", opts), args.int("cross_entropy", 3, opts.ignore_index, -100)
  if opts.weight ~= nil then
    T.handle("cross_entropy", 3, opts.weight)
    return generated("cross_entropy_loss", "cross_entropy")(input, target, opts.weight, reduction, ignore_index, smoothing)
  end
  check(C.lt_cross_entropy(out, input.h, target.h, reduction, ignore_index, smoothing), "cross_entropy")
  return wrap(out[0])
end

-- nll_loss(log_probs, target, {weight=, reduction=, ignore_index=-100})
function M.nll_loss(input, target, opts)
  T.handle("nll_loss", 1, input); T.handle("nll_loss", 2, target)
  opts = args.opt_table("nll_loss", 3, opts) or {}
  check_known("nll_loss", opts, { weight = true, reduction = true, ignore_index = true })
  check_target("nll_loss", input, target, false)
  local reduction, ignore_index = reduction_of("nll_loss", opts), args.int("nll_loss", 3, opts.ignore_index, -100)
  if opts.weight ~= nil then
    T.handle("nll_loss", 3, opts.weight)
    return generated("nll_loss_nd", "nll_loss")(input, target, opts.weight, reduction, ignore_index)
  end
  check(C.lt_nll_loss(out, input.h, target.h, reduction, ignore_index), "nll_loss")
  return wrap(out[0])
end

-- mse_loss(input, target, {reduction=})
function M.mse_loss(input, target, opts)
  T.handle("mse_loss", 1, input); T.handle("mse_loss", 2, target)
  opts = args.opt_table("mse_loss", 3, opts) or {}
  check_known("mse_loss", opts, { reduction = true })
  M._warn_broadcast("mse_loss", input, target)
  check(C.lt_mse_loss(out, input.h, target.h, reduction_of("mse_loss", opts)), "mse_loss")
  return wrap(out[0])
end

-- one_hot(labels, num_classes=-1) -> int64 (N, ..., num_classes)
function M.one_hot(labels, num_classes)
  T.handle("one_hot", 1, labels)
  check(C.lt_one_hot(out, labels.h, args.int("one_hot", 2, num_classes, -1)), "one_hot")
  return wrap(out[0])
end

---------------------------------------------------------------- more losses
local function shape_of(t) return "[" .. table.concat(T.sizes_of(t), ", ") .. "]" end
local function same_shape(a, b) return table.concat(T.sizes_of(a), ",") == table.concat(T.sizes_of(b), ",") end

-- PyTorch warns (once per place) when an element-wise loss broadcasts its target, the classic
-- (N, 1) vs (N) slip; the result is still computed. Specs replace M._warn to see the text.
local warned = {}
function M._warn(msg) io.stderr:write("UserWarning: ", msg, "\n") end
function M._warn_broadcast(who, input, target)
  if same_shape(input, target) or warned[who] then return end
  warned[who] = true
  M._warn(("%s: target shape %s differs from input shape %s; they will be broadcast, which is "
    .. "likely wrong (make them the same shape)"):format(who, shape_of(target), shape_of(input)))
end

-- Reads {reduction =, <extra numbers>} for loss `who`; returns the ATen reduction code.
local function loss_opts(who, opts, known)
  if opts ~= nil and (type(opts) ~= "table" or getmetatable(opts) ~= nil) then
    args.bad(who, 3, "options table", args.typename(opts), 3)
  end
  opts = opts or {}
  check_known(who, opts, known, 4)
  return opts, reduction_of(who, opts, 4)
end

local function tensor_args(who, input, target)
  T.handle(who, 1, input); T.handle(who, 2, target)
end

local L = {}
M._loss = L

-- l1_loss(input, target, {reduction=}): |x - y|
function L.l1_loss(who, input, target, opts)
  tensor_args(who, input, target)
  local _, r = loss_opts(who, opts, { reduction = true })
  M._warn_broadcast(who, input, target)
  return generated("l1_loss", who)(input, target, r)
end

-- smooth_l1_loss(input, target, {reduction=, beta=1}): 0.5 d^2 / beta if |d| < beta, else |d| - 0.5 beta
function L.smooth_l1_loss(who, input, target, opts)
  tensor_args(who, input, target)
  local o, r = loss_opts(who, opts, { reduction = true, beta = true })
  local beta = args.number(who, 3, o.beta, 1.0)
  M._warn_broadcast(who, input, target)
  return generated("smooth_l1_loss", who)(input, target, r, beta)
end

-- huber_loss(input, target, {reduction=, delta=1}): 0.5 d^2 if |d| < delta, else delta (|d| - 0.5 delta)
function L.huber_loss(who, input, target, opts)
  tensor_args(who, input, target)
  local o, r = loss_opts(who, opts, { reduction = true, delta = true })
  local delta = args.number(who, 3, o.delta, 1.0)
  M._warn_broadcast(who, input, target)
  return generated("huber_loss", who)(input, target, r, delta)
end

--[[ kl_div(input, target, {reduction=, log_target=false}): input holds log-probabilities;
     pointwise target * (log target - input) (log_target: exp(target) * (target - input)).
     "batchmean" is the sum divided by the batch size input:size(0): the true KL divergence
     per sample; "mean" divides by the element count, as PyTorch does (and warns about). ]]
function L.kl_div(who, input, target, opts)
  tensor_args(who, input, target)
  opts = args.opt_table(who, 3, opts) or {}
  check_known(who, opts, { reduction = true, log_target = true })
  local batchmean = opts.reduction == "batchmean"
  local r = batchmean and reductions.sum or reductions[opts.reduction or "mean"]
  if r == nil then
    error(("%s: reduction must be 'batchmean', 'mean', 'sum' or 'none', got '%s'"):format(who, tostring(opts.reduction)), 2)
  end
  local log_target = args.boolean(who, 3, opts.log_target, false)
  local loss = generated("kl_div", who)(input, target, r, { log_target = log_target })
  if batchmean and T.dim_of(input) > 0 then return loss / T.sizes_of(input)[1] end
  return loss
end

-- BCE targets are probabilities shaped like the input; integer labels are the usual slip.
local function check_probability_target(who, input, target)
  local dt = T.dtype_of(target)
  if not dt.is_floating_point or not same_shape(input, target) then
    error(("%s: target must be a floating tensor of probabilities shaped like input; got %s %s for input %s")
      :format(who, dt.name, shape_of(target), shape_of(input)), 3)
  end
end

-- binary_cross_entropy(probs, target, {weight=, reduction=}): -w (y log p + (1 - y) log(1 - p))
function L.binary_cross_entropy(who, input, target, opts)
  tensor_args(who, input, target)
  local o, r = loss_opts(who, opts, { reduction = true, weight = true })
  check_probability_target(who, input, target)
  local weight = o.weight
  if weight ~= nil then
    T.handle(who, 3, weight)
    weight = weight:expand((T.sizes_of(target)))   -- PyTorch broadcasts the weight to the target
  end
  return generated("binary_cross_entropy", who)(input, target, weight, r)
end

--[[ binary_cross_entropy_with_logits(logits, target, {weight=, pos_weight=, reduction=}):
     -w (pos_weight y log s(x) + (1 - y) log(1 - s(x))), computed stably from the logits;
     pos_weight (C) weighs the positive term of each class (broadcast over the last dim). ]]
function L.binary_cross_entropy_with_logits(who, input, target, opts)
  tensor_args(who, input, target)
  local o, r = loss_opts(who, opts, { reduction = true, weight = true, pos_weight = true })
  check_probability_target(who, input, target)
  if o.weight ~= nil then T.handle(who, 3, o.weight) end
  if o.pos_weight ~= nil then T.handle(who, 3, o.pos_weight) end
  return generated("binary_cross_entropy_with_logits", who)(input, target, o.weight, o.pos_weight, r)
end

for name, impl in pairs(L) do
  M[name] = function(input, target, opts) return impl(name, input, target, opts) end
end

-- Attention (lua/torch/nn/functional_attention.lua); its mask warnings go through M._warn too.
M.scaled_dot_product_attention = attention.scaled_dot_product_attention
M._canonical_mask = attention._canonical_mask
attention._warn = function(msg) return M._warn(msg) end

-- Every other functional op comes from the generated surface: torch.nn.functional.conv2d,
-- max_pool2d, layer_norm, embedding, ... (the schema's nn-module ops and torch functions). A factory
-- written by hand in torch._creation (range, with its guard against libtorch's division by zero;
-- arange) is taken from there, so no route reaches the raw op around it.
setmetatable(M, {
  __index = function(t, k)
    if type(k) ~= "string" then return nil end
    local own = rawget(creation, k)
    local f = type(own) == "function" and own or require("torch._dispatch").function_for(k, "torch.nn.functional." .. k)
    if f then rawset(t, k, f) end
    return f
  end,
})

return M
