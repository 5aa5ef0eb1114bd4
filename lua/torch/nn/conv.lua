--[[
  torch.nn.conv — convolution layers with PyTorch's arguments, init, state_dict and repr:
  Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d and ConvTranspose3d
  (https://pytorch.org/docs/stable/nn.html#convolution-layers).

      nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                groups=1, bias=true, padding_mode="zeros", {dtype =, device =})
      nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
                output_padding=0, groups=1, bias=true, dilation=1, padding_mode="zeros")

  Any argument may be positional (PyTorch's order) or in the trailing keyword table
  (nn.Conv2d(3, 8, {kernel_size = 3})). kernel_size/stride/padding/dilation are an int or a table of ints, one per spatial dim;
  Conv padding may also be "same" (stride 1 only) or "valid". padding_mode "reflect",
  "replicate" and "circular" pad with F.pad first, as PyTorch does.

  Shapes: Conv1d and ConvTranspose1d (N, C_in, L) or (C_in, L) -> (N, C_out, L_out); Conv2d and
  ConvTranspose2d (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out); Conv3d and
  ConvTranspose3d (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).
  ConvTranspose*d's forward(x, output_size) picks output_padding so the output has that size.
  Conv weight (C_out, C_in/groups, *kernel); ConvTranspose weight (C_in, C_out/groups, *kernel);
  bias (C_out). Init as PyTorch: kaiming_uniform_(a = sqrt(5)) on the weight, then the bias
  U(-1/sqrt(fan_in), 1/sqrt(fan_in)) — the same draws in the same order, so a seed gives
  PyTorch's numbers.

  Usage:  local conv = nn.Conv2d(1, 6, 5); local y = conv(torch.randn(8, 1, 28, 28))  -- (8, 6, 24, 24)
          local up = nn.ConvTranspose2d(16, 8, 3, {stride = 2, padding = 1, output_padding = 1})
          up(x, {output_size = {32, 32}})
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}

local CONV_ARGS = { "stride", "padding", "dilation", "groups", "bias", "padding_mode", "dtype", "device" }
local TRANSPOSE_ARGS = { "stride", "padding", "output_padding", "groups", "bias", "dilation", "padding_mode",
  "dtype", "device" }
local PADDING_MODES = { zeros = true, reflect = true, replicate = true, circular = true }
local SPATIAL = { [1] = "L", [2] = "H, W", [3] = "D, H, W" }

---------------------------------------------------------------- the shared base (_ConvNd)
local ConvNd = Module:extend("_ConvNd")  -- not exported: nn has no _ConvNd

--[[ Validates and stores the settings, allocates weight and bias, initialises them.
     nd: spatial dims; transposed: weight laid out (C_in, C_out/groups, *k). ]]
function ConvNd:_setup(nd, transposed, in_channels, out_channels, kernel_size, a)
  local name = self._class.__name
  if not U.is_int(in_channels) or not U.is_int(out_channels) or in_channels <= 0 or out_channels <= 0 then
    U.fail(("%s: in_channels and out_channels must be positive integers, got %s, %s"):format(name,
      tostring(in_channels), tostring(out_channels)))
  end
  local groups = a.groups == nil and 1 or a.groups
  if not U.is_int(groups) or groups <= 0 then U.fail(name .. ": groups must be a positive integer") end
  if in_channels % groups ~= 0 then U.fail(name .. ": in_channels must be divisible by groups") end
  if out_channels % groups ~= 0 then U.fail(name .. ": out_channels must be divisible by groups") end
  self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
  self.kernel_size = U.ntuple(name, "kernel_size", kernel_size, nd)
  self.stride = U.ntuple(name, "stride", a.stride == nil and 1 or a.stride, nd)
  self.dilation = U.ntuple(name, "dilation", a.dilation == nil and 1 or a.dilation, nd)
  self.output_padding = U.ntuple(name, "output_padding", a.output_padding == nil and 0 or a.output_padding, nd)
  self.transposed = transposed
  local padding = a.padding == nil and 0 or a.padding
  if type(padding) == "string" then
    if transposed or (padding ~= "same" and padding ~= "valid") then
      U.fail(("%s: invalid padding string '%s'%s"):format(name, padding,
        transposed and " (ConvTranspose takes integer padding)" or ", should be 'same' or 'valid'"))
    end
    for _, s in ipairs(self.stride) do
      if padding == "same" and s ~= 1 then
        U.fail(name .. ": padding='same' is not supported for strided convolutions")
      end
    end
    self.padding = padding
  else
    self.padding = U.ntuple(name, "padding", padding, nd)
  end
  self.padding_mode = a.padding_mode or "zeros"
  if not PADDING_MODES[self.padding_mode] then
    U.fail(("%s: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', but got '%s'"):format(
      name, tostring(self.padding_mode)))
  end
  if transposed and self.padding_mode ~= "zeros" then
    U.fail(('%s: only "zeros" padding mode is supported'):format(name))
  end
  self._reversed_padding_repeated_twice = self:_reversed_padding()

  local f = { dtype = a.dtype, device = a.device }
  local shape = transposed and { in_channels, out_channels / groups } or { out_channels, in_channels / groups }
  for _, k in ipairs(self.kernel_size) do shape[#shape + 1] = k end
  self.weight = Parameter(torch.empty(shape, f))
  if a.bias == nil or a.bias == true then
    self.bias = Parameter(torch.empty(out_channels, f))
  else
    self:register_parameter("bias", nil)
  end
  self:reset_parameters()
end

-- F.pad's list for a non-"zeros" padding_mode: last spatial dim first, (left, right) each.
function ConvNd:_reversed_padding()
  local nd, out = #self.kernel_size, {}
  for i = nd, 1, -1 do
    local left, right
    if self.padding == "valid" then
      left, right = 0, 0
    elseif self.padding == "same" then
      local total = self.dilation[i] * (self.kernel_size[i] - 1)
      left = math.floor(total / 2)
      right = total - left
    else
      left, right = self.padding[i], self.padding[i]
    end
    out[#out + 1], out[#out + 2] = left, right
  end
  return out
end

function ConvNd:reset_parameters()
  -- a = sqrt(5) makes the weight U(-1/sqrt(k), 1/sqrt(k)), k = C_in/groups * prod(kernel):
  -- PyTorch's long-standing default (pytorch/pytorch#15314).
  init.kaiming_uniform_(self.weight, { a = math.sqrt(5) })
  if self.bias ~= nil then
    local fan_in = init.calculate_fan_in_and_fan_out(self.weight)
    if fan_in ~= 0 then
      local bound = 1 / math.sqrt(fan_in)
      init.uniform_(self.bias, -bound, bound)
    end
  end
end

-- "Conv2d(3, 16, kernel_size=(3, 3))": how errors name the layer.
function ConvNd:_label()
  return ("%s(%d, %d, kernel_size=%s)"):format(self._class.__name, self.in_channels, self.out_channels,
    U.pyrepr(self.kernel_size))
end

-- Input must be (N, C_in, *spatial) or (C_in, *spatial), floating point.
function ConvNd:_check_input(x)
  local nd = #self.kernel_size
  U.check_float_input(self:_label(), x)
  local d = x:dim()
  if (d ~= nd + 1 and d ~= nd + 2) or x:size(d - nd - 1) ~= self.in_channels then
    U.fail(("%s: expected input of shape (N, %d, %s) or (%d, %s), got %s"):format(self:_label(),
      self.in_channels, SPATIAL[nd], self.in_channels, SPATIAL[nd], U.shape(x)))
  end
end

function ConvNd:extra_repr()
  local s = ("%d, %d, kernel_size=%s, stride=%s"):format(self.in_channels, self.out_channels,
    U.pyrepr(self.kernel_size), U.pyrepr(self.stride))
  local function all(t, v)
    if type(t) ~= "table" then return false end
    for _, x in ipairs(t) do if x ~= v then return false end end
    return true
  end
  if not all(self.padding, 0) then s = s .. ", padding=" .. U.pyrepr(self.padding) end
  if not all(self.dilation, 1) then s = s .. ", dilation=" .. U.pyrepr(self.dilation) end
  if not all(self.output_padding, 0) then s = s .. ", output_padding=" .. U.pyrepr(self.output_padding) end
  if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
  if self.bias == nil then s = s .. ", bias=False" end
  if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
  return s
end

-- Convolution through `op` (F.conv1d / F.conv2d), padding with F.pad first for non-zero modes.
function ConvNd:_conv_forward(op, x)
  self:_check_input(x)
  if self.padding_mode ~= "zeros" then
    local padded = U.guard(self:_label(), F.pad, x, self._reversed_padding_repeated_twice, self.padding_mode)
    local zero = {}
    for i = 1, #self.kernel_size do zero[i] = 0 end
    return U.guard(self:_label(), op, padded, self.weight, self.bias, self.stride, zero, self.dilation, self.groups)
  end
  return U.guard(self:_label(), op, x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
end

---------------------------------------------------------------- Conv1d, Conv2d, Conv3d
local function conv_class(name, nd, op_name)
  local cls = ConvNd:extend(name)
  function cls:__init(in_channels, out_channels, kernel_size, ...)
    local a = U.args(name, CONV_ARGS, ...)
    self:_setup(nd, false, in_channels, out_channels, kernel_size, a)
  end
  function cls:forward(x) return self:_conv_forward(F[op_name], x) end
  M[name] = cls
  return cls
end
conv_class("Conv1d", 1, "conv1d")
conv_class("Conv2d", 2, "conv2d")
conv_class("Conv3d", 3, "conv3d")

---------------------------------------------------------------- ConvTranspose1d, 2d, 3d
local ConvTransposeNd = ConvNd:extend("_ConvTransposeNd")  -- not exported: nn has no _ConvTransposeNd

--[[ output_padding for a requested output_size (the spatial sizes, or with N and C in front), as
     PyTorch's _output_padding: each size must lie in [min, min + stride - 1], min being
     (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1. ]]
function ConvTransposeNd:_output_padding(x, output_size)
  if output_size == nil then return self.output_padding end
  local nd = #self.kernel_size
  local lead = x:dim() == nd + 2 and 2 or 1
  local size = {}
  if type(output_size) ~= "table" then
    U.fail(("%s: output_size must be a table of integers, got %s"):format(self:_label(), type(output_size)))
  elseif #output_size == lead + nd then
    for i = 1, nd do size[i] = output_size[lead + i] end
  elseif #output_size == nd then
    size = output_size
  else
    U.fail(("%s: for %dD input, output_size must have %d or %d elements (got %d)"):format(self:_label(),
      x:dim(), nd, nd + lead, #output_size))
  end
  local res, mins, maxs = {}, {}, {}
  for d = 1, nd do
    mins[d] = (x:size(lead + d - 1) - 1) * self.stride[d] - 2 * self.padding[d] +
      self.dilation[d] * (self.kernel_size[d] - 1) + 1
    maxs[d] = mins[d] + self.stride[d] - 1
  end
  for d = 1, nd do
    if not U.is_int(size[d]) or size[d] < mins[d] or size[d] > maxs[d] then
      U.fail(("%s: requested an output size of %s, but valid sizes range from %s to %s (for an input of %s)")
        :format(self:_label(), U.pyrepr(size), U.pyrepr(mins), U.pyrepr(maxs), U.shape(x)))
    end
    res[d] = size[d] - mins[d]
  end
  return res
end

local function transpose_class(name, nd, op_name)
  local cls = ConvTransposeNd:extend(name)
  function cls:__init(in_channels, out_channels, kernel_size, ...)
    local a = U.args(name, TRANSPOSE_ARGS, ...)
    self:_setup(nd, true, in_channels, out_channels, kernel_size, a)
  end
  -- forward(x, output_size=nil | {output_size = {...}})
  function cls:forward(x, output_size)
    if type(output_size) == "table" and output_size.output_size ~= nil then output_size = output_size.output_size end
    self:_check_input(x)
    local output_padding = self:_output_padding(x, output_size)
    return U.guard(self:_label(), F[op_name], x, self.weight, self.bias, self.stride, self.padding,
      output_padding, self.groups, self.dilation)
  end
  M[name] = cls
  return cls
end
transpose_class("ConvTranspose1d", 1, "conv_transpose1d")
transpose_class("ConvTranspose2d", 2, "conv_transpose2d")
transpose_class("ConvTranspose3d", 3, "conv_transpose3d")

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
for _, name in ipairs({ "Conv1d", "Conv2d", "Conv3d" }) do
  A.init(M[name], "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
    .. "bias=True, padding_mode='zeros', device=None, dtype=None")
end
for _, name in ipairs({ "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d" }) do
  A.init(M[name], "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, "
    .. "bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None")
end

-- True when class c is (or derives from) ConvTranspose1d/2d/3d: their weight is (in, out/groups, *k),
-- so weight and spectral norms take dim 1 where other layers take 0.
function M.is_transposed(c)
  while c do
    if c == M.ConvTranspose1d or c == M.ConvTranspose2d or c == M.ConvTranspose3d then return true end
    c = rawget(c, "__base")
  end
  return false
end

return M
