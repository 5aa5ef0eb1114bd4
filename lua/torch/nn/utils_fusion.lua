--[[
  torch.nn.utils_fusion — nn.utils' inference-time rewrites of conv and linear layers
  (torch/nn/utils/fusion.py, memory_format.py), gathered into torch.nn.utils:

    fuse_conv_bn_eval(conv, bn, transpose=False) -> a new conv computing bn(conv(x)) (both in eval)
    fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False)
        -> fused weight, bias (Parameters):
           w' = w * (bn_w / sqrt(bn_rv + eps)) per output channel (dim 0; dim 1 with transpose)
           b' = (b - bn_rm) / sqrt(bn_rv + eps) * bn_w + bn_b
    fuse_linear_bn_eval(linear, bn) -> a new Linear computing bn(linear(x))
    fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b) -> weight, bias
    convert_conv2d_weight_memory_format(module, memory_format) -> module, the weights of every
        Conv2d / ConvTranspose2d in it re-laid out in memory_format ("channels_last",
        "contiguous_format"); convert_conv3d_weight_memory_format likewise for the 3-d layers
        ("channels_last_3d"). ltorch names memory formats by strings (PyTorch's
        torch.channels_last is "channels_last").

  The arithmetic is PyTorch's, step for step, so fused values match PyTorch's to the last bit
  on the same inputs. The eval variants copy the layer (deep copy) and leave the inputs alone.

  Usage:  local fused = nn.utils.fuse_conv_bn_eval(conv:eval(), bn:eval())
]]
local torch = require "torch"
local P = require "torch._pysig"
local module = require "torch.nn.module"
local conv = require "torch.nn.conv"
local TU = require "torch.nn._transformer_util"

local Parameter = module.Parameter

local M = {}

local function is_a(m, class)
  local c = module.is_module(m) and rawget(m, "_class")
  while c do
    if c == class then return true end
    c = rawget(c, "__base")
  end
  return false
end

local function tensor_arg(sig, a, name, optional)
  local v = a[name]
  if v == nil and optional then return nil end
  if not torch.is_tensor(v) then
    P.fail("bad argument #%d to '%s' (Tensor%s expected, got %s)", sig.index[name], sig.name,
      optional and " or nil" or "", type(v))
  end
  return v
end

local CONV_W = P.signature("fuse_conv_bn_weights", "conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False")
function M.fuse_conv_bn_weights(...)
  local a = P.bind(CONV_W, ...)
  local conv_w, conv_b = tensor_arg(CONV_W, a, "conv_w"), tensor_arg(CONV_W, a, "conv_b", true)
  local bn_rm, bn_rv = tensor_arg(CONV_W, a, "bn_rm"), tensor_arg(CONV_W, a, "bn_rv")
  local bn_w, bn_b = tensor_arg(CONV_W, a, "bn_w", true), tensor_arg(CONV_W, a, "bn_b", true)
  local weight_dtype = conv_w.dtype
  local bias_dtype = conv_b and conv_b.dtype or weight_dtype
  conv_b = conv_b or torch.zeros_like(bn_rm)
  bn_w = bn_w or torch.ones_like(bn_rm)
  bn_b = bn_b or torch.zeros_like(bn_rm)
  local rsqrt = torch.rsqrt(bn_rv + a.bn_eps)
  local shape = a.transpose and { 1, -1 } or { -1, 1 }
  for _ = 3, conv_w:dim() do shape[#shape + 1] = 1 end
  local fused_w = (conv_w * (bn_w * rsqrt):reshape(shape)):to(weight_dtype)
  local fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b):to(bias_dtype)
  return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)
end

local LINEAR_W = P.signature("fuse_linear_bn_weights", "linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b")
function M.fuse_linear_bn_weights(...)
  local a = P.bind(LINEAR_W, ...)
  local linear_w, linear_b = tensor_arg(LINEAR_W, a, "linear_w"), tensor_arg(LINEAR_W, a, "linear_b", true)
  local bn_rm, bn_rv = tensor_arg(LINEAR_W, a, "bn_rm"), tensor_arg(LINEAR_W, a, "bn_rv")
  local bn_w, bn_b = tensor_arg(LINEAR_W, a, "bn_w"), tensor_arg(LINEAR_W, a, "bn_b")
  local weight_dtype = linear_w.dtype
  local bias_dtype = linear_b and linear_b.dtype or weight_dtype
  linear_b = linear_b or torch.zeros_like(bn_rm)
  local scale = bn_w * torch.rsqrt(bn_rv + a.bn_eps)
  local fused_w = linear_w * scale:unsqueeze(-1):to(weight_dtype)
  local fused_b = ((linear_b - bn_rm) * scale + bn_b):to(bias_dtype)
  return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
end

local function check_eval(fname, layer, bn)
  if not module.is_module(layer) or not module.is_module(bn) then
    P.fail("%s: expected two Modules, got %s and %s", fname, type(layer), type(bn))
  end
  if layer.training or bn.training then P.fail("%s: Fusion only for eval!", fname) end
  if bn.running_mean == nil or bn.running_var == nil then
    P.fail("%s: bn.running_mean and bn.running_var must not be None", fname)
  end
end

local CONV_EVAL = P.signature("fuse_conv_bn_eval", "conv, bn, transpose=False")
function M.fuse_conv_bn_eval(...)
  local a = P.bind(CONV_EVAL, ...)
  check_eval("fuse_conv_bn_eval", a.conv, a.bn)
  local fused, bn = TU.deepcopy(a.conv), a.bn
  fused.weight, fused.bias = M.fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
    bn.eps, bn.weight, bn.bias, a.transpose)
  return fused
end

local LINEAR_EVAL = P.signature("fuse_linear_bn_eval", "linear, bn")
function M.fuse_linear_bn_eval(...)
  local a = P.bind(LINEAR_EVAL, ...)
  check_eval("fuse_linear_bn_eval", a.linear, a.bn)
  local linear, bn = a.linear, a.bn
  if linear.out_features ~= bn.num_features and bn.num_features ~= 1 then
    P.fail("fuse_linear_bn_eval: To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
      .. "got linear.out_features=%s and bn.num_features=%s", tostring(linear.out_features), tostring(bn.num_features))
  end
  local fused = TU.deepcopy(linear)
  fused.weight, fused.bias = M.fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
    bn.eps, bn.weight, bn.bias)
  return fused
end

---------------------------------------------------------------- memory format
local FORMATS = { contiguous_format = true, channels_last = true, channels_last_3d = true, preserve_format = true }

-- The weights of every module in `m` that is one of `classes`, re-laid out in `fmt`.
local function convert(fname, m, fmt, classes)
  if not module.is_module(m) then P.fail("bad argument #1 to '%s' (Module expected, got %s)", fname, type(m)) end
  if not FORMATS[fmt] then
    P.fail("bad argument #2 to '%s' (memory format 'contiguous_format', 'channels_last' or 'channels_last_3d' "
      .. "expected, got %s)", fname, tostring(fmt))
  end
  for _, sub in ipairs(m:modules()) do
    local hit = false
    for _, class in ipairs(classes) do hit = hit or is_a(sub, class) end
    if hit then
      local w = sub.weight:detach()
      -- clone(memory_format=fmt) then resize_(size, memory_format=fmt), as PyTorch
      local ok, data = pcall(function()
        return torch.empty(0, { dtype = w.dtype, device = w.device }):resize_(w:size(), { memory_format = fmt }):copy_(w)
      end)
      if not ok then P.fail("%s: %s", fname, tostring(data):gsub("^.-Tensor%.resize_: ", "")) end
      sub.weight.data = data
    end
  end
  return m
end

local CONV2D = P.signature("convert_conv2d_weight_memory_format", "module, memory_format")
function M.convert_conv2d_weight_memory_format(...)
  local a = P.bind(CONV2D, ...)
  return convert(CONV2D.name, a.module, a.memory_format, { conv.Conv2d, conv.ConvTranspose2d })
end

local CONV3D = P.signature("convert_conv3d_weight_memory_format", "module, memory_format")
function M.convert_conv3d_weight_memory_format(...)
  local a = P.bind(CONV3D, ...)
  return convert(CONV3D.name, a.module, a.memory_format, { conv.Conv3d, conv.ConvTranspose3d })
end

return M
