--[[
  torch.nn.pooling — MaxPool2d, AvgPool2d and AdaptiveAvgPool2d with PyTorch's arguments and
  repr (https://pytorch.org/docs/1.13/nn.html#pooling-layers). No parameters, no state.

      nn.MaxPool2d(kernel_size, stride=kernel_size, padding=0, dilation=1, return_indices=false,
                   ceil_mode=false)
      nn.AvgPool2d(kernel_size, stride=kernel_size, padding=0, ceil_mode=false,
                   count_include_pad=true, divisor_override=nil)
      nn.AdaptiveAvgPool2d(output_size)      -- int or {H_out, W_out}; false keeps that input dim

  Arguments after the first are positional or in a trailing keyword table; sizes are an int or
  {h, w}, kept as given so the repr reads like PyTorch's (`kernel_size=2` vs `kernel_size=(2, 2)`).

  Shapes: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out); for max/avg pooling
  H_out = floor((H + 2*padding - dilation*(kernel-1) - 1) / stride) + 1 (ceil with ceil_mode).
  MaxPool2d with return_indices = true returns two values: output and int64 argmax indices.

  Usage:  nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1))
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}

-- Checks a size setting (int or {a, b}, non-negative; `allow_false` for adaptive sizes' None).
local function size_arg(name, what, v, allow_false)
  local ok = U.is_int(v) and v >= 0
  if type(v) == "table" and #v == 2 then
    ok = true
    for i = 1, 2 do
      local e = v[i]
      if not ((U.is_int(e) and e >= 0) or (allow_false and e == false)) then ok = false end
    end
  end
  if not ok then
    U.fail(("%s: %s must be an integer or a table of 2 integers, got %s"):format(name, what, U.pyrepr(v)))
  end
  return v
end

-- (N, C, H, W) or (C, H, W)
local function check_input(label, x)
  if not torch.is_tensor(x) then U.fail(("%s: expected a Tensor input, got %s"):format(label, type(x))) end
  if x:dim() ~= 3 and x:dim() ~= 4 then
    U.fail(("%s: expected input of shape (N, C, H, W) or (C, H, W), got %s"):format(label, U.shape(x)))
  end
end

---------------------------------------------------------------- MaxPool2d
local MaxPool2d = Module:extend("MaxPool2d")
M.MaxPool2d = MaxPool2d

function MaxPool2d:__init(kernel_size, ...)
  local a = U.args("MaxPool2d", { "stride", "padding", "dilation", "return_indices", "ceil_mode" }, ...)
  self.kernel_size = size_arg("MaxPool2d", "kernel_size", kernel_size)
  self.stride = a.stride ~= nil and size_arg("MaxPool2d", "stride", a.stride) or kernel_size
  self.padding = size_arg("MaxPool2d", "padding", a.padding == nil and 0 or a.padding)
  self.dilation = size_arg("MaxPool2d", "dilation", a.dilation == nil and 1 or a.dilation)
  self.return_indices = a.return_indices == true
  self.ceil_mode = a.ceil_mode == true
end

function MaxPool2d:_label() return ("MaxPool2d(kernel_size=%s)"):format(U.pyrepr(self.kernel_size)) end

function MaxPool2d:forward(x)
  check_input(self:_label(), x)
  if self.return_indices then
    local ok, out, idx = pcall(F.max_pool2d_with_indices, x, self.kernel_size, self.stride, self.padding,
      self.dilation, self.ceil_mode)
    if not ok then U.rethrow(self:_label(), out) end
    return out, idx
  end
  return U.guard(self:_label(), F.max_pool2d, x, self.kernel_size, self.stride, self.padding, self.dilation,
    self.ceil_mode)
end

function MaxPool2d:extra_repr()
  return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(U.pyrepr(self.kernel_size),
    U.pyrepr(self.stride), U.pyrepr(self.padding), U.pyrepr(self.dilation), U.pyrepr(self.ceil_mode))
end

---------------------------------------------------------------- AvgPool2d
local AvgPool2d = Module:extend("AvgPool2d")
M.AvgPool2d = AvgPool2d

function AvgPool2d:__init(kernel_size, ...)
  local a = U.args("AvgPool2d", { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }, ...)
  self.kernel_size = size_arg("AvgPool2d", "kernel_size", kernel_size)
  self.stride = a.stride ~= nil and size_arg("AvgPool2d", "stride", a.stride) or kernel_size
  self.padding = size_arg("AvgPool2d", "padding", a.padding == nil and 0 or a.padding)
  self.ceil_mode = a.ceil_mode == true
  self.count_include_pad = a.count_include_pad ~= false
  local d = a.divisor_override
  if d ~= nil and (not U.is_int(d) or d <= 0) then
    U.fail(("AvgPool2d: divisor_override must be a positive integer, got %s"):format(tostring(d)))
  end
  self.divisor_override = d
end

function AvgPool2d:_label() return ("AvgPool2d(kernel_size=%s)"):format(U.pyrepr(self.kernel_size)) end

function AvgPool2d:forward(x)
  check_input(self:_label(), x)
  return U.guard(self:_label(), F.avg_pool2d, x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
    self.count_include_pad, self.divisor_override)
end

function AvgPool2d:extra_repr()
  return ("kernel_size=%s, stride=%s, padding=%s"):format(U.pyrepr(self.kernel_size), U.pyrepr(self.stride),
    U.pyrepr(self.padding))
end

---------------------------------------------------------------- AdaptiveAvgPool2d
local AdaptiveAvgPool2d = Module:extend("AdaptiveAvgPool2d")
M.AdaptiveAvgPool2d = AdaptiveAvgPool2d

function AdaptiveAvgPool2d:__init(output_size)
  if type(output_size) == "table" and output_size.output_size ~= nil then output_size = output_size.output_size end
  self.output_size = size_arg("AdaptiveAvgPool2d", "output_size", output_size, true)
end

function AdaptiveAvgPool2d:_label() return "AdaptiveAvgPool2d(" .. self:extra_repr() .. ")" end

function AdaptiveAvgPool2d:forward(x)
  check_input(self:_label(), x)
  local size = self.output_size
  if type(size) == "table" then
    -- false (Python's None) keeps the input's size in that dim
    size = { size[1] or x:size(-2), size[2] or x:size(-1) }
  end
  return U.guard(self:_label(), F.adaptive_avg_pool2d, x, size)
end

function AdaptiveAvgPool2d:extra_repr()
  local v = self.output_size
  if type(v) == "table" then
    v = ("(%s, %s)"):format(v[1] == false and "None" or v[1], v[2] == false and "None" or v[2])
  end
  return "output_size=" .. v
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.MaxPool2d, "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False")
A.init(M.AvgPool2d, "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
  .. "divisor_override=None")
A.init(M.AdaptiveAvgPool2d, "output_size", "all")

return M
