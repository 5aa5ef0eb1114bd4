/*
 * lt_internal.hpp — what every bindings/ source file shares: the handle struct, the one
 * try/catch pair that turns any C++ exception into a status plus a per-thread message, and the
 * small converters from C ABI arguments (option structs, scalar kinds, int64 arrays) to ATen's.
 *
 * Usage, in every exported function:
 *     int lt_foo(lt_tensor **out, const lt_tensor *t) {
 *       LT_TRY
 *       *out = lt::wrap(at::foo(lt::get(t)));
 *       LT_CATCH
 *     }
 * Only bindings/ includes libtorch headers; keep includes narrow (ATen/ops/<op>.h) to keep
 * compile times down on small machines.
 */
#pragma once

#include "lt.h"

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>

#include <stdexcept>
#include <string>

struct lt_tensor {
  at::Tensor t;
};

namespace lt {

/* Raised for a NULL handle: the Lua side nulls a handle when the user frees a tensor early. */
struct FreedError : std::runtime_error {
  FreedError() : std::runtime_error("tensor was freed (x:free() or a finished torch.scope) and can no longer be used") {}
};

/* A plain misuse detected by the bindings themselves. */
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void set_error(int kind, const std::string &message);
/* Call inside catch (...): classifies the in-flight exception, records it, returns its status. */
int fail_current_exception() noexcept;

inline lt_tensor *wrap(at::Tensor t) {
  if (!t.defined()) return nullptr;
  return new lt_tensor{std::move(t)};
}

inline const at::Tensor &get(const lt_tensor *h) {
  if (h == nullptr || !h->t.defined()) throw FreedError();
  return h->t;
}

inline at::Tensor &get_mut(lt_tensor *h) {
  if (h == nullptr || !h->t.defined()) throw FreedError();
  return h->t;
}

inline at::Scalar scalar(double value, int kind) {
  switch (kind) {
    case LT_SCALAR_INT: return at::Scalar(static_cast<int64_t>(value));
    case LT_SCALAR_BOOL: return at::Scalar(value != 0.0);
    default: return at::Scalar(value);
  }
}

inline at::IntArrayRef int_list(const int64_t *values, int n) {
  if (n < 0) throw ValueError("negative length for an integer list");
  return at::IntArrayRef(values, static_cast<size_t>(n));
}

c10::ScalarType scalar_type(int code);
c10::Device device(int device_type, int device_index);
at::TensorOptions options(const lt_options *opt);
/* Applies the parts of lt_options that ATen factories do not take (requires_grad). */
at::Tensor finish(at::Tensor t, const lt_options *opt);

}  // namespace lt

#define LT_TRY try {
#define LT_CATCH                              \
  }                                           \
  catch (...) {                               \
    return lt::fail_current_exception();      \
  }                                           \
  return LT_OK;
