--[[
  torch.nn.pooling_adaptive — the adaptive pools, which pick their windows to reach a given output
  size: AdaptiveAvgPool1d/2d/3d and AdaptiveMaxPool1d/2d/3d, with PyTorch's arguments and repr
  (https://pytorch.org/docs/stable/nn.html#pooling-layers). No parameters, no state.

      nn.AdaptiveAvgPool2d(output_size)                     -- int or {H_out, W_out}
      nn.AdaptiveMaxPool2d(output_size, return_indices=false)

  output_size is an int or a table of d ints; in the 2d and 3d pools an entry `false` (Python's
  None) keeps that input dim: nn.AdaptiveAvgPool2d({false, 7}). The repr prints it as PyTorch
  does: `output_size=(None, 7)`.

  Shapes: (N, C, *spatial) or (C, *spatial) -> (N, C, *output_size). AdaptiveMaxPool with
  return_indices = true returns two values: output and int64 argmax indices.

  Usage:  nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
]]
local Module = require("torch.nn.module").Module
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}


local function pyrepr_size(v)
  if type(v) ~= "table" then return U.pyrepr(v) end
  local parts = {}
  for i = 1, #v do parts[i] = v[i] == false and "None" or tostring(v[i]) end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

-- A non-negative int, or a table of d entries, each one or (d > 1) false for "keep the input's size".
local function output_size_arg(name, v, d)
  local ok = U.is_int(v) and v >= 0
  if type(v) == "table" and #v == d then
    ok = true
    for i = 1, d do
      local e = v[i]
      if not ((U.is_int(e) and e >= 0) or (d > 1 and e == false)) then ok = false end
    end
  end
  if not ok then
    U.fail(("%s: output_size must be an integer or a table of %d integers%s, got %s"):format(name, d,
      d > 1 and " (false keeps that input dim)" or "", pyrepr_size(v)))
  end
  return v
end

-- The output size as d ints: false entries take the input's size in that dim.
local function resolve(size, x, d)
  local out = {}
  for i = 1, d do
    local e = size
    if type(size) == "table" then e = size[i] end
    out[i] = e == false and x:size(x:dim() - d + i - 1) or e
  end
  return out
end

local check_input = U.check_pooling_input

local function label(self) return self._class.__name .. "(output_size=" .. pyrepr_size(self.output_size) .. ")" end
local function extra_repr(self) return "output_size=" .. pyrepr_size(self.output_size) end

---------------------------------------------------------------- AdaptiveAvgPool1d, 2d, 3d
local function adaptive_avg(d)
  local name = "AdaptiveAvgPool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(output_size) self.output_size = output_size_arg(name, output_size, d) end
  cls._label, cls.extra_repr = label, extra_repr
  function cls:forward(x)
    check_input(self:_label(), x, d)
    return U.guard(self:_label(), F["adaptive_avg_pool" .. d .. "d"], x, resolve(self.output_size, x, d))
  end
  M[name] = cls
  A.init(cls, "output_size", "all")
end
for d = 1, 3 do adaptive_avg(d) end

---------------------------------------------------------------- AdaptiveMaxPool1d, 2d, 3d
local function adaptive_max(d)
  local name = "AdaptiveMaxPool" .. d .. "d"
  local cls = Module:extend(name)
  function cls:__init(output_size, return_indices)
    self.output_size = output_size_arg(name, output_size, d)
    if return_indices ~= nil and type(return_indices) ~= "boolean" then
      U.fail(("%s: return_indices must be a boolean, got %s"):format(name, type(return_indices)))
    end
    self.return_indices = return_indices == true
  end
  cls._label, cls.extra_repr = label, extra_repr
  function cls:forward(x)
    check_input(self:_label(), x, d)
    local ok, out, idx = pcall(F["adaptive_max_pool" .. d .. "d_with_indices"], x, resolve(self.output_size, x, d))
    if not ok then U.rethrow(self:_label(), out) end
    if self.return_indices then return out, idx end
    return out
  end
  M[name] = cls
  A.init(cls, "output_size, return_indices=False", "all")
end
for d = 1, 3 do adaptive_max(d) end

return M
