--[[
  torch.nn.pooling — the sliding-window pools with PyTorch's arguments and repr: MaxPool1d/2d/3d,
  AvgPool1d/2d/3d and LPPool1d/2d/3d (https://pytorch.org/docs/stable/nn.html#pooling-layers).
  No parameters, no state. (Adaptive pools: torch.nn.pooling_adaptive; MaxUnpool and
  FractionalMaxPool: torch.nn.pooling_unpool.)

      nn.MaxPool2d(kernel_size, stride=kernel_size, padding=0, dilation=1, return_indices=false,
                   ceil_mode=false)
      nn.AvgPool2d(kernel_size, stride=kernel_size, padding=0, ceil_mode=false,
                   count_include_pad=true, divisor_override=nil)   -- AvgPool1d has no divisor_override
      nn.LPPool2d(norm_type, kernel_size, stride=kernel_size, ceil_mode=false)

  Arguments after the first are positional or in a trailing keyword table; sizes are an int or a
  table of d ints, kept as given so the repr reads like PyTorch's (`kernel_size=2` vs
  `kernel_size=(2, 2)`; AvgPool1d stores one-element tuples, as PyTorch's _single does).

  Shapes: (N, C, *spatial) or (C, *spatial), d spatial dims (L; H, W; D, H, W) -> the same rank;
  for max/avg pooling out = floor((in + 2*padding - dilation*(kernel-1) - 1) / stride) + 1 (ceil
  with ceil_mode). MaxPool with return_indices = true returns two values: output and int64
  argmax indices (what MaxUnpool takes). LPPool: (sum over the window of x^p)^(1/p).

  Usage:  nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1))
]]
local Module = require("torch.nn.module").Module
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}


-- Checks a size setting: a non-negative int or a table of d of them. Returns v unchanged.
local function size_arg(name, what, v, d)
  local ok = U.is_int(v) and v >= 0
  if type(v) == "table" and #v == d then
    ok = true
    for i = 1, d do
      if not (U.is_int(v[i]) and v[i] >= 0) then ok = false end
    end
  end
  if not ok then
    U.fail(("%s: %s must be an integer or a table of %d integers, got %s"):format(name, what, d, U.pyrepr(v)))
  end
  return v
end

local check_input = U.check_pooling_input

-- An int as PyTorch's _single: {v}.
local function single(v) return U.is_int(v) and { v } or v end

local function label(self) return ("%s(kernel_size=%s)"):format(self._class.__name, U.pyrepr(self.kernel_size)) end

---------------------------------------------------------------- MaxPool1d, 2d, 3d
local MAX_ARGS = { "stride", "padding", "dilation", "return_indices", "ceil_mode" }

local function max_pool(d)
  local name = "MaxPool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(kernel_size, ...)
    local a = U.args(name, MAX_ARGS, ...)
    self.kernel_size = size_arg(name, "kernel_size", kernel_size, d)
    self.stride = a.stride ~= nil and size_arg(name, "stride", a.stride, d) or kernel_size
    self.padding = size_arg(name, "padding", a.padding == nil and 0 or a.padding, d)
    self.dilation = size_arg(name, "dilation", a.dilation == nil and 1 or a.dilation, d)
    self.return_indices = a.return_indices == true
    self.ceil_mode = a.ceil_mode == true
  end
  cls._label = label
  function cls:forward(x)
    check_input(self:_label(), x, d)
    if self.return_indices then
      local ok, out, idx = pcall(F["max_pool" .. d .. "d_with_indices"], x, self.kernel_size, self.stride,
        self.padding, self.dilation, self.ceil_mode)
      if not ok then U.rethrow(self:_label(), out) end
      return out, idx
    end
    return U.guard(self:_label(), F["max_pool" .. d .. "d"], x, self.kernel_size, self.stride, self.padding,
      self.dilation, self.ceil_mode)
  end
  function cls:extra_repr()
    return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(U.pyrepr(self.kernel_size),
      U.pyrepr(self.stride), U.pyrepr(self.padding), U.pyrepr(self.dilation), U.pyrepr(self.ceil_mode))
  end
  M[name] = cls
  A.init(cls, "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False")
end
for d = 1, 3 do max_pool(d) end

---------------------------------------------------------------- AvgPool1d, 2d, 3d
local function avg_pool(d)
  local name = "AvgPool" .. d .. "d"
  local names = { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }
  if d == 1 then names[5] = nil end
  local cls = Module:extend(name)
  function cls:__init(kernel_size, ...)
    local a = U.args(name, names, ...)
    self.kernel_size = size_arg(name, "kernel_size", kernel_size, d)
    self.stride = a.stride ~= nil and size_arg(name, "stride", a.stride, d) or kernel_size
    self.padding = size_arg(name, "padding", a.padding == nil and 0 or a.padding, d)
    if d == 1 then   -- AvgPool1d stores _single(...) tuples
      self.kernel_size, self.stride, self.padding = single(self.kernel_size), single(self.stride), single(self.padding)
    end
    self.ceil_mode = a.ceil_mode == true
    self.count_include_pad = a.count_include_pad ~= false
    local div = a.divisor_override
    if div ~= nil and (not U.is_int(div) or div <= 0) then
      U.fail(("%s: divisor_override must be a positive integer, got %s"):format(name, tostring(div)))
    end
    self.divisor_override = div
  end
  cls._label = label
  function cls:forward(x)
    check_input(self:_label(), x, d)
    if d == 1 then
      return U.guard(self:_label(), F.avg_pool1d, x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
        self.count_include_pad)
    end
    return U.guard(self:_label(), F["avg_pool" .. d .. "d"], x, self.kernel_size, self.stride, self.padding,
      self.ceil_mode, self.count_include_pad, self.divisor_override)
  end
  cls.extra_repr = U.window_repr
  M[name] = cls
  local d_text = d == 1 and "" or ", divisor_override=None"
  A.init(cls, "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True" .. d_text)
end
for d = 1, 3 do avg_pool(d) end

---------------------------------------------------------------- LPPool1d, 2d, 3d
local function lp_pool(d)
  local name = "LPPool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(norm_type, kernel_size, ...)
    local a = U.args(name, { "stride", "ceil_mode" }, ...)
    if type(norm_type) ~= "number" or norm_type == 0 then
      U.fail(("%s: norm_type must be a non-zero number, got %s"):format(name, U.pyrepr(norm_type)))
    end
    self.norm_type = norm_type
    self.kernel_size = size_arg(name, "kernel_size", kernel_size, d)
    self.stride = a.stride ~= nil and size_arg(name, "stride", a.stride, d) or nil
    self.ceil_mode = a.ceil_mode == true
  end
  cls._label = label
  function cls:forward(x)
    check_input(self:_label(), x, d)
    U.check_float_input(self:_label(), x)
    return U.guard(self:_label(), F["lp_pool" .. d .. "d"], x, self.norm_type, self.kernel_size, self.stride,
      self.ceil_mode)
  end
  function cls:extra_repr()
    -- norm_type: float in PyTorch's signature, printed as Python prints a float (2.0)
    return ("norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s"):format(U.pyrepr(self.norm_type, true),
      U.pyrepr(self.kernel_size), U.pyrepr(self.stride), U.pyrepr(self.ceil_mode))
  end
  M[name] = cls
  A.init(cls, "norm_type, kernel_size, stride=None, ceil_mode=False")
end
for d = 1, 3 do lp_pool(d) end

return M
