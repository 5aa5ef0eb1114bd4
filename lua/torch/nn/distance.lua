--[[
  torch.nn.distance — the distance layers (https://pytorch.org/docs/stable/nn.html#distance-functions):

      CosineSimilarity(dim=1, eps=1e-8)
          x1 . x2 / max(||x1|| * ||x2||, eps) over dim (inputs broadcast to a common shape)
      PairwiseDistance(p=2.0, eps=1e-6, keepdim=False)
          ||x1 - x2 + eps||_p over the last dim: (N, D), (N, D) -> (N) (or (N, 1) with keepdim)

  Both are F's op with fixed settings; like PyTorch's, they print no settings
  (`CosineSimilarity()`). PairwiseDistance keeps p as `norm`, as PyTorch does.

  Usage:  local sim = nn.CosineSimilarity({dim = 1, eps = 1e-6})(a, b)
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"

local M = {}

local function check_inputs(name, x1, x2)
  for i, x in ipairs({ x1 or false, x2 or false }) do
    if not torch.is_tensor(x) then
      U.fail(("%s: expected Tensor inputs x1 and x2, got %s for x%d"):format(name, x == false and "nil" or type(x), i))
    end
  end
end

local function check_number(name, what, v)
  if type(v) ~= "number" then U.fail(("%s: %s must be a number, got %s"):format(name, what, type(v))) end
end

local CosineSimilarity = Module:extend("CosineSimilarity")
M.CosineSimilarity = CosineSimilarity

function CosineSimilarity:__init(dim, eps)
  dim, eps = dim or 1, eps or 1e-8
  if not U.is_int(dim) then U.fail(("CosineSimilarity: dim must be an integer, got %s"):format(U.pyrepr(dim))) end
  check_number("CosineSimilarity", "eps", eps)
  self.dim, self.eps = dim, eps
end

function CosineSimilarity:forward(x1, x2)
  check_inputs("CosineSimilarity", x1, x2)
  return F.cosine_similarity(x1, x2, self.dim, self.eps)
end

A.init(CosineSimilarity, "dim=1, eps=1e-08", "all")

local PairwiseDistance = Module:extend("PairwiseDistance")
M.PairwiseDistance = PairwiseDistance

function PairwiseDistance:__init(p, eps, keepdim)
  p, eps = p or 2.0, eps or 1e-6
  check_number("PairwiseDistance", "p", p)
  check_number("PairwiseDistance", "eps", eps)
  if keepdim ~= nil and type(keepdim) ~= "boolean" then
    U.fail(("PairwiseDistance: keepdim must be a boolean, got %s"):format(type(keepdim)))
  end
  self.norm, self.eps, self.keepdim = p, eps, keepdim == true
end

function PairwiseDistance:forward(x1, x2)
  check_inputs("PairwiseDistance", x1, x2)
  return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
end

A.init(PairwiseDistance, "p=2.0, eps=1e-06, keepdim=False", "all")

return M
