--[[
  spec/parity/cases_reduce.lua — parity cases for reductions, scans, sorting and statistics:
  sum/mean/prod/amax/..., max/min with indices, var/std, norms, cumulative ops, sort/topk/
  kthvalue/median/mode, quantiles, counting/histograms, searchsorted/bucketize, unique.

  Edge cases: dims given positionally and as keywords, keepdim, negative dims, dtype=, 0-dim
  and empty inputs, non-contiguous inputs, int/bool inputs, NaN propagation.
  Tolerance: F32 (rtol 1e-5, atol 1e-6) for float reductions (summation order may differ);
  bitwise for selections (max, sort, topk, median, ...), integer results and indices.
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local d = require "spec.parity.desc"
local T, V, D = d.T, d.V, d.D
local F32 = d.F32
local add, cases = d.group({})

-- Float reductions: whole tensor, one dim, several dims with keepdim, keywords, a view.
for _, op in ipairs({ "sum", "mean", "prod", "amax", "amin", "logsumexp", "nansum", "nanmean" }) do
  local tol = F32
  if op ~= "logsumexp" then add(op, { T({ 3, 4 }) }, { tol = tol }) end
  add(op, { T({ 3, 4 }), 1 }, { tol = tol })
  if op ~= "prod" then add(":" .. op, { T({ 2, 3, 4 }, "t"), { 0, -1 }, true }, { tol = tol }) end
end
add("sum", { T({ 3, 4 }), { dim = 0, keepdim = true } }, { tol = F32 })
add("sum", { T({ 3, 4 }), { dtype = D "float64" } }, { tol = F32 })
add("sum", { T({ 3, 4 }, "int") })
add("sum", { T({ 3, 4 }, "bool"), 1 })
add("sum", { T({ 0, 4 }), 0 })
add("sum", { T({}) })
add("mean", { T({ 0 }) })
add("mean", { T({ 3, 4 }, "int") }, { expect_error = true, name = "mean of int64 is an error" })
add("mean", { T({ 3, 4 }, "s"), -1 }, { tol = F32 })
add("prod", { T({ 3, 4 }, "int"), 0 })
add("prod", { T({ 2, 3 }), 1, { dtype = D "float64" } }, { tol = F32 })
add("nansum", { T({ 7 }, "special") }, { grad = false, tol = F32 })
add("amax", { T({ 7 }, "special") }, { grad = false })
add("amax", { T({ 3, 4 }, "int"), -1 })
add("logsumexp", { T({ 3, 4 }), { 0, 1 } }, { tol = F32 })

-- max / min / argmax / argmin / aminmax.
add("max", { T({ 3, 4 }) })
add("max", { T({ 3, 4 }), 1 })
add("max", { T({ 3, 4 }), 0, true })
add(":min", { T({ 3, 4 }, "t"), { dim = 1, keepdim = true } })
add("min", { T({ 3, 4 }) }, { gtol = F32, note = "ltorch computes min() as amin(): -0 in its grad where PyTorch has +0" })
add("max", { T({ 3, 4 }), T({ 4 }) })
add("max", { T({ 7 }, "special") }, { grad = false })
add("max", { T({ 3, 4 }, "int"), 1 })
add("argmax", { T({ 3, 4 }) })
add("argmax", { T({ 3, 4 }), 1 })
add("argmin", { T({ 3, 4 }), 0, true })
add(":argmax", { T({ 3, 4 }, "s"), { dim = -1 } })
add("aminmax", { T({ 3, 4 }), { dim = 1 } }, { grad = false })
add("all", { T({ 3, 4 }, "bool") })
add("all", { T({ 3, 4 }, "bool"), 1 })
add("any", { T({ 3, 4 }, "bool"), 0 })
add("any", { T({ 3, 4 }, "int") })
add("all", { T({ 0 }, "bool") })
add("count_nonzero", { T({ 3, 4 }, "int") })
add("count_nonzero", { T({ 3, 4 }, "int"), 1 })

-- var / std (correction, unbiased), their *_mean forms, norms.
add("var", { T({ 3, 4 }) }, { tol = F32 })
add("var", { T({ 3, 4 }), 1 }, { tol = F32 })
add("std", { T({ 3, 4 }), 0, false, true }, { tol = F32 })
add(":std", { T({ 3, 4 }, "t"), { dim = 1, correction = 0 } }, { tol = F32 })
add("var", { T({ 3, 4 }), { dim = { 0, 1 }, unbiased = false, keepdim = true } }, { tol = F32 })
add("std_mean", { T({ 3, 4 }), 1 }, { tol = F32 })
add("var_mean", { T({ 3, 4 }), { dim = { 0 }, correction = 0 } }, { tol = F32 })
add("norm", { T({ 3, 4 }) }, { tol = F32 })
add("norm", { T({ 3, 4 }), 1, 1 }, { tol = F32 })
add("norm", { T({ 3, 4 }), 3, 0, true }, { tol = F32 })
add(":norm", { T({ 3, 4 }, "t"), { p = "fro" } }, { tol = F32 })
add("frobenius_norm", { T({ 3, 4 }), { 0, 1 } }, { tol = F32 })
add("nuclear_norm", { T({ 3, 4 }) }, { tol = d.LIN })
add("renorm", { T({ 3, 4 }), 2, 0, 1.0 }, { tol = F32 })

-- Scans.
add("cumsum", { T({ 3, 4 }), 1 }, { tol = F32 })
add("cumsum", { T({ 3, 4 }, "int"), 0 })
add(":cumsum", { T({ 3, 4 }, "t"), { dim = 0 } }, { tol = F32 })
add("cumsum", { T({ 3, 4 }), 1, { dtype = D "float64" } }, { tol = F32 })
add("cumprod", { T({ 3, 4 }), 1 }, { tol = F32 })
add("cummax", { T({ 3, 4 }), 1 })
add("cummin", { T({ 3, 4 }), 0 })
add("logcumsumexp", { T({ 3, 4 }), 1 }, { tol = F32 })
add("cumsum", { T({ 0 }), 0 })
add("diff", { T({ 3, 5 }) })
add("diff", { T({ 3, 5 }), 2, 0 })
add("cumulative_trapezoid", { T({ 3, 5 }) }, { tol = F32 })
add("trapezoid", { T({ 3, 5 }) }, { tol = F32 })
add("trapezoid", { T({ 3, 5 }), T({ 5 }, "sorted nograd") }, { tol = F32 })
add("trapz", { T({ 3, 5 }), { dx = 0.5 } }, { tol = F32 })

-- Sorting and selection.
add("sort", { T({ 3, 5 }) })
add("sort", { T({ 3, 5 }), 0, true })
add(":sort", { T({ 3, 5 }, "t"), { dim = -1, descending = true } })
add("sort", { T({ 6 }, "int") , { stable = true } })
add("sort", { T({ 7 }, "special") }, { grad = false })
add("argsort", { T({ 3, 5 }), 1 })
add("argsort", { T({ 3, 5 }), 0, true })
add("msort", { T({ 3, 5 }) })
add("topk", { T({ 3, 5 }), 2 })
add("topk", { T({ 3, 5 }), 2, 0, false })
add(":topk", { T({ 3, 5 }, "t"), 3, { largest = false } })
add("kthvalue", { T({ 3, 5 }), 2 })
add("kthvalue", { T({ 3, 5 }), 1, 0, true })
add("median", { T({ 3, 5 }) })
add("median", { T({ 3, 5 }), 1 })
add("nanmedian", { T({ 7 }, "special") }, { grad = false })
add("nanmedian", { T({ 3, 5 }), 0 })
add("mode", { T({ 3, 5 }, "int"), 1 })
add("quantile", { T({ 3, 5 }), 0.3 }, { tol = F32 })
add("quantile", { T({ 3, 5 }), V({ 0.1, 0.5, 0.9 }), 1, true }, { tol = F32 })
add("quantile", { T({ 3, 5 }), 0.5, 1, { interpolation = "midpoint" } }, { tol = F32 })
add("nanquantile", { T({ 7 }, "special"), 0.5 }, { grad = false, tol = F32 })

-- Statistics, counting, bucketing, uniqueness.
add("histc", { T({ 20 }), 5, -1, 1 }, { grad = false })
add("bincount", { T({ 10 }, "idx5") })
add("bincount", { T({ 10 }, "idx5"), T({ 10 }, "nograd") }, { tol = F32 })
add("searchsorted", { T({ 6 }, "sorted"), T({ 3, 4 }) }, { grad = false })
add("searchsorted", { T({ 6 }, "sorted"), T({ 3, 4 }), { right = true } }, { grad = false })
add("bucketize", { T({ 3, 4 }), T({ 6 }, "sorted") }, { grad = false })
add("cov", { T({ 3, 6 }) }, { tol = F32 })
add("corrcoef", { T({ 3, 6 }) }, { tol = F32 })
add("unique_consecutive", { V({ 1, 1, 2, 2, 3, 1, 1, 2 }, "int64"), { return_counts = true } })
add("unique_consecutive", { V({ 1, 1, 2, 2, 3, 1, 1, 2 }, "int64"), { return_inverse = true, return_counts = true } })
add("_unique2", { V({ 3, 1, 2, 3, 1, 5 }, "int64"), true, true, true })
add("unique_dim", { V({ { 1, 2 }, { 3, 4 }, { 1, 2 } }, "int64"), 0 })
add("aminmax", { T({ 7 }) }, { grad = false })
add("histogram", { T({ 20 }), 4 }, { grad = false, tol = F32 })

return cases
