/*
 * lt_views.cpp — views and indexing: view/reshape/expand/permute/transpose/t/squeeze/unsqueeze/
 * narrow/select/flatten, and PyTorch's x[...] read and write through at::indexing.
 *
 * Indexing items (lt_index) mirror Python's subscript grammar one to one: an int selects and
 * drops a dim, a slice keeps it (stop exclusive, negative bounds count from the end), None adds
 * an axis, Ellipsis fills the remaining dims, a bool tensor masks, an integer tensor gathers.
 *
 * Every op here reads one tensor (index tensors are integer or bool: they cannot require grad),
 * so an input without autograd metadata runs under lt::PlainView: the Autograd kernel, which
 * would only redispatch, is skipped; the view is made as libtorch makes it.
 */
#include "lt_internal.hpp"

#include <ATen/TensorIndexing.h>
#include <ATen/ops/flatten.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_put.h>

#include <vector>

namespace {

std::vector<at::indexing::TensorIndex> to_indices(const lt_index *items, int n) {
  using namespace at::indexing;
  if (n < 0 || (n > 0 && items == nullptr)) throw lt::ValueError("index: bad index list");
  std::vector<TensorIndex> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const lt_index &it = items[i];
    switch (it.kind) {
      case LT_INDEX_INT: out.emplace_back(it.start); break;
      case LT_INDEX_SLICE: {
        if (it.step <= 0) throw lt::ValueError("index: slice step must be positive, got " + std::to_string(it.step));
        c10::optional<int64_t> start = it.has_start ? c10::optional<int64_t>(it.start) : c10::nullopt;
        c10::optional<int64_t> stop = it.has_stop ? c10::optional<int64_t>(it.stop) : c10::nullopt;
        out.emplace_back(Slice(start, stop, it.step));
        break;
      }
      case LT_INDEX_NONE: out.emplace_back(None); break;
      case LT_INDEX_ELLIPSIS: out.emplace_back(Ellipsis); break;
      case LT_INDEX_TENSOR: out.emplace_back(lt::get(it.tensor)); break;
      case LT_INDEX_BOOL: out.emplace_back(it.start != 0); break;
      default: throw lt::ValueError("index: unknown index kind " + std::to_string(it.kind));
    }
  }
  return out;
}

}  // namespace

extern "C" {

int lt_view(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.view(lt::int_list(sizes, ndim)));
  LT_CATCH
}

int lt_reshape(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.reshape(lt::int_list(sizes, ndim)));
  LT_CATCH
}

int lt_expand(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.expand(lt::int_list(sizes, ndim)));
  LT_CATCH
}

int lt_permute(lt_tensor **out, const lt_tensor *t, const int64_t *dims, int ndim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.permute(lt::int_list(dims, ndim)));
  LT_CATCH
}

int lt_transpose(lt_tensor **out, const lt_tensor *t, int64_t dim0, int64_t dim1) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.transpose(dim0, dim1));
  LT_CATCH
}

int lt_t(lt_tensor **out, const lt_tensor *t) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.t());
  LT_CATCH
}

int lt_squeeze(lt_tensor **out, const lt_tensor *t, int has_dim, int64_t dim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(has_dim ? x.squeeze(dim) : x.squeeze());
  LT_CATCH
}

int lt_unsqueeze(lt_tensor **out, const lt_tensor *t, int64_t dim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.unsqueeze(dim));
  LT_CATCH
}

int lt_narrow(lt_tensor **out, const lt_tensor *t, int64_t dim, int64_t start, int64_t length) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.narrow(dim, start, length));
  LT_CATCH
}

int lt_select(lt_tensor **out, const lt_tensor *t, int64_t dim, int64_t index) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.select(dim, index));
  LT_CATCH
}

int lt_flatten(lt_tensor **out, const lt_tensor *t, int64_t start_dim, int64_t end_dim) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(at::flatten(x, start_dim, end_dim));
  LT_CATCH
}

int lt_index_get(lt_tensor **out, const lt_tensor *t, const lt_index *items, int n) {
  LT_TRY_OP
  const at::Tensor &x = lt::get(t);
  lt::PlainView plain_view(lt::plain(x));
  *out = lt::wrap(x.index(to_indices(items, n)));
  LT_CATCH
}

int lt_index_put_(lt_tensor *t, const lt_index *items, int n, const lt_tensor *value) {
  LT_TRY_OP
  lt::get_mut(t).index_put_(to_indices(items, n), lt::get(value));
  LT_CATCH
}

int lt_index_put_scalar_(lt_tensor *t, const lt_index *items, int n, double value, int kind) {
  LT_TRY_OP
  lt::get_mut(t).index_put_(to_indices(items, n), lt::scalar(value, kind));
  LT_CATCH
}

}  // extern "C"
