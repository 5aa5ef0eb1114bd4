--[[
  torch.nn.shape — the layers that reshape rather than compute
  (https://pytorch.org/docs/stable/nn.html#utilities):

      Unflatten(dim, unflattened_size)      dim of size prod(unflattened_size) -> those dims
      Unfold(kernel_size, dilation=1, padding=0, stride=1)
          (N, C, H, W) -> (N, C * kh * kw, L): the sliding blocks as columns (F.unfold, im2col)
      Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)
          (N, C * kh * kw, L) -> (N, C, H, W): the inverse, summing overlaps (F.fold, col2im)

  Sizes are an int or a table of two ints ({kh, kw}); they print as PyTorch prints what it was
  given (`3`, a table as a tuple `(2, 3)`). Unflatten takes an integer dim only: ltorch has no
  named tensors, so a string dim with (name, size) pairs is an error.

  Usage:  nn.Sequential(nn.Linear(16, 50), nn.Unflatten(1, {2, 5, 5}))
          local cols = nn.Unfold({2, 3}, {stride = 1})(x)     -- x (N, C, H, W)
]]
local Module = require("torch.nn.module").Module
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"

local M = {}

local check_tensor = U.check_tensor

-- A size setting of Fold / Unfold: an int or a table of ints (its length is F.fold's to check).
local function size_arg(name, what, v)
  local ok = U.is_int(v)
  if type(v) == "table" and #v > 0 then
    ok = true
    for i = 1, #v do ok = ok and U.is_int(v[i]) end
  end
  if not ok then U.fail(("%s: %s must be an integer or a table of integers, got %s"):format(name, what, U.pyrepr(v))) end
  return v
end

---------------------------------------------------------------- Unflatten
local Unflatten = Module:extend("Unflatten")
M.Unflatten = Unflatten

function Unflatten:__init(dim, unflattened_size)
  if type(dim) == "string" then
    U.fail("Unflatten: a string dim (named dimensions) is not supported: ltorch has no named tensors")
  end
  if not U.is_int(dim) then U.fail(("Unflatten: invalid argument type for dim parameter (integer expected, got %s)")
    :format(type(dim))) end
  if type(unflattened_size) ~= "table" then
    U.fail(("Unflatten: unflattened_size must be a tuple of ints, but found type %s"):format(type(unflattened_size)))
  end
  for i = 1, #unflattened_size do
    if not U.is_int(unflattened_size[i]) then
      U.fail(("Unflatten: unflattened_size must be tuple of ints, but found element of type %s at pos %d")
        :format(type(unflattened_size[i]), i - 1))
    end
  end
  self.dim, self.unflattened_size = dim, unflattened_size
end

function Unflatten:forward(x)
  check_tensor("Unflatten", x)
  return U.guard("Unflatten", x.unflatten, x, self.dim, self.unflattened_size)
end

-- A torch.Size prints as one ("torch.Size([2, 5])"); any other table as a tuple.
function Unflatten:extra_repr()
  local s = self.unflattened_size
  local size = getmetatable(s) ~= nil and tostring(s) or U.pyrepr(s)
  return ("dim=%d, unflattened_size=%s"):format(self.dim, size)
end

A.init(Unflatten, "dim, unflattened_size")

---------------------------------------------------------------- Fold, Unfold
local Unfold = Module:extend("Unfold")
M.Unfold = Unfold

function Unfold:__init(kernel_size, dilation, padding, stride)
  self.kernel_size = size_arg("Unfold", "kernel_size", kernel_size)
  self.dilation = size_arg("Unfold", "dilation", dilation or 1)
  self.padding = size_arg("Unfold", "padding", padding or 0)
  self.stride = size_arg("Unfold", "stride", stride or 1)
end

function Unfold:forward(x)
  check_tensor("Unfold", x)
  return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)
end

function Unfold:extra_repr()
  return ("kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(U.pyrepr(self.kernel_size),
    U.pyrepr(self.dilation), U.pyrepr(self.padding), U.pyrepr(self.stride))
end

A.init(Unfold, "kernel_size, dilation=1, padding=0, stride=1", "all")

local Fold = Module:extend("Fold")
M.Fold = Fold

function Fold:__init(output_size, kernel_size, dilation, padding, stride)
  self.output_size = size_arg("Fold", "output_size", output_size)
  self.kernel_size = size_arg("Fold", "kernel_size", kernel_size)
  self.dilation = size_arg("Fold", "dilation", dilation or 1)
  self.padding = size_arg("Fold", "padding", padding or 0)
  self.stride = size_arg("Fold", "stride", stride or 1)
end

function Fold:forward(x)
  check_tensor("Fold", x)
  return F.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
end

function Fold:extra_repr()
  return ("output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(U.pyrepr(self.output_size),
    U.pyrepr(self.kernel_size), U.pyrepr(self.dilation), U.pyrepr(self.padding), U.pyrepr(self.stride))
end

A.init(Fold, "output_size, kernel_size, dilation=1, padding=0, stride=1", "all")

return M
