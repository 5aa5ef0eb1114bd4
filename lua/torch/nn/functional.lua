--[[
  torch.nn.functional — PyTorch's functional API (https://pytorch.org/docs/stable/nn.functional.html),
  with its Python signatures where PyTorch writes the function in Python:
    - one_hot;
    - the losses, every reduction a string 'none' | 'mean' | 'sum' (lua/torch/nn/functional_loss.lua);
    - relu, gelu, silu, sigmoid, tanh, leaky_relu, elu, celu, selu, relu6, hardtanh,
      hardsigmoid, hardswish, mish, threshold, rrelu, glu, softmax, log_softmax, softmin,
      gumbel_softmax, softsign, tanhshrink, logsigmoid, normalize, dropout (1d/2d/3d, alpha,
      feature_alpha) (lua/torch/nn/functional_activation.lua);
    - batch_norm, instance_norm, layer_norm, group_norm, embedding, max pools with
      return_indices, interpolate (lua/torch/nn/functional_layers.lua);
    - unfold, fold, grid_sample, affine_grid, local_response_norm, upsample(_nearest,
      _bilinear) (lua/torch/nn/functional_vision.lua);
    - max_unpool1d/2d/3d, lp_pool1d/2d/3d (lua/torch/nn/functional_pooling.lua);
    - scaled_dot_product_attention (lua/torch/nn/functional_attention.lua, with _canonical_mask,
      the mask form the attention modules share); multi_head_attention_forward
      (lua/torch/nn/functional_mha.lua, nn.MultiheadAttention's maths);
    - every other name from the generated surface (conv2d, pad, linear, ...: ATen's arguments).
  Arguments are positional or in a trailing keyword table, as Python's keywords:
      F.dropout(x, 0.2)    F.dropout(x, {p = 0.2, training = false})    F.mse_loss(x, y, {reduction = "sum"})
  The nn loss modules (lua/torch/nn/loss.lua) call the same code through M._loss[name](who, ...)
  so that their errors name the module ("BCELoss: ..."). Warnings (a broadcasting loss, a
  deprecated argument) go once through M._warn, which specs may replace.

  Usage:  local F = require "torch.nn.functional"
          local loss = F.cross_entropy(model_logits, labels, {label_smoothing = 0.1})
]]
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local T = require "torch._tensor"
local attention = require "torch.nn.functional_attention"
local creation = require "torch._creation"
local A = require "torch.nn._fargs"

local C, check = _C.C, _C.check
local wrap = memory.wrap

local M = {}
local out = _C.TensorOut()

-- one_hot(labels, num_classes=-1) -> int64 (N, ..., num_classes)
function M.one_hot(labels, num_classes)
  T.handle("one_hot", 1, labels)
  if args.is_options(num_classes) then
    for k in pairs(num_classes) do
      if k ~= "num_classes" then error(("one_hot: unexpected keyword argument '%s'"):format(tostring(k)), 2) end
    end
    num_classes = num_classes.num_classes
  end
  check(C.lt_one_hot(out, labels.h, args.int("one_hot", 2, num_classes, -1)), "one_hot")
  return wrap(out[0])
end

-- linear(input, weight, bias=None): the common call, live tensors with bias a tensor or nil,
-- goes straight to at::linear (lt_linear: no boxing of the arguments, ~1,200 instructions a
-- call, a sixth of an 8x8 layer's front end); any other (keywords, a bad or freed argument,
-- extra arguments) goes through the generated op, which reads keywords and words the errors.
local Ref, istype = _C.Ref, require("ffi").istype
local generic_linear
function M.linear(input, weight, bias, ...)
  if select("#", ...) == 0 and istype(Ref, input) and istype(Ref, weight) and input.h ~= nil and weight.h ~= nil
      and (bias == nil or istype(Ref, bias) and bias.h ~= nil) then
    local bh = bias ~= nil and bias.h or nil
    local s = C.lt_linear(out, input.h, weight.h, bh)
    if s ~= 0 and memory.reclaim(s) then s = C.lt_linear(out, input.h, weight.h, bh) end   -- out of memory: retry once
    check(s, "torch.nn.functional.linear")
    return wrap(out[0])
  end
  generic_linear = generic_linear or require("torch._dispatch").function_for("linear", "torch.nn.functional.linear")
  return generic_linear(input, weight, bias, ...)
end

function M._warn(msg) require("torch._warnings").warn(msg) end
A.warn = function(msg) return M._warn(msg) end

-- Attention (lua/torch/nn/functional_attention.lua); its mask warnings go through M._warn too.
M.scaled_dot_product_attention = attention.scaled_dot_product_attention
M._canonical_mask = attention._canonical_mask
attention._warn = function(msg) return M._warn(msg) end

-- The hand-written functions load with their file at the first read of one of their names
-- (torch._lazy_namespace; the index below is checked against the files by
-- spec/torch/lazy_namespace_spec.lua). Every other functional op comes from the generated
-- surface: torch.nn.functional.conv2d, pad, linear, ... (the schema's nn-module ops and torch
-- functions). A factory written by hand in torch._creation (range, with its guard against
-- libtorch's division by zero; arange) is taken from there, so no route reaches the raw op
-- around it.
return require("torch._lazy_namespace").install(M, {
  name = "torch.nn.functional",
  parts = {
    { "torch.nn.functional_loss", { "_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
      "cosine_embedding_loss", "cross_entropy", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
      "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss", "multi_margin_loss",
      "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss",
      "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss" } },
    { "torch.nn.functional_activation", { "alpha_dropout", "celu", "dropout", "dropout1d", "dropout2d",
      "dropout3d", "elu", "feature_alpha_dropout", "gelu", "glu", "gumbel_softmax", "hardsigmoid", "hardswish",
      "hardtanh", "leaky_relu", "log_softmax", "logsigmoid", "mish", "normalize", "relu", "relu6", "rrelu", "selu",
      "sigmoid", "silu", "softmax", "softmin", "softsign", "tanh", "tanhshrink", "threshold" } },
    { "torch.nn.functional_layers", { "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
      "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
      "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "batch_norm", "embedding", "group_norm",
      "instance_norm", "interpolate", "layer_norm", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
      "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices" } },
    { "torch.nn.functional_vision", { "affine_grid", "fold", "grid_sample", "local_response_norm", "unfold",
      "upsample", "upsample_bilinear", "upsample_nearest" } },
    { "torch.nn.functional_pooling", { "embedding_bag", "fractional_max_pool2d",
      "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices",
      "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d" } },
    { "torch.nn.functional_mha", { "_forward", "multi_head_attention_forward" } },
  },
  otherwise = function(t, k)
    if type(k) ~= "string" then return nil end
    local own = rawget(creation, k)
    local f = type(own) == "function" and own or require("torch._dispatch").function_for(k, "torch.nn.functional." .. k)
    if f then rawset(t, k, f) end
    return f
  end,
})
