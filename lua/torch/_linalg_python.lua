--[[
  torch._linalg_python — linear-algebra functions PyTorch writes in Python (torch/functional.py,
  torch/_lowrank.py), in Lua over the same ATen ops so that the same call gives the same result.

      local LU, pivots = torch.lu(A)                             -- x:lu() too
      local LU, pivots, infos = torch.lu(A, {get_infos = true})
      local U, S, V = torch.svd_lowrank(A, {q = 6, niter = 2})   -- A ~ U diag(S) V^H
      local U, S, V = torch.pca_lowrank(A, {q = 3})              -- centered first

  torch.lu is libtorch's _lu_with_info (deprecated there, as in PyTorch: it warns once in favour
  of torch.linalg.lu_factor). svd_lowrank and pca_lowrank follow _lowrank.py step by step —
  the same torch.randn draw, QR and SVD calls — so under the same seed they return PyTorch's
  values (dense tensors: ltorch has no sparse layout). torch.lobpcg is not provided.

  Usage (internal): require("torch._linalg_python").install(torch, Tensor), done by torch/init.lua.
]]
local P = require "torch._pysig"
local W = require "torch._pywrap"
local T = require "torch._tensor"
local args = require "torch._args"
local creation = require "torch._creation"
local dtype_mod = require "torch.dtype"

local M = {}

local op = W.op

---------------------------------------------------------------- torch.lu
-- Copies results into the caller's out tensors (PyTorch: out[i].resize_as_(r).copy_(r)).
local function to_out(out, get_infos, results, level)
  local want = get_infos and 3 or 2
  if type(out) ~= "table" or getmetatable(out) ~= nil then
    error("lu: argument 'out' must be a list of Tensors, not " .. args.typename(out), level + 1)
  end
  if #out ~= want then error(("lu: expected a list of %d elements but got %d"):format(want, #out), level + 1) end
  for i = 1, want do
    if not T.is_tensor(out[i]) then error(("lu: out[%d] must be a Tensor, not %s"):format(i, args.typename(out[i])), level + 1) end
    W.call(level + 1, function() out[i]:resize_as_(results[i]):copy_(results[i]) end)
  end
  return unpack(out, 1, want)
end

local LU = P.signature("lu", "A, pivot=True, get_infos=False, out=None")
function M.lu(...)
  local a = W.bind(LU, 2, ...)
  W.tensor(LU, a, "A", 2)
  W.bool(LU, a, "pivot", 2)
  W.bool(LU, a, "get_infos", 2)
  local r = { W.call(2, op("_lu_with_info"), a.A, { pivot = a.pivot, check_errors = not a.get_infos }) }
  if a.out ~= nil then return to_out(a.out, a.get_infos, r, 2) end
  if a.get_infos then return r[1], r[2], r[3] end
  return r[1], r[2]
end

local LU_M = P.signature("lu", "self, pivot=True, get_infos=False")
local function lu_method(...)
  local a = W.bind(LU_M, 2, ...)
  return M.lu(a.self, { pivot = a.pivot, get_infos = a.get_infos })
end

---------------------------------------------------------------- low-rank SVD and PCA
local float_types = { float16 = true, float32 = true, float64 = true }
-- _utils.get_floating_dtype: A's dtype when float16/32/64, else float32.
local function floating_dtype(A)
  local dt = A.dtype
  return float_types[dt.name] and dt or dtype_mod.by_name.float32
end

-- Q with orthonormal columns spanning about the range of A - M (Halko et al. 2009, algorithm 4.4).
local function approximate_basis(A, q, niter, M_)
  local dt = A:is_complex() and A.dtype or floating_dtype(A)
  local sizes = A:size()
  local R = creation.randn(sizes[#sizes], q, { dtype = dt, device = A.device })
  local qr = op("linalg_qr")
  local function range_of(X, Y, B)   -- qr(X @ B - Y @ B).Q, Y optional
    local Z = X:matmul(B)
    if Y ~= nil then Z = Z - Y:matmul(B) end
    return (qr(Z))
  end
  local Q = range_of(A, M_, R)
  for _ = 1, niter do
    Q = range_of(A.mH, M_ and M_.mH, Q)
    Q = range_of(A, M_, Q)
  end
  return Q
end

local function svd_lowrank(A, q, niter, M_)
  local sizes = A:size()
  local m, n = sizes[#sizes - 1], sizes[#sizes]
  if M_ ~= nil then M_ = M_:broadcast_to(A:size()) end
  if m < n then
    A = A.mH
    if M_ ~= nil then M_ = M_.mH end
  end
  local Q = approximate_basis(A, q, niter, M_)
  local B = Q.mH:matmul(A)
  if M_ ~= nil then B = B - Q.mH:matmul(M_) end
  local U, S, Vh = op("linalg_svd")(B, { full_matrices = false })
  local V = Vh.mH
  U = Q:matmul(U)
  if m < n then U, V = V, U end
  return U, S, V
end

local function matrix(sig, a, name, level)
  local A = W.tensor(sig, a, name, level + 1)
  if A:dim() < 2 then
    error(("%s: expected a matrix or a batch of matrices, got a %d-dimensional tensor"):format(sig.name, A:dim()), level + 1)
  end
  return A
end

local SVD = P.signature("svd_lowrank", "A, q=6, niter=2, M=None")
function M.svd_lowrank(...)
  local a = W.bind(SVD, 2, ...)
  local A = matrix(SVD, a, "A", 2)
  local q = W.int(SVD, a, "q", 2, true) or 6
  local niter = W.int(SVD, a, "niter", 2, true) or 2
  if a.M ~= nil then matrix(SVD, a, "M", 2) end
  return W.call(2, svd_lowrank, A, q, niter, a.M)
end

local PCA = P.signature("pca_lowrank", "A, q=None, center=True, niter=2")
function M.pca_lowrank(...)
  local a = W.bind(PCA, 2, ...)
  local A = matrix(PCA, a, "A", 2)
  local sizes = A:size()
  local m, n = sizes[#sizes - 1], sizes[#sizes]
  local q = W.int(PCA, a, "q", 2, true)
  if q == nil then
    q = math.min(6, m, n)
  elseif q < 0 or q > math.min(m, n) then
    error(("pca_lowrank: q(=%d) must be non-negative integer and not greater than min(m, n)=%d"):format(q, math.min(m, n)), 2)
  end
  local niter = W.int(PCA, a, "niter", 2)
  if niter < 0 then error(("pca_lowrank: niter(=%d) must be non-negative integer"):format(niter), 2) end
  W.bool(PCA, a, "center", 2)
  if not a.center then return W.call(2, svd_lowrank, A, q, niter, nil) end
  return W.call(2, function() return svd_lowrank(A - A:mean({ -2 }, true), q, niter, nil) end)
end

function M.install(torch, Tensor)
  torch.lu = M.lu
  Tensor.lu = lu_method
  torch.svd_lowrank = M.svd_lowrank
  torch.pca_lowrank = M.pca_lowrank
end

return M
