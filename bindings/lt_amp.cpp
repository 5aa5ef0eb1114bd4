/*
 * lt_amp.cpp — automatic mixed precision through the C ABI: libtorch's autocast state, per device
 * type (on/off and the lower-precision dtype), the nesting count and the cast cache.
 *
 * What it does: lt_autocast_enter switches autocast on (or off) for "cpu" or "cuda", records the
 * previous state in an lt_autocast_state the caller keeps, and bumps the nesting count;
 * lt_autocast_exit undoes it and clears the cast cache when the outermost region ends. This is
 * PyTorch's `torch.autocast.__enter__/__exit__` (torch/amp/autocast_mode.py) in C. The state is
 * thread-local in libtorch, so enter/exit must pair up in LIFO order on one thread; the Lua side
 * (lua/torch/amp/init.lua) brackets a function call with them under pcall.
 *
 * Version notes (the only version-specific code in this file):
 *   - libtorch 2.4 made the autocast C++ API device-generic (is_autocast_enabled(DeviceType),
 *     set_autocast_dtype(DeviceType, ...)) and turned the per-device functions used by 1.13
 *     (is_cpu_enabled, set_autocast_gpu_dtype, ...) into deprecated wrappers that warn at run
 *     time; the helpers below pick the generic calls from 2.4 on.
 *   - CPU autocast takes float16 only in newer libtorch (2.x; 1.13's setter rejects it with
 *     "AutocastCPU only support Bfloat16"). Which release added it is not pinned down here, so
 *     no version test: cpu_half_supported() asks this libtorch's own setter once.
 *
 * Usage (C):  lt_autocast_state prev;
 *             lt_autocast_enter(0, 1, -1, -1, &prev);   // cpu, on, keep dtype and cache setting
 *             ... run ops: matmul/linear compute in bfloat16 ...
 *             lt_autocast_exit(0, &prev);
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/api/include/torch/version.h>

#include <string>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define LT_AUTOCAST_DEVICE_GENERIC 1
#endif

namespace {

/* Autocast exists for the CPU and CUDA here. `use` asks for a device that will run autocast
 * regions; querying CUDA's (thread-local) flags works on any build. */
c10::DeviceType autocast_device(int code, bool use) {
  if (code == static_cast<int>(c10::DeviceType::CPU)) return c10::DeviceType::CPU;
  if (code == static_cast<int>(c10::DeviceType::CUDA)) {
    if (use && !at::hasCUDA())
      throw lt::ValueError("device_type 'cuda' is not available: " + lt::build_name() +
                           " has no CUDA support or sees no CUDA device");
    return c10::DeviceType::CUDA;
  }
  throw lt::ValueError("device_type must be 'cpu' or 'cuda' (autocast is not supported for device type code " +
                       std::to_string(code) + ")");
}

bool is_enabled(c10::DeviceType d) {
#ifdef LT_AUTOCAST_DEVICE_GENERIC
  return at::autocast::is_autocast_enabled(d);
#else
  return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

void set_enabled(c10::DeviceType d, bool on) {
#ifdef LT_AUTOCAST_DEVICE_GENERIC
  at::autocast::set_autocast_enabled(d, on);
#else
  if (d == c10::DeviceType::CUDA) at::autocast::set_enabled(on); else at::autocast::set_cpu_enabled(on);
#endif
}

c10::ScalarType get_dtype(c10::DeviceType d) {
#ifdef LT_AUTOCAST_DEVICE_GENERIC
  return at::autocast::get_autocast_dtype(d);
#else
  return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

void set_dtype(c10::DeviceType d, c10::ScalarType s) {
#ifdef LT_AUTOCAST_DEVICE_GENERIC
  at::autocast::set_autocast_dtype(d, s);
#else
  if (d == c10::DeviceType::CUDA) at::autocast::set_autocast_gpu_dtype(s); else at::autocast::set_autocast_cpu_dtype(s);
#endif
}

/* PyTorch's name for a dtype, for messages ("torch.float64"). */
std::string dtype_name(c10::ScalarType s) {
  switch (s) {
    case c10::ScalarType::Float: return "torch.float32";
    case c10::ScalarType::Double: return "torch.float64";
    case c10::ScalarType::Half: return "torch.float16";
    case c10::ScalarType::BFloat16: return "torch.bfloat16";
    case c10::ScalarType::Byte: return "torch.uint8";
    case c10::ScalarType::Char: return "torch.int8";
    case c10::ScalarType::Short: return "torch.int16";
    case c10::ScalarType::Int: return "torch.int32";
    case c10::ScalarType::Long: return "torch.int64";
    case c10::ScalarType::Bool: return "torch.bool";
    default: return std::string("torch.") + c10::toString(s);
  }
}

/* Whether this libtorch's CPU autocast takes float16: its setter is tried once (on the calling
 * thread, whose CPU autocast dtype is put back) and raises where it does not. */
bool cpu_half_supported() {
  static const bool supported = [] {
    const c10::ScalarType before = get_dtype(c10::DeviceType::CPU);
    try {
      set_dtype(c10::DeviceType::CPU, c10::ScalarType::Half);
    } catch (const c10::Error &) {
      return false;
    }
    set_dtype(c10::DeviceType::CPU, before);
    return true;
  }();
  return supported;
}

/* The lower-precision types autocast can compute in: bfloat16 or float16, and on the CPU of a
 * libtorch without float16 CPU autocast bfloat16 only. Anything else (float32, float64,
 * integers) is misuse. */
void check_dtype(c10::DeviceType d, c10::ScalarType s) {
  const bool cpu = d == c10::DeviceType::CPU;
  const bool half_ok = !cpu || cpu_half_supported();
  if (s == c10::ScalarType::BFloat16 || (s == c10::ScalarType::Half && half_ok)) return;
  throw lt::ValueError(std::string(cpu ? "CPU" : "CUDA") + " autocast in " + lt::build_name() + " supports " +
                       (half_ok ? "torch.bfloat16 and torch.float16" : "only torch.bfloat16") + ", got " +
                       dtype_name(s));
}

}  // namespace

extern "C" {

int lt_autocast_is_enabled(int device_type, int *out) {
  LT_TRY
  *out = is_enabled(autocast_device(device_type, false)) ? 1 : 0;
  LT_CATCH
}

int lt_autocast_get_dtype(int device_type, int *out) {
  LT_TRY
  *out = static_cast<int>(get_dtype(autocast_device(device_type, false)));
  LT_CATCH
}

int lt_autocast_is_cache_enabled(int *out) {
  LT_TRY
  *out = at::autocast::is_autocast_cache_enabled() ? 1 : 0;
  LT_CATCH
}

int lt_autocast_clear_cache(void) {
  LT_TRY
  at::autocast::clear_cache();
  LT_CATCH
}

int lt_autocast_enter(int device_type, int enabled, int dtype, int cache_enabled, lt_autocast_state *prev) {
  LT_TRY
  if (prev == nullptr) throw lt::ValueError("autocast: no slot for the previous state");
  /* Validate everything before touching the state: a failed enter leaves nothing to undo. A
   * disabled region needs no device (autocast(cuda, enabled=false) is a no-op on a CPU build). */
  c10::DeviceType d = autocast_device(device_type, enabled != 0);
  c10::ScalarType target = dtype < 0 ? get_dtype(d) : lt::scalar_type(dtype);
  if (dtype >= 0) check_dtype(d, target);
  prev->enabled = is_enabled(d) ? 1 : 0;
  prev->dtype = static_cast<int>(get_dtype(d));
  prev->cache_enabled = at::autocast::is_autocast_cache_enabled() ? 1 : 0;
  set_dtype(d, target);   // first: where libtorch rejects the dtype, nothing has changed yet
  set_enabled(d, enabled != 0);
  at::autocast::increment_nesting();
  if (cache_enabled >= 0) at::autocast::set_autocast_cache_enabled(cache_enabled != 0);
  LT_CATCH
}

int lt_autocast_exit(int device_type, const lt_autocast_state *prev) {
  LT_TRY
  if (prev == nullptr) throw lt::ValueError("autocast: no previous state to restore");
  c10::DeviceType d = autocast_device(device_type, false);
  /* Cast copies are cached only while some region is open; the outermost exit drops them. */
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_enabled(d, prev->enabled != 0);
  set_dtype(d, static_cast<c10::ScalarType>(prev->dtype));
  at::autocast::set_autocast_cache_enabled(prev->cache_enabled != 0);
  LT_CATCH
}

}  // extern "C"
