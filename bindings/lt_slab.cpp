/*
 * lt_slab.cpp — the slab of tensor handles that a Lua state's wraps fill and its sweeps empty
 * (lua/torch/_memory.lua describes the scheme; lt.h, struct lt_slab, the layout).
 *
 * Why in C: the sweep must look at every slot's handle, and in LuaJIT's interpreter reading a
 * pointer out of an FFI array boxes it — an allocation, which can run a collection step and
 * finalizers that make or free tensors in the middle of the sweep. A sweep (and the lowering of
 * `top` after a burst of tensors died) written in Lua therefore worked on counts that went stale
 * under it; and a pointer read out of the struct can go stale the same way (a finalizer's wrap
 * grows the arrays). Here every read and change of the arrays is one C call that never runs Lua;
 * Lua reads only the counts.
 *
 * What it does: claim (pop the free stack, or take top + 1, growing the arrays by doubling),
 * store (the claimed slot's handle, then release a few queued handles), mark_dead, release
 * (x:free()), sweep (release the handles of the dead slots and the queue; lower top to the
 * highest used slot; rebuild the free stack lowest-slot-last so the slab refills from the
 * bottom; move arrays four or more times bigger than what they hold to smaller ones),
 * sweep_later (the same, the dead slots' handles queued), drain (release the queue), close (at
 * lua_close), check (the invariants, for tests).
 *
 * Why a release queue: a sweep after a collection cycle finds the results of the ~2,000 ops
 * since the last one dead. Released in one batch, their memory (TensorImpl, storage, data block,
 * handle: ~8 cache lines each) went back to malloc's and the block caches' lists all at once,
 * more than glibc's per-size cache holds (the rest took its slower binned path), and the next
 * ops' allocations then came from memory last touched a batch ago, out of the L1 cache. Released
 * one per new result instead, each op's allocations reuse what was freed just before (in cache,
 * and within glibc's per-size cache): bench/op_cost.sh, docs/PERFORMANCE.md optimisation 19.
 * Out of memory: claim returns 0 and the slab is unchanged; a failed shrink keeps the arrays; a
 * queue that cannot grow releases at once.
 */
#include "lt.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

lt_tensor *const kClaimed = reinterpret_cast<lt_tensor *>(static_cast<uintptr_t>(1));
constexpr int32_t kMinCapacity = 1024;

// Moves the three arrays to `capacity` slots (1-based, so capacity + 1 entries each); the slots
// up to top keep their contents. False, and nothing changed, when memory runs out.
bool resize(lt_slab *slab, int32_t capacity) {
  size_t n = static_cast<size_t>(capacity) + 1;
  auto *handles = static_cast<lt_tensor **>(std::calloc(n, sizeof(lt_tensor *)));
  auto *dead = static_cast<uint8_t *>(std::calloc(n, 1));
  auto *free_slots = static_cast<int32_t *>(std::malloc(n * sizeof(int32_t)));
  if (!handles || !dead || !free_slots) {
    std::free(handles);
    std::free(dead);
    std::free(free_slots);
    return false;
  }
  if (slab->handles) {
    size_t kept = static_cast<size_t>(slab->top) + 1;
    std::memcpy(handles, slab->handles, kept * sizeof(lt_tensor *));
    std::memcpy(dead, slab->dead, kept);
    std::memcpy(free_slots, slab->free_slots, static_cast<size_t>(slab->nfree) * sizeof(int32_t));
  }
  std::free(slab->handles);
  std::free(slab->dead);
  std::free(slab->free_slots);
  slab->handles = handles;
  slab->dead = dead;
  slab->free_slots = free_slots;
  slab->capacity = capacity;
  return true;
}

}  // namespace

extern "C" int32_t lt_slab_claim(lt_slab *slab) {
  int32_t slot;
  if (slab->nfree > 0) {
    slot = slab->free_slots[--slab->nfree];
  } else {
    if (slab->top >= slab->capacity) {
      if (slab->capacity > INT32_MAX / 2) return 0;   // a billion live tensors: no int32 slot left
      if (!resize(slab, slab->capacity < kMinCapacity ? kMinCapacity : slab->capacity * 2)) return 0;
    }
    slot = ++slab->top;
  }
  slab->handles[slot] = kClaimed;
  slab->dead[slot] = 0;
  return slot;
}

extern "C" void lt_slab_store(lt_slab *slab, int32_t slot, lt_tensor *handle) {
  if (slot > 0 && slot <= slab->top && slab->handles[slot] == kClaimed) slab->handles[slot] = handle;
  if (slab->nqueued > 0) {
    lt_tensor_free(slab->queue[--slab->nqueued]);
    if (slab->nqueued > LT_SLAB_QUEUE_SOFT) lt_tensor_free(slab->queue[--slab->nqueued]);
  }
}

extern "C" int32_t lt_slab_drain(lt_slab *slab) {
  int32_t released = slab->nqueued;
  while (slab->nqueued > 0) lt_tensor_free(slab->queue[--slab->nqueued]);
  return released;
}

extern "C" void lt_slab_mark_dead(lt_slab *slab, int32_t slot) {
  if (slot > 0 && slot <= slab->top) slab->dead[slot] = 1;
}

extern "C" void lt_slab_release(lt_slab *slab, int32_t slot, lt_tensor *handle) {
  if (slot > 0 && slot <= slab->top && slab->handles[slot] == handle) {
    slab->handles[slot] = nullptr;
    slab->free_slots[slab->nfree++] = slot;   // nfree < top <= capacity: room is always there
  }
  lt_tensor_free(handle);
}

namespace {

// Room in the queue for `more` handles; false (nothing changed) when memory runs out.
bool queue_room(lt_slab *slab, int32_t more) {
  if (slab->queue_capacity - slab->nqueued >= more) return true;
  if (more > INT32_MAX / 2 - slab->nqueued) return false;
  int32_t capacity = slab->queue_capacity < kMinCapacity ? kMinCapacity : slab->queue_capacity;
  while (capacity - slab->nqueued < more) capacity *= 2;
  size_t bytes = static_cast<size_t>(capacity) * sizeof(lt_tensor *);
  auto *queue = static_cast<lt_tensor **>(std::realloc(slab->queue, bytes));
  if (!queue) return false;
  slab->queue = queue;
  slab->queue_capacity = capacity;
  return true;
}

// The sweep of both kinds: the dead slots' handles are released, or queued when `later` (and
// the queue has room for all of them; otherwise they are released).
int32_t sweep(lt_slab *slab, bool later) {
  int32_t swept = 0;
  int32_t top = slab->top;
  if (later && !queue_room(slab, top)) later = false;
  if (!later) {
    swept += lt_slab_drain(slab);
    if (slab->queue_capacity > kMinCapacity && slab->queue_capacity > top) {   // after a burst
      std::free(slab->queue);
      slab->queue = nullptr;
      slab->queue_capacity = 0;
    }
  }
  for (int32_t i = 1; i <= top; i++) {
    if (!slab->dead[i]) continue;
    slab->dead[i] = 0;
    lt_tensor *h = slab->handles[i];
    if (h != nullptr && h != kClaimed) {
      slab->handles[i] = nullptr;
      if (later) {
        slab->queue[slab->nqueued++] = h;
      } else {
        lt_tensor_free(h);
      }
      swept++;
    }
  }
  while (top > 0 && slab->handles[top] == nullptr) top--;
  slab->top = top;
  int32_t nfree = 0;
  for (int32_t i = top; i >= 1; i--) {
    if (slab->handles[i] == nullptr) slab->free_slots[nfree++] = i;
  }
  slab->nfree = nfree;
  int32_t capacity = slab->capacity;
  while (capacity > kMinCapacity && capacity >= 4 * top) capacity /= 2;   // powers of two from 1,024
  if (capacity < slab->capacity) resize(slab, capacity);   // on failure the big arrays stay
  return swept;
}

}  // namespace

extern "C" int32_t lt_slab_sweep(lt_slab *slab) { return sweep(slab, false); }

extern "C" int32_t lt_slab_sweep_later(lt_slab *slab) { return sweep(slab, true); }

extern "C" void lt_slab_close(lt_slab *slab) {
  lt_slab_drain(slab);
  std::free(slab->queue);
  for (int32_t i = 1; i <= slab->top; i++) {
    lt_tensor *h = slab->handles[i];
    if (h != nullptr && h != kClaimed) lt_tensor_free(h);
  }
  std::free(slab->handles);
  std::free(slab->dead);
  std::free(slab->free_slots);
  std::memset(slab, 0, sizeof *slab);
}

extern "C" int lt_slab_check(const lt_slab *slab) {
  if (slab->top < 0 || slab->top > slab->capacity || slab->nfree < 0 || slab->nfree > slab->top) return 1;
  if (slab->nqueued < 0 || slab->nqueued > slab->queue_capacity || (slab->queue_capacity > 0 && !slab->queue)) return 7;
  for (int32_t k = 0; k < slab->nqueued; k++) {
    if (slab->queue[k] == nullptr || slab->queue[k] == kClaimed) return 7;
  }
  if (slab->capacity == 0) return 0;
  auto *on_stack = static_cast<uint8_t *>(std::calloc(static_cast<size_t>(slab->top) + 1, 1));
  if (!on_stack) return 6;
  int status = 0;
  for (int32_t k = 0; k < slab->nfree && status == 0; k++) {
    int32_t slot = slab->free_slots[k];
    if (slot < 1 || slot > slab->top || slab->handles[slot] != nullptr) {
      status = 2;
    } else if (on_stack[slot]) {
      status = 3;
    } else {
      on_stack[slot] = 1;
    }
  }
  for (int32_t i = 1; i <= slab->top && status == 0; i++) {
    if (slab->handles[i] == nullptr && !on_stack[i]) status = 4;
  }
  for (int32_t i = slab->top + 1; i <= slab->capacity && status == 0; i++) {
    if (slab->handles[i] != nullptr) status = 5;
  }
  std::free(on_stack);
  return status;
}
