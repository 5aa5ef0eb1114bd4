/*
 * lt_tensor.cpp — tensor handles: freeing, metadata (sizes, strides, dtype, device), reading
 * values out (item, bulk copy into a caller's buffer), creation (factories, from caller data,
 * wrapping foreign memory without a copy) and conversions/copies (to, clone, copy_, detach).
 *
 * Shapes: sizes/strides arrays are int64, row-major, length ndim. lt_tensor_sizes() writes at
 * most `capacity` entries and always reports the true ndim, so a caller can retry bigger.
 */
#include "lt_internal.hpp"

#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randperm.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace lt {
void queue_released_blob(int64_t id);
}

namespace {

void write_list(at::IntArrayRef values, int64_t *dst, int capacity, int64_t *ndim) {
  *ndim = static_cast<int64_t>(values.size());
  for (size_t i = 0; i < values.size() && static_cast<int>(i) < capacity; ++i) dst[i] = values[i];
}

void check_sizes(const int64_t *sizes, int ndim) {
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] < 0)
      throw lt::ValueError("negative dimension " + std::to_string(sizes[i]) + " at position " + std::to_string(i));
}

}  // namespace

extern "C" {

void lt_tensor_free(lt_tensor *t) { delete t; }

int lt_tensor_shallow_copy(lt_tensor **out, const lt_tensor *t) {
  LT_TRY
  *out = lt::wrap(lt::get(t));
  LT_CATCH
}

int lt_tensor_dim(const lt_tensor *t, int64_t *out) {
  LT_TRY
  *out = lt::get(t).dim();
  LT_CATCH
}

int lt_tensor_sizes(const lt_tensor *t, int64_t *sizes, int capacity, int64_t *ndim) {
  LT_TRY
  write_list(lt::get(t).sizes(), sizes, capacity, ndim);
  LT_CATCH
}

int lt_tensor_strides(const lt_tensor *t, int64_t *strides, int capacity, int64_t *ndim) {
  LT_TRY
  write_list(lt::get(t).strides(), strides, capacity, ndim);
  LT_CATCH
}

int lt_tensor_numel(const lt_tensor *t, int64_t *out) {
  LT_TRY
  *out = lt::get(t).numel();
  LT_CATCH
}

int lt_tensor_dtype(const lt_tensor *t, int *out) {
  LT_TRY
  *out = static_cast<int>(lt::get(t).scalar_type());
  LT_CATCH
}

int lt_tensor_device(const lt_tensor *t, int *device_type, int *device_index) {
  LT_TRY
  c10::Device d = lt::get(t).device();
  *device_type = static_cast<int>(d.type());
  *device_index = d.index();
  LT_CATCH
}

int lt_tensor_is_contiguous(const lt_tensor *t, int *out) {
  LT_TRY
  *out = lt::get(t).is_contiguous() ? 1 : 0;
  LT_CATCH
}

int lt_tensor_storage_offset(const lt_tensor *t, int64_t *out) {
  LT_TRY
  *out = lt::get(t).storage_offset();
  LT_CATCH
}

int lt_tensor_data_ptr(const lt_tensor *t, void **out) {
  LT_TRY
  *out = lt::get(t).data_ptr();
  LT_CATCH
}

int lt_tensor_nbytes(const lt_tensor *t, int64_t *out) {
  LT_TRY
  *out = static_cast<int64_t>(lt::get(t).nbytes());
  LT_CATCH
}

int lt_tensor_same(const lt_tensor *a, const lt_tensor *b, int *out) {
  LT_TRY
  *out = lt::get(a).is_same(lt::get(b)) ? 1 : 0;
  LT_CATCH
}

int lt_tensor_item_double(const lt_tensor *t, double *out) {
  LT_TRY
  *out = lt::get(t).item().toDouble();
  if (std::isnan(*out)) *out = std::numeric_limits<double>::quiet_NaN();  // see copy_to_buffer
  LT_CATCH
}

int lt_tensor_item_int64(const lt_tensor *t, int64_t *out) {
  LT_TRY
  *out = lt::get(t).item().toLong();
  LT_CATCH
}

int lt_tensor_copy_to_buffer(const lt_tensor *t, int dtype, void *buf, int64_t numel) {
  LT_TRY
  const at::Tensor &src = lt::get(t);
  c10::ScalarType st = lt::scalar_type(dtype);
  if (st != c10::ScalarType::Double && st != c10::ScalarType::Long)
    throw lt::ValueError("copy_to_buffer: only float64 or int64 buffers are supported");
  if (numel != src.numel())
    throw lt::ValueError("copy_to_buffer: buffer holds " + std::to_string(numel) + " elements, tensor has " +
                         std::to_string(src.numel()));
  if (src._is_zerotensor()) {
    // An efficient zero tensor (autograd's gradient of sgn on a real input, ...) has no storage:
    // its values are zeros, as PyTorch prints them (the bit pattern of 0.0 and of 0 is all zeros).
    if (numel > 0) std::memset(buf, 0, static_cast<size_t>(numel) * c10::elementSize(st));
    return LT_OK;
  }
  at::Tensor host = src.detach().to(c10::Device(c10::DeviceType::CPU), st).contiguous();
  // An empty tensor's data_ptr() is NULL, and memcpy from NULL is undefined even for 0 bytes
  // (UBSan, scripts/sanitize.sh).
  if (numel > 0) std::memcpy(buf, host.data_ptr(), static_cast<size_t>(numel) * c10::elementSize(st));
  if (st == c10::ScalarType::Double) {
    // LuaJIT reads a NaN with its top bits set (a float32 all-ones NaN widens to
    // 0xFFFFFFFFE0000000) as a tagged non-number (nil): hand Lua the canonical quiet NaN.
    double *d = static_cast<double *>(buf);
    for (int64_t i = 0; i < numel; ++i)
      if (std::isnan(d[i])) d[i] = std::numeric_limits<double>::quiet_NaN();
  }
  LT_CATCH
}

int lt_empty(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::empty(lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_zeros(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::zeros(lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_ones(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::ones(lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_full(lt_tensor **out, const int64_t *sizes, int ndim, double value, int kind, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::full(lt::int_list(sizes, ndim), lt::scalar(value, kind), lt::options(opt)), opt));
  LT_CATCH
}

int lt_rand(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::rand(lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_randn(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::randn(lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_randint(lt_tensor **out, int64_t low, int64_t high, const int64_t *sizes, int ndim, const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  *out = lt::wrap(lt::finish(at::randint(low, high, lt::int_list(sizes, ndim), lt::options(opt)), opt));
  LT_CATCH
}

int lt_randperm(lt_tensor **out, int64_t n, const lt_options *opt) {
  LT_TRY
  *out = lt::wrap(lt::finish(at::randperm(n, lt::options(opt)), opt));
  LT_CATCH
}

int lt_eye(lt_tensor **out, int64_t n, int64_t m, const lt_options *opt) {
  LT_TRY
  *out = lt::wrap(lt::finish(at::eye(n, m, lt::options(opt)), opt));
  LT_CATCH
}

int lt_arange(lt_tensor **out, double start, double end, double step, const lt_options *opt) {
  LT_TRY
  at::TensorOptions o = lt::options(opt);
  at::Tensor r = c10::isIntegralType(o.dtype().toScalarType(), /*includeBool=*/false)
                     ? at::arange(static_cast<int64_t>(start), static_cast<int64_t>(end), static_cast<int64_t>(step), o)
                     : at::arange(start, end, step, o);
  *out = lt::wrap(lt::finish(r, opt));
  LT_CATCH
}

int lt_linspace(lt_tensor **out, double start, double end, int64_t steps, const lt_options *opt) {
  LT_TRY
  *out = lt::wrap(lt::finish(at::linspace(start, end, steps, lt::options(opt)), opt));
  LT_CATCH
}

int lt_scalar_tensor(lt_tensor **out, double value, int kind, const lt_options *opt) {
  LT_TRY
  *out = lt::wrap(lt::finish(at::scalar_tensor(lt::scalar(value, kind), lt::options(opt)), opt));
  LT_CATCH
}

int lt_from_data(lt_tensor **out, const void *data, int src_dtype, const int64_t *sizes, int ndim,
                 const lt_options *opt) {
  LT_TRY
  check_sizes(sizes, ndim);
  at::Tensor view = at::from_blob(const_cast<void *>(data), lt::int_list(sizes, ndim),
                                  at::TensorOptions().dtype(lt::scalar_type(src_dtype)));
  at::TensorOptions o = lt::options(opt);
  at::Tensor r = view.to(o.device(), o.dtype().toScalarType(), /*non_blocking=*/false, /*copy=*/true);
  *out = lt::wrap(lt::finish(r, opt));
  LT_CATCH
}

int lt_from_blob(lt_tensor **out, void *data, const int64_t *sizes, int ndim, const int64_t *strides,
                 int dtype, int64_t release_id) {
  LT_TRY
  check_sizes(sizes, ndim);
  if (data == nullptr) throw lt::ValueError("from_buffer: NULL data pointer");
  auto opts = at::TensorOptions().dtype(lt::scalar_type(dtype));
  std::function<void(void *)> on_release = [release_id](void *) {
    if (release_id > 0) lt::queue_released_blob(release_id);
  };
  at::Tensor r = strides != nullptr
                     ? at::from_blob(data, lt::int_list(sizes, ndim), lt::int_list(strides, ndim), on_release, opts)
                     : at::from_blob(data, lt::int_list(sizes, ndim), on_release, opts);
  *out = lt::wrap(r);
  LT_CATCH
}

int lt_to(lt_tensor **out, const lt_tensor *t, int dtype, int device_type, int device_index, int non_blocking,
          int copy) {
  LT_TRY
  const at::Tensor &src = lt::get(t);
  c10::ScalarType st = dtype < 0 ? src.scalar_type() : lt::scalar_type(dtype);
  c10::Device d = device_type < 0 ? src.device() : lt::device(device_type, device_index);
  *out = lt::wrap(src.to(d, st, non_blocking != 0, copy != 0));
  LT_CATCH
}

int lt_clone(lt_tensor **out, const lt_tensor *t) {
  LT_TRY
  *out = lt::wrap(lt::get(t).clone());
  LT_CATCH
}

int lt_contiguous(lt_tensor **out, const lt_tensor *t) {
  LT_TRY
  *out = lt::wrap(lt::get(t).contiguous());
  LT_CATCH
}

int lt_copy_(lt_tensor *dst, const lt_tensor *src) {
  LT_TRY
  lt::get_mut(dst).copy_(lt::get(src));
  LT_CATCH
}

int lt_detach(lt_tensor **out, const lt_tensor *t) {
  LT_TRY
  *out = lt::wrap(lt::get(t).detach());
  LT_CATCH
}

int lt_fill_(lt_tensor *t, double value, int kind) {
  LT_TRY
  lt::get_mut(t).fill_(lt::scalar(value, kind));
  LT_CATCH
}

int lt_zero_(lt_tensor *t) {
  LT_TRY
  lt::get_mut(t).zero_();
  LT_CATCH
}

}  // extern "C"
