--[[
  torch.nn.bilinear — nn.Bilinear: y = x1^T A x2 + b, with PyTorch's arguments, init, state_dict
  and repr (https://pytorch.org/docs/1.13/generated/torch.nn.Bilinear.html).

      nn.Bilinear(in1_features, in2_features, out_features, bias=true, {dtype =, device =})

  Shapes: x1 (*, in1_features), x2 (*, in2_features) with the same leading dims ->
  (*, out_features); y[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o].
  weight (out_features, in1_features, in2_features), bias (out_features); both drawn from
  U(-1/sqrt(in1_features), 1/sqrt(in1_features)), weight first, as PyTorch does.

  Usage:  local bl = nn.Bilinear(20, 30, 40); local y = bl(torch.randn(128, 20), torch.randn(128, 30))
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}

local Bilinear = Module:extend("Bilinear")
M.Bilinear = Bilinear

function Bilinear:__init(in1_features, in2_features, out_features, ...)
  local a = U.args("Bilinear", { "bias", "dtype", "device" }, ...)
  local sizes = { in1_features, in2_features, out_features }
  for i = 1, 3 do
    if not U.is_int(sizes[i]) or sizes[i] < 0 then
      U.fail(("Bilinear: expected in1_features, in2_features, out_features as integers, got %s, %s, %s"):format(
        tostring(in1_features), tostring(in2_features), tostring(out_features)))
    end
  end
  self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
  local f = { dtype = a.dtype, device = a.device }
  self.weight = Parameter(torch.empty(out_features, in1_features, in2_features, f))
  U.optional_bias(self, a.bias == nil or a.bias == true, out_features, f)
  self:reset_parameters()
end

function Bilinear:reset_parameters()
  local bound = 1 / math.sqrt(self.weight:size(1))
  init.uniform_(self.weight, -bound, bound)
  if self.bias ~= nil then init.uniform_(self.bias, -bound, bound) end
end

function Bilinear:_label()
  return ("Bilinear(%d, %d -> %d)"):format(self.in1_features, self.in2_features, self.out_features)
end

function Bilinear:forward(x1, x2)
  local label = self:_label()
  U.check_float_input(label, x1)
  U.check_float_input(label, x2)
  local function lead(x)
    local s = x:size()
    s[#s] = nil
    return table.concat(s, ", ")
  end
  if x1:dim() == 0 or x2:dim() == 0 or x1:size(-1) ~= self.in1_features or x2:size(-1) ~= self.in2_features
    or x1:dim() ~= x2:dim() or lead(x1) ~= lead(x2) then
    U.fail(("%s: expected inputs of shapes (*, %d) and (*, %d) with the same leading dims, got %s and %s"):format(
      label, self.in1_features, self.in2_features, U.shape(x1), U.shape(x2)))
  end
  return U.guard(label, F.bilinear, x1, x2, self.weight, self.bias)
end

function Bilinear:extra_repr()
  return ("in1_features=%d, in2_features=%d, out_features=%d, bias=%s"):format(self.in1_features,
    self.in2_features, self.out_features, U.pyrepr(self.bias ~= nil))
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.Bilinear, "in1_features, in2_features, out_features, bias=True, device=None, dtype=None")

return M
