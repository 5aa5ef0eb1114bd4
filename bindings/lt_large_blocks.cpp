/*
 * lt_large_blocks.cpp — where the CPU allocator (lt_allocator.cpp) gets tensor blocks of 32 KiB
 * and more: mapped apart from the malloc heap, and kept for reuse when freed.
 *
 * Why: ltorch frees tensors in collector batches, in no particular order. On the malloc heap
 * (with the executable's thresholds, which keep big blocks there to avoid page faults) those
 * blocks and the small allocations between them fragment the heap, and RSS steps up over tens of
 * thousands of steps (bench/memory_trace.lua) though live memory is flat. Mapped blocks are
 * never mixed with small ones, so RSS follows live memory (the same trace: flat). Mapping each
 * block fresh would fault in every page of every tensor on every step, and page faults would
 * dominate a training step — so a freed block goes to a cache keyed by its size class, and the
 * next request of that class takes it back, pages already present: the steady state of a
 * training loop allocates the same sizes every step.
 *
 * Policy: reuse by size class (quarter octaves, plus a page for the header), and a request
 * takes a block of its own class or, failing that, of one of the next two: a loop whose shapes
 * vary from step to step (variable-length batches) still finds blocks; with exact page-rounded
 * sizes nearly every request of such a loop would be a fresh mapping that faults in. The price
 * is some peak RSS: kept blocks of classes not asked for again wait until evicted
 * (docs/PERFORMANCE.md, optimisation 10, has the measurements). Blocks above 32 MiB are
 * not kept; at most kCacheCapBytes is kept, and a block freed over the cap first evicts
 * (unmaps) kept blocks of other classes, so a change of shapes (an eval pass, a new batch
 * size) does not leave the cache full of sizes nobody asks for. lt_large_blocks_release()
 * unmaps every kept block (torch.collect()).
 * Off — every block from the malloc heap, as before — with LTORCH_MALLOC=glibc, and under
 * AddressSanitizer, which checks heap blocks, not mappings (lt::block_caches_enabled()).
 *
 * Thread-safe (worker threads allocate too): one mutex around the cache; mmap/munmap of new
 * or evicted blocks run outside it.
 */
#include "lt_internal.hpp"

#include <sys/mman.h>

#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kPageBytes = 4096;
constexpr size_t kCacheCapBytes = size_t(256) * 1024 * 1024;
// Blocks above this are unmapped when freed, as glibc does above the executable's mmap threshold:
// kept, a few dataset-sized blocks (the recipe's 172 MB float copy of Fashion-MNIST) raised the
// epoch's peak RSS from 1,006 to 1,171 MiB and were never asked for again.
constexpr size_t kMaxCachedBlockBytes = size_t(32) * 1024 * 1024;

struct Cache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> free_by_size;
  size_t cached_bytes = 0;
};

Cache &cache() {
  static auto *c = new Cache();  // never destroyed: blocks may be freed during static destruction
  return *c;
}

}  // namespace

namespace lt {

/* The size to map for a tensor of `data_bytes` (its header goes in front): cached sizes are the
 * data size rounded up to quarter-octave classes (32, 40, 48, 56, 64, 80, ... KiB), plus
 * one page for the header, so that tensors of nearby sizes share blocks and a power-of-two
 * tensor is not pushed into the next class by its header; that wastes at most a quarter of a
 * block (a ninth on average). Uncached sizes (above 32 MiB) are rounded to whole pages only. */
size_t large_block_mapped_size(size_t data_bytes) {
  if (data_bytes > kMaxCachedBlockBytes) return (data_bytes + kBlockHeaderBytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  size_t octave = kLargeBlockBytes;
  while (octave * 2 <= data_bytes) octave *= 2;
  size_t step = octave / 4;
  return (data_bytes + step - 1) / step * step + kPageBytes;
}

void *large_block_take(size_t wanted, size_t *mapped) {
  {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    // Its own class first, else one of the next two (at most ~1.6x the size): a kept block of a
    // size that is no longer asked for still serves tensors a little smaller.
    size_t size = wanted;
    for (int tries = 0; tries < 3 && size <= kMaxCachedBlockBytes + kPageBytes; ++tries) {
      auto it = c.free_by_size.find(size);
      if (it != c.free_by_size.end() && !it->second.empty()) {
        void *block = it->second.back();
        it->second.pop_back();
        c.cached_bytes -= size;
        *mapped = size;
        return block;
      }
      size = large_block_mapped_size(size - kPageBytes + 1);   // the next class up
    }
  }
  void *block = mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *mapped = wanted;
  return block == MAP_FAILED ? nullptr : block;
}

void large_block_give(void *block, size_t mapped) {
  std::vector<std::pair<void *, size_t>> evicted;
  bool keep = mapped <= kMaxCachedBlockBytes + kPageBytes;
  if (keep) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    // At most ~41 size classes (quarter octaves from 32 KiB to 32 MiB): this scan is short.
    for (auto it = c.free_by_size.begin(); c.cached_bytes + mapped > kCacheCapBytes && it != c.free_by_size.end();
         ++it) {
      if (it->first == mapped) continue;
      while (!it->second.empty() && c.cached_bytes + mapped > kCacheCapBytes) {
        evicted.emplace_back(it->second.back(), it->first);
        it->second.pop_back();
        c.cached_bytes -= it->first;
      }
    }
    keep = c.cached_bytes + mapped <= kCacheCapBytes;
    if (keep) {
      c.free_by_size[mapped].push_back(block);
      c.cached_bytes += mapped;
    }
  }
  for (auto &e : evicted) munmap(e.first, e.second);
  if (!keep) munmap(block, mapped);
}

}  // namespace lt

extern "C" {

/* Unmaps every cached free block; returns how many bytes that gave back. */
int64_t lt_large_blocks_release(void) {
  std::vector<std::pair<void *, size_t>> all;
  {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto &entry : c.free_by_size) {
      for (void *block : entry.second) all.emplace_back(block, entry.first);
      entry.second.clear();
    }
    c.cached_bytes = 0;
  }
  int64_t released = 0;
  for (auto &e : all) {
    munmap(e.first, e.second);
    released += static_cast<int64_t>(e.second);
  }
  return released;
}

int64_t lt_large_blocks_cached(void) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int64_t>(c.cached_bytes);
}

}  // extern "C"
