--[[
  torch.nn.pooling_unpool — MaxUnpool1d/2d/3d (the partial inverse of MaxPool) and
  FractionalMaxPool2d/3d (max over pseudo-random windows), with PyTorch's arguments, buffers and
  repr (https://pytorch.org/docs/stable/nn.html#pooling-layers).

      nn.MaxUnpool2d(kernel_size, stride=kernel_size, padding=0)
          unpool(x, indices, output_size=nil)       -- or unpool(x, indices, {output_size = {H, W}})
      nn.FractionalMaxPool2d(kernel_size, output_size=nil, output_ratio=nil, return_indices=false,
                             _random_samples=nil)

  MaxUnpool: x and indices are MaxPool's two outputs (return_indices = true); each value goes
  back to its argmax position, zeros elsewhere. Sizes are stored as tuples (PyTorch's _single,
  _pair, _triple). output_size (spatial dims, or with N and C in front) picks between the input
  sizes a pool maps to the same output.

  FractionalMaxPool (https://arxiv.org/abs/1412.6071): give output_size or output_ratio (each in
  (0, 1)), not both. The windows come from _random_samples (N, C, 2 or 3) in [0, 1): the buffer
  when given (then in the state_dict, as PyTorch's), else torch.rand draws new ones each call.
  return_indices = true returns output and int64 indices.

  Shapes: MaxUnpool (N, C, *in) or (C, *in) -> (N, C, *out), out = (in - 1)*stride + kernel - 2*padding;
  FractionalMaxPool2d (N, C, H, W) or (C, H, W); FractionalMaxPool3d (N, C, D, H, W) or (C, D, H, W).

  Usage:  local pool, unpool = nn.MaxPool2d(2, {return_indices = true}), nn.MaxUnpool2d(2)
          local y, idx = pool(x); local x2 = unpool(y, idx, {output_size = x:size()})
          nn.FractionalMaxPool2d(3, {output_ratio = {0.5, 0.5}})
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}


local check_input = U.check_pooling_input

local function label(self) return ("%s(kernel_size=%s)"):format(self._class.__name, U.pyrepr(self.kernel_size)) end

---------------------------------------------------------------- MaxUnpool1d, 2d, 3d
local function max_unpool(d)
  local name = "MaxUnpool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(kernel_size, stride, padding)
    self.kernel_size = U.ntuple(name, "kernel_size", kernel_size, d)
    self.stride = U.ntuple(name, "stride", stride == nil and kernel_size or stride, d)
    self.padding = U.ntuple(name, "padding", padding == nil and 0 or padding, d)
  end
  cls._label = label
  -- forward(x, indices, output_size=nil | {output_size = {...}})
  function cls:forward(x, indices, output_size)
    if type(output_size) == "table" and output_size.output_size ~= nil then output_size = output_size.output_size end
    check_input(self:_label(), x, d)
    if not torch.is_tensor(indices) then
      U.fail(("%s: expected a Tensor of indices (MaxPool's second output), got %s"):format(self:_label(),
        type(indices)))
    end
    return U.guard(self:_label(), F["max_unpool" .. d .. "d"], x, indices, self.kernel_size, self.stride,
      self.padding, output_size)
  end
  cls.extra_repr = U.window_repr
  M[name] = cls
  A.init(cls, "kernel_size, stride=None, padding=0", "all")
end
for d = 1, 3 do max_unpool(d) end

---------------------------------------------------------------- FractionalMaxPool2d, 3d
-- A number or a table of d numbers -> a table of d numbers (nil stays nil).
local function ntuple_num(name, what, v, d)
  if v == nil then return nil end
  if type(v) == "number" then
    local t = {}
    for i = 1, d do t[i] = v end
    return t
  end
  if type(v) == "table" and #v == d then
    local ok = true
    for i = 1, d do ok = ok and type(v[i]) == "number" end
    if ok then return { unpack(v, 1, d) } end
  end
  U.fail(("%s: %s must be a number or a table of %d numbers, got %s"):format(name, what, d, U.pyrepr(v)))
end

local function fractional(d)
  local name = "FractionalMaxPool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(kernel_size, output_size, output_ratio, return_indices, random_samples)
    self.kernel_size = U.ntuple(name, "kernel_size", kernel_size, d)
    for i = 1, d do
      if self.kernel_size[i] <= 0 then
        U.fail(("%s: kernel_size must greater than 0, but got %s"):format(name, U.pyrepr(kernel_size)))
      end
    end
    self.return_indices = return_indices == true
    if random_samples ~= nil and not torch.is_tensor(random_samples) then
      U.fail(("%s: _random_samples must be a Tensor, got %s"):format(name, type(random_samples)))
    end
    self:register_buffer("_random_samples", random_samples)
    self.output_size = output_size ~= nil and U.ntuple(name, "output_size", output_size, d) or nil
    self.output_ratio = ntuple_num(name, "output_ratio", output_ratio, d)
    if output_size == nil and output_ratio == nil then
      U.fail(("%s requires specifying either an output size, or a pooling ratio"):format(name))
    end
    if output_size ~= nil and output_ratio ~= nil then
      U.fail(("%s: only one of output_size and output_ratio may be specified"):format(name))
    end
    for i = 1, d do
      local r = self.output_ratio and self.output_ratio[i]
      if r ~= nil and not (r > 0 and r < 1) then
        U.fail(("%s: output_ratio must be between 0 and 1 (got %s)"):format(name, U.pyrepr(output_ratio, true)))
      end
    end
  end
  cls._label = label
  function cls:forward(x)
    check_input(self:_label(), x, d)
    local ok, out, idx = pcall(F["fractional_max_pool" .. d .. "d_with_indices"], x, self.kernel_size,
      self.output_size, self.output_ratio, self.return_indices, { _random_samples = self._random_samples })
    if not ok then U.rethrow(self:_label(), out) end
    if self.return_indices then return out, idx end
    return out
  end
  M[name] = cls
  A.init(cls, "kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None", "all")
end
for d = 2, 3 do fractional(d) end

return M
