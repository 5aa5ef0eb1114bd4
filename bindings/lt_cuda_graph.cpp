/*
 * lt_cuda_graph.cpp — what torch.cuda needs the CUDA runtime's headers for: CUDA graphs
 * (at::cuda::CUDAGraph: torch.cuda.CUDAGraph, graph_pool_handle, is_current_stream_capturing),
 * a device's properties (cudaDeviceProp: torch.cuda.get_device_properties / get_device_name /
 * get_device_capability) and its free and total memory (cudaMemGetInfo: torch.cuda.mem_get_info),
 * peer access, the allocator's per-process memory fraction and the sync debug mode.
 *
 * Compiled with LTORCH_WITH_CUDA_GRAPHS where CMakeLists.txt finds a CUDA libtorch and the CUDA
 * runtime's headers (the toolkit's, as for NCCL); without them every function here exists and raises, naming
 * what the build lacks. With them but no usable device, the calls raise libtorch's own error,
 * the one PyTorch shows ("Found no NVIDIA driver on your system. ..." for the properties,
 * "CUDA error: ..." for a graph), prefixed by the function's name.
 *
 * A graph is an owned handle (lt_cuda_graph_new / lt_cuda_graph_free); its operations are
 * numbered (lt.h). Capture runs on the caller's current stream, which must not be the default
 * stream: lua/torch/_cuda_graphs.lua switches to a side stream as torch.cuda.graph does.
 *
 * Usage (C):  void *g; lt_cuda_graph_new(0, &g); lt_cuda_graph_op(g, 0, 0, 0, 0, NULL);
 *             ... queue work ...; lt_cuda_graph_op(g, 1, ...); lt_cuda_graph_op(g, 2, ...);
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>

#ifdef LTORCH_WITH_CUDA_GRAPHS
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <cstdio>
#include <cstring>
#include <string>

namespace {

#ifdef LTORCH_WITH_CUDA_GRAPHS
/* Runs libtorch's lazy CUDA initialisation; its error (PyTorch's) comes back prefixed by `what`. */
void init_cuda(const char *what) {
  try {
    at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  } catch (const c10::Error &e) {
    throw lt::ValueError(std::string(what) + ": " + e.what_without_backtrace());
  }
  if (!at::hasCUDA()) throw lt::ValueError(std::string(what) + ": " + lt::build_name() + " sees no CUDA device");
}

/* Rethrows a CUDA / libtorch error prefixed by `what`. */
template <class F>
void named(const char *what, F f) {
  try {
    f();
  } catch (const c10::Error &e) {
    throw lt::ValueError(std::string(what) + ": " + e.what_without_backtrace());
  }
}

c10::DeviceIndex device_of(int index, const char *what) {
  init_cuda(what);
  int count = static_cast<int>(at::getNumGPUs());
  if (index < -1 || index >= count)
    throw lt::ValueError(std::string(what) + ": invalid CUDA device index " + std::to_string(index) + " (" +
                         std::to_string(count) + " CUDA device(s) visible)");
  return index == -1 ? c10::cuda::current_device() : static_cast<c10::DeviceIndex>(index);
}
#else
[[noreturn]] void no_toolkit(const char *what) {
  throw lt::ValueError(std::string(what) + ": ltorch was built without the CUDA runtime's headers (CUDA graphs, " +
                       "device properties and mem_get_info need them; no CUDA toolkit was found): install it " +
                       "(or pip's nvidia-cuda-nvcc beside torch), then rebuild");
}
#endif

}  // namespace

extern "C" {

int lt_cuda_has_graphs(int *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  *out = 1;
#else
  *out = 0;
#endif
  LT_CATCH
}

int lt_cuda_device_properties(int index, lt_cuda_props *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  c10::DeviceIndex d = device_of(index, "cuda.get_device_properties");
  std::memset(out, 0, sizeof *out);
  named("cuda.get_device_properties", [&] {
    const cudaDeviceProp *p = at::cuda::getDeviceProperties(d);
    std::snprintf(out->name, sizeof out->name, "%s", p->name);
    const auto *u = reinterpret_cast<const unsigned char *>(p->uuid.bytes);
    std::snprintf(out->uuid, sizeof out->uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    out->total_memory = static_cast<int64_t>(p->totalGlobalMem);
    out->L2_cache_size = p->l2CacheSize;
    out->major = p->major;
    out->minor = p->minor;
    out->multi_processor_count = p->multiProcessorCount;
    out->is_integrated = p->integrated;
    out->is_multi_gpu_board = p->isMultiGpuBoard;
    out->max_threads_per_multi_processor = p->maxThreadsPerMultiProcessor;
    out->max_threads_per_block = p->maxThreadsPerBlock;
    out->warp_size = p->warpSize;
    out->regs_per_multiprocessor = p->regsPerMultiprocessor;
    out->pci_bus_id = p->pciBusID;
    out->pci_device_id = p->pciDeviceID;
    out->pci_domain_id = p->pciDomainID;
    out->shared_memory_per_block = static_cast<int>(p->sharedMemPerBlock);
    out->shared_memory_per_block_optin = static_cast<int>(p->sharedMemPerBlockOptin);
    out->shared_memory_per_multiprocessor = static_cast<int>(p->sharedMemPerMultiprocessor);
    out->memory_bus_width = p->memoryBusWidth;
    // clockRate / memoryClockRate left cudaDeviceProp in CUDA 13: asked as attributes (kHz).
    cudaDeviceGetAttribute(&out->clock_rate, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&out->memory_clock_rate, cudaDevAttrMemoryClockRate, d);
  });
#else
  (void)index;
  (void)out;
  no_toolkit("cuda.get_device_properties");
#endif
  LT_CATCH
}

int lt_cuda_mem_get_info(int index, int64_t *free_bytes, int64_t *total_bytes) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  c10::DeviceIndex d = device_of(index, "cuda.mem_get_info");
  c10::cuda::CUDAGuard guard(d);
  size_t f = 0, t = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  *free_bytes = static_cast<int64_t>(f);
  *total_bytes = static_cast<int64_t>(t);
#else
  (void)index;
  (void)free_bytes;
  (void)total_bytes;
  no_toolkit("cuda.mem_get_info");
#endif
  LT_CATCH
}

int lt_cuda_is_current_stream_capturing(int *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  named("cuda.is_current_stream_capturing", [&] {
    *out = c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None ? 1 : 0;
  });
#else
  (void)out;
  no_toolkit("cuda.is_current_stream_capturing");
#endif
  LT_CATCH
}

int lt_cuda_graph_new(int keep_graph, void **out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  named("cuda.CUDAGraph", [&] { *out = new at::cuda::CUDAGraph(keep_graph != 0); });
#else
  (void)keep_graph;
  (void)out;
  no_toolkit("cuda.CUDAGraph");
#endif
  LT_CATCH
}

void lt_cuda_graph_free(void *graph) {
#ifdef LTORCH_WITH_CUDA_GRAPHS
  delete static_cast<at::cuda::CUDAGraph *>(graph);
#else
  (void)graph;
#endif
}

int lt_cuda_graph_op(void *graph, int op, uint64_t pool0, uint64_t pool1, int mode, uint64_t *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  auto *g = static_cast<at::cuda::CUDAGraph *>(graph);
  if (g == nullptr) throw lt::ValueError("cuda.CUDAGraph: the graph was freed");
  static const char *names[] = {"capture_begin", "capture_end", "replay", "reset", "pool", "instantiate",
                                "enable_debug_mode"};
  if (op < 0 || op > 6) throw lt::ValueError("cuda.CUDAGraph: unknown operation " + std::to_string(op));
  std::string what = std::string("cuda.CUDAGraph.") + names[op];
  named(what.c_str(), [&] {
    switch (op) {
      case 0: {
        static const cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                                      cudaStreamCaptureModeRelaxed};
        if (mode < 0 || mode > 2) throw lt::ValueError(what + ": unknown capture_error_mode");
        g->capture_begin({pool0, pool1}, modes[mode]);
        break;
      }
      case 1: g->capture_end(); break;
      case 2: g->replay(); break;
      case 3: g->reset(); break;
      case 4: {
        auto p = g->pool();
        out[0] = p.first;
        out[1] = p.second;
        break;
      }
      case 5: g->instantiate(); break;
      default: g->enable_debug_mode(); break;
    }
  });
#else
  (void)graph;
  (void)op;
  (void)pool0;
  (void)pool1;
  (void)mode;
  (void)out;
  no_toolkit("cuda.CUDAGraph");
#endif
  LT_CATCH
}

int lt_cuda_can_device_access_peer(int index, int peer, int *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  c10::DeviceIndex d = device_of(index, "cuda.can_device_access_peer");
  c10::DeviceIndex p = device_of(peer, "cuda.can_device_access_peer");
  named("cuda.can_device_access_peer", [&] { *out = at::cuda::canDeviceAccessPeer(d, p) ? 1 : 0; });
#else
  (void)index;
  (void)peer;
  (void)out;
  no_toolkit("cuda.can_device_access_peer");
#endif
  LT_CATCH
}

/* set: 1 sets the fraction of the device's memory the caching allocator may use, 0 reads it. */
int lt_cuda_memory_fraction(int index, int set, double fraction, double *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  const char *what = set ? "cuda.set_per_process_memory_fraction" : "cuda.get_per_process_memory_fraction";
  c10::DeviceIndex d = device_of(index, what);
  named(what, [&] {
    if (set) c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, d);
    else *out = c10::cuda::CUDACachingAllocator::getMemoryFraction(d);
  });
#else
  (void)index;
  (void)fraction;
  (void)out;
  no_toolkit(set ? "cuda.set_per_process_memory_fraction" : "cuda.get_per_process_memory_fraction");
#endif
  LT_CATCH
}

/* mode >= 0 sets (0 default, 1 warn, 2 error); out: the mode after the call. */
int lt_cuda_sync_debug_mode(int mode, int *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  init_cuda(mode >= 0 ? "cuda.set_sync_debug_mode" : "cuda.get_sync_debug_mode");
  if (mode > 2) throw lt::ValueError("cuda.set_sync_debug_mode: invalid mode " + std::to_string(mode));
  if (mode >= 0) c10::cuda::warning_state().set_sync_debug_mode(static_cast<c10::cuda::SyncDebugMode>(mode));
  *out = static_cast<int>(c10::cuda::warning_state().get_sync_debug_mode());
#else
  (void)out;
  no_toolkit(mode >= 0 ? "cuda.set_sync_debug_mode" : "cuda.get_sync_debug_mode");
#endif
  LT_CATCH
}

/* A fresh memory-pool id for capture_begin(pool=...), shared by graphs that should share memory. */
int lt_cuda_graph_pool_handle(uint64_t *out) {
  LT_TRY
#ifdef LTORCH_WITH_CUDA_GRAPHS
  auto p = at::cuda::graph_pool_handle();
  out[0] = p.first;
  out[1] = p.second;
#else
  (void)out;
  no_toolkit("cuda.graph_pool_handle");
#endif
  LT_CATCH
}

}  // extern "C"
