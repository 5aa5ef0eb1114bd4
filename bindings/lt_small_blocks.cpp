/*
 * lt_small_blocks.cpp — where the CPU allocator (lt_allocator.cpp) gets tensor blocks of up to
 * 1 KiB (its 64-byte header included): per-thread free lists by size class, in front of malloc.
 *
 * Why: libtorch's default CPU allocator takes every block with posix_memalign, which glibc
 * serves by carving an aligned piece out of a bigger chunk and freeing the rest; and ltorch
 * frees tensors in collector batches of ~1,000, far more than glibc's per-thread cache (7 chunks
 * per size) holds, so the rest of each batch went through the bins, with splitting, unlinking
 * and consolidation: a large share of a loop of small ops went to malloc and free. Here a freed
 * block goes on its thread's list for its class and the next block of that class on that thread
 * pops it: a few loads and stores (docs/PERFORMANCE.md, optimisation 11, has the measurements).
 *
 * Policy: classes of 64 bytes (the data alignment libtorch expects), 16 of them; a thread keeps
 * at most 512 KiB per class and 2 MiB in all, the rest goes back to free() at once. A block may
 * be freed by another thread than the one that took it (a worker's batch freed by the main
 * thread): it joins the freeing thread's lists. When a thread exits, its lists go back to
 * free() (a pthread key's destructor); the main thread's stay until the process ends.
 * lt_small_blocks_release() empties the calling thread's lists (torch.collect()).
 * Not pooled: the 8-byte handles (struct lt_tensor; glibc's fast bins serve them as fast) and
 * libtorch's own TensorImpl and StorageImpl (operator new).
 * Off — libtorch's allocator for every block, as before — under LTORCH_MALLOC=glibc and
 * AddressSanitizer (lt::block_caches_enabled()).
 */
#include "lt_internal.hpp"

#include <pthread.h>

#include <cstdint>
#include <cstdlib>

namespace {

constexpr size_t kGrain = lt::kSmallBlockGrain;
constexpr int kClasses = static_cast<int>(lt::kSmallBlockBytes / kGrain);
constexpr size_t kClassCapBytes = 512 * 1024;
constexpr size_t kThreadCapBytes = 2 * 1024 * 1024;

struct FreeBlock {
  FreeBlock *next;
};

/* Zero-initialised and trivially destructible: no TLS constructor runs, and the lists stay
 * readable while the thread's exit destructors run (blocks freed then go straight to free()). */
struct ThreadCache {
  FreeBlock *head[kClasses + 1];   // class k holds blocks of k * kGrain bytes; [0] unused
  uint32_t count[kClasses + 1];
  size_t bytes;
  bool registered;   // the thread-exit drain is set up (or cannot be: then `exiting` is set too)
  bool exiting;      // keep nothing: the thread is exiting
};

thread_local ThreadCache t_cache;

void drain(ThreadCache &c) {
  for (int k = 1; k <= kClasses; ++k) {
    FreeBlock *b = c.head[k];
    while (b != nullptr) {
      FreeBlock *next = b->next;
      std::free(b);
      b = next;
    }
    c.head[k] = nullptr;
    c.count[k] = 0;
  }
  c.bytes = 0;
}

void drain_at_thread_exit(void *cache) {
  auto *c = static_cast<ThreadCache *>(cache);
  drain(*c);
  c->exiting = true;
}

/* On a thread's first kept block: arranges for its lists to be emptied when it exits. */
void register_thread(ThreadCache &c) {
  static pthread_key_t key;
  static const bool key_made = pthread_key_create(&key, &drain_at_thread_exit) == 0;
  c.registered = true;
  if (!key_made || pthread_setspecific(key, &c) != 0) c.exiting = true;   // cannot drain it: keep nothing
}

bool keeps(ThreadCache &c) {
  if (!c.registered) register_thread(c);
  return !c.exiting;
}

}  // namespace

namespace lt {

void *small_block_take(size_t bytes, uint32_t *size_class) {
  uint32_t k = static_cast<uint32_t>((bytes + kGrain - 1) / kGrain);
  *size_class = k;
  ThreadCache &c = t_cache;
  FreeBlock *b = c.head[k];
  if (b != nullptr) {
    c.head[k] = b->next;
    c.count[k] -= 1;
    c.bytes -= k * kGrain;
    return b;
  }
  void *p = nullptr;
  return posix_memalign(&p, kGrain, k * kGrain) == 0 ? p : nullptr;
}

void small_block_give(void *block, uint32_t size_class) {
  ThreadCache &c = t_cache;
  size_t size = size_class * kGrain;
  if ((c.count[size_class] + 1) * size <= kClassCapBytes && c.bytes + size <= kThreadCapBytes && keeps(c)) {
    auto *b = static_cast<FreeBlock *>(block);
    b->next = c.head[size_class];
    c.head[size_class] = b;
    c.count[size_class] += 1;
    c.bytes += size;
    return;
  }
  std::free(block);
}

}  // namespace lt

extern "C" {

/* Bytes the calling thread keeps in its small-block lists. */
int64_t lt_small_blocks_cached(void) { return static_cast<int64_t>(t_cache.bytes); }

/* Gives the calling thread's kept small blocks back to malloc; returns their bytes. */
int64_t lt_small_blocks_release(void) {
  int64_t released = static_cast<int64_t>(t_cache.bytes);
  drain(t_cache);
  return released;
}

}  // extern "C"
