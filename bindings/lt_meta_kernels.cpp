/*
 * lt_meta_kernels.cpp — shape-only ("meta" device) kernels for the ATen ops whose meta support
 * PyTorch registers from Python (torch/_meta_registrations.py, torch/_decomp), so that libtorch
 * alone cannot run them on a meta tensor: relu, where, batch and layer norm, convolution,
 * index_select (embeddings) and their backwards. With these, a model built on "meta" runs forward
 * and backward as in PyTorch, giving every result's shape, dtype and device without data.
 *
 * Each kernel allocates its results on the meta device with the shapes and dtypes PyTorch's
 * Python registrations give (checked against torch 2.11: batch norm's saved statistics are [C]
 * in the op-math dtype in training and eval; convolution's output follows the usual
 * (in + 2p - d(k - 1) - 1) / s + 1 rule, transposed (in - 1)s - 2p + d(k - 1) + op + 1).
 * They are registered once, on the first use of the meta device (lt_meta_kernels_install, from
 * lt_device_check), not by a static initializer, so that a host linking the static library
 * keeps them.
 *
 * Usage (C++): lt::install_meta_kernels();   // idempotent
 */
#include "lt_internal.hpp"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <tuple>

namespace {

using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using OptTensor = std::optional<at::Tensor>;

at::Tensor relu_meta(const at::Tensor &self) { return at::empty_like(self); }
at::Tensor &relu_inplace_meta(at::Tensor &self) { return self; }

std::vector<int64_t> where_shape(const at::Tensor &c, const at::Tensor &a, const at::Tensor &b) {
  return at::infer_size(at::infer_size(c.sizes(), a.sizes()), b.sizes());
}

at::Tensor where_meta(const at::Tensor &cond, const at::Tensor &self, const at::Tensor &other) {
  TORCH_CHECK(cond.scalar_type() == at::kBool, "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  return at::empty(where_shape(cond, self, other), self.options().dtype(at::result_type(self, other)));
}

at::Tensor &where_out_meta(const at::Tensor &cond, const at::Tensor &self, const at::Tensor &other, at::Tensor &out) {
  out.resize_(where_shape(cond, self, other));
  return out;
}

/* Saved mean and inverse std: one per channel (dim 1), in the op-math dtype (float for half). */
at::Tensor channel_stat(const at::Tensor &input) {
  int64_t channels = input.dim() > 1 ? input.size(1) : 1;
  return at::empty({channels}, input.options().dtype(at::toOpMathType(input.scalar_type())));
}

Tensors3 batch_norm_meta(const at::Tensor &input, const OptTensor &, const OptTensor &, const OptTensor &,
                         const OptTensor &, bool, double, double) {
  return {at::empty_like(input), channel_stat(input), channel_stat(input)};
}

at::Tensor like_or_undefined(bool wanted, const at::Tensor &t) { return wanted ? at::empty_like(t) : at::Tensor(); }

/* A per-channel gradient (weight, bias): shaped and typed like `param` when given, else [C] of input's dtype. */
at::Tensor channel_grad(bool wanted, const OptTensor &param, const at::Tensor &input) {
  if (!wanted) return at::Tensor();
  if (param.has_value() && param->defined()) return at::empty_like(*param);
  return at::empty({input.dim() > 1 ? input.size(1) : 1}, input.options());
}

Tensors3 batch_norm_backward_meta(const at::Tensor &, const at::Tensor &input, const OptTensor &weight, const OptTensor &,
                                  const OptTensor &, const OptTensor &, const OptTensor &, bool, double,
                                  std::array<bool, 3> mask) {
  return {like_or_undefined(mask[0], input), channel_grad(mask[1], weight, input), channel_grad(mask[2], weight, input)};
}

/* mean and rstd keep the leading (not normalized) dims and have size 1 in each normalized one. */
at::Tensor layer_norm_stat(const at::Tensor &input, size_t normalized_dims) {
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  for (size_t i = shape.size() - normalized_dims; i < shape.size(); ++i) shape[i] = 1;
  return at::empty(shape, input.options().dtype(at::toOpMathType(input.scalar_type())));
}

Tensors3 layer_norm_meta(const at::Tensor &input, c10::SymIntArrayRef normalized_shape, const OptTensor &,
                         const OptTensor &, double) {
  TORCH_CHECK(normalized_shape.size() <= static_cast<size_t>(input.dim()),
              "layer_norm: normalized_shape has more dims than the input");
  return {at::empty_like(input), layer_norm_stat(input, normalized_shape.size()),
          layer_norm_stat(input, normalized_shape.size())};
}

Tensors3 layer_norm_backward_meta(const at::Tensor &, const at::Tensor &input, c10::SymIntArrayRef, const at::Tensor &,
                                  const at::Tensor &, const OptTensor &weight, const OptTensor &bias,
                                  std::array<bool, 3> mask) {
  auto param_grad = [](bool wanted, const OptTensor &p) {
    return wanted && p.has_value() && p->defined() ? at::empty_like(*p) : at::Tensor();
  };
  return {like_or_undefined(mask[0], input), param_grad(mask[1], weight), param_grad(mask[2], bias)};
}

int64_t at_or_last(c10::SymIntArrayRef v, size_t i) {
  TORCH_CHECK(!v.empty(), "convolution: empty stride, padding or dilation");
  return (i < v.size() ? v[i] : v.back()).expect_int();
}

at::Tensor convolution_meta(const at::Tensor &input, const at::Tensor &weight, const OptTensor &,
                            c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                            bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups) {
  TORCH_CHECK(input.dim() >= 3 && weight.dim() == input.dim(), "convolution: expected input and weight of the same rank (3 to 5), got ",
              input.sizes(), " and ", weight.sizes());
  int64_t g = groups.expect_int();
  std::vector<int64_t> shape{input.size(0), transposed ? weight.size(1) * g : weight.size(0)};
  for (int64_t d = 2; d < input.dim(); ++d) {
    size_t i = static_cast<size_t>(d - 2);
    int64_t in = input.size(d), k = weight.size(d);
    int64_t s = at_or_last(stride, i), p = at_or_last(padding, i), dil = at_or_last(dilation, i);
    int64_t out = transposed
                      ? (in - 1) * s - 2 * p + dil * (k - 1) + (output_padding.empty() ? 0 : at_or_last(output_padding, i)) + 1
                      : (in + 2 * p - dil * (k - 1) - 1) / s + 1;
    TORCH_CHECK(out > 0, "convolution: the output would have size ", out, " in dim ", d, " (input ", input.sizes(),
                ", weight ", weight.sizes(), ")");
    shape.push_back(out);
  }
  return at::empty(shape, input.options());
}

Tensors3 convolution_backward_meta(const at::Tensor &, const at::Tensor &input, const at::Tensor &weight,
                                   c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymIntArrayRef, bool transposed,
                                   c10::SymIntArrayRef, c10::SymInt groups, std::array<bool, 3> mask) {
  at::Tensor grad_bias;
  if (mask[2]) grad_bias = at::empty({transposed ? weight.size(1) * groups.expect_int() : weight.size(0)}, weight.options());
  return {like_or_undefined(mask[0], input), like_or_undefined(mask[1], weight), grad_bias};
}

at::Tensor index_select_meta(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  TORCH_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (!shape.empty()) shape[static_cast<size_t>(c10::maybe_wrap_dim(dim, self.dim()))] = index.numel();
  return at::empty(shape, self.options());
}

at::Tensor embedding_backward_meta(const at::Tensor &grad_output, const at::Tensor &, c10::SymInt num_weights,
                                   c10::SymInt, bool) {
  return at::empty({num_weights.expect_int(), grad_output.size(-1)}, grad_output.options());
}

}  // namespace

namespace lt {

void install_meta_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Kept for the life of the process: the registrations end with the Library object.
    static auto *lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::Meta, __FILE__, __LINE__);
    lib->impl("relu", TORCH_FN(relu_meta));
    lib->impl("relu_", TORCH_FN(relu_inplace_meta));
    lib->impl("where.self", TORCH_FN(where_meta));
    lib->impl("where.self_out", TORCH_FN(where_out_meta));
    lib->impl("native_batch_norm", TORCH_FN(batch_norm_meta));
    lib->impl("native_batch_norm_backward", TORCH_FN(batch_norm_backward_meta));
    lib->impl("native_layer_norm", TORCH_FN(layer_norm_meta));
    lib->impl("native_layer_norm_backward", TORCH_FN(layer_norm_backward_meta));
    lib->impl("convolution_overrideable", TORCH_FN(convolution_meta));
    lib->impl("convolution_backward_overrideable", TORCH_FN(convolution_backward_meta));
    lib->impl("index_select", TORCH_FN(index_select_meta));
    lib->impl("embedding_dense_backward", TORCH_FN(embedding_backward_meta));
  });
}

}  // namespace lt
