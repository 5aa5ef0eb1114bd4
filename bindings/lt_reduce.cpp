/*
 * lt_reduce.cpp — reductions (sum/mean/prod/amax/amin/all/any/logsumexp over any dims, max/min
 * with indices, argmax/argmin, var/std with correction, norm, cumsum, sort, topk) and the
 * linear-algebra, join and gather ops (matmul, mm, bmm, addmm, outer, dot, cat, stack,
 * index_select, gather, scatter, masked_select, nonzero, one_hot).
 *
 * dims == NULL with ndims == 0 means "all dims", as PyTorch's dim=None. A dtype of -1 leaves
 * libtorch's default accumulation type (sum of int is int64, for instance).
 */
#include "lt_internal.hpp"

#include <ATen/ops/addmm.h>
#include <ATen/ops/all.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/any.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/argmin.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/dot.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/min.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/norm.h>
#include <ATen/ops/one_hot.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/std.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/var.h>
#include <torch/csrc/api/include/torch/version.h>

#include <algorithm>
#include <vector>

namespace {

c10::optional<c10::ScalarType> maybe_dtype(int dtype) {
  if (dtype < 0) return c10::nullopt;
  return lt::scalar_type(dtype);
}

/* all/any take a single dim in libtorch 1.13: reduce one dim at a time. */
at::Tensor logical_reduce(bool is_all, const at::Tensor &t, at::IntArrayRef dims, bool keepdim) {
  if (dims.empty()) return is_all ? t.all() : t.any();
  std::vector<int64_t> sorted(dims.begin(), dims.end());
  for (auto &d : sorted) d = c10::maybe_wrap_dim(d, t.dim());
  std::sort(sorted.rbegin(), sorted.rend());
  at::Tensor r = t;
  for (int64_t d : sorted) r = is_all ? r.all(d, keepdim) : r.any(d, keepdim);
  return r;
}

at::Tensor reduce(int op, const at::Tensor &t, at::IntArrayRef dims, bool keepdim, c10::optional<c10::ScalarType> dtype) {
  bool all_dims = dims.empty();
  switch (op) {
    case LT_SUM: return all_dims ? t.sum(dtype) : t.sum(dims, keepdim, dtype);
    case LT_MEAN: return all_dims ? t.mean(dtype) : t.mean(dims, keepdim, dtype);
    case LT_PROD:
      if (all_dims) return t.prod(dtype);
      if (dims.size() != 1) throw lt::ValueError("prod: reduces one dim at a time, got " + std::to_string(dims.size()));
      return t.prod(dims[0], keepdim, dtype);
    case LT_AMAX: return at::amax(t, dims, keepdim);
    case LT_AMIN: return at::amin(t, dims, keepdim);
    case LT_ALL: return logical_reduce(true, t, dims, keepdim);
    case LT_ANY: return logical_reduce(false, t, dims, keepdim);
    case LT_LOGSUMEXP: {
      if (all_dims) {
        std::vector<int64_t> every(static_cast<size_t>(t.dim()));
        for (int64_t i = 0; i < t.dim(); ++i) every[static_cast<size_t>(i)] = i;
        return at::logsumexp(t, every, keepdim);
      }
      return at::logsumexp(t, dims, keepdim);
    }
    default: throw lt::ValueError("unknown reduction code " + std::to_string(op));
  }
}

std::vector<at::Tensor> tensor_list(const lt_tensor *const *ts, int n) {
  if (n < 0 || (n > 0 && ts == nullptr)) throw lt::ValueError("expected a list of tensors");
  std::vector<at::Tensor> v;
  v.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v.push_back(lt::get(ts[i]));
  return v;
}

}  // namespace

extern "C" {

int lt_reduce(lt_tensor **out, int op, const lt_tensor *t, const int64_t *dims, int ndims, int keepdim, int dtype) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  at::Tensor r = reduce(op, x, lt::int_list(dims, ndims), keepdim != 0, maybe_dtype(dtype));
  /* dim=None with keepdim=True keeps every dim as size 1, as PyTorch's x.sum(None, True). */
  if (ndims == 0 && keepdim && r.dim() != x.dim()) r = r.reshape(std::vector<int64_t>(static_cast<size_t>(x.dim()), 1));
  *out = lt::wrap(std::move(r));
  LT_CATCH
}

int lt_max_dim(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t dim, int keepdim, int is_min) {
  LT_TRY_OP
  auto r = is_min ? at::min(lt::get(t), dim, keepdim != 0) : at::max(lt::get(t), dim, keepdim != 0);
  *values = lt::wrap(std::get<0>(r));
  *indices = lt::wrap(std::get<1>(r));
  LT_CATCH
}

int lt_argmax(lt_tensor **out, const lt_tensor *t, int has_dim, int64_t dim, int keepdim, int is_min) {
  LT_TRY_OP
  c10::optional<int64_t> d = has_dim ? c10::optional<int64_t>(dim) : c10::nullopt;
  *out = lt::wrap(is_min ? at::argmin(lt::get(t), d, keepdim != 0) : at::argmax(lt::get(t), d, keepdim != 0));
  LT_CATCH
}

int lt_var(lt_tensor **out, const lt_tensor *t, const int64_t *dims, int ndims, double correction, int keepdim,
           int is_std) {
  LT_TRY_OP
  at::OptionalIntArrayRef d = ndims > 0 ? at::OptionalIntArrayRef(lt::int_list(dims, ndims)) : c10::nullopt;
  /* An optional, not a plain int64: a plain one would pick the (dim, bool unbiased) overload and
   * turn correction=2 into unbiased=true. */
#if TORCH_VERSION_MAJOR >= 2
  auto c = c10::optional<at::Scalar>(at::Scalar(correction));   // 2.x: the correction is a Scalar
#else
  auto c = c10::optional<int64_t>(static_cast<int64_t>(correction));
#endif
  *out = lt::wrap(is_std ? at::std(lt::get(t), d, c, keepdim != 0) : at::var(lt::get(t), d, c, keepdim != 0));
  LT_CATCH
}

int lt_norm(lt_tensor **out, const lt_tensor *t, double p, const int64_t *dims, int ndims, int keepdim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  at::Tensor r = ndims > 0 ? at::norm(x, at::Scalar(p), lt::int_list(dims, ndims), keepdim != 0)
                           : at::norm(x, at::Scalar(p));
  if (ndims == 0 && keepdim && r.dim() != x.dim()) r = r.reshape(std::vector<int64_t>(static_cast<size_t>(x.dim()), 1));
  *out = lt::wrap(std::move(r));
  LT_CATCH
}

int lt_cumsum(lt_tensor **out, const lt_tensor *t, int64_t dim) {
  LT_TRY_OP
  *out = lt::wrap(at::cumsum(lt::get(t), dim));
  LT_CATCH
}

int lt_sort(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t dim, int descending) {
  LT_TRY_OP
  auto r = at::sort(lt::get(t), dim, descending != 0);
  *values = lt::wrap(std::get<0>(r));
  *indices = lt::wrap(std::get<1>(r));
  LT_CATCH
}

int lt_topk(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t k, int64_t dim, int largest,
            int sorted) {
  LT_TRY_OP
  auto r = at::topk(lt::get(t), k, dim, largest != 0, sorted != 0);
  *values = lt::wrap(std::get<0>(r));
  *indices = lt::wrap(std::get<1>(r));
  LT_CATCH
}

int lt_matmul(lt_tensor **out, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(a), &y = lt::get(b);
  lt::PlainOp plain_op(lt::plain(x) && lt::plain(y));
  *out = lt::wrap(at::matmul(x, y));
  LT_CATCH
}

int lt_mm(lt_tensor **out, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(a), &y = lt::get(b);
  lt::PlainOp plain_op(lt::plain(x) && lt::plain(y));
  *out = lt::wrap(at::mm(x, y));
  LT_CATCH
}

int lt_bmm(lt_tensor **out, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  *out = lt::wrap(at::bmm(lt::get(a), lt::get(b)));
  LT_CATCH
}

int lt_addmm(lt_tensor **out, const lt_tensor *bias, const lt_tensor *a, const lt_tensor *b, double beta,
             double alpha) {
  LT_TRY_OP
  *out = lt::wrap(at::addmm(lt::get(bias), lt::get(a), lt::get(b), beta, alpha));
  LT_CATCH
}

int lt_linear(lt_tensor **out, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(input), &w = lt::get(weight);
  c10::optional<at::Tensor> b;
  if (bias != nullptr) b = lt::get(bias);
  lt::PlainOp plain_op(lt::plain(x) && lt::plain(w) && (!b || lt::plain(*b)));
  *out = lt::wrap(at::linear(x, w, b));
  LT_CATCH
}

int lt_outer(lt_tensor **out, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  *out = lt::wrap(at::outer(lt::get(a), lt::get(b)));
  LT_CATCH
}

int lt_dot(lt_tensor **out, const lt_tensor *a, const lt_tensor *b) {
  LT_TRY_OP
  *out = lt::wrap(at::dot(lt::get(a), lt::get(b)));
  LT_CATCH
}

int lt_cat(lt_tensor **out, const lt_tensor *const *ts, int n, int64_t dim) {
  LT_TRY_OP
  *out = lt::wrap(at::cat(tensor_list(ts, n), dim));
  LT_CATCH
}

int lt_stack(lt_tensor **out, const lt_tensor *const *ts, int n, int64_t dim) {
  LT_TRY_OP
  *out = lt::wrap(at::stack(tensor_list(ts, n), dim));
  LT_CATCH
}

int lt_index_select(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index) {
  LT_TRY_OP
  *out = lt::wrap(at::index_select(lt::get(t), dim, lt::get(index)));
  LT_CATCH
}

int lt_gather(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index) {
  LT_TRY_OP
  *out = lt::wrap(at::gather(lt::get(t), dim, lt::get(index)));
  LT_CATCH
}

int lt_scatter(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index, const lt_tensor *src) {
  LT_TRY_OP
  *out = lt::wrap(at::scatter(lt::get(t), dim, lt::get(index), lt::get(src)));
  LT_CATCH
}

int lt_masked_select(lt_tensor **out, const lt_tensor *t, const lt_tensor *mask) {
  LT_TRY_OP
  *out = lt::wrap(at::masked_select(lt::get(t), lt::get(mask)));
  LT_CATCH
}

int lt_nonzero(lt_tensor **out, const lt_tensor *t) {
  LT_TRY_OP
  *out = lt::wrap(at::nonzero(lt::get(t)));
  LT_CATCH
}

int lt_one_hot(lt_tensor **out, const lt_tensor *t, int64_t num_classes) {
  LT_TRY_OP
  *out = lt::wrap(at::one_hot(lt::get(t), num_classes));
  LT_CATCH
}

}  // extern "C"
