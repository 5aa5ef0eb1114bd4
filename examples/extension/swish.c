/*
 * swish.c — the kernels of the extension example: y = x * sigmoid(x) and its backward
 * dx = g * s * (1 + x * (1 - s)), s = sigmoid(x), over contiguous float32/float64 arrays of n
 * elements. The Lua wrapper (swish.lua) checks dtype, device and contiguity and owns all memory.
 *
 * sigmoid is computed as 1/(1+exp(-x)) for x >= 0 and exp(x)/(1+exp(x)) otherwise, so neither
 * branch overflows exp for large |x|.
 */
#include <math.h>
#include <stdint.h>

#ifndef LTORCH_EXPORT
#define LTORCH_EXPORT
#endif

static inline double sigmoid_d(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

static inline float sigmoid_f(float x) {
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

LTORCH_EXPORT void swish_forward_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoid_f(x[i]);
}

LTORCH_EXPORT void swish_forward_f64(const double *x, double *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoid_d(x[i]);
}

LTORCH_EXPORT void swish_backward_f32(const float *x, const float *g, float *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float s = sigmoid_f(x[i]);
    dx[i] = g[i] * s * (1.0f + x[i] * (1.0f - s));
  }
}

LTORCH_EXPORT void swish_backward_f64(const double *x, const double *g, double *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double s = sigmoid_d(x[i]);
    dx[i] = g[i] * s * (1.0 + x[i] * (1.0 - s));
  }
}
