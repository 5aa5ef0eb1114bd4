/*
 * lt_runtime.cpp — the process-wide parts of the C ABI: the per-thread error slot, versions,
 * the counting CPU allocator behind lt_memory(), the release queue for wrapped foreign memory,
 * seeding and thread count, devices and dtypes (CUDA device control is lt_cuda.cpp).
 *
 * Memory accounting: ltorch installs a CPU allocator that wraps libtorch's default one and keeps
 * a 64-byte header in front of each block (size + the inner allocation's context and deleter),
 * so live bytes are exact without a side table and the data stays 64-byte aligned as libtorch
 * expects. Blocks of up to 1 KiB (header included) come from lt_small_blocks.cpp (per-thread
 * free lists), blocks of 128 KiB and more from lt_large_blocks.cpp (mapped apart from the malloc
 * heap, cached for reuse), the rest from libtorch's allocator. The counters are plain int64 fields that Lua reads through the FFI without a call;
 * the allocator never calls into Lua.
 */
#include "lt_internal.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Logging.h>
#include <torch/csrc/api/include/torch/version.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace {

thread_local std::string t_error_message;
thread_local int t_error_kind = LT_OK;

lt_memory_stats g_memory = {0, 0, 0, 0};

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
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes, "allocation header must fit its slot");

void release_block(void *data) {
  auto *header = reinterpret_cast<BlockHeader *>(static_cast<char *>(data) - kHeaderBytes);
  __atomic_fetch_sub(&g_memory.live_bytes, static_cast<int64_t>(header->size), __ATOMIC_RELAXED);
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
    BlockHeader *header;
    if (n + kHeaderBytes <= lt::kSmallBlockBytes && lt::block_caches_enabled()) {
      uint32_t size_class = 0;
      header = static_cast<BlockHeader *>(lt::small_block_take(n + kHeaderBytes, &size_class));
      TORCH_CHECK_WITH(OutOfMemoryError, header != nullptr, "out of memory: could not allocate ", n,
                       " bytes for a tensor");
      header->mapped = 0;
      header->inner_context = nullptr;
      header->inner_deleter = nullptr;
      header->small_class = size_class;
    } else if (n + kHeaderBytes >= lt::kLargeBlockBytes && lt::block_caches_enabled()) {
      size_t mapped = 0;
      header = static_cast<BlockHeader *>(lt::large_block_take(lt::large_block_mapped_size(n), &mapped));
      TORCH_CHECK_WITH(OutOfMemoryError, header != nullptr, "out of memory: could not map ", mapped,
                       " bytes for a tensor of ", n, " bytes");
      header->mapped = mapped;
      header->inner_context = nullptr;
      header->inner_deleter = nullptr;
      header->small_class = 0;
    } else {
      c10::DataPtr block = inner_->allocate(n + kHeaderBytes);
      header = static_cast<BlockHeader *>(block.get());
      header->mapped = 0;
      header->small_class = 0;
      header->inner_deleter = block.get_deleter();
      header->inner_context = block.release_context();
    }
    header->size = n;
    int64_t live = __atomic_add_fetch(&g_memory.live_bytes, static_cast<int64_t>(n), __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_memory.allocations, 1, __ATOMIC_RELAXED);
    if (live > g_memory.peak_bytes) g_memory.peak_bytes = live;  // racy max: a statistic only
    void *data = reinterpret_cast<char *>(header) + kHeaderBytes;
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

/* c10::Error captures a C++ backtrace by unwinding the whole stack. Called through the LuaJIT
 * FFI, that stack can hold JIT-compiled trace frames, and libgcc's unwinder aborts the process
 * on them (seen: a libtorch shape error raised in a loop killed the interpreter). Messages use
 * what_without_backtrace() anyway, so capture nothing: errors become safe, and cheaper. */
const bool g_backtraces_disabled = [] {
  c10::SetStackTraceFetcher([] { return std::string(); });
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

std::string build_name() { return std::string("this libtorch build (") + lt_version() + ")"; }

void note_device_result(const at::Tensor &t) noexcept {
  if (t.is_meta()) return;   // no memory behind it
  try {  // numel() throws for some layouts (nested tensors); such a result is simply not counted
    int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
    __atomic_add_fetch(&g_memory.device_bytes_made, bytes, __ATOMIC_RELAXED);
  } catch (...) {
  }
}

void set_error(int kind, const std::string &message) {
  t_error_kind = kind;
  t_error_message = message;
}

int fail_current_exception() noexcept {
  try {
    throw;
  } catch (const FreedError &e) {
    set_error(LT_ERR_FREED, e.what());
  } catch (const ValueError &e) {
    set_error(LT_ERR_VALUE, e.what());
  } catch (const c10::IndexError &e) {
    set_error(LT_ERR_INDEX, e.what_without_backtrace());
  } catch (const c10::ValueError &e) {
    set_error(LT_ERR_VALUE, e.what_without_backtrace());
  } catch (const c10::TypeError &e) {
    set_error(LT_ERR_TYPE, e.what_without_backtrace());
  } catch (const c10::NotImplementedError &e) {
    set_error(LT_ERR_NOT_IMPLEMENTED, e.what_without_backtrace());
  } catch (const c10::OutOfMemoryError &e) {
    set_error(LT_ERR_MEMORY, e.what_without_backtrace());
  } catch (const c10::Error &e) {
    set_error(LT_ERR_RUNTIME, e.what_without_backtrace());
  } catch (const std::bad_alloc &) {
    set_error(LT_ERR_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    set_error(LT_ERR_RUNTIME, e.what());
  } catch (...) {
    set_error(LT_ERR_RUNTIME, "unknown C++ exception");
  }
  return t_error_kind;
}

void queue_released_blob(int64_t id) {
  std::lock_guard<std::mutex> lock(released_mutex());
  released_ids().push_back(id);
}

c10::ScalarType scalar_type(int code) {
  if (code < 0 || code >= static_cast<int>(c10::ScalarType::NumOptions))
    throw ValueError("unknown dtype code " + std::to_string(code));
  return static_cast<c10::ScalarType>(code);
}

c10::Device device(int device_type, int device_index) {
  if (device_type < 0 || device_type >= static_cast<int>(c10::DeviceType::COMPILE_TIME_MAX_DEVICE_TYPES))
    throw ValueError("unknown device type code " + std::to_string(device_type));
  if (device_index < -1 || device_index > 127)
    throw ValueError("device index " + std::to_string(device_index) + " out of range");
  return c10::Device(static_cast<c10::DeviceType>(device_type), static_cast<c10::DeviceIndex>(device_index));
}

at::TensorOptions options(const lt_options *opt) {
  if (opt == nullptr) return at::TensorOptions();
  return at::TensorOptions().dtype(scalar_type(opt->dtype)).device(device(opt->device_type, opt->device_index));
}

at::Tensor finish(at::Tensor t, const lt_options *opt) {
  if (opt != nullptr && opt->requires_grad) t.set_requires_grad(true);
  return t;
}

}  // namespace lt

extern "C" {

const char *lt_last_error(void) { return t_error_message.c_str(); }
int lt_last_error_kind(void) { return t_error_kind; }

const char *lt_version(void) {
  static const std::string version = std::to_string(TORCH_VERSION_MAJOR) + "." +
                                     std::to_string(TORCH_VERSION_MINOR) + "." +
                                     std::to_string(TORCH_VERSION_PATCH);
  return version.c_str();
}

lt_memory_stats *lt_memory(void) {
  (void)g_allocator_installed;
  (void)g_backtraces_disabled;
  return &g_memory;
}

/* glibc keeps freed heap memory (the executable raises its trim threshold to 256 MiB), and after
 * a burst of tensors dies at once its bins hold a great many scattered free chunks, which made
 * later small allocations slower (bench/after_burst.lua, measured with the slab's own share of
 * that slowdown taken out: 0.56 -> 0.73 us per small add after 200,000 tensors died, 0.56 after
 * this; docs/PERFORMANCE.md, optimisation 13). malloc_trim(0) consolidates them and returns free pages to the
 * kernel. Returns 1 if memory was returned, 0 if not or not glibc. */
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

int lt_manual_seed(uint64_t seed) {
  LT_TRY
  at::manual_seed(seed);
  LT_CATCH
}

int lt_seed(uint64_t *out) {
  LT_TRY
  uint64_t seed = c10::detail::getNonDeterministicRandom() & ((uint64_t(1) << 53) - 1);
  at::manual_seed(seed);
  *out = seed;
  LT_CATCH
}

int lt_initial_seed(uint64_t *out) {
  LT_TRY
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = gen.current_seed();
  LT_CATCH
}

int lt_set_num_threads(int n) {
  LT_TRY
  if (n < 1) throw lt::ValueError("set_num_threads: expected a positive thread count, got " + std::to_string(n));
  at::set_num_threads(n);
  LT_CATCH
}

int lt_get_num_threads(int *out) {
  LT_TRY
  *out = at::get_num_threads();
  LT_CATCH
}

int lt_device_parse(const char *spec, int *device_type, int *device_index) {
  LT_TRY
  if (spec == nullptr) throw lt::ValueError("device: expected a device string, got NULL");
  c10::Device d{std::string(spec)};
  *device_type = static_cast<int>(d.type());
  *device_index = d.index();
  LT_CATCH
}

int lt_has_backend(int device_type, int *out) {
  LT_TRY
  switch (static_cast<c10::DeviceType>(device_type)) {
    case c10::DeviceType::CPU: *out = 1; break;
    case c10::DeviceType::CUDA: *out = at::hasCUDA() ? 1 : 0; break;
    case c10::DeviceType::MPS: *out = at::hasMPS() ? 1 : 0; break;
    default: *out = 0;
  }
  LT_CATCH
}

int lt_device_check(int device_type, int device_index) {
  LT_TRY
  c10::Device d = lt::device(device_type, device_index);
  const std::string build = lt::build_name();
  switch (d.type()) {
    case c10::DeviceType::CPU:
      if (d.index() > 0) throw lt::ValueError("device '" + d.str() + "': the CPU has only index 0");
      break;
    case c10::DeviceType::CUDA: {
      if (!at::hasCUDA()) throw lt::ValueError("device '" + d.str() + "' is not available: " + build + " has no CUDA support or sees no CUDA device");
      int64_t count = static_cast<int64_t>(at::getNumGPUs());
      if (d.index() >= count)
        throw lt::ValueError("device '" + d.str() + "' is not available: " + std::to_string(count) + " CUDA device(s) visible");
      break;
    }
    case c10::DeviceType::MPS:
      if (!at::hasMPS()) throw lt::ValueError("device '" + d.str() + "' is not available: " + build + " has no MPS support");
      break;
    default:
      throw lt::ValueError("device '" + d.str() + "' is not supported by ltorch");
  }
  LT_CATCH
}

int lt_dtype_is_floating(int dtype, int *out) {
  LT_TRY
  *out = c10::isFloatingType(lt::scalar_type(dtype)) ? 1 : 0;
  LT_CATCH
}

int lt_dtype_item_size(int dtype, int *out) {
  LT_TRY
  *out = static_cast<int>(c10::elementSize(lt::scalar_type(dtype)));
  LT_CATCH
}

int lt_promote_types(int a, int b, int *out) {
  LT_TRY
  *out = static_cast<int>(c10::promoteTypes(lt::scalar_type(a), lt::scalar_type(b)));
  LT_CATCH
}

}  // extern "C"
