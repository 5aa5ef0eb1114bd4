--[[
  torch.nn.normalization_extra — RMSNorm, LocalResponseNorm and CrossMapLRN2d with PyTorch's
  arguments, state_dict and repr (https://pytorch.org/docs/stable/nn.html#normalization-layers).

      nn.RMSNorm(normalized_shape, eps=nil, elementwise_affine=true, {dtype =, device =})
          y = x / sqrt(mean(x^2 over the normalized_shape dims) + eps) * weight; eps nil means
          the dtype's machine epsilon (torch.finfo(x.dtype).eps), as PyTorch
      nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)
          y = x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta
      nn.CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1)
          Lua Torch's SpatialCrossMapLRN as PyTorch keeps it: 4-D input only, its own forward
          window and hand-written backward, reproduced here as a torch.autograd.Function (its
          results differ from LocalResponseNorm's; use that one in new code)

  Shapes: RMSNorm (*, *normalized_shape), weight (normalized_shape, ones) if elementwise_affine;
  LocalResponseNorm (N, C, *), 3-D or more; CrossMapLRN2d (N, C, H, W). Output shape = input shape.

  Usage:  local norm = nn.RMSNorm(512, {eps = 1e-6}); local y = norm(x)
          nn.LocalResponseNorm(5, 1e-4, 0.75, 2)
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"
local af = require "torch.autograd_function"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}

---------------------------------------------------------------- RMSNorm
local RMSNorm = Module:extend("RMSNorm")
M.RMSNorm = RMSNorm

function RMSNorm:__init(normalized_shape, ...)
  local a = U.args("RMSNorm", { "eps", "elementwise_affine", "dtype", "device" }, ...)
  local shape = type(normalized_shape) == "table" and normalized_shape or { normalized_shape }
  local copy = {}
  for i = 1, #shape do
    if not U.is_int(shape[i]) or shape[i] < 0 then
      U.fail(("RMSNorm: normalized_shape must be a non-negative integer or a table of them, got %s"):format(
        U.pyrepr(normalized_shape)))
    end
    copy[i] = shape[i]
  end
  if a.eps ~= nil and type(a.eps) ~= "number" then
    U.fail(("RMSNorm: eps must be a number or nil, got %s"):format(type(a.eps)))
  end
  self.normalized_shape, self.eps = copy, a.eps
  self.elementwise_affine = a.elementwise_affine ~= false
  if self.elementwise_affine then
    self.weight = Parameter(torch.empty(copy, { dtype = a.dtype, device = a.device }))
  else
    self:register_parameter("weight", nil)
  end
  self:reset_parameters()
end

function RMSNorm:reset_parameters()
  if self.weight ~= nil then init.ones_(self.weight) end
end

function RMSNorm:_label() return "RMSNorm(" .. U.pyrepr(self.normalized_shape) .. ")" end

-- Input (*, *normalized_shape): its trailing dims must equal normalized_shape.
function RMSNorm:forward(x)
  U.check_float_input(self:_label(), x)
  local ns, d = self.normalized_shape, x:dim()
  local ok = d >= #ns
  for i = 1, #ns do ok = ok and x:size(d - #ns + i - 1) == ns[i] end
  if not ok then
    U.fail(("%s: expected input of shape (*, %s), got %s"):format(self:_label(), table.concat(ns, ", "), U.shape(x)))
  end
  return U.guard(self:_label(), torch.rms_norm, x, ns, self.weight, self.eps)
end

function RMSNorm:extra_repr()
  return ("%s, eps=%s, elementwise_affine=%s"):format(U.pyrepr(self.normalized_shape), U.pyrepr(self.eps, true),
    U.pyrepr(self.elementwise_affine))
end

---------------------------------------------------------------- LocalResponseNorm, CrossMapLRN2d
local function lrn_init(name)
  return function(self, size, alpha, beta, k)
    if not U.is_int(size) or size <= 0 then
      U.fail(("%s: size must be a positive integer, got %s"):format(name, U.pyrepr(size)))
    end
    for what, v in pairs({ alpha = alpha, beta = beta, k = k }) do
      if v ~= nil and type(v) ~= "number" then U.fail(("%s: %s must be a number, got %s"):format(name, what, type(v))) end
    end
    self.size, self.alpha, self.beta = size, alpha or 1e-4, beta or 0.75
    self.k = k or (name == "CrossMapLRN2d" and 1 or 1.0)
  end
end

-- "5, alpha=0.0001, beta=0.75, k=1.0"; k is a float (k: float), but CrossMapLRN2d's default k is
-- Python's int 1, printed "1".
local function lrn_repr(self)
  local k_float = self._class.__name == "LocalResponseNorm" or self.k ~= 1
  return ("%d, alpha=%s, beta=%s, k=%s"):format(self.size, U.pyrepr(self.alpha, true), U.pyrepr(self.beta, true),
    U.pyrepr(self.k, k_float))
end

local function lrn_label(self) return ("%s(%d)"):format(self._class.__name, self.size) end

local LocalResponseNorm = Module:extend("LocalResponseNorm")
M.LocalResponseNorm = LocalResponseNorm
LocalResponseNorm.__init = lrn_init("LocalResponseNorm")
LocalResponseNorm.extra_repr, LocalResponseNorm._label = lrn_repr, lrn_label

function LocalResponseNorm:forward(x)
  U.check_float_input(self:_label(), x)
  return U.guard(self:_label(), F.local_response_norm, x, self.size, self.alpha, self.beta, self.k)
end

--[[ PyTorch's torch.nn._functions.CrossMapLRN2d, step for step. Forward: scale[c] is a running
     window sum of x^2 over channels (pre_pad = floor((size - 1) / 2 + 1) ahead), then
     y = x * (k + alpha / size * scale)^-beta. Backward is the hand-written one, not autograd's
     derivative of this forward. ]]
local CrossMap = af.Function("CrossMapLRN2d")

function CrossMap.forward(ctx, input, size, alpha, beta, k)
  local channels = input:size(1)
  local square = input:pow(2)
  local pre_pad = math.floor((size - 1) / 2 + 1)
  local scale = torch.zeros_like(input)
  local first = scale:select(1, 0)
  for c = 0, math.min(pre_pad, channels) - 1 do first:add_(square:select(1, c)) end
  for c = 1, channels - 1 do
    local current = scale:select(1, c)
    current:copy_(scale:select(1, c - 1))
    if c < channels - pre_pad + 1 then current:add_(square:select(1, c + pre_pad - 1)) end
    if c > pre_pad then current:sub_(square:select(1, c - pre_pad)) end
  end
  scale:mul_(alpha / size):add_(k)
  local output = scale:pow(-beta):mul_(input)
  ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
  ctx:save_for_backward(input, output)
  return output
end

function CrossMap.backward(ctx, grad_output)
  local input, output = unpack(ctx.saved_tensors)
  local size, scale = ctx.size, ctx.scale
  local batch, channels, height, width = input:size(0), input:size(1), input:size(2), input:size(3)
  local padded = torch.zeros({ channels + size - 1, height, width }, { dtype = input.dtype, device = input.device })
  local cache_ratio = 2 * ctx.alpha * ctx.beta / size
  local inverse_pre_pad = math.floor(size - (size - 1) / 2)
  local grad_input = scale:pow(-ctx.beta):mul_(grad_output)
  local center = padded:narrow(0, inverse_pre_pad, channels)
  for n = 0, batch - 1 do
    center:copy_(grad_output:select(0, n) * output:select(0, n)):div_(scale:select(0, n))
    local accum = padded:narrow(0, 0, size - 1):sum(0)
    local gn, xn = grad_input:select(0, n), input:select(0, n)
    for c = 0, channels - 1 do
      accum:add_(padded:select(0, c + size - 1))
      gn:select(0, c):addcmul_(xn:select(0, c), accum, { value = -cache_ratio })
      accum:sub_(padded:select(0, c))
    end
  end
  return grad_input, nil, nil, nil, nil
end

local CrossMapLRN2d = Module:extend("CrossMapLRN2d")
M.CrossMapLRN2d = CrossMapLRN2d
CrossMapLRN2d.__init = lrn_init("CrossMapLRN2d")
CrossMapLRN2d.extra_repr, CrossMapLRN2d._label = lrn_repr, lrn_label

function CrossMapLRN2d:forward(x)
  U.check_float_input(self:_label(), x)
  if x:dim() ~= 4 then
    U.fail(("%s: Expected input to be 4D, got %dD instead."):format(self:_label(), x:dim()))
  end
  return U.guard(self:_label(), CrossMap.apply, x, self.size, self.alpha, self.beta, self.k)
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.RMSNorm, "normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None")
A.init(M.LocalResponseNorm, "size, alpha=0.0001, beta=0.75, k=1.0", "all")
A.init(M.CrossMapLRN2d, "size, alpha=0.0001, beta=0.75, k=1", "all")

return M
