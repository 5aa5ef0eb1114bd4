/*
 * lt_settings.cpp — process-wide settings and facts of the C ABI: libtorch's version, the
 * default CPU generator's seed (torch.manual_seed, torch.seed, torch.initial_seed), the intra-op
 * thread count, and the dtype and device codes Lua passes (lt::scalar_type, lt::device,
 * lt::options: their checks, and whether a device is usable here). CUDA device control is
 * lt_cuda.cpp; the switches of libtorch's global context are lt_context.cpp.
 */
#include "lt_internal.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/api/include/torch/version.h>

#include <mutex>
#include <string>

namespace lt {

std::string build_name() { return std::string("this libtorch build (") + lt_version() + ")"; }

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
  return at::TensorOptions()
      .dtype(scalar_type(opt->dtype))
      .device(device(opt->device_type, opt->device_index))
      .pinned_memory(opt->pin_memory != 0);
}

at::Tensor finish(at::Tensor t, const lt_options *opt) {
  if (opt == nullptr) return t;
  // factories that fill a tensor they made themselves (torch.tensor from Lua data) pin it here
  if (opt->pin_memory && !t.is_pinned()) t = t.pin_memory();
  if (opt->requires_grad) t.set_requires_grad(true);
  return t;
}

}  // namespace lt

extern "C" {

const char *lt_version(void) {
  static const std::string version = std::to_string(TORCH_VERSION_MAJOR) + "." +
                                     std::to_string(TORCH_VERSION_MINOR) + "." +
                                     std::to_string(TORCH_VERSION_PATCH);
  return version.c_str();
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
    case c10::DeviceType::Meta:   // shapes, dtypes and devices without data: always available
      lt::install_meta_kernels();
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
