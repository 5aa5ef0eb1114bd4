--[[
  spec/parity/cases_pointwise.lua — parity cases for unary elementwise ops: math functions,
  rounding, predicates, activations and torch.special, forward and backward.

  Inputs stay inside each op's domain (pos for logs and roots, unit for asin/atanh, gt1 for
  acosh, prob for logit); `special` inputs carry NaN, ±inf and ±0 where the op is defined.
  Tolerance: bitwise for IEEE-exact ops (abs, neg, rounding, sqrt, reciprocal, relu, predicates,
  clamps); F32 (rtol 1e-5, atol 1e-6) for transcendental functions and their gradients.
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local d = require "spec.parity.desc"
local T, V, D = d.T, d.V, d.D
local F32 = d.F32
local add, cases = d.group({})

-- { op, input kind, tolerance (nil: bitwise), grad }
local UNARY = {
  { "abs" }, { "neg" }, { "sign" }, { "sgn" }, { "square" }, { "relu" }, { "positive" },
  { "ceil", "halves" }, { "floor", "halves" }, { "round", "halves" }, { "trunc", "halves" },
  { "frac", "halves" }, { "fix", "halves" }, { "sqrt", "pos" }, { "reciprocal", "pos" },
  { "rsqrt", "pos", F32 }, { "exp", nil, F32 }, { "exp2", nil, F32 }, { "expm1", nil, F32 },
  { "log", "pos", F32 }, { "log2", "pos", F32 }, { "log10", "pos", F32 }, { "log1p", "pos", F32 },
  { "sin", nil, F32 }, { "cos", nil, F32 }, { "tan", "unit", F32 }, { "asin", "unit", F32 },
  { "acos", "unit", F32 }, { "atan", nil, F32 }, { "sinh", nil, F32 }, { "cosh", nil, F32 },
  { "tanh", nil, F32 }, { "asinh", nil, F32 }, { "acosh", "gt1", F32 }, { "atanh", "unit", F32 },
  { "arcsin", "unit", F32 }, { "arctan", nil, F32 }, { "sigmoid", nil, F32 }, { "erf", nil, F32 },
  { "erfc", nil, F32 }, { "erfinv", "unit", F32 }, { "lgamma", "pos", F32 }, { "digamma", "pos", F32 },
  { "i0", nil, F32 }, { "sinc", nil, F32 }, { "logit", "prob", F32 }, { "deg2rad", nil, F32 },
  { "rad2deg", nil, F32 }, { "expit", nil, F32 }, { "absolute" }, { "negative" },
  { "silu", nil, F32 }, { "mish", nil, F32 }, { "gelu", nil, F32 }, { "selu", nil, F32 },
  { "celu", nil, F32 }, { "elu", nil, F32 }, { "hardsigmoid" }, { "hardswish" }, { "relu6" },
  { "hardtanh" }, { "softplus", nil, F32 }, { "log_sigmoid", nil, F32 }, { "angle" },
}
for _, u in ipairs(UNARY) do
  local op, kind, tol = u[1], u[2] or "randn", u[3]
  if op == "expit" then op = "special.expit" end
  add(op, { T({ 3, 4 }, kind) }, { tol = tol })
end

-- Method forms on non-contiguous views, 0-dim and empty inputs, float64.
for _, u in ipairs({ { "exp", "t" }, { "sqrt", "pos s" }, { "sin", "t f64" }, { "tanh", "s" },
  { "log", "pos t" }, { "sigmoid", "e" }, { "abs", "f64" }, { "floor", "halves t" } }) do
  add(":" .. u[1], { T({ 3, 4 }, u[2]) }, { tol = F32 })
end
for _, op in ipairs({ "exp", "neg", "sqrt", "tanh", "relu", "round" }) do
  add(op, { T({}, "pos") }, { tol = F32 })
  add(op, { T({ 0, 3 }) })
end

-- NaN / inf / signed zero inputs (forward only: the derivative at inf is not the point here).
for _, op in ipairs({ "abs", "neg", "sign", "exp", "sqrt", "floor", "relu", "sigmoid", "tanh",
  "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "nan_to_num", "isreal",
  "sgn", "reciprocal", "trunc" }) do
  add(op, { T({ 7 }, "special") }, { grad = false, tol = F32 })
end
add("nan_to_num", { T({ 7 }, "special"), 0.5, 100, -100 }, { grad = false })
add("nan_to_num", { T({ 7 }, "special f64"), { posinf = 1e300 } }, { grad = false })
add("clamp", { T({ 7 }, "special"), -1, 1 }, { grad = false })

-- Integer and bool inputs: dtype rules (abs of int stays int, sqrt of int is float).
for _, op in ipairs({ "abs", "neg", "sign", "square", "sqrt", "exp", "bitwise_not", "logical_not" }) do
  add(op, { T({ 2, 5 }, "int") }, { tol = F32 })
end
add("bitwise_not", { T({ 2, 3 }, "bool") })
add("logical_not", { T({ 2, 3 }, "bool") })
add("logical_not", { T({ 2, 3 }) })
add("bitwise_not", { T({ 4 }, "int u8") })
add("neg", { T({ 4 }, "int i32") })

-- Parameterized activations and clamps.
add("clamp", { T({ 3, 4 }), -0.5, 0.5 })
add("clamp", { T({ 3, 4 }), T({ 4 }, "nograd"), T({ 3, 1 }) })
add("clamp", { T({ 3, 4 }), { min = 0 } })
add(":clamp", { T({ 3, 4 }, "t"), { max = 0.25 } })
add("clamp_min", { T({ 3, 4 }), 0.1 })
add("clamp_max", { T({ 3, 4 }), -0.1 })
add("clip", { T({ 5 }, "int"), -2, 2 })
add("hardtanh", { T({ 3, 4 }), -0.5, 2 })
add("leaky_relu", { T({ 3, 4 }), 0.2 })
add("F.leaky_relu", { T({ 3, 4 }) })
add("elu", { T({ 3, 4 }), 0.5, 2, 1.5 }, { tol = F32 })
add("celu", { T({ 3, 4 }), 0.7 }, { tol = F32 })
add("softplus", { T({ 3, 4 }), 2, 1 }, { tol = F32 })
add("softshrink", { T({ 3, 4 }), 0.3 })
add("hardshrink", { T({ 3, 4 }), 0.3 })
add("threshold", { T({ 3, 4 }), 0.1, -2 })
add("rrelu", { T({ 3, 4 }), 0.1, 0.3, false })
add("gelu", { T({ 3, 4 }), { approximate = "tanh" } }, { tol = F32 })
add("F.gelu", { T({ 3, 4 }, "t") }, { tol = F32 })
add("F.relu", { T({ 3, 4 }) })
add("F.silu", { T({ 3, 4 }) }, { tol = F32 })
add("F.sigmoid", { T({ 3, 4 }) }, { tol = F32 })
add("F.tanh", { T({ 3, 4 }) }, { tol = F32 })
add("glu", { T({ 3, 4 }), 1 }, { tol = F32 })
add("glu", { T({ 4, 3 }), 0 }, { tol = F32 })
add("prelu", { T({ 2, 3, 4 }), T({ 3 }) })
add("logit", { T({ 3, 4 }, "rand"), 0.1 }, { tol = F32 })
add("polygamma", { 1, T({ 3, 4 }, "pos") }, { tol = F32 })
add(":polygamma", { T({ 3, 4 }, "pos"), 2 }, { tol = F32 })
add("mvlgamma", { T({ 3, 4 }, "gt1"), 2 }, { tol = F32 })
add("round", { T({ 3, 4 }), { decimals = 2 } }, { tol = F32 })
add("float_power", { T({ 3, 4 }, "pos"), 2.5 }, { tol = d.F64 })
add("pow", { T({ 3, 4 }), 2 })
add("pow", { T({ 3, 4 }, "pos"), 0.5 }, { tol = F32 })
add("pow", { T({ 3, 4 }, "int"), 3 })
add("pow", { 2, T({ 3, 4 }) }, { tol = F32 })
add(":pow", { T({ 3, 4 }, "pos t"), -1.5 }, { tol = F32 })
for _, e in ipairs({ -0.5, -1, -2, 3, 1 }) do add("pow", { T({ 3, 4 }, "pos"), e }) end
add("pow", { T({ 3, 4 }) }, { name = "x ^ 0.5 (the Lua operator; NaN below 0)", grad = false,
  fn = function(x) return x ^ 0.5 end, py = "lambda x: x ** 0.5" })
add("pow", { T({ 3, 4 }) }, { name = "2 ^ x (the Lua operator)", tol = F32,
  fn = function(x) return 2 ^ x end, py = "lambda x: 2 ** x" })

-- torch.special (most of these have no derivative in libtorch 1.13: forward only).
local SPECIAL = {
  { "erfcx", nil, true }, { "ndtr", nil, true }, { "ndtri", "prob", true }, { "log_ndtr", nil, true },
  { "i0e", nil, true }, { "i1", nil, true }, { "i1e", nil, true }, { "entr", "pos", true },
  { "sinc", nil, true }, { "logit", "prob", true }, { "round", "halves", true }, { "log1p", "pos", true },
  { "exp2", nil, true }, { "expm1", nil, true }, { "gammaln", "pos", true }, { "psi", "pos", true },
  { "digamma", "pos", true }, { "erf", nil, true }, { "erfc", nil, true }, { "erfinv", "unit", true },
  { "i0", nil, true }, { "bessel_j0" }, { "bessel_j1" }, { "bessel_y0", "pos" }, { "bessel_y1", "pos" },
  { "modified_bessel_i0" }, { "modified_bessel_i1" }, { "modified_bessel_k0", "pos" },
  { "modified_bessel_k1", "pos" }, { "scaled_modified_bessel_k0", "pos" },
  { "scaled_modified_bessel_k1", "pos" }, { "spherical_bessel_j0" }, { "airy_ai" },
}
for _, s in ipairs(SPECIAL) do
  add("special." .. s[1], { T({ 3, 4 }, s[2] or "randn") }, { tol = F32, grad = s[3] or false })
end
add("special.polygamma", { 1, T({ 3, 4 }, "pos") }, { tol = F32 })
add("special.multigammaln", { T({ 3, 4 }, "gt1"), 3 }, { tol = F32 })
add("special.xlog1py", { T({ 3, 4 }), T({ 3, 4 }, "pos") }, { tol = F32 })
add("special.xlogy", { T({ 3, 4 }), T({ 3, 4 }, "pos") }, { tol = F32 })
add("special.zeta", { T({ 3, 4 }, "gt1"), T({ 3, 4 }, "pos") }, { tol = F32, grad = false })
add("special.gammainc", { T({ 3, 4 }, "pos"), T({ 3, 4 }, "pos") }, { tol = F32, grad = false })
add("special.gammaincc", { T({ 3, 4 }, "pos"), T({ 3, 4 }, "pos") }, { tol = F32, grad = false })
add("special.chebyshev_polynomial_t", { T({ 3, 4 }, "unit"), 3 }, { tol = F32, grad = false })
add("special.hermite_polynomial_h", { T({ 3, 4 }), 4 }, { tol = F32, grad = false })
add("special.legendre_polynomial_p", { T({ 3, 4 }, "unit"), V({ 0, 1, 2, 3 }) }, { tol = F32, grad = false })
add("special.logsumexp", { T({ 3, 4 }), 1 }, { tol = F32 })
add("special.softmax", { T({ 3, 4 }), 1 }, { tol = F32 })
add("special.log_softmax", { T({ 3, 4 }), 0, { dtype = D "float64" } }, { tol = F32 })

return cases
