--[[
  spec/parity/cases_binary.lua — parity cases for binary and ternary elementwise ops:
  arithmetic (with alpha, rounding modes, number operands), comparisons, logical and bitwise
  ops, min/max families, interpolation (lerp, addcmul), where/masked_fill, complex builders.

  Edge cases: broadcasting ([2,3] with [3], [3,1] with [1,4], expanded views), 0-dim operands,
  empty tensors, int/bool dtypes and type promotion, NaN inputs for the NaN-aware ops.
  Tolerance: bitwise for IEEE-exact arithmetic, comparisons and integer ops; F32 for
  transcendental ones (atan2, hypot, logaddexp, pow with non-integer exponents, xlogy).
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local d = require "spec.parity.desc"
local T = d.T
local F32 = d.F32
local add, cases = d.group({})

-- The same shapes for every arithmetic op: plain, broadcast, outer broadcast, 0-dim, expanded.
local SHAPES = {
  { T({ 2, 3 }), T({ 2, 3 }) }, { T({ 2, 3 }), T({ 3 }) }, { T({ 3, 1 }), T({ 1, 4 }, "t") },
  { T({ 2, 3 }), T({}) },
}
local ARITH = { { "add" }, { "sub" }, { "mul" }, { "div" }, { "maximum" }, { "minimum" },
  { "fmax" }, { "fmin" }, { "atan2", F32 }, { "hypot", F32 }, { "logaddexp", F32 },
  { "logaddexp2", F32 }, { "copysign" }, { "xlogy", F32 }, { "true_divide" }, { "subtract" },
  { "multiply" }, { "divide" }, { "arctan2", F32 } }
for _, a in ipairs(ARITH) do
  for i, s in ipairs(SHAPES) do
    if i == 1 or a[1] == "add" or a[1] == "mul" or a[1] == "div" or a[1] == "sub" or i == 2 then
      add(a[1], { s[1], s[2] }, { tol = a[2] })
    end
  end
end
add(":add", { T({ 2, 3 }, "s"), T({ 2, 3 }, "t"), { alpha = 2 } })
add("add", { T({ 2, 3 }), 1.5 })
add("add", { T({ 2, 3 }), T({ 3 }), { alpha = -0.5 } })
add("sub", { T({ 2, 3 }), T({ 2, 3 }), { alpha = 3 } })
add("rsub", { T({ 2, 3 }), T({ 2, 3 }) })
add("rsub", { T({ 2, 3 }), 2 })
add("mul", { T({ 2, 3 }), -2 })
add("mul", { T({ 0, 3 }), T({ 3 }) })
add("div", { T({ 2, 3 }), 4 })
add("div", { T({ 2, 3 }, "ints"), T({ 2, 3 }, "nat f32"), { rounding_mode = "floor" } })
add("div", { T({ 2, 3 }, "ints"), T({ 2, 3 }, "nat f32"), { rounding_mode = "trunc" } },
  { gtol = F32, note = "ltorch computes trunc division as div then trunc_: -0 in the divisor's grad" })
add("div", { T({ 2, 3 }, "int"), T({ 2, 3 }, "nat") })
add("div", { T({ 2, 3 }, "int"), T({ 2, 3 }, "nat"), { rounding_mode = "floor" } })
add("floor_divide", { T({ 2, 3 }, "int"), T({ 2, 3 }, "nat") })
add("floor_divide", { T({ 2, 3 }), T({ 2, 3 }, "pos") }, { grad = false })   -- PyTorch: no derivative
add("remainder", { T({ 2, 3 }), T({ 2, 3 }, "pos") })
add("remainder", { T({ 2, 3 }, "int"), T({ 2, 3 }, "nat") })
add("remainder", { T({ 2, 3 }, "int"), -3 })
add("fmod", { T({ 2, 3 }), T({ 2, 3 }, "pos") })
add("fmod", { T({ 2, 3 }, "int"), 3 })
add("pow", { T({ 2, 3 }, "pos"), T({ 2, 3 }) }, { tol = F32 })
add("pow", { T({ 2, 3 }, "nat"), T({ 2, 3 }, "nat") })
add("float_power", { T({ 2, 3 }, "pos"), T({ 2, 3 }) }, { tol = d.F64 })
add("nextafter", { T({ 2, 3 }), T({ 2, 3 }) }, { grad = false })
add("ldexp", { T({ 2, 3 }), T({ 2, 3 }, "int") })
add("heaviside", { T({ 2, 3 }, "ints"), T({ 2, 3 }) }, { grad = false })
add("special.xlog1py", { T({ 2, 3 }), T({ 3 }, "pos") }, { tol = F32 })
add("dist", { T({ 2, 3 }), T({ 3 }) }, { tol = F32 })
add("dist", { T({ 2, 3 }), T({ 2, 3 }), 1 }, { tol = F32 })

-- Type promotion: int op float, int op float number, bool op int, float64 op float32.
add("add", { T({ 2, 3 }, "int"), T({ 2, 3 }) })
add("add", { T({ 2, 3 }, "int"), 2.5 })
add("mul", { T({ 2, 3 }, "bool"), T({ 2, 3 }, "int") })
add("add", { T({ 2, 3 }, "bool"), 1 })
add("sub", { T({ 2, 3 }, "f64"), T({ 2, 3 }) })
add("mul", { T({ 2, 3 }, "int i32"), T({ 2, 3 }, "int") })
add("add", { T({ 2, 3 }, "int u8"), T({ 2, 3 }, "int i8") })
add("mul", { T({ 2, 3 }, "int"), T({}) })

-- Comparisons (bool results; NaN compares false), logical and bitwise ops.
for _, op in ipairs({ "eq", "ne", "lt", "le", "gt", "ge", "greater", "less_equal", "not_equal" }) do
  add(op, { T({ 2, 3 }, "halves"), T({ 3 }, "halves") })
end
add("eq", { T({ 7 }, "special"), T({ 7 }, "special") })
add("lt", { T({ 2, 3 }, "int"), 0 })
add(":ge", { T({ 2, 3 }, "t"), 0.5 })
add("isclose", { T({ 2, 3 }), T({ 2, 3 }) })
add("isclose", { T({ 7 }, "special"), T({ 7 }, "special"), { equal_nan = true } })
for _, op in ipairs({ "logical_and", "logical_or", "logical_xor" }) do
  add(op, { T({ 2, 3 }, "bool"), T({ 2, 3 }, "bool") })
  add(op, { T({ 2, 3 }, "int"), T({ 3 }) })
end
for _, op in ipairs({ "bitwise_and", "bitwise_or", "bitwise_xor" }) do
  add(op, { T({ 2, 3 }, "int"), T({ 2, 3 }, "int") })
  add(op, { T({ 2, 3 }, "bool"), T({ 3 }, "bool") })
end
add("bitwise_and", { T({ 2, 3 }, "int"), 3 })
add("bitwise_left_shift", { T({ 2, 3 }, "nat"), T({ 2, 3 }, "nat") })
add("bitwise_right_shift", { T({ 2, 3 }, "int"), 1 })
add("gcd", { T({ 2, 3 }, "int"), T({ 2, 3 }, "int") })
add("lcm", { T({ 2, 3 }, "nat"), T({ 2, 3 }, "nat") })
add("maximum", { T({ 7 }, "special"), T({ 7 }) })
add("fmax", { T({ 7 }, "special"), T({ 7 }) })
add("minimum", { T({ 2, 3 }, "int"), T({ 2, 3 }, "int") })

-- Ternary ops and interpolation.
add("lerp", { T({ 2, 3 }), T({ 2, 3 }), 0.3 })
add("lerp", { T({ 2, 3 }), T({ 3 }), T({ 2, 3 }, "rand") })
add("addcmul", { T({ 2, 3 }), T({ 2, 3 }), T({ 3 }), { value = 0.5 } })
add("addcdiv", { T({ 2, 3 }), T({ 2, 3 }), T({ 2, 3 }, "pos"), { value = -2 } })
add(":addcmul", { T({ 2, 3 }, "t"), T({ 2, 3 }), T({ 2, 3 }) })

-- where / masked_fill: tensor and number operands, broadcasting masks.
add("where", { T({ 2, 3 }, "bool"), T({ 2, 3 }), T({ 3 }) })
add("where", { T({ 2, 3 }, "bool"), T({ 2, 3 }), 0 })
add("where", { T({ 2, 3 }, "bool"), 1.5, T({ 2, 3 }) })
add("where", { T({ 2, 3 }, "bool"), T({ 2, 3 }, "int"), T({ 2, 3 }) })
add(":where", { T({ 2, 3 }), T({ 2, 3 }, "bool"), T({ 2, 3 }) })
add("masked_fill", { T({ 2, 3 }), T({ 2, 3 }, "bool"), -1e9 })
add("masked_fill", { T({ 2, 3 }), T({ 3 }, "bool"), 0 })
add("masked_fill", { T({ 2, 3 }), T({ 2, 3 }, "bool"), T({}) })
add(":masked_fill", { T({ 2, 3 }, "t"), T({ 2, 3 }, "bool"), 7 })

-- complex builders (outputs compared through view_as_real).
add("complex", { T({ 2, 3 }), T({ 2, 3 }) })
add("polar", { T({ 2, 3 }, "pos"), T({ 2, 3 }) }, { tol = F32 })
add("view_as_real", { T({ 2, 3 }) }, { py = "lambda x: torch.view_as_real(x)", expect_error = true,
  name = "view_as_real(real tensor) is an error" })

-- In-place forms on fresh tensors (no grad): the result is the updated tensor.
add(":add_", { T({ 2, 3 }), T({ 3 }), { alpha = 2 } }, { grad = false })
add(":mul_", { T({ 2, 3 }), 3 }, { grad = false })
add(":div_", { T({ 2, 3 }), T({ 2, 3 }, "pos"), { rounding_mode = "floor" } }, { grad = false })
add(":clamp_", { T({ 2, 3 }), -0.5, 0.5 }, { grad = false })
add(":masked_fill_", { T({ 2, 3 }), T({ 2, 3 }, "bool"), 2 }, { grad = false })
add(":lerp_", { T({ 2, 3 }), T({ 2, 3 }), 0.25 }, { grad = false })
add(":addcmul_", { T({ 2, 3 }), T({ 2, 3 }), T({ 2, 3 }), { value = 2 } }, { grad = false })
add(":copysign_", { T({ 2, 3 }), -1 }, { grad = false })
add(":hypot_", { T({ 2, 3 }), T({ 2, 3 }) }, { grad = false, tol = F32 })
add(":fmod_", { T({ 2, 3 }), 0.7 }, { grad = false })

return cases
