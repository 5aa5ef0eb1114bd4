--[[
  torch.nn.vision — the vision layers (https://pytorch.org/docs/stable/nn.html#vision-layers):

      PixelShuffle(upscale_factor)       (*, C * r^2, H, W) -> (*, C, H * r, W * r)
      PixelUnshuffle(downscale_factor)   the inverse
      ChannelShuffle(groups)             (N, g * k, *) -> channels regrouped (k, g) -> (g, k)
      Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
               recompute_scale_factor=None)           F.interpolate with fixed settings
      UpsamplingNearest2d(size=None, scale_factor=None)     Upsample, mode 'nearest'
      UpsamplingBilinear2d(size=None, scale_factor=None)    Upsample, mode 'bilinear', align_corners=True

  Upsample keeps scale_factor as a float (or a table of floats) and prints like PyTorch:
  `Upsample(scale_factor=2.0, mode='nearest')`, or `size=...` when no scale is set.

  Usage:  nn.Sequential(nn.Conv2d(8, 12, 3, {padding = 1}), nn.PixelShuffle(2))
          nn.Upsample({scale_factor = 2, mode = "bilinear", align_corners = false})(x)
]]
local Module = require("torch.nn.module").Module
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"

local M = {}

local check_tensor = U.check_tensor

---------------------------------------------------------------- pixel and channel shuffles
-- name(field): one positive integer setting, forward fn(x, setting).
local function one_int(name, field, fn)
  local cls = Module:extend(name)
  M[name] = cls
  function cls:__init(v)
    if not U.is_int(v) then U.fail(("%s: %s must be an integer, got %s"):format(name, field, U.pyrepr(v))) end
    if v < 1 then U.fail(("%s: %s must be positive, got %d"):format(name, field, v)) end
    self[field] = v
  end
  function cls:forward(x)
    check_tensor(name, x)
    return fn(x, self[field])
  end
  function cls:extra_repr() return ("%s=%d"):format(field, self[field]) end
  A.init(cls, field)
end

one_int("PixelShuffle", "upscale_factor", function(x, r) return F.pixel_shuffle(x, r) end)
one_int("PixelUnshuffle", "downscale_factor", function(x, r) return F.pixel_unshuffle(x, r) end)
one_int("ChannelShuffle", "groups", function(x, g) return F.channel_shuffle(x, g) end)

---------------------------------------------------------------- Upsample
local Upsample = Module:extend("Upsample")
M.Upsample = Upsample

local function is_sizes(v, check)
  if check(v) then return true end
  if type(v) ~= "table" or #v == 0 then return false end
  for i = 1, #v do if not check(v[i]) then return false end end
  return true
end
local function is_number(v) return type(v) == "number" end

-- PyTorch's Upsample.__init__: scale_factor becomes a float (a tuple of floats); 0 means None.
local function setup(self, name, size, scale_factor, mode, align_corners, recompute)
  if size ~= nil and not is_sizes(size, U.is_int) then
    U.fail(("%s: size must be an integer or a table of integers, got %s"):format(name, U.pyrepr(size)))
  end
  if scale_factor ~= nil and not is_sizes(scale_factor, is_number) then
    U.fail(("%s: scale_factor must be a number or a table of numbers, got %s"):format(name, U.pyrepr(scale_factor)))
  end
  if type(mode) ~= "string" then U.fail(("%s: mode must be a string, got %s"):format(name, type(mode))) end
  for what, v in pairs({ align_corners = align_corners, recompute_scale_factor = recompute }) do
    if type(v) ~= "boolean" then U.fail(("%s: %s must be a boolean or nil, got %s"):format(name, what, type(v))) end
  end
  if scale_factor == 0 then scale_factor = nil end
  self.size, self.scale_factor, self.mode = size, scale_factor, mode
  self.align_corners, self.recompute_scale_factor = align_corners, recompute
end

function Upsample:__init(size, scale_factor, mode, align_corners, recompute_scale_factor)
  setup(self, "Upsample", size, scale_factor, mode or "nearest", align_corners, recompute_scale_factor)
end

function Upsample:forward(x)
  check_tensor(self._class.__name, x)
  return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor)
end

function Upsample:extra_repr()
  local info
  if self.scale_factor ~= nil then info = "scale_factor=" .. U.pyrepr(self.scale_factor, true)
  else info = "size=" .. U.pyrepr(self.size) end
  return info .. ", mode='" .. self.mode .. "'"
end

A.init(Upsample, "size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None",
  "all")

local UpsamplingNearest2d = Upsample:extend("UpsamplingNearest2d")
M.UpsamplingNearest2d = UpsamplingNearest2d
function UpsamplingNearest2d:__init(size, scale_factor)
  setup(self, "UpsamplingNearest2d", size, scale_factor, "nearest")
end
A.init(UpsamplingNearest2d, "size=None, scale_factor=None", "all")

local UpsamplingBilinear2d = Upsample:extend("UpsamplingBilinear2d")
M.UpsamplingBilinear2d = UpsamplingBilinear2d
function UpsamplingBilinear2d:__init(size, scale_factor)
  setup(self, "UpsamplingBilinear2d", size, scale_factor, "bilinear", true)
end
A.init(UpsamplingBilinear2d, "size=None, scale_factor=None", "all")

return M
