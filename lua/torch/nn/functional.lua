--[[
  torch.nn.functional — the functional ops a training loop needs before the nn modules exist:
  relu, gelu, silu, sigmoid, tanh, leaky_relu, softmax, log_softmax, one_hot, and the losses
  cross_entropy, nll_loss and mse_loss (reduction "mean" | "sum" | "none").

  Shapes: input (N, C) or (N, C, d1, ...) logits; target (N) or (N, d1, ...) int64 class indices.

  Usage:  local F = require "torch.nn.functional"
          local loss = F.cross_entropy(model_logits, labels, {label_smoothing = 0.1})
]]
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local T = require "torch._tensor"

local C, check = _C.C, _C.check
local wrap = memory.wrap
local Tensor = T.Tensor

local M = {}
local out = _C.TensorOut()

for _, name in ipairs({ "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "softmax", "log_softmax" }) do
  M[name] = function(...) return Tensor[name](...) end
end

local reductions = { none = 0, mean = 1, sum = 2 }

local function reduction_of(name, opts)
  local r = opts.reduction or "mean"
  local code = reductions[r]
  if code == nil then error(("%s: reduction must be 'mean', 'sum' or 'none', got '%s'"):format(name, tostring(r)), 3) end
  return code
end

local function check_known(name, opts, known)
  for k in pairs(opts) do
    if not known[k] then error(("%s: unknown option '%s'"):format(name, tostring(k)), 3) end
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

-- cross_entropy(input, target, {reduction=, ignore_index=-100, label_smoothing=0})
function M.cross_entropy(input, target, opts)
  T.handle("cross_entropy", 1, input); T.handle("cross_entropy", 2, target)
  opts = args.opt_table("cross_entropy", 3, opts) or {}
  check_known("cross_entropy", opts, { reduction = true, ignore_index = true, label_smoothing = true })
  local smoothing = args.number("cross_entropy", 3, opts.label_smoothing, 0)
  if smoothing < 0 or smoothing > 1 then error("cross_entropy: label_smoothing must be in [0, 1], got " .. smoothing, 2) end
  check_target("cross_entropy", input, target, true)
  check(C.lt_cross_entropy(out, input.h, target.h, reduction_of("cross_entropy", opts),
    args.int("cross_entropy", 3, opts.ignore_index, -100), smoothing), "cross_entropy")
  return wrap(out[0])
end

-- nll_loss(log_probs, target, {reduction=, ignore_index=-100})
function M.nll_loss(input, target, opts)
  T.handle("nll_loss", 1, input); T.handle("nll_loss", 2, target)
  opts = args.opt_table("nll_loss", 3, opts) or {}
  check_known("nll_loss", opts, { reduction = true, ignore_index = true })
  check_target("nll_loss", input, target, false)
  check(C.lt_nll_loss(out, input.h, target.h, reduction_of("nll_loss", opts),
    args.int("nll_loss", 3, opts.ignore_index, -100)), "nll_loss")
  return wrap(out[0])
end

-- mse_loss(input, target, {reduction=})
function M.mse_loss(input, target, opts)
  T.handle("mse_loss", 1, input); T.handle("mse_loss", 2, target)
  opts = args.opt_table("mse_loss", 3, opts) or {}
  check_known("mse_loss", opts, { reduction = true })
  check(C.lt_mse_loss(out, input.h, target.h, reduction_of("mse_loss", opts)), "mse_loss")
  return wrap(out[0])
end

-- one_hot(labels, num_classes=-1) -> int64 (N, ..., num_classes)
function M.one_hot(labels, num_classes)
  T.handle("one_hot", 1, labels)
  check(C.lt_one_hot(out, labels.h, args.int("one_hot", 2, num_classes, -1)), "one_hot")
  return wrap(out[0])
end

-- Every other functional op comes from the generated surface: torch.nn.functional.conv2d,
-- max_pool2d, layer_norm, embedding, ... (the schema's nn-module ops and torch functions).
setmetatable(M, {
  __index = function(t, k)
    if type(k) ~= "string" then return nil end
    local f = require("torch._dispatch").function_for(k, "torch.nn.functional." .. k)
    if f then rawset(t, k, f) end
    return f
  end,
})

return M
