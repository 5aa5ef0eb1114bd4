/*
 * lt_embed.cpp — the two bindings the embedding API (runtime/embed*.c) needs beyond the rest:
 * wrapping host memory with a C release callback, and process-unique state serials.
 *
 * Why: a host application hands ltorch a buffer it owns and must learn when libtorch is done
 * with it, whichever thread drops the last reference and whether or not any Lua state is still
 * running; libtorch's own DataPtr deleter is the only place that knows, so the callback is
 * called from there. Lua's torch.from_buffer uses a different route (release ids drained by
 * its state); its ids must not collide between Lua states in one process, so each state takes
 * a serial from lt_next_state_serial() and numbers its ids above serial * 2^32.
 *
 * What:
 *   lt_from_blob_release(out, data, sizes, ndim, dtype, release, ctx): a contiguous CPU tensor
 *     over data; release(data, ctx) runs exactly once, when the last tensor using the memory is
 *     gone. On failure release is never called and the memory stays the caller's.
 *   lt_next_state_serial(): 1, 2, 3, ... (atomic, process-wide).
 *
 * How: see runtime/embed_tensor.c (the host side) and lua/torch/_C.lua (the serial).
 */
#include "lt_internal.hpp"

#include <ATen/ops/from_blob.h>

#include <atomic>
#include <functional>
#include <memory>

namespace {

struct release_cb {
  void (*fn)(void *, void *);
  void *data;
  void *ctx;
  std::atomic<bool> armed{false};  // set once the tensor exists: failures never call back
};

std::atomic<int64_t> g_state_serial{0};

}  // namespace

extern "C" {

int lt_from_blob_release(lt_tensor **out, void *data, const int64_t *sizes, int ndim, int dtype,
                         void (*release)(void *data, void *ctx), void *ctx) {
  LT_TRY
  if (data == nullptr) throw lt::ValueError("from_buffer: NULL data pointer");
  if (ndim < 0 || (ndim > 0 && sizes == nullptr)) throw lt::ValueError("from_buffer: bad shape");
  for (int i = 0; i < ndim; i++)
    if (sizes[i] < 0) throw lt::ValueError("from_buffer: negative size " + std::to_string(sizes[i]));
  auto cb = std::make_shared<release_cb>();
  cb->fn = release;
  cb->data = data;
  cb->ctx = ctx;
  std::function<void(void *)> deleter = [cb](void *) {
    if (cb->fn != nullptr && cb->armed.exchange(false)) cb->fn(cb->data, cb->ctx);
  };
  at::Tensor r = at::from_blob(data, lt::int_list(sizes, ndim), deleter,
                               at::TensorOptions().dtype(lt::scalar_type(dtype)));
  lt_tensor *h = lt::wrap(r);  // may throw bad_alloc: r (and the unarmed deleter) go quietly
  cb->armed = true;
  *out = h;
  LT_CATCH
}

int64_t lt_next_state_serial(void) { return ++g_state_serial; }

}  // extern "C"
