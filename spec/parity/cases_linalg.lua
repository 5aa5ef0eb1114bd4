--[[
  spec/parity/cases_linalg.lua — parity cases for linear algebra: the matmul family (mm, bmm,
  matmul broadcasting, addmm/addmv/addr/baddbmm/addbmm, dot/vdot/inner/outer, einsum, kron,
  tensordot), triangular/diagonal helpers, distances, torch.linalg (norms, det, inverse,
  solve, cholesky, qr, eigh, svd, lu, lstsq, pinv, matrix functions) and torch.fft, forward and
  backward.

  Inputs: randn matrices, spd (A Aᵀ + nI) where a factorization needs it, non-contiguous
  (transposed) operands, batches, float64.
  Tolerance: F32 (rtol 1e-5, atol 1e-6) for products; LIN (rtol 1e-4, atol 1e-5) for
  decompositions and solvers, whose gradients chain several LAPACK results; F64 for float64.
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local torch = require "torch"
local d = require "spec.parity.desc"
local T, L, N = d.T, d.L, d.N
local F32, LIN = d.F32, d.LIN
local add, cases = d.group({ tol = F32 })

-- Products.
add("mm", { T({ 3, 4 }), T({ 4, 5 }) })
add("mm", { T({ 3, 4 }, "t"), T({ 4, 5 }, "t") })
add(":mm", { T({ 3, 4 }, "f64"), T({ 4, 2 }, "f64") }, { tol = d.F64 })
add("mm", { T({ 0, 4 }), T({ 4, 5 }) })
add("bmm", { T({ 2, 3, 4 }), T({ 2, 4, 5 }) })
add("matmul", { T({ 4 }), T({ 4 }) })
add("matmul", { T({ 4 }), T({ 4, 3 }) })
add("matmul", { T({ 3, 4 }), T({ 4 }) })
add("matmul", { T({ 2, 3, 4 }), T({ 4, 5 }) })
add("matmul", { T({ 2, 1, 3, 4 }), T({ 3, 4, 2 }) })
add(":matmul", { T({ 3, 4 }, "t"), T({ 4, 2 }) })
add("matmul", { T({ 3, 4 }, "int"), T({ 4, 2 }, "int") }, { tol = false })
add("mv", { T({ 3, 4 }), T({ 4 }) })
add("dot", { T({ 5 }), T({ 5 }) })
add("dot", { T({ 5 }, "s"), T({ 5 }) })
add("vdot", { T({ 5 }), T({ 5 }) })
add("inner", { T({ 2, 4 }), T({ 3, 4 }) })
add("outer", { T({ 3 }), T({ 4 }) })
add("ger", { T({ 3 }), T({ 4 }) })
add("addmm", { T({ 3, 5 }), T({ 3, 4 }), T({ 4, 5 }) })
add("addmm", { T({ 5 }), T({ 3, 4 }), T({ 4, 5 }), { beta = 0.5, alpha = 2 } })
add("addmv", { T({ 3 }), T({ 3, 4 }), T({ 4 }), { alpha = -1 } })
add("addr", { T({ 3, 4 }), T({ 3 }), T({ 4 }), { beta = 2 } })
add("addbmm", { T({ 3, 5 }), T({ 2, 3, 4 }), T({ 2, 4, 5 }) })
add("baddbmm", { T({ 2, 3, 5 }), T({ 2, 3, 4 }), T({ 2, 4, 5 }), { beta = 0.5, alpha = 0.25 } })
add("baddbmm", { T({ 1, 3, 3 }), T({ 2, 3, 4 }), T({ 2, 4, 3 }, "t") })
add("chain_matmul", { L { T({ 2, 3 }), T({ 3, 4 }), T({ 4, 2 }) } }, { py = "torch.ops.aten.chain_matmul" })
add("linalg.multi_dot", { L { T({ 2, 3 }), T({ 3, 4 }), T({ 4 }) } })
add("einsum", { "ij,jk->ik", L { T({ 2, 3 }), T({ 3, 4 }) } })
add("einsum", { "bij,bkj->bik", L { T({ 2, 3, 4 }), T({ 2, 5, 4 }) } })
add("einsum", { "ii->i", L { T({ 3, 3 }) } })
add("kron", { T({ 2, 3 }), T({ 2, 2 }) })
add("tensordot", { T({ 2, 3, 4 }), T({ 4, 3, 5 }), { 1, 2 }, { 1, 0 } }, { py = "torch.ops.aten.tensordot" })
add("linalg.matmul", { T({ 2, 3 }), T({ 3, 2 }) })
add("linalg.vecdot", { T({ 3, 4 }), T({ 3, 4 }) })
add("cross", { T({ 4, 3 }), T({ 4, 3 }), 1 })
add("linalg.cross", { T({ 4, 3 }), T({ 1, 3 }) })

-- Triangles, diagonals, traces.
add("tril", { T({ 4, 4 }) }, { tol = false })
add("triu", { T({ 3, 5 }), 1 }, { tol = false })
add("tril", { T({ 2, 3, 3 }, "t"), -1 }, { tol = false })
add("diag", { T({ 4 }) }, { tol = false })
add("diag", { T({ 3, 4 }), 1 }, { tol = false })
add("diag_embed", { T({ 2, 3 }) }, { tol = false })
add("diagonal", { T({ 3, 4 }), 0 }, { tol = false })
add("diagonal", { T({ 2, 3, 4 }), 1, 1, 2 }, { tol = false })
add("linalg.diagonal", { T({ 2, 3, 3 }), { offset = -1 } }, { tol = false })
add("diagflat", { T({ 3 }), 1 }, { tol = false })
add("trace", { T({ 4, 4 }) })

-- Distances and similarities.
add("cdist", { T({ 3, 4 }), T({ 5, 4 }) })
add("cdist", { T({ 2, 3, 4 }), T({ 2, 5, 4 }), 1.0 })
add("pdist", { T({ 4, 3 }) })
add("cosine_similarity", { T({ 3, 4 }), T({ 3, 4 }) })
add("cosine_similarity", { T({ 3, 4 }), T({ 4 }), 0 }, { gtol = LIN })
add("pairwise_distance", { T({ 3, 4 }), T({ 3, 4 }) })

-- Norms.
add("linalg.vector_norm", { T({ 3, 4 }) })
add("linalg.vector_norm", { T({ 3, 4 }), 1, { 1 } })
add("linalg.vector_norm", { T({ 3, 4 }), math.huge })
add("linalg.vector_norm", { T({ 3, 4 }), 0.5, N, true })
add("linalg.matrix_norm", { T({ 3, 4 }) })
add("linalg.matrix_norm", { T({ 2, 3, 4 }), 1 })
add("linalg.matrix_norm", { T({ 3, 4 }), "nuc" }, { tol = LIN })
add("linalg.norm", { T({ 3, 4 }) })
add("linalg.norm", { T({ 3, 4 }), 2, { 1 } })
add("linalg.norm", { T({ 3, 4 }), "fro" })
add("linalg.cond", { T({ 3, 3 }, "spd") }, { tol = LIN })

-- Determinants, inverses, solvers.
add("det", { T({ 3, 3 }) }, { tol = LIN })
add("linalg.det", { T({ 2, 3, 3 }) }, { tol = LIN })
add("logdet", { T({ 3, 3 }, "spd") }, { tol = LIN })
add("slogdet", { T({ 3, 3 }) }, { tol = LIN })
add("linalg.slogdet", { T({ 3, 3 }, "t") }, { tol = LIN })
add("inverse", { T({ 3, 3 }, "spd") }, { tol = LIN })
add("linalg.inv", { T({ 2, 3, 3 }, "spd") }, { tol = LIN })
add("linalg.inv_ex", { T({ 3, 3 }, "spd") }, { tol = LIN })
add("linalg.solve", { T({ 3, 3 }, "spd"), T({ 3, 2 }) }, { tol = LIN })
add("linalg.solve", { T({ 3, 3 }, "spd"), T({ 3 }) }, { tol = LIN })
add("linalg.solve", { T({ 3, 3 }, "spd"), T({ 2, 3 }), { left = false } }, { tol = LIN })
add("linalg.solve_ex", { T({ 3, 3 }, "spd"), T({ 3, 2 }) }, { tol = LIN })
add("linalg.solve_triangular", { T({ 3, 3 }, "spd"), T({ 3, 2 }), { upper = true } }, { tol = LIN })
add("triangular_solve", { T({ 3, 2 }), T({ 3, 3 }, "spd"), false }, { tol = LIN })
add("linalg.lstsq", { T({ 5, 3 }), T({ 5, 2 }) }, { tol = LIN, grad = false })
add("linalg.pinv", { T({ 4, 3 }) }, { tol = LIN })
add("pinverse", { T({ 3, 4 }) }, { tol = LIN })
add("linalg.matrix_rank", { T({ 4, 3 }) }, { grad = false })
add("linalg.tensorinv", { T({ 4, 2, 2 }, "f64"), 1 }, { tol = d.F64 })
add("linalg.tensorsolve", { T({ 2, 3, 6 }, "f64"), T({ 2, 3 }, "f64") }, { tol = d.F64 })

-- Factorizations.
add("linalg.cholesky", { T({ 3, 3 }, "spd") }, { tol = LIN })
add("linalg.cholesky", { T({ 2, 3, 3 }, "spd"), { upper = true } }, { tol = LIN })
add("cholesky", { T({ 3, 3 }, "spd f64") }, { tol = d.F64 })
add("linalg.cholesky_ex", { T({ 3, 3 }, "spd") }, { tol = LIN })
add("cholesky_solve", { T({ 3, 2 }), T({ 3, 3 }, "spd nograd") }, { tol = LIN })
add("cholesky_inverse", { T({ 3, 3 }, "spd") }, { tol = LIN, grad = false })
add("linalg.qr", { T({ 4, 3 }) }, { tol = LIN })
add("linalg.qr", { T({ 3, 4 }, "f64"), "complete" }, { tol = d.F64, grad = false })
add("qr", { T({ 4, 3 }) }, { tol = LIN })
add("geqrf", { T({ 4, 3 }) }, { tol = LIN, grad = false })
add("linalg.householder_product", { T({ 4, 3 }), T({ 2 }) }, { tol = LIN })
add("linalg.eigh", { T({ 4, 4 }, "spd f64") }, { tol = d.F64 })
add("linalg.eigvalsh", { T({ 4, 4 }, "spd") }, { tol = LIN })
add("linalg.eigvalsh", { T({ 4, 4 }, "spd"), "U" }, { tol = LIN })
add("linalg.svd", { T({ 4, 3 }, "f64"), false }, { tol = d.F64 })
add("linalg.svdvals", { T({ 4, 3 }) }, { tol = LIN })
add("svd", { T({ 3, 4 }, "f64") }, { tol = d.F64 })
add("linalg.eigvals", { T({ 3, 3 }, "spd f64") }, { tol = d.F64, grad = false })
add("linalg.lu_factor", { T({ 3, 3 }) }, { tol = LIN })
add("linalg.lu", { T({ 3, 3 }) }, { tol = LIN })
add("linalg.lu_solve", { T({ 3, 3 }), T({ 3, 2 }) }, { tol = LIN, name = "linalg.lu_solve(lu_factor(A), B)",
  fn = function(A, B) local LU, piv = torch.linalg.lu_factor(A); return torch.linalg.lu_solve(LU, piv, B) end,
  py = "lambda A, B: torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B)" })
add("lu_solve", { T({ 3, 3 }), T({ 3, 2 }) }, { tol = LIN, name = "lu_solve(B, lu_factor(A))",
  fn = function(A, B) local LU, piv = torch.linalg.lu_factor(A); return torch.lu_solve(B, LU, piv) end,
  py = "lambda A, B: torch.lu_solve(B, *torch.linalg.lu_factor(A))" })
add("orgqr", { T({ 4, 3 }) }, { tol = LIN, name = "orgqr(geqrf(A))",
  fn = function(A) local a, tau = torch.geqrf(A); return torch.orgqr(a, tau) end,
  py = "lambda A: torch.orgqr(*torch.geqrf(A))", grad = false })
add("ormqr", { T({ 4, 3 }), T({ 4, 2 }) }, { tol = LIN, name = "ormqr(geqrf(A), C)",
  fn = function(A, C) local a, tau = torch.geqrf(A); return torch.ormqr(a, tau, C, true, true) end,
  py = "lambda A, C: torch.ormqr(*torch.geqrf(A), C, True, True)", grad = false })
add("linalg.ldl_factor", { T({ 3, 3 }, "spd") }, { tol = LIN, grad = false })

-- torch.fft (complex results compared through view_as_real; gradients flow back through it).
add("fft.fft", { T({ 8 }) })
add("fft.fft", { T({ 2, 6 }), N, 0, "ortho" })
add("fft.ifft", { T({ 8 }, "f64") }, { tol = d.F64 })
add("fft.rfft", { T({ 3, 8 }) })
add("fft.fft2", { T({ 4, 4 }) })
add("fft.rfftn", { T({ 2, 4, 4 }) })
add("fft.irfft", { T({ 8 }) }, { name = "fft.irfft(fft.rfft(x))",
  fn = function(x) return torch.fft.irfft(torch.fft.rfft(x)) end, py = "lambda x: torch.fft.irfft(torch.fft.rfft(x))" })
add("fft.hfft", { T({ 5 }) })
add("fft.fftshift", { T({ 3, 4 }) }, { tol = false })
add("fft.ifftshift", { T({ 5 }) }, { tol = false })
add("fft.fftfreq", { 6, 0.5 })
add("fft.rfftfreq", { 7 })

-- Matrix functions.
add("matrix_power", { T({ 3, 3 }), 3 })
add("linalg.matrix_power", { T({ 3, 3 }, "spd"), -1 }, { tol = LIN })
add("matrix_exp", { T({ 3, 3 }) }, { tol = LIN })
add("linalg.matrix_exp", { T({ 2, 3, 3 }) }, { tol = LIN })

return cases
