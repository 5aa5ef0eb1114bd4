/*
 * lt_math.cpp — elementwise math: unary and binary ops selected by op code (lt_unary_op,
 * lt_binary_op in lt.h), their in-place forms, scalar operands on either side, clamp, where,
 * masked_fill, lerp, allclose/equal.
 *
 * A scalar on the left (`2 - x`, `2 / x`, `2 ^ x`) becomes a "wrapped number" 0-dim tensor,
 * which is what PyTorch's Python binding does: type promotion then treats it as a scalar, so
 * `2 - float32_tensor` stays float32.
 */
#include "lt_internal.hpp"

#include <ATen/ScalarOps.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/atan2.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/lerp.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/where.h>
#include <cmath>

namespace {

at::Tensor unary(int op, const at::Tensor &t) {
  switch (op) {
    case LT_NEG: return t.neg();
    case LT_ABS: return t.abs();
    case LT_EXP: return t.exp();
    case LT_LOG: return t.log();
    case LT_LOG2: return t.log2();
    case LT_LOG10: return t.log10();
    case LT_LOG1P: return t.log1p();
    case LT_EXPM1: return t.expm1();
    case LT_SQRT: return t.sqrt();
    case LT_RSQRT: return t.rsqrt();
    case LT_SIN: return t.sin();
    case LT_COS: return t.cos();
    case LT_TAN: return t.tan();
    case LT_ASIN: return t.asin();
    case LT_ACOS: return t.acos();
    case LT_ATAN: return t.atan();
    case LT_SINH: return t.sinh();
    case LT_COSH: return t.cosh();
    case LT_TANH: return t.tanh();
    case LT_SIGMOID: return t.sigmoid();
    case LT_RELU: return t.relu();
    case LT_FLOOR: return t.floor();
    case LT_CEIL: return t.ceil();
    case LT_ROUND: return t.round();
    case LT_TRUNC: return t.trunc();
    case LT_FRAC: return t.frac();
    case LT_SIGN: return t.sign();
    case LT_RECIPROCAL: return t.reciprocal();
    case LT_SQUARE: return t.square();
    case LT_ERF: return t.erf();
    case LT_LOGICAL_NOT: return t.logical_not();
    case LT_BITWISE_NOT: return t.bitwise_not();
    case LT_ISNAN: return t.isnan();
    case LT_ISINF: return t.isinf();
    case LT_ISFINITE: return t.isfinite();
    case LT_SILU: return at::silu(t);
    case LT_GELU: return at::gelu(t);
    default: throw lt::ValueError("unknown unary op code " + std::to_string(op));
  }
}

void unary_(int op, at::Tensor &t) {
  switch (op) {
    case LT_NEG: t.neg_(); return;
    case LT_ABS: t.abs_(); return;
    case LT_EXP: t.exp_(); return;
    case LT_LOG: t.log_(); return;
    case LT_LOG2: t.log2_(); return;
    case LT_LOG10: t.log10_(); return;
    case LT_LOG1P: t.log1p_(); return;
    case LT_EXPM1: t.expm1_(); return;
    case LT_SQRT: t.sqrt_(); return;
    case LT_RSQRT: t.rsqrt_(); return;
    case LT_SIN: t.sin_(); return;
    case LT_COS: t.cos_(); return;
    case LT_TAN: t.tan_(); return;
    case LT_ASIN: t.asin_(); return;
    case LT_ACOS: t.acos_(); return;
    case LT_ATAN: t.atan_(); return;
    case LT_SINH: t.sinh_(); return;
    case LT_COSH: t.cosh_(); return;
    case LT_TANH: t.tanh_(); return;
    case LT_SIGMOID: t.sigmoid_(); return;
    case LT_RELU: t.relu_(); return;
    case LT_FLOOR: t.floor_(); return;
    case LT_CEIL: t.ceil_(); return;
    case LT_ROUND: t.round_(); return;
    case LT_TRUNC: t.trunc_(); return;
    case LT_FRAC: t.frac_(); return;
    case LT_SIGN: t.sign_(); return;
    case LT_RECIPROCAL: t.reciprocal_(); return;
    case LT_SQUARE: t.square_(); return;
    case LT_ERF: t.erf_(); return;
    case LT_LOGICAL_NOT: t.logical_not_(); return;
    case LT_BITWISE_NOT: t.bitwise_not_(); return;
    case LT_SILU: at::silu_(t); return;
    default: throw lt::ValueError("unary op code " + std::to_string(op) + " has no in-place form");
  }
}

/* alpha and clamp bounds arrive as doubles; an integral value must reach libtorch as an int, or
 * integer tensors reject alpha ("alpha must not be a floating point number") even for plain
 * a + b, and clamp(int64 tensor, 0, 3) would promote to float. */
at::Scalar number_scalar(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9.0e18) return at::Scalar(static_cast<int64_t>(v));
  return at::Scalar(v);
}

at::Tensor binary(int op, const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha) {
  switch (op) {
    case LT_ADD: return a.add(b, alpha);
    case LT_SUB: return a.sub(b, alpha);
    case LT_MUL: return a.mul(b);
    case LT_DIV: return a.div(b);
    case LT_POW: return a.pow(b);
    case LT_REMAINDER: return a.remainder(b);
    case LT_FMOD: return a.fmod(b);
    case LT_FLOOR_DIVIDE: return a.div(b, "floor");
    case LT_EQ: return a.eq(b);
    case LT_NE: return a.ne(b);
    case LT_LT: return a.lt(b);
    case LT_LE: return a.le(b);
    case LT_GT: return a.gt(b);
    case LT_GE: return a.ge(b);
    case LT_MAXIMUM: return a.maximum(b);
    case LT_MINIMUM: return a.minimum(b);
    case LT_ATAN2: return at::atan2(a, b);
    case LT_LOGICAL_AND: return a.logical_and(b);
    case LT_LOGICAL_OR: return a.logical_or(b);
    case LT_LOGICAL_XOR: return a.logical_xor(b);
    case LT_BITWISE_AND: return a.bitwise_and(b);
    case LT_BITWISE_OR: return a.bitwise_or(b);
    case LT_BITWISE_XOR: return a.bitwise_xor(b);
    default: throw lt::ValueError("unknown binary op code " + std::to_string(op));
  }
}

void binary_(int op, at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha) {
  switch (op) {
    case LT_ADD: a.add_(b, alpha); return;
    case LT_SUB: a.sub_(b, alpha); return;
    case LT_MUL: a.mul_(b); return;
    case LT_DIV: a.div_(b); return;
    case LT_POW: a.pow_(b); return;
    case LT_REMAINDER: a.remainder_(b); return;
    case LT_FMOD: a.fmod_(b); return;
    case LT_FLOOR_DIVIDE: a.div_(b, "floor"); return;
    case LT_EQ: a.eq_(b); return;
    case LT_NE: a.ne_(b); return;
    case LT_LT: a.lt_(b); return;
    case LT_LE: a.le_(b); return;
    case LT_GT: a.gt_(b); return;
    case LT_GE: a.ge_(b); return;
    case LT_ATAN2: a.atan2_(b); return;
    case LT_LOGICAL_AND: a.logical_and_(b); return;
    case LT_LOGICAL_OR: a.logical_or_(b); return;
    case LT_LOGICAL_XOR: a.logical_xor_(b); return;
    case LT_BITWISE_AND: a.bitwise_and_(b); return;
    case LT_BITWISE_OR: a.bitwise_or_(b); return;
    case LT_BITWISE_XOR: a.bitwise_xor_(b); return;
    default: throw lt::ValueError("binary op code " + std::to_string(op) + " has no in-place form");
  }
}

/* A Lua number as PyTorch's Python binding passes a Python scalar: a wrapped 0-dim tensor. */
at::Tensor wrapped(double value, int kind) { return at::native::wrapped_scalar_tensor(lt::scalar(value, kind)); }

}  // namespace

extern "C" {

int lt_unary(lt_tensor **out, int op, const lt_tensor *t) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainOp plain_op(lt::plain(x));
  *out = lt::wrap(unary(op, x));
  LT_CATCH
}

int lt_unary_(int op, lt_tensor *t) {
  LT_TRY_OP
  unary_(op, lt::get_mut(t));
  LT_CATCH
}

int lt_binary(lt_tensor **out, int op, const lt_tensor *a, const lt_tensor *b, double alpha) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(a), &y = lt::get(b);
  lt::PlainOp plain_op(lt::plain(x) && lt::plain(y));
  *out = lt::wrap(binary(op, x, y, number_scalar(alpha)));
  LT_CATCH
}

int lt_binary_(int op, lt_tensor *a, const lt_tensor *b, double alpha) {
  LT_TRY_OP
  binary_(op, lt::get_mut(a), lt::get(b), number_scalar(alpha));
  LT_CATCH
}

/* pow takes a number exponent as a Scalar, as Python's x ** 0.5 does (pow.Tensor_Scalar): its
   special cases (0.5 -> sqrt, -0.5 -> rsqrt, 2 -> square, ...) round differently from the
   general pow a wrapped-tensor exponent gets. */
int lt_binary_scalar(lt_tensor **out, int op, const lt_tensor *a, double b, int kind) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(a);
  lt::PlainOp plain_op(lt::plain(x));
  if (op == LT_POW) *out = lt::wrap(x.pow(lt::scalar(b, kind)));
  else *out = lt::wrap(binary(op, x, wrapped(b, kind), at::Scalar(1)));
  LT_CATCH
}

int lt_binary_scalar_(int op, lt_tensor *a, double b, int kind) {
  LT_TRY_OP
  if (op == LT_POW) lt::get_mut(a).pow_(lt::scalar(b, kind));
  else binary_(op, lt::get_mut(a), wrapped(b, kind), at::Scalar(1));
  LT_CATCH
}

int lt_scalar_binary(lt_tensor **out, int op, double a, int kind, const lt_tensor *b) {
  LT_TRY_OP
  const at::Tensor &y = lt::get(b);
  lt::PlainOp plain_op(lt::plain(y));
  *out = lt::wrap(binary(op, wrapped(a, kind), y, at::Scalar(1)));
  LT_CATCH
}

int lt_clamp(lt_tensor **out, const lt_tensor *t, int has_min, double min, int has_max, double max) {
  LT_TRY_OP
  c10::optional<at::Scalar> lo = has_min ? c10::optional<at::Scalar>(number_scalar(min)) : c10::nullopt;
  c10::optional<at::Scalar> hi = has_max ? c10::optional<at::Scalar>(number_scalar(max)) : c10::nullopt;
  *out = lt::wrap(at::clamp(lt::get(t), lo, hi));
  LT_CATCH
}

int lt_clamp_(lt_tensor *t, int has_min, double min, int has_max, double max) {
  LT_TRY_OP
  c10::optional<at::Scalar> lo = has_min ? c10::optional<at::Scalar>(number_scalar(min)) : c10::nullopt;
  c10::optional<at::Scalar> hi = has_max ? c10::optional<at::Scalar>(number_scalar(max)) : c10::nullopt;
  at::clamp_(lt::get_mut(t), lo, hi);
  LT_CATCH
}

int lt_where(lt_tensor **out, const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  *out = lt::wrap(at::where(lt::get(cond), lt::get(a), lt::get(b)));
  LT_CATCH
}

int lt_masked_fill(lt_tensor **out, const lt_tensor *t, const lt_tensor *mask, double value, int kind) {
  LT_TRY_OP
  *out = lt::wrap(at::masked_fill(lt::get(t), lt::get(mask), lt::scalar(value, kind)));
  LT_CATCH
}

int lt_masked_fill_(lt_tensor *t, const lt_tensor *mask, double value, int kind) {
  LT_TRY_OP
  lt::get_mut(t).masked_fill_(lt::get(mask), lt::scalar(value, kind));
  LT_CATCH
}

int lt_leaky_relu(lt_tensor **out, const lt_tensor *t, double negative_slope) {
  LT_TRY_OP
  *out = lt::wrap(at::leaky_relu(lt::get(t), negative_slope));
  LT_CATCH
}

int lt_lerp(lt_tensor **out, const lt_tensor *a, const lt_tensor *b, double weight) {
  LT_TRY_OP
  *out = lt::wrap(at::lerp(lt::get(a), lt::get(b), weight));
  LT_CATCH
}

int lt_allclose(const lt_tensor *a, const lt_tensor *b, double rtol, double atol, int equal_nan, int *out) {
  LT_TRY_OP
  *out = at::allclose(lt::get(a), lt::get(b), rtol, atol, equal_nan != 0) ? 1 : 0;
  LT_CATCH
}

int lt_equal(const lt_tensor *a, const lt_tensor *b, int *out) {
  LT_TRY_OP
  *out = at::equal(lt::get(a), lt::get(b)) ? 1 : 0;
  LT_CATCH
}

}  // extern "C"
