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
 * Policy: new blocks are mapped in size classes (quarter octaves, plus a page for the header),
 * so that tensors of nearby sizes can share them. A request takes one of the two blocks freed
 * last when it fits (at least its class's size, at most twice that): the block whose pages were
 * touched last, likely still in the CPU's caches, as glibc's heap hands back the chunk just
 * freed whatever the size asked for. Else it takes the smallest kept block of its class or of
 * the next two. Taking by class alone, as this cache did before, kept every class's blocks
 * apart: a small CNN step touched 44 MB of kept blocks for 21.7 MB of peak live bytes, and its
 * backward ran 1.05-1.14x the C++ program's (and the C++ step's own, run inside ltorch's
 * process); now 39.6 MB and ~1.0x, while the transformer workload keeps its 36.3 MB (any
 * recently freed block, not just the last two, took it to 49.7 MB) — docs/PERFORMANCE.md,
 * optimisation 37. A loop whose shapes vary from step to step (variable-length batches) still
 * finds blocks; with exact page-rounded sizes nearly every request of such a loop would be a
 * fresh mapping that faults in. The price is some peak RSS: a block may serve a tensor half its
 * size, and kept blocks no longer asked for wait until evicted (optimisation 10 has the first
 * measurements). Blocks above 32 MiB are not kept; at most kCacheCapBytes is kept, and a block
 * freed over the cap first evicts (unmaps) the blocks freed longest ago, so a change of shapes
 * (an eval pass, a new batch size) does not leave the cache full of sizes nobody asks for.
 * lt_large_blocks_release() unmaps every kept block (torch.collect()). A request walks the kept
 * blocks from the most recent until it meets one of its own class: a training step keeps a few
 * dozen; 256 MiB of the smallest blocks would be ~7,000.
 * Off — every block from the malloc heap, as before — with LTORCH_MALLOC=glibc, and under
 * AddressSanitizer, which checks heap blocks, not mappings (lt::block_caches_enabled()).
 *
 * Thread-safe (worker threads allocate too): one mutex around the cache; mmap/munmap of new
 * or evicted blocks run outside it.
 */
#include "lt_internal.hpp"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace {

constexpr size_t kPageBytes = 4096;
constexpr size_t kCacheCapBytes = size_t(256) * 1024 * 1024;
// Blocks above this are unmapped when freed, as glibc does above the executable's mmap threshold:
// kept, a few dataset-sized blocks (the recipe's 172 MB float copy of Fashion-MNIST) raised the
// epoch's peak RSS from 1,006 to 1,171 MiB and were never asked for again.
constexpr size_t kMaxCachedBlockBytes = size_t(32) * 1024 * 1024;
// How many of the blocks freed last a request may take across sizes (up to twice its own): 2
// gave the small CNN's backward C++'s time (all of them: the same time, but the transformer then
// kept 49.7 MB of blocks instead of 36.3; 1: half the gain) — docs/PERFORMANCE.md, 37.
constexpr size_t kMostRecent = 2;

struct KeptBlock {
  void *block;
  size_t bytes;   // its mapped size
};

struct Cache {
  std::mutex mutex;
  // Kept blocks in the order they were freed, the most recent last. A training step keeps a few
  // dozen; the searches below walk it from the end.
  std::vector<KeptBlock> kept;
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
    // One of the kMostRecent blocks freed last, when it fits (at least `wanted` bytes, at most
    // twice as many): its pages are likely still in the CPU's caches. Else the smallest kept
    // block of this class or the next two (the most recent of them), as little waste as can be.
    const size_t next = large_block_mapped_size(wanted - kPageBytes + 1);
    const size_t next2 = large_block_mapped_size(next - kPageBytes + 1);
    size_t best = SIZE_MAX;
    for (size_t i = c.kept.size(), seen = 0; i-- > 0; ++seen) {
      const size_t bytes = c.kept[i].bytes;
      if (seen < kMostRecent && bytes >= wanted && bytes <= 2 * wanted) {
        best = i;
        break;
      }
      if ((bytes == wanted || bytes == next || bytes == next2) && (best == SIZE_MAX || bytes < c.kept[best].bytes)) {
        best = i;
        if (bytes == wanted) break;   // its own class, the most recent: nothing fits better
      }
    }
    if (best != SIZE_MAX) {
      const size_t i = best;
      const size_t bytes = c.kept[i].bytes;
      void *block = c.kept[i].block;
      c.kept.erase(c.kept.begin() + static_cast<std::ptrdiff_t>(i));
      c.cached_bytes -= bytes;
      *mapped = bytes;
      return block;
    }
  }
  void *block = mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *mapped = wanted;
  return block == MAP_FAILED ? nullptr : block;
}

void large_block_give(void *block, size_t mapped) {
  std::vector<KeptBlock> evicted;
  bool keep = mapped <= kMaxCachedBlockBytes + kPageBytes;
  if (keep) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    // Over the cap, the blocks freed longest ago go first.
    size_t n = 0;
    while (n < c.kept.size() && c.cached_bytes + mapped > kCacheCapBytes) {
      evicted.push_back(c.kept[n]);
      c.cached_bytes -= c.kept[n].bytes;
      ++n;
    }
    c.kept.erase(c.kept.begin(), c.kept.begin() + static_cast<std::ptrdiff_t>(n));
    keep = c.cached_bytes + mapped <= kCacheCapBytes;
    if (keep) {
      c.kept.push_back({block, mapped});
      c.cached_bytes += mapped;
    }
  }
  for (auto &e : evicted) munmap(e.block, e.bytes);
  if (!keep) munmap(block, mapped);
}

}  // namespace lt

extern "C" {

/* Unmaps every cached free block; returns how many bytes that gave back. */
int64_t lt_large_blocks_release(void) {
  std::vector<KeptBlock> all;
  {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    all.swap(c.kept);
    c.cached_bytes = 0;
  }
  int64_t released = 0;
  for (auto &e : all) {
    munmap(e.block, e.bytes);
    released += static_cast<int64_t>(e.bytes);
  }
  return released;
}

int64_t lt_large_blocks_cached(void) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int64_t>(c.cached_bytes);
}

}  // extern "C"
