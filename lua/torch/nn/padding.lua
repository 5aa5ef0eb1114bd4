--[[
  torch.nn.padding — the padding layers (https://pytorch.org/docs/stable/nn.html#padding-layers),
  each F.pad with a fixed padding and mode:

      ConstantPad1d/2d/3d(padding, value)   ZeroPad1d/2d/3d(padding)        mode 'constant'
      ReflectionPad1d/2d/3d(padding)        ReplicationPad1d/2d/3d(padding)  'reflect', 'replicate'
      CircularPad1d/2d/3d(padding)                                           'circular'

  padding: an int (the same on every side) or a table of 2, 4 or 6 ints, PyTorch's order:
  {left, right} for 1d, {left, right, top, bottom} for 2d, then {front, back} for 3d. The last
  1, 2 or 3 dims are padded: (N, C, W) or (C, W) for 1d, (N, C, H, W) or (C, H, W) for 2d,
  (N, C, D, H, W) or (C, D, H, W) for 3d (F.pad's own checks; the circular layers check the rank
  first, as PyTorch's do). Negative padding crops. ConstantPad's value prints as the Python float
  PyTorch declares (`value=3.0`; Python prints `value=3` for an int it was given).

  Usage:  nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(3, 8, 3))
          nn.ConstantPad1d({2, 1}, 3.5)(x)     -- x (N, C, W) -> (N, C, W + 3)
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"

local M = {}

local Pad = Module:extend("_PadNd")   -- not exported: nn has no _PadNd

function Pad:_set_padding(padding)
  self.padding = U.ntuple(self._class.__name, "padding", padding, 2 * self._dims)
end

function Pad:forward(x)
  local name = self._class.__name
  if not torch.is_tensor(x) then U.fail(("%s: expected a Tensor input, got %s"):format(name, type(x))) end
  if self._mode == "circular" then
    local d, lo = x:dim(), self._dims + 1
    if d ~= lo and d ~= lo + 1 then U.fail(("%s: expected %dD or %dD input (got %dD input)"):format(name, lo, lo + 1, d)) end
  end
  if self._mode == "constant" then return F.pad(x, self.padding, "constant", self.value) end
  return F.pad(x, self.padding, self._mode)
end

function Pad:extra_repr() return U.pyrepr(self.padding) end

-- A padding class of `dims` dims and `mode` whose constructor is __init(padding).
local function simple(prefix, mode, dims)
  local name = prefix .. dims .. "d"
  local cls = Pad:extend(name)
  cls._mode, cls._dims = mode, dims
  function cls:__init(padding) self:_set_padding(padding) end
  A.init(cls, "padding")
  M[name] = cls
end

for dims = 1, 3 do
  local const = Pad:extend("ConstantPad" .. dims .. "d")
  const._mode, const._dims = "constant", dims
  function const:__init(padding, value)
    self:_set_padding(padding)
    if type(value) ~= "number" then
      U.fail(("%s: value must be a number, got %s"):format(self._class.__name, type(value)))
    end
    self.value = value
  end
  function const:extra_repr() return ("padding=%s, value=%s"):format(U.pyrepr(self.padding), U.pyfloat(self.value)) end
  A.init(const, "padding, value")
  M[const.__name] = const

  -- ZeroPad is PyTorch's ConstantPad with value 0.0, printing only its padding.
  local zero = const:extend("ZeroPad" .. dims .. "d")
  function zero:__init(padding)
    self:_set_padding(padding)
    self.value = 0.0
  end
  zero.extra_repr = Pad.extra_repr
  A.init(zero, "padding")
  M[zero.__name] = zero

  simple("ReflectionPad", "reflect", dims)
  simple("ReplicationPad", "replicate", dims)
  simple("CircularPad", "circular", dims)
end

return M
