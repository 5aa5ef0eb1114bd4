/*
 * lt_cuda.cpp — torch.cuda through the C ABI: device count and control, seeding, what the CUDA
 * build carries (CUDA runtime, cuDNN and NCCL versions) and the caching allocator's statistics.
 *
 * Only device-generic libtorch interfaces are used (the CUDA hooks, the device guard registry,
 * c10::DeviceAllocator), so this file needs no CUDA headers: it compiles on a machine without the
 * CUDA toolkit and against a CPU-only libtorch, where the hooks are libtorch's stubs and every
 * query below answers "not built".
 *
 * Semantics follow torch/cuda/__init__.py and torch/cuda/memory.py: on a build or machine
 * without CUDA, device control raises (naming the build), while the memory queries answer 0 and
 * empty_cache / seeding all devices do nothing, as PyTorch's do before CUDA is initialised.
 *
 * Usage (C):  int64_t s[LT_CUDA_MEMORY_STATS];  lt_cuda_memory_stats(-1, s);   // current device
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <dlfcn.h>

#include <mutex>

namespace {

/* A CUDA device index to act on: `index` itself, or the current device for -1. */
c10::DeviceIndex cuda_index(int index, const char *what) {
  if (!at::hasCUDA())
    throw lt::ValueError(std::string(what) + ": " + lt::build_name() + " has no CUDA support or sees no CUDA device");
  int64_t count = static_cast<int64_t>(at::getNumGPUs());
  if (index < -1 || index >= count)
    throw lt::ValueError(std::string(what) + ": invalid CUDA device index " + std::to_string(index) + " (" +
                         std::to_string(count) + " CUDA device(s) visible)");
  if (index == -1) return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getDevice().index();
  return static_cast<c10::DeviceIndex>(index);
}

/* libtorch's CUDA caching allocator, or nullptr when there is none or it has not allocated yet
   (PyTorch's memory queries answer 0 then, without initialising CUDA). */
c10::DeviceAllocator *cuda_allocator() {
  if (!at::hasCUDA()) return nullptr;
  auto *a = dynamic_cast<c10::DeviceAllocator *>(c10::GetAllocator(c10::DeviceType::CUDA));
  return a != nullptr && a->initialized() ? a : nullptr;
}

}  // namespace

extern "C" {

int lt_cuda_device_count(int *out) {
  LT_TRY
  *out = at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0;
  LT_CATCH
}

int lt_cuda_synchronize(int index) {
  LT_TRY
  at::detail::getCUDAHooks().deviceSynchronize(cuda_index(index, "cuda.synchronize"));
  LT_CATCH
}

int lt_cuda_current_device(int *out) {
  LT_TRY
  *out = cuda_index(-1, "cuda.current_device");
  LT_CATCH
}

int lt_cuda_set_device(int index) {
  LT_TRY
  if (index < 0) throw lt::ValueError("cuda.set_device: invalid CUDA device index " + std::to_string(index));
  c10::DeviceIndex i = cuda_index(index, "cuda.set_device");
  c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->setDevice(c10::Device(c10::DeviceType::CUDA, i));
  LT_CATCH
}

/* Seeds one CUDA device's default generator (-1: the current device), or every one (all != 0).
   Without CUDA there is nothing to seed: torch.cuda.manual_seed(_all) do nothing then (PyTorch
   queues the seed for a CUDA that never initialises), so a ported script's seeding line runs. */
int lt_cuda_manual_seed(uint64_t seed, int index, int all) {
  LT_TRY
  if (!at::hasCUDA()) return LT_OK;
  c10::DeviceIndex first = cuda_index(all ? 0 : index, all ? "cuda.manual_seed_all" : "cuda.manual_seed");
  c10::DeviceIndex last = all ? static_cast<c10::DeviceIndex>(at::getNumGPUs() - 1) : first;
  for (c10::DeviceIndex i = first; i <= last; ++i) {
    auto gen = at::globalContext().defaultGenerator(c10::Device(c10::DeviceType::CUDA, i));
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(seed);
  }
  LT_CATCH
}

/* What the CUDA build carries, without touching a device. built: libtorch's CUDA library is
   loaded (its hooks replaced the stubs); cudart: the CUDA runtime it was compiled with
   (13000 = 13.0); cudnn: cuDNN compiled with and loaded (91900 = 9.19.0); nccl: the loaded NCCL
   (22809 = 2.28.9). Each is 0 when absent. */
int lt_cuda_build_info(int *built, int64_t *cudart, int64_t *cudnn, int64_t *cudnn_runtime, int64_t *nccl) {
  LT_TRY
  *built = 0;
  *cudart = *cudnn = *cudnn_runtime = *nccl = 0;
  const auto &hooks = at::detail::getCUDAHooks();
  try {
    *cudart = hooks.versionCUDART();   // the stub throws: no CUDA library loaded
  } catch (const std::exception &) {
    return LT_OK;
  }
  *built = 1;
  if (hooks.compiledWithCuDNN()) {
    *cudnn = hooks.versionCuDNN();
    try {
      *cudnn_runtime = hooks.versionRuntimeCuDNN();
    } catch (const std::exception &) {
      *cudnn_runtime = 0;   // libcudnn itself failed to load
    }
  }
  using nccl_get_version = int (*)(int *);
  if (auto f = reinterpret_cast<nccl_get_version>(dlsym(RTLD_DEFAULT, "ncclGetVersion"))) {
    int v = 0;
    if (f(&v) == 0) *nccl = v;
  }
  LT_CATCH
}

/* out[LT_CUDA_MEMORY_STATS]: 1 (the allocator is in use), allocated bytes (current, peak),
   reserved bytes (current, peak), active bytes (current, peak), allocation count (current,
   peak), segment count (current), allocation retries, out-of-memory errors — the "all" entries
   of torch.cuda.memory_stats(). All 0 while the allocator has not been used or there is no CUDA. */
int lt_cuda_memory_stats(int index, int64_t *out) {
  LT_TRY
  for (int i = 0; i < LT_CUDA_MEMORY_STATS; i++) out[i] = 0;
  auto *a = cuda_allocator();
  if (a == nullptr) return LT_OK;
  auto s = a->getDeviceStats(cuda_index(index, "cuda.memory_stats"));
  constexpr auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  const c10::CachingAllocator::Stat stats[] = {s.allocated_bytes[all], s.reserved_bytes[all], s.active_bytes[all],
                                               s.allocation[all]};
  int k = 0;
  out[k++] = 1;
  for (const auto &st : stats) {
    out[k++] = st.current;
    out[k++] = st.peak;
  }
  out[k++] = s.segment[all].current;
  out[k++] = s.num_alloc_retries;
  out[k++] = s.num_ooms;
  LT_CATCH
}

int lt_cuda_reset_peak_memory_stats(int index) {
  LT_TRY
  if (auto *a = cuda_allocator()) a->resetPeakStats(cuda_index(index, "cuda.reset_peak_memory_stats"));
  LT_CATCH
}

/* Returns the allocator's cached, unused blocks to the driver (torch.cuda.empty_cache). */
int lt_cuda_empty_cache(void) {
  LT_TRY
  if (auto *a = cuda_allocator()) a->emptyCache();
  LT_CATCH
}

}  // extern "C"
