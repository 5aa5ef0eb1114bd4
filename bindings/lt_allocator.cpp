/*
 * lt_allocator.cpp — the CPU memory behind tensors: the counting allocator ltorch installs in
 * place of libtorch's default one (lt_memory()'s live/peak bytes and allocation count), the
 * fault injection the hardening specs use, and the release queue for wrapped foreign memory
 * (lt_from_blob's release ids, drained by lt_drain_released_blobs()), and a canary mode that
 * catches kernels writing past a tensor's memory (lt_debug_canaries, tools/api_fuzz.lua --canaries).
 *
 * The allocator wraps libtorch's default CPU allocator and keeps a 64-byte header in front of
 * each block (size + the inner allocation's context and deleter), so live bytes are exact
 * without a side table and the data stays 64-byte aligned as libtorch expects. Blocks of up to
 * 1 KiB (header included) come from lt_small_blocks.cpp (per-thread free lists), blocks of
 * 32 KiB and more from lt_large_blocks.cpp (mapped apart from the malloc heap, cached for
 * reuse; from the heap when mmap refuses), the rest from libtorch's allocator. The counters
 * are plain int64 fields that Lua reads through the FFI without a call; the allocator never
 * calls into Lua.
 *
 * Device memory is not this allocator's: non-CPU results feed an estimate (device_bytes_made,
 * each fresh storage once), and lt_device_memory_poll() / lt_device_empty_cache() read and empty
 * libtorch's device allocators (c10::DeviceAllocator, any device type) for torch._memory's
 * collection trigger and its recovery from out-of-memory errors.
 */
#include "lt_internal.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/csrc/api/include/torch/version.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

lt_memory_stats g_memory = {0, 0, 0, 0, 0};

constexpr size_t kHeaderBytes = lt::kBlockHeaderBytes;

/* Where a block came from: small_class != 0, a small block of that class (lt_small_blocks.cpp);
 * mapped != 0, a large block of `mapped` bytes (lt_large_blocks.cpp); else the inner (libtorch's)
 * allocator, released through inner_deleter. The header is at the block's start. */
struct BlockHeader {
  size_t size;
  size_t mapped;
  void *inner_context;
  c10::DeleterFnPtr inner_deleter;
  uint32_t small_class;
  uint32_t profiled;  // reported to the profiler at allocation: report its release too
  char unused[kHeaderBytes - 48];
  uint64_t canary;    // canary mode: kCanaryMagic, right before the data (see Canaries below)
};
static_assert(sizeof(BlockHeader) == kHeaderBytes, "allocation header must fill its slot");

/* Canaries (a debug mode, off unless lt_debug_canaries(1) is called): each block allocated while
 * it is on gets kCanaryBytes of a known pattern after its data and kCanaryMagic as the last word
 * of its header, just before its data, and is recorded with its size in a side table (the
 * header itself may be what got damaged). lt_debug_check_canaries() checks every recorded live
 * block, and the release of a recorded block checks it first (the first damage found is kept for
 * the next check): a kernel writing past either end of a tensor's memory is caught at the next
 * check. tools/api_fuzz.lua --canaries checks after every call. Off, it costs a flag load in
 * allocate and, once canaries were ever on, a table look-up in each release. */
constexpr uint64_t kCanaryMagic = 0x5ca1ab1ec0ffee11ULL;
constexpr size_t kCanaryBytes = 128;
constexpr unsigned char kCanaryFill = 0xcb;
bool g_canaries = false;     // guard the blocks allocated from now on
bool g_ever_guarded = false;  // some block was guarded: releases consult the table
std::mutex &guarded_mutex() {
  static auto *m = new std::mutex();
  return *m;
}
std::unordered_map<const BlockHeader *, size_t> &guarded_blocks() {  // header -> data bytes
  static auto *t = new std::unordered_map<const BlockHeader *, size_t>();
  return *t;
}
int64_t g_damage[2] = {-1, 0};  // the first damage found: the block's data bytes, the byte's offset

/* Records the offset from the data of a block of `size` bytes of its first damaged canary byte
 * (-8: the magic before the data) in g_damage unless one is recorded already; false if intact. */
bool note_damage(const BlockHeader *header, size_t size) {
  int64_t at = INT64_MIN;
  if (header->canary != kCanaryMagic) {
    at = -8;
  } else {
    const unsigned char *end = reinterpret_cast<const unsigned char *>(header) + kHeaderBytes + size;
    for (size_t i = 0; i < kCanaryBytes && at == INT64_MIN; i++)
      if (end[i] != kCanaryFill) at = static_cast<int64_t>(size + i);
  }
  if (at == INT64_MIN) return false;
  if (g_damage[0] < 0) {
    g_damage[0] = static_cast<int64_t>(size);
    g_damage[1] = at;
  }
  return true;
}

void guard_block(BlockHeader *header, size_t size) {
  std::memset(reinterpret_cast<char *>(header) + kHeaderBytes + size, kCanaryFill, kCanaryBytes);
  header->canary = kCanaryMagic;
  std::lock_guard<std::mutex> lock(guarded_mutex());
  guarded_blocks()[header] = size;
  __atomic_store_n(&g_ever_guarded, true, __ATOMIC_RELAXED);
}

void unguard_block(const BlockHeader *header) {
  std::lock_guard<std::mutex> lock(guarded_mutex());
  auto &table = guarded_blocks();
  auto it = table.find(header);
  if (it == table.end()) return;
  note_damage(header, it->second);
  table.erase(it);
}

void release_block(void *data) {
  auto *header = reinterpret_cast<BlockHeader *>(static_cast<char *>(data) - kHeaderBytes);
  if (__atomic_load_n(&g_ever_guarded, __ATOMIC_RELAXED)) unguard_block(header);
  int64_t live = __atomic_sub_fetch(&g_memory.live_bytes, static_cast<int64_t>(header->size), __ATOMIC_RELAXED);
  // torch.profiler(profile_memory=True): as libtorch's default CPU allocator, a block allocated
  // while memory profiling was on reports its release while it is on.
  if (header->profiled != 0 && c10::memoryProfilingEnabled())
    c10::reportMemoryUsageToProfiler(data, -static_cast<int64_t>(header->size), static_cast<size_t>(live), 0,
                                     c10::Device(c10::DeviceType::CPU));
  if (header->small_class != 0) {
    lt::small_block_give(header, header->small_class);
  } else if (header->mapped != 0) {
    lt::large_block_give(header, header->mapped);
  } else {
    header->inner_deleter(header->inner_context);
  }
}

/* Fault injection for tests and fuzzing (spec/hardening/fault_injection_spec.lua, tools/api_fuzz.lua):
 * a cap on live CPU tensor bytes, and/or "fail every allocation after the next N". Off (0, -1)
 * unless lt_debug_alloc_limit() is called or LTORCH_ALLOC_LIMIT_BYTES is set; a failed allocation
 * throws c10::OutOfMemoryError, which reaches Lua as an ordinary "out of memory" error. Not in
 * lt.h's cdef: callers declare `void lt_debug_alloc_limit(int64_t, int64_t);` themselves. */
int64_t g_alloc_limit_bytes = [] {
  const char *env = std::getenv("LTORCH_ALLOC_LIMIT_BYTES");
  return env ? std::strtoll(env, nullptr, 10) : 0LL;
}();
int64_t g_alloc_fail_after = -1;

void check_fault_injection(size_t n) {
  int64_t limit = __atomic_load_n(&g_alloc_limit_bytes, __ATOMIC_RELAXED);
  if (limit > 0) {
    int64_t live = __atomic_load_n(&g_memory.live_bytes, __ATOMIC_RELAXED);
    TORCH_CHECK_WITH(OutOfMemoryError, n <= static_cast<size_t>(limit) && live + static_cast<int64_t>(n) <= limit,
                     "out of memory: allocating ", n, " bytes would exceed the injected limit of ", limit,
                     " live CPU tensor bytes (", live, " in use)");
  }
  // -1: off; 0: failing (until reset); N > 0: N more allocations succeed.
  int64_t left = __atomic_load_n(&g_alloc_fail_after, __ATOMIC_RELAXED);
  while (left > 0 && !__atomic_compare_exchange_n(&g_alloc_fail_after, &left, left - 1, false,
                                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  TORCH_CHECK_WITH(OutOfMemoryError, left != 0, "out of memory: injected allocation failure (", n, " bytes)");
}

struct CountingAllocator final : c10::Allocator {
  explicit CountingAllocator(c10::Allocator *inner) : inner_(inner) {}

  /* libtorch 2.3 made allocate non-const and added copy_data (used when a copy-on-write
   * storage is materialised); 1.13 has neither, so copy_data carries no `override`. */
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t n) override {
#else
  c10::DataPtr allocate(size_t n) const override {
#endif
    check_fault_injection(n);
    const size_t guarded = __atomic_load_n(&g_canaries, __ATOMIC_RELAXED) ? n : SIZE_MAX;
    if (guarded != SIZE_MAX) n += kCanaryBytes;  // the block is sized with its canary, reported without
    const bool profiling = n > 0 && c10::memoryProfilingEnabled();  // torch.profiler(profile_memory=True)
    BlockHeader *header = nullptr;
    // A block that should be mapped apart but cannot be (mmap refused: no memory, or the process's
    // limit of mappings reached, ~65,000 by default) comes from the malloc heap instead.
    const bool wants_mapping = n + kHeaderBytes >= lt::kLargeBlockBytes && lt::block_caches_enabled();
    size_t mapped = 0;
    if (n + kHeaderBytes <= lt::kSmallBlockBytes && lt::block_caches_enabled()) {
      uint32_t size_class = 0;
      header = static_cast<BlockHeader *>(lt::small_block_take(n + kHeaderBytes, &size_class));
      TORCH_CHECK_WITH(OutOfMemoryError, header != nullptr, "out of memory: could not allocate ", n,
                       " bytes for a tensor");
      header->mapped = 0;
      header->inner_context = nullptr;
      header->inner_deleter = nullptr;
      header->small_class = size_class;
    } else if (wants_mapping &&
               (header = static_cast<BlockHeader *>(lt::large_block_take(lt::large_block_mapped_size(n), &mapped))) !=
                   nullptr) {
      header->mapped = mapped;
      header->inner_context = nullptr;
      header->inner_deleter = nullptr;
      header->small_class = 0;
    } else if (profiling) {
      // libtorch's allocator would report the block with our header's bytes: take it from the
      // same source unreported and report the tensor's own bytes below.
      header = static_cast<BlockHeader *>(c10::alloc_cpu(n + kHeaderBytes));
      header->mapped = 0;
      header->small_class = 0;
      header->inner_deleter = &c10::free_cpu;
      header->inner_context = header;
    } else {
      c10::DataPtr block;
      try {
        block = inner_->allocate(n + kHeaderBytes);
      } catch (const c10::Error &) {
        if (!wants_mapping) throw;
        TORCH_CHECK_WITH(OutOfMemoryError, false, "out of memory: could not map or allocate ", n,
                         " bytes for a tensor");
      }
      header = static_cast<BlockHeader *>(block.get());
      header->mapped = 0;
      header->small_class = 0;
      header->inner_deleter = block.get_deleter();
      header->inner_context = block.release_context();
    }
    if (guarded != SIZE_MAX) {
      n = guarded;
      guard_block(header, n);
    }
    header->size = n;
    int64_t live = __atomic_add_fetch(&g_memory.live_bytes, static_cast<int64_t>(n), __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_memory.allocations, 1, __ATOMIC_RELAXED);
    if (live > g_memory.peak_bytes) g_memory.peak_bytes = live;  // racy max: a statistic only
    void *data = reinterpret_cast<char *>(header) + kHeaderBytes;
    header->profiled = profiling ? 1 : 0;
    if (profiling)
      c10::reportMemoryUsageToProfiler(data, static_cast<int64_t>(n), static_cast<size_t>(live), 0,
                                       c10::Device(c10::DeviceType::CPU));
    return {data, data, &release_block, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release_block; }

  void copy_data(void *dest, const void *src, std::size_t count) const {
    if (count > 0) std::memcpy(dest, src, count);
  }

 private:
  c10::Allocator *inner_;
};

/* Installed once when the library loads; deliberately never destroyed, because tensors may be
 * released during static destruction at exit. */
const bool g_allocator_installed = [] {
  static auto *allocator = new CountingAllocator(c10::GetDefaultCPUAllocator());
  c10::SetCPUAllocator(allocator, /*priority=*/1);
  return true;
}();

std::mutex &released_mutex() {
  static auto *m = new std::mutex();
  return *m;
}
std::vector<int64_t> &released_ids() {
  static auto *v = new std::vector<int64_t>();
  return *v;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

namespace lt {

/* The block caches keep freed memory for reuse, out of AddressSanitizer's sight (it checks heap
 * blocks when they are freed and taken); LTORCH_MALLOC=glibc asks for glibc's behaviour. */
bool block_caches_enabled() {
  static const bool enabled = [] {
    if (kSanitized) return false;
    const char *choice = std::getenv("LTORCH_MALLOC");
    return !(choice != nullptr && std::strcmp(choice, "glibc") == 0);
  }();
  return enabled;
}

}  // namespace lt

namespace {

/* The estimate of device memory made (lt_memory()->device_bytes_made; _memory.lua's header has
 * the whole rule): a non-CPU result adds its storage's bytes only when its TensorImpl is not
 * shared (a .grad read, a re-wrapped tensor or an input returned as is adds nothing) and its
 * storage has not been counted since the last poll (a view of a storage counted in this window
 * adds nothing; an output autograd also saves is counted once, whatever the number of TensorImpls
 * on its storage). Storages are told apart by their data pointer: one freed and reused within a
 * window is memory that did not grow. The set is cleared by lt_device_memory_poll(). */
std::mutex &window_mutex() {
  static auto *m = new std::mutex();
  return *m;
}
std::unordered_set<const void *> &window_storages() {
  static auto *s = new std::unordered_set<const void *>();
  return *s;
}
uint64_t g_device_types_seen = 0;  // bit k: a result of c10::DeviceType k was counted

/* The bytes the rule above counts for t, recorded in the window (any device; CPU for the spec). */
int64_t count_result(const at::Tensor &t) {
  if (t.is_meta()) return 0;  // no memory behind it
  if (t.use_count() > 1) return 0;
  const c10::TensorImpl *impl = t.unsafeGetTensorImpl();
  if (!impl->has_storage()) return 0;
  const c10::Storage &storage = impl->storage();
  const void *data = storage.data();
  int64_t bytes = static_cast<int64_t>(storage.nbytes());
  if (data == nullptr || bytes == 0) return 0;
  std::lock_guard<std::mutex> lock(window_mutex());
  auto &seen = window_storages();
  if (seen.size() >= 65536) seen.clear();  // a window of tiny results: forget, over-count a little
  return seen.insert(data).second ? bytes : 0;
}

/* libtorch's stats-keeping allocator for a device type, or nullptr (none, not initialised, or a
 * backend whose allocator keeps no statistics). */
c10::DeviceAllocator *device_allocator(c10::DeviceType type) {
  try {
    auto *a = dynamic_cast<c10::DeviceAllocator *>(c10::GetAllocator(type));
    return a != nullptr && a->initialized() ? a : nullptr;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

namespace lt {

void note_device_result(const at::Tensor &t) noexcept {
  try {  // some layouts (nested, sparse) have no plain storage: such a result is simply not counted
    int64_t bytes = count_result(t);
    if (bytes == 0) return;
    __atomic_fetch_or(&g_device_types_seen, uint64_t{1} << (static_cast<int>(t.device().type()) & 63),
                      __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_memory.device_bytes_made, bytes, __ATOMIC_RELAXED);
  } catch (...) {
  }
}

void note_grad_result(const at::Tensor &t) noexcept {
  try {
    if (!t.is_leaf()) __atomic_add_fetch(&g_memory.graph_results, 1, __ATOMIC_RELAXED);
  } catch (...) {
  }
}

void queue_released_blob(int64_t id) {
  std::lock_guard<std::mutex> lock(released_mutex());
  released_ids().push_back(id);
}

}  // namespace lt

extern "C" {

lt_memory_stats *lt_memory(void) {
  (void)g_allocator_installed;
  return &g_memory;
}

/* glibc keeps freed heap memory (the executable raises its trim threshold to 256 MiB), and after
 * a burst of tensors dies at once its bins hold a great many scattered free chunks, which slow
 * later small allocations down (docs/PERFORMANCE.md, optimisation 13: bench/after_burst.lua).
 * malloc_trim(0) consolidates them and returns free pages to the kernel. Returns 1 if memory
 * was returned, 0 if not or not glibc. */
int lt_heap_trim(void) {
#ifdef __GLIBC__
  return malloc_trim(0);
#else
  return 0;
#endif
}

/* Fault injection (see check_fault_injection): max_live_bytes > 0 caps live CPU tensor bytes;
 * fail_after_allocs >= 0 lets that many more allocations succeed, then fails all until reset.
 * lt_debug_alloc_limit(0, -1) turns both off. */
void lt_debug_alloc_limit(int64_t max_live_bytes, int64_t fail_after_allocs) {
  __atomic_store_n(&g_alloc_limit_bytes, max_live_bytes, __ATOMIC_RELAXED);
  __atomic_store_n(&g_alloc_fail_after, fail_after_allocs, __ATOMIC_RELAXED);
}

/* Canary mode (see Canaries above): on != 0 guards the blocks allocated from now on. */
void lt_debug_canaries(int on) { __atomic_store_n(&g_canaries, on != 0, __ATOMIC_RELAXED); }

/* Checks every live guarded block, and those released since the last check. Returns 0 when all
 * canaries are intact; else 1 with info[0] = the first damaged block's data bytes and info[1] =
 * the offset from its data of its first damaged byte (-8: the magic before the data), and
 * forgets that damage (a block still live and damaged is found again by the next check). */
int lt_debug_check_canaries(int64_t *info) {
  std::lock_guard<std::mutex> lock(guarded_mutex());
  if (g_damage[0] < 0)
    for (const auto &block : guarded_blocks())
      if (note_damage(block.first, block.second)) break;
  if (g_damage[0] < 0) return 0;
  info[0] = g_damage[0];
  info[1] = g_damage[1];
  g_damage[0] = -1;
  return 1;
}

/* Device memory as libtorch's allocators hold it: the allocated bytes (current) summed over every
 * device of every device type a counted result came from, read from c10::DeviceAllocator's
 * statistics; -1 when one of those types has no allocator keeping statistics (the caller then
 * goes by the estimate). Also starts a new counting window (see count_result). */
int64_t lt_device_memory_poll(void) {
  {
    std::lock_guard<std::mutex> lock(window_mutex());
    window_storages().clear();
  }
  uint64_t types = __atomic_load_n(&g_device_types_seen, __ATOMIC_RELAXED);
  int64_t total = 0;
  try {
    for (int k = 0; k < 64; k++) {
      if ((types & (uint64_t{1} << k)) == 0) continue;
      auto type = static_cast<c10::DeviceType>(k);
      c10::DeviceAllocator *a = device_allocator(type);
      if (a == nullptr) return -1;
      constexpr auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
      c10::DeviceIndex n = c10::impl::getDeviceGuardImpl(type)->deviceCount();
      for (c10::DeviceIndex i = 0; i < n; i++) total += a->getDeviceStats(i).allocated_bytes[all].current;
    }
  } catch (...) {
    return -1;
  }
  return total;
}

/* Returns the cached, unused blocks of every device allocator a counted result came from to its
 * driver (torch.cuda.empty_cache for each such device type); the recovery after an
 * out-of-memory error (torch._memory) calls it after a full collection. */
void lt_device_empty_cache(void) {
  uint64_t types = __atomic_load_n(&g_device_types_seen, __ATOMIC_RELAXED);
  for (int k = 0; k < 64; k++) {
    if ((types & (uint64_t{1} << k)) == 0) continue;
    try {
      if (auto *a = device_allocator(static_cast<c10::DeviceType>(k))) a->emptyCache();
    } catch (...) {
    }
  }
}

/* The counting rule of lt_device_memory_poll's estimate applied to any tensor, CPU included, for
 * the spec: the bytes it would add to device_bytes_made now (recorded in the current window). */
int64_t lt_debug_count_result(const lt_tensor *t) {
  try {
    return count_result(lt::get(t));
  } catch (...) {
    return -1;
  }
}

int lt_drain_released_blobs(int64_t lo, int64_t hi, int64_t *ids, int capacity, int *count) {
  LT_TRY
  std::lock_guard<std::mutex> lock(released_mutex());
  auto &pending = released_ids();
  int n = 0;
  for (size_t i = pending.size(); i-- > 0 && n < capacity;) {
    int64_t id = pending[i];
    if (id < lo || id >= hi) continue;
    ids[n++] = id;
    pending[i] = pending.back();
    pending.pop_back();
  }
  *count = n;
  LT_CATCH
}

}  // extern "C"
