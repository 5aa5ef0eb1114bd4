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
 * without CUDA, device control and reset_peak_memory_stats raise (naming the build and quoting
 * libtorch's own CUDA initialisation error, PyTorch's message), while the memory queries answer 0
 * and empty_cache / seeding all devices do nothing, as PyTorch's do before CUDA is initialised.
 *
 * Streams and events (torch.cuda.Stream / Event) also go through the device-generic c10::Stream
 * and c10::Event: a stream crosses the ABI as its packed (id, device index) pair, an event as an
 * owned handle. The cuDNN / cuBLAS / oneDNN / SDPA switches of torch.backends are libtorch's
 * global context (at::globalContext()), read and set by number (LT_FLAG_* in lt.h).
 *
 * Usage (C):  int64_t s[LT_CUDA_MEMORY_STATS];  lt_cuda_memory_stats(-1, s);   // current device
 *             lt_backend_flag_set(LT_FLAG_CUDNN_BENCHMARK, 1);
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <dlfcn.h>

#include <mutex>

namespace {

/* Why CUDA cannot be used here, in libtorch's own words: the error its lazy CUDA initialisation
   raises ("Found no NVIDIA driver on your system. ..." on a machine without a driver, the stub's
   "Cannot initialize CUDA without ATen_cuda library" on a CPU-only build), as PyTorch reports it. */
std::string no_cuda_reason() {
  try {
    at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  } catch (const c10::Error &e) {
    return e.what_without_backtrace();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "no CUDA device is visible";
}

/* A CUDA device index to act on: `index` itself, or the current device for -1. */
c10::DeviceIndex cuda_index(int index, const char *what) {
  if (!at::hasCUDA())
    throw lt::ValueError(std::string(what) + ": " + lt::build_name() + " has no CUDA support or sees no CUDA device (" +
                         no_cuda_reason() + ")");
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

/* Without CUDA this raises, as PyTorch's does ("invalid argument to reset_peak_memory_stats"). */
int lt_cuda_reset_peak_memory_stats(int index) {
  LT_TRY
  if (!at::hasCUDA())
    throw lt::ValueError("cuda.reset_peak_memory_stats: invalid argument to reset_peak_memory_stats (" +
                         no_cuda_reason() + ")");
  if (auto *a = cuda_allocator()) a->resetPeakStats(cuda_index(index, "cuda.reset_peak_memory_stats"));
  LT_CATCH
}

/* Without CUDA this raises, as PyTorch's does ("invalid argument to reset_accumulated_memory_stats"). */
int lt_cuda_reset_accumulated_memory_stats(int index) {
  LT_TRY
  if (!at::hasCUDA())
    throw lt::ValueError("cuda.reset_accumulated_memory_stats: invalid argument to reset_accumulated_memory_stats (" +
                         no_cuda_reason() + ")");
  if (auto *a = cuda_allocator()) a->resetAccumulatedStats(cuda_index(index, "cuda.reset_accumulated_memory_stats"));
  LT_CATCH
}

/* Returns the allocator's cached, unused blocks to the driver (torch.cuda.empty_cache). */
int lt_cuda_empty_cache(void) {
  LT_TRY
  if (auto *a = cuda_allocator()) a->emptyCache();
  LT_CATCH
}

/* ---- torch.backends switches (libtorch's global context) ---- */

int lt_backend_flag_get(int which, int64_t *out) {
  LT_TRY
  auto &ctx = at::globalContext();
  using R = at::CuBLASReductionOption;
  switch (which) {
    case LT_FLAG_CUDNN_ENABLED: *out = ctx.userEnabledCuDNN(); break;
    case LT_FLAG_CUDNN_BENCHMARK: *out = ctx.benchmarkCuDNN(); break;
    case LT_FLAG_CUDNN_DETERMINISTIC: *out = ctx.deterministicCuDNN(); break;
    case LT_FLAG_CUDNN_ALLOW_TF32: *out = ctx.allowTF32CuDNN(); break;
    case LT_FLAG_CUDNN_BENCHMARK_LIMIT: *out = ctx.benchmarkLimitCuDNN(); break;
    case LT_FLAG_MATMUL_ALLOW_TF32: *out = ctx.allowTF32CuBLAS(); break;
    case LT_FLAG_MATMUL_FP16_REDUCTION: *out = ctx.allowFP16ReductionCuBLAS() == R::AllowReducedPrecisionWithSplitK; break;
    case LT_FLAG_MATMUL_FP16_SPLIT_K:
      *out = ctx.allowFP16ReductionCuBLAS() != R::DisallowReducedPrecisionDisallowSplitK;
      break;
    case LT_FLAG_MATMUL_BF16_REDUCTION: *out = ctx.allowBF16ReductionCuBLAS() == R::AllowReducedPrecisionWithSplitK; break;
    case LT_FLAG_MATMUL_BF16_SPLIT_K:
      *out = ctx.allowBF16ReductionCuBLAS() != R::DisallowReducedPrecisionDisallowSplitK;
      break;
    case LT_FLAG_MATMUL_FP16_ACCUMULATION: *out = ctx.allowFP16AccumulationCuBLAS(); break;
    case LT_FLAG_MKLDNN_ENABLED: *out = ctx.userEnabledMkldnn(); break;
    case LT_FLAG_MKLDNN_DETERMINISTIC: *out = ctx.deterministicMkldnn(); break;
    case LT_FLAG_MKLDNN_ALLOW_TF32: *out = ctx.allowTF32OneDNN(); break;
    case LT_FLAG_SDP_FLASH: *out = ctx.userEnabledFlashSDP(); break;
    case LT_FLAG_SDP_MEM_EFFICIENT: *out = ctx.userEnabledMemEfficientSDP(); break;
    case LT_FLAG_SDP_MATH: *out = ctx.userEnabledMathSDP(); break;
    case LT_FLAG_SDP_CUDNN: *out = ctx.userEnabledCuDNNSDP(); break;
    case LT_FLAG_SDP_FP16_BF16_REDUCTION_MATH: *out = ctx.allowFP16BF16ReductionMathSDP(); break;
    case LT_FLAG_LINALG_BACKEND: *out = static_cast<int64_t>(ctx.linalgPreferredBackend()); break;
    case LT_FLAG_BLAS_BACKEND: *out = static_cast<int64_t>(ctx.blasPreferredBackend()); break;
    case LT_FLAG_HAS_MKLDNN: *out = at::Context::hasMKLDNN(); break;
    case LT_FLAG_HAS_OPENMP: *out = at::Context::hasOpenMP(); break;
    case LT_FLAG_HAS_MKL: *out = at::Context::hasMKL(); break;
    default: throw lt::ValueError("backend flag: unknown flag " + std::to_string(which));
  }
  LT_CATCH
}

/* value: a boolean (0/1), the cuDNN benchmark limit, or a LinalgBackend / BlasBackend number; the reduced-precision reductions take
   value = allow_reduced_precision + 2 * allow_split_k, as PyTorch's (bool, bool) setting. */
int lt_backend_flag_set(int which, int64_t value) {
  LT_TRY
  auto &ctx = at::globalContext();
  bool b = value != 0;
  switch (which) {
    case LT_FLAG_CUDNN_ENABLED: ctx.setUserEnabledCuDNN(b); break;
    case LT_FLAG_CUDNN_BENCHMARK: ctx.setBenchmarkCuDNN(b); break;
    case LT_FLAG_CUDNN_DETERMINISTIC: ctx.setDeterministicCuDNN(b); break;
    case LT_FLAG_CUDNN_ALLOW_TF32: ctx.setAllowTF32CuDNN(b); break;
    case LT_FLAG_CUDNN_BENCHMARK_LIMIT: ctx.setBenchmarkLimitCuDNN(static_cast<int>(value)); break;
    case LT_FLAG_MATMUL_ALLOW_TF32: ctx.setAllowTF32CuBLAS(b); break;
    case LT_FLAG_MATMUL_FP16_REDUCTION: ctx.setAllowFP16ReductionCuBLAS((value & 1) != 0, (value & 2) != 0); break;
    case LT_FLAG_MATMUL_BF16_REDUCTION: ctx.setAllowBF16ReductionCuBLAS((value & 1) != 0, (value & 2) != 0); break;
    case LT_FLAG_MATMUL_FP16_ACCUMULATION: ctx.setAllowFP16AccumulationCuBLAS(b); break;
    case LT_FLAG_MKLDNN_ENABLED: ctx.setUserEnabledMkldnn(b); break;
    case LT_FLAG_MKLDNN_DETERMINISTIC: ctx.setDeterministicMkldnn(b); break;
    case LT_FLAG_MKLDNN_ALLOW_TF32: ctx.setAllowTF32OneDNN(b); break;
    case LT_FLAG_SDP_FLASH: ctx.setSDPUseFlash(b); break;
    case LT_FLAG_SDP_MEM_EFFICIENT: ctx.setSDPUseMemEfficient(b); break;
    case LT_FLAG_SDP_MATH: ctx.setSDPUseMath(b); break;
    case LT_FLAG_SDP_CUDNN: ctx.setSDPUseCuDNN(b); break;
    case LT_FLAG_SDP_FP16_BF16_REDUCTION_MATH: ctx.setAllowFP16BF16ReductionMathSDP(b); break;
    case LT_FLAG_LINALG_BACKEND:
      if (value < 0 || value > 2) throw lt::ValueError("preferred_linalg_library: unknown backend");
      ctx.setLinalgPreferredBackend(static_cast<at::LinalgBackend>(value));
      break;
    case LT_FLAG_BLAS_BACKEND:
      if (value < 0 || value > 3) throw lt::ValueError("preferred_blas_library: unknown backend");
      ctx.setBlasPreferredBackend(static_cast<at::BlasBackend>(value));
      break;
    default: throw lt::ValueError("backend flag: flag " + std::to_string(which) + " cannot be set");
  }
  LT_CATCH
}

/* The fp32_precision switches ("ieee", "tf32", "bf16", "none") of a backend ("generic", "cuda",
   "mkldnn") and op ("all", "conv", "rnn", "matmul"): torch.backends.cuda.matmul.fp32_precision. */
int lt_fp32_precision_get(const char *backend, const char *op, char *out, int out_size) {
  LT_TRY
  std::string s = at::precision2str(at::globalContext().float32Precision(at::str2backend(backend), at::str2op(op)));
  if (out_size <= 0 || s.size() >= static_cast<size_t>(out_size)) throw lt::ValueError("fp32_precision: buffer too small");
  std::copy(s.begin(), s.end(), out);
  out[s.size()] = 0;
  LT_CATCH
}

int lt_fp32_precision_set(const char *backend, const char *op, const char *precision) {
  LT_TRY
  at::globalContext().setFloat32Precision(at::str2backend(backend), at::str2op(op), at::str2precision(precision));
  LT_CATCH
}

/* ---- streams (c10::Stream, crossing the ABI packed) and events (c10::Event) ---- */

namespace {

const c10::impl::DeviceGuardImplInterface *cuda_impl() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
}

c10::Stream unpack(int64_t id, int index) {
  return c10::Stream::unpack3(id, static_cast<c10::DeviceIndex>(index), c10::DeviceType::CUDA);
}

void pack(const c10::Stream &s, int64_t *id, int *index) {
  *id = s.id();
  *index = s.device_index();
}

}  // namespace

/* which: 0 the current stream, 1 the default stream, 2 a new stream of the pool with `priority`
   (torch.cuda.current_stream / default_stream / Stream(device, priority)). */
int lt_cuda_stream_get(int which, int index, int priority, int64_t *id, int *out_index) {
  LT_TRY
  const char *what = which == 0 ? "cuda.current_stream" : which == 1 ? "cuda.default_stream" : "cuda.Stream";
  c10::Device d(c10::DeviceType::CUDA, cuda_index(index, what));
  if (which == 0) pack(cuda_impl()->getStream(d), id, out_index);
  else if (which == 1) pack(cuda_impl()->getDefaultStream(d), id, out_index);
  else pack(cuda_impl()->getNewStream(d, priority), id, out_index);
  LT_CATCH
}

/* Makes the stream current on its device; the previous one comes back packed (torch.cuda.set_stream). */
int lt_cuda_stream_exchange(int64_t id, int index, int64_t *prev_id, int *prev_index) {
  LT_TRY
  cuda_index(index, "cuda.set_stream");
  pack(cuda_impl()->exchangeStream(unpack(id, index)), prev_id, prev_index);
  LT_CATCH
}

/* op 0: query (out: 1 when all work is done), 1: synchronize, 2: native handle (out: cudaStream_t). */
int lt_cuda_stream_op(int64_t id, int index, int op, int64_t *out) {
  LT_TRY
  cuda_index(index, "cuda.Stream");
  c10::Stream s = unpack(id, index);
  if (op == 0) *out = s.query() ? 1 : 0;
  else if (op == 1) s.synchronize();
  else *out = reinterpret_cast<int64_t>(s.native_handle());
  LT_CATCH
}

/* A CUDA event, created lazily on its first record as in PyTorch (so constructing one needs no
   device); enable_timing selects a timing event. */
int lt_cuda_event_new(int enable_timing, void **out) {
  LT_TRY
  *out = new c10::Event(c10::DeviceType::CUDA,
                        enable_timing ? c10::EventFlag::BACKEND_DEFAULT : c10::EventFlag::PYTORCH_DEFAULT);
  LT_CATCH
}

void lt_cuda_event_free(void *event) { delete static_cast<c10::Event *>(event); }

/* op 0: record on the stream, 1: make the stream wait for it, 2: query (out 1 = done),
   3: synchronize, 4: milliseconds from this event to `other` (end), as start.elapsed_time(end). */
int lt_cuda_event_op(void *event, int op, int64_t id, int index, void *other, double *out) {
  LT_TRY
  auto *e = static_cast<c10::Event *>(event);
  switch (op) {
    case 0: cuda_index(index, "cuda.Event.record"); e->record(unpack(id, index)); break;
    case 1: cuda_index(index, "cuda.Event.wait"); e->block(unpack(id, index)); break;
    case 2: *out = e->query() ? 1 : 0; break;
    case 3: e->synchronize(); break;
    case 4: *out = e->elapsedTime(*static_cast<c10::Event *>(other)); break;
    default: throw lt::ValueError("cuda.Event: unknown operation " + std::to_string(op));
  }
  LT_CATCH
}

}  // extern "C"
