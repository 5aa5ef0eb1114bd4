--[[
  torch._unique — torch.unique and torch.unique_consecutive with PyTorch's Python signatures and
  results (torch/functional.py), and the Tensor methods x:unique, x:unique_consecutive.

      torch.unique(x)                                   --> the sorted distinct values
      torch.unique(x, {return_counts = true})           --> values, counts
      torch.unique(x, {return_inverse = true, return_counts = true, dim = 0})
                                                        --> values, inverse, counts
      x:unique_consecutive({return_inverse = true})     --> values, inverse

  PyTorch returns one tensor, or a tuple of the output and the inverse and/or the counts asked
  for; ltorch returns the same tensors as multiple values. The ATen ops behind them are
  _unique2 (no dim), unique_dim and unique_consecutive, which always return three tensors.

  Usage (internal): require("torch._unique").install(torch, Tensor), done by torch/init.lua.
]]
local P = require "torch._pysig"
local W = require "torch._pywrap"

local M = {}

local op = W.op

-- PyTorch's _return_output / _return_inverse / _return_counts / _return_inverse_counts.
local function pick(a, output, inverse, counts)
  if a.return_inverse and a.return_counts then return output, inverse, counts end
  if a.return_inverse then return output, inverse end
  if a.return_counts then return output, counts end
  return output
end

local function check_flags(sig, a, level)
  W.tensor(sig, a, "input", level + 1)
  W.bool(sig, a, "return_inverse", level + 1)
  W.bool(sig, a, "return_counts", level + 1)
  W.int(sig, a, "dim", level + 1, true)
end

local UNIQUE = P.signature("unique", "input, sorted=True, return_inverse=False, return_counts=False, dim=None")
function M.unique(...)
  local a = W.bind(UNIQUE, 2, ...)
  check_flags(UNIQUE, a, 2)
  W.bool(UNIQUE, a, "sorted", 2)
  local flags = { sorted = a.sorted, return_inverse = a.return_inverse, return_counts = a.return_counts }
  if a.dim ~= nil then
    return pick(a, W.call(2, op("unique_dim"), a.input, a.dim, flags))
  end
  return pick(a, W.call(2, op("_unique2"), a.input, flags))
end

local CONSECUTIVE = P.signature("unique_consecutive", "input, return_inverse=False, return_counts=False, dim=None")
function M.unique_consecutive(...)
  local a = W.bind(CONSECUTIVE, 2, ...)
  check_flags(CONSECUTIVE, a, 2)
  local flags = { return_inverse = a.return_inverse, return_counts = a.return_counts, dim = a.dim }
  return pick(a, W.call(2, op("unique_consecutive"), a.input, flags))
end

-- The methods: x:unique(...) is torch.unique(x, ...), with PyTorch's method signatures.
local UNIQUE_M = P.signature("unique", "self, sorted=True, return_inverse=False, return_counts=False, dim=None")
local CONSECUTIVE_M = P.signature("unique_consecutive", "self, return_inverse=False, return_counts=False, dim=None")

local function method(sig, fn)
  return function(...)
    local a = W.bind(sig, 2, ...)
    a.input, a.self = a.self, nil
    local rest = {}
    for k, v in pairs(a) do if k ~= "input" then rest[k] = v end end
    return fn(a.input, rest)
  end
end

function M.install(torch, Tensor)
  torch.unique = M.unique
  torch.unique_consecutive = M.unique_consecutive
  Tensor.unique = method(UNIQUE_M, M.unique)
  Tensor.unique_consecutive = method(CONSECUTIVE_M, M.unique_consecutive)
end

return M
