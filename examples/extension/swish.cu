/*
 * swish.cu — the CUDA kernels of the extension example, the GPU twins of swish.c: over
 * contiguous float32/float64 device arrays of n elements,
 *
 *   forward   y  = x * s                         s = sigmoid(x)
 *   backward  dx = g * s * (1 + x * (1 - s))     (d/dx of x*s, times the incoming gradient g)
 *
 * with sigmoid as in swish.c: 1/(1+exp(-x)) for x >= 0 and exp(x)/(1+exp(x)) otherwise, so
 * neither branch overflows exp for large |x| and the GPU agrees with the CPU to rounding.
 *
 * Launch config: 256 threads a block, min(ceil(n/256), 4096) blocks, and a grid-stride loop
 * (64-bit indices) so any n is covered: 4096 x 256 = 1M threads is several resident waves on
 * an H100/H200 (132 SMs x 2048 threads), and each thread takes more elements beyond that.
 * n == 0 launches nothing.
 *
 * Each launcher is plain C: device pointers, n, and a cudaStream_t passed as void * (NULL = the
 * default stream, the one libtorch uses unless the user changes streams), launching on the
 * current CUDA device. It returns 0, or the cudaError_t of cudaGetLastError() after the launch
 * (a bad config or a missing kernel image for this GPU's architecture). Kernel faults surface
 * later, at the next synchronising call. The Lua wrapper (swish.lua) checks dtype, device and
 * contiguity, allocates the outputs with torch.empty_like, and looks these up only for CUDA
 * tensors, so a library built without this file still serves CPU tensors.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#ifndef LTORCH_EXPORT
#define LTORCH_EXPORT
#endif

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

__device__ inline float sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

__device__ inline double sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

template <typename T>
__global__ void forward_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t n) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = x[i] * sigmoid(x[i]);
  }
}

template <typename T>
__global__ void backward_kernel(const T *__restrict__ x, const T *__restrict__ g, T *__restrict__ dx,
                                int64_t n) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    T s = sigmoid(x[i]);
    dx[i] = g[i] * s * (T(1) + x[i] * (T(1) - s));
  }
}

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < kMaxBlocks ? b : kMaxBlocks);
}

int launch_status() { return (int)cudaGetLastError(); }

}  // namespace

extern "C" {

LTORCH_EXPORT int swish_forward_f32_cuda(const float *x, float *y, int64_t n, void *stream) {
  if (n <= 0) return 0;
  forward_kernel<float><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, y, n);
  return launch_status();
}

LTORCH_EXPORT int swish_forward_f64_cuda(const double *x, double *y, int64_t n, void *stream) {
  if (n <= 0) return 0;
  forward_kernel<double><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, y, n);
  return launch_status();
}

LTORCH_EXPORT int swish_backward_f32_cuda(const float *x, const float *g, float *dx, int64_t n,
                                          void *stream) {
  if (n <= 0) return 0;
  backward_kernel<float><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, g, dx, n);
  return launch_status();
}

LTORCH_EXPORT int swish_backward_f64_cuda(const double *x, const double *g, double *dx, int64_t n,
                                          void *stream) {
  if (n <= 0) return 0;
  backward_kernel<double><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, g, dx, n);
  return launch_status();
}

}  // extern "C"
