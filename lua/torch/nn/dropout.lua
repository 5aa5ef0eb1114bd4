--[[
  torch.nn.dropout — Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout and
  FeatureAlphaDropout with PyTorch's behaviour (https://pytorch.org/docs/stable/nn.html#dropout-layers).

      nn.Dropout(p=0.5, inplace=false)    -- or nn.Dropout({p = 0.1})

  Training: each element (Dropout) or each whole channel (Dropout1d/2d: input[n, c]) is zeroed
  with probability p and the survivors scaled by 1/(1-p), so the expected value is unchanged.
  Eval (module:eval()) and p = 0: the identity. The masks come from libtorch's generator
  through the same ATen ops PyTorch calls, so a seed gives PyTorch's masks.

  Shapes: Dropout any; Dropout1d (N, C, L) or (C, L); Dropout2d (N, C, H, W) (and, as in PyTorch
  1.13, (N, C, L) treated channel-wise); Dropout3d (N, C, D, H, W) or (C, D, H, W). Output shape =
  input shape.

  AlphaDropout (element-wise) and FeatureAlphaDropout (whole channels) keep a SELU network's
  mean and variance: dropped values are set to SELU's negative saturation value and the result
  is scaled and shifted back (F.alpha_dropout). As in PyTorch 2.11, these two keep their
  `inplace` setting but never work in place (their forward does not pass it on).

  Usage:  nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"
local F = require "torch.nn.functional"

local M = {}

local DropoutNd = Module:extend("_DropoutNd")  -- not exported: nn has no _DropoutNd

function DropoutNd:__init(...)
  local name = self._class.__name
  local a = U.args(name, { "p", "inplace" }, ...)
  local p = a.p == nil and 0.5 or a.p
  if type(p) ~= "number" or p < 0 or p > 1 then
    U.fail(("%s: dropout probability has to be between 0 and 1, but got %s"):format(name, tostring(p)))
  end
  if a.inplace ~= nil and type(a.inplace) ~= "boolean" then
    U.fail(("%s: inplace must be a boolean, got %s"):format(name, type(a.inplace)))
  end
  self.p, self.inplace = p, a.inplace == true
end

function DropoutNd:_label() return ("%s(p=%s)"):format(self._class.__name, U.pyrepr(self.p, true)) end

function DropoutNd:extra_repr()
  return ("p=%s, inplace=%s"):format(U.pyrepr(self.p, true), U.pyrepr(self.inplace))
end

-- op: "dropout" (element-wise) or "feature_dropout" (whole channels); the _ variant if inplace.
function DropoutNd:_apply_op(op, x)
  local fn = torch[self.inplace and (op .. "_") or op]
  return U.guard(self:_label(), fn, x, self.p, self.training)
end

local Dropout = DropoutNd:extend("Dropout")
M.Dropout = Dropout

function Dropout:forward(x)
  U.check_float_input(self:_label(), x)
  return self:_apply_op("dropout", x)
end

local Dropout1d = DropoutNd:extend("Dropout1d")
M.Dropout1d = Dropout1d

-- (C, L) gets a batch dim for feature_dropout and loses it afterwards, as PyTorch's dropout1d.
function Dropout1d:forward(x)
  U.check_float_input(self:_label(), x)
  local d = x:dim()
  if d ~= 2 and d ~= 3 then
    U.fail(("%s: expected input of shape (N, C, L) or (C, L), got %s"):format(self:_label(), U.shape(x)))
  end
  if d == 3 then return self:_apply_op("feature_dropout", x) end
  local batched = self.inplace and x:unsqueeze_(0) or x:unsqueeze(0)
  local out = self:_apply_op("feature_dropout", batched)
  return self.inplace and out:squeeze_(0) or out:squeeze(0)
end

local Dropout2d = DropoutNd:extend("Dropout2d")
M.Dropout2d = Dropout2d

-- PyTorch 1.13 zeroes input[n, c] for any rank (it only warns off 3-D and 2-D inputs); 1-D
-- and 0-D inputs have no channels, so they are an error here.
function Dropout2d:forward(x)
  U.check_float_input(self:_label(), x)
  if x:dim() < 2 then
    U.fail(("%s: expected input of shape (N, C, H, W), got %s"):format(self:_label(), U.shape(x)))
  end
  return self:_apply_op("feature_dropout", x)
end

local Dropout3d = DropoutNd:extend("Dropout3d")
M.Dropout3d = Dropout3d

-- F.dropout3d: (C, D, H, W) gets a batch dim; other ranks warn as PyTorch's.
function Dropout3d:forward(x)
  U.check_float_input(self:_label(), x)
  return F.dropout3d(x, self.p, self.training, self.inplace)
end

local AlphaDropout = DropoutNd:extend("AlphaDropout")
M.AlphaDropout = AlphaDropout

function AlphaDropout:forward(x)
  U.check_float_input(self:_label(), x)
  return F.alpha_dropout(x, self.p, self.training)
end

local FeatureAlphaDropout = DropoutNd:extend("FeatureAlphaDropout")
M.FeatureAlphaDropout = FeatureAlphaDropout

function FeatureAlphaDropout:forward(x)
  U.check_float_input(self:_label(), x)
  return F.feature_alpha_dropout(x, self.p, self.training)
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.Dropout, "p=0.5, inplace=False")
A.init(M.Dropout1d, "p=0.5, inplace=False")
A.init(M.Dropout2d, "p=0.5, inplace=False")
A.init(M.Dropout3d, "p=0.5, inplace=False")
A.init(M.AlphaDropout, "p=0.5, inplace=False")
A.init(M.FeatureAlphaDropout, "p=0.5, inplace=False")

return M
