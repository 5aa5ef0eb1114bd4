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
#include <c10/core/DispatchKeySet.h>
#include <c10/core/TensorOptions.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Optional.h>
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

/* "this libtorch build (1.13.0)": how error messages name the library ltorch was built against. */
std::string build_name();

/* Registers the shape-only kernels PyTorch gives the meta device from Python (lt_meta_kernels.cpp). */
void install_meta_kernels();

/* Adds a non-CPU result's fresh storage to lt_memory()->device_bytes_made, once; a shared
   TensorImpl or a storage already counted in this window adds nothing (lt_allocator.cpp). */
void note_device_result(const at::Tensor &t) noexcept;
/* Counts a result that requires grad in lt_memory()->graph_results when it is no leaf, i.e.
   carries an autograd node (lt_allocator.cpp). */
void note_grad_result(const at::Tensor &t) noexcept;

inline lt_tensor *wrap(at::Tensor t) {
  if (!t.defined()) return nullptr;
  if (!t.is_cpu()) note_device_result(t);
  if (t.requires_grad()) note_grad_result(t);
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

/* True when t carries no autograd metadata: it does not require grad, has no grad_fn, is not a
   tracked view and has no forward-mode gradient. */
inline bool plain(const at::Tensor &t) { return t.unsafeGetTensorImpl()->autograd_meta() == nullptr; }

/* PlainOp: scope guard for an out-of-place op that makes a fresh result (elementwise math,
   matmul). When none of its inputs has autograd metadata, the op can record no history and
   needs no version-counter or view bookkeeping, so the Autograd and ADInplaceOrView dispatch
   keys are skipped for its duration: the kernel libtorch runs and the result are the same, minus
   the autograd wrapper's checks (docs/PERFORMANCE.md, optimisation 4). Never use it for
   in-place ops (they must bump version counters of tensors saved for backward) or for views
   (they must share the base's version counter and carry view metadata). */
class PlainOp {
 public:
  explicit PlainOp(bool inputs_plain) {
    if (inputs_plain) guard_.emplace(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
  }

 private:
  c10::optional<c10::impl::ExcludeDispatchKeyGuard> guard_;
};

/* PlainView: the same for a view op (or an op that makes a fresh result) of one input without
   autograd metadata, skipping the Autograd keys only. For such an input Autograd's kernel of a
   view op records nothing and only redispatches; ADInplaceOrView, which makes the result a view
   of the input (its base, the shared version counter, the creation meta), still runs, so the
   result is the one libtorch makes without the guard (docs/PERFORMANCE.md, optimisation 20).
   Not for in-place ops: another argument may require grad and give the written tensor history. */
class PlainView {
 public:
  explicit PlainView(bool input_plain) {
    if (input_plain) guard_.emplace(c10::autograd_dispatch_keyset);
  }

 private:
  c10::optional<c10::impl::ExcludeDispatchKeyGuard> guard_;
};

c10::ScalarType scalar_type(int code);
c10::Device device(int device_type, int device_index);
at::TensorOptions options(const lt_options *opt);
/* Applies the parts of lt_options that ATen factories do not take (requires_grad), and pins a
   tensor asked pinned that its factory did not allocate so. */
at::Tensor finish(at::Tensor t, const lt_options *opt);

/* The CPU allocator's block caches (small and large blocks): on unless
 * LTORCH_MALLOC=glibc or a sanitizer build (lt_allocator.cpp). */
bool block_caches_enabled();

constexpr size_t kBlockHeaderBytes = 64;  // the CPU allocator's header in front of each block

/* Tensor blocks of up to kSmallBlockBytes, header included (lt_small_blocks.cpp): per-thread
 * free lists by 64-byte class. small_block_take returns nullptr when malloc fails. */
constexpr size_t kSmallBlockGrain = 64;
constexpr size_t kSmallBlockBytes = 1024;
void *small_block_take(size_t bytes, uint32_t *size_class);
void small_block_give(void *block, uint32_t size_class);

/* Tensor blocks of kLargeBlockBytes and more (lt_large_blocks.cpp): mapped apart from the malloc
 * heap in size classes and cached for reuse: one of the two blocks freed last when it fits (up to
 * twice the request), else the smallest of the request's class or the next two.
 * large_block_take returns nullptr when mmap fails.
 * 32 KiB: a training step's activations and gradients of 32–128 KiB (a 64 x 256 float layer is
 * 64 KiB) taken from the malloc heap landed where glibc split and unlinked fragmented chunks,
 * out of the cache (docs/PERFORMANCE.md, optimisation 32). */
constexpr size_t kLargeBlockBytes = 32 * 1024;
size_t large_block_mapped_size(size_t bytes);
void *large_block_take(size_t wanted, size_t *mapped);  // *mapped: the block's size (>= wanted)
void large_block_give(void *block, size_t mapped);

/* This thread has a pending interrupt request (lt_interrupt.cpp): long waits poll it. */
bool interrupt_requested();
/* Takes this thread's pending interrupt request, if any (lt_interrupt.cpp). */
bool interrupt_take_here();
/* Records "interrupted!" (LT_ERR_RUNTIME) and returns its status. */
int fail_interrupted() noexcept;

}  // namespace lt

#define LT_TRY try {
/* LT_TRY for a compute op (math, reductions, views, nn, the boxed dispatcher's call): a pending
 * interrupt request of this thread (lt_interrupt.cpp) fails the op with "interrupted!" before it
 * runs, and is taken (one raise, not two). A Lua loop of tensor ops that LuaJIT compiled into
 * one trace never returns to the interpreter, where the interrupt hook runs; this is how Ctrl-C
 * and ltorch_interrupt reach it. State setters (grad mode, autocast) and frees keep LT_TRY: a
 * restore must never be refused. */
#define LT_TRY_OP                                              \
  if (lt::interrupt_take_here()) return lt::fail_interrupted(); \
  try {
#define LT_CATCH                              \
  }                                           \
  catch (...) {                               \
    return lt::fail_current_exception();      \
  }                                           \
  return LT_OK;
