/*
 * lt_random.cpp — the default random generators of every device type: their states (for
 * torch.cuda.get_rng_state / set_rng_state, torch.random.fork_rng, activation checkpointing and
 * torch.training_state) and seeds (torch.cuda.initial_seed, seed, seed_all).
 *
 * A state is what libtorch's generator gives: a 1-D uint8 CPU tensor (the CPU's Mersenne
 * Twister; CUDA's Philox seed and offset). A device index of -1 is the current device of that
 * type. CUDA's generators are reached through libtorch's device-generic hooks, so asking for one
 * on a machine without a GPU raises libtorch's own error, the one PyTorch shows ("Found no NVIDIA
 * driver on your system ...").
 *
 * Usage (C):  lt_tensor *s; lt_default_generator_get_state(1, 0, &s);   // cuda:0
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <mutex>

namespace {

/* The default generator of (device_type, index); for CUDA, index -1 is the current device. */
at::Generator default_generator(int device_type, int index) {
  auto type = static_cast<c10::DeviceType>(device_type);
  switch (type) {
    case c10::DeviceType::CPU:
      return at::detail::getDefaultCPUGenerator();
    case c10::DeviceType::CUDA: {
      // Initializes CUDA as PyTorch's torch.cuda.* do: without a driver this raises its message.
      at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
      const auto &hooks = at::detail::getCUDAHooks();
      c10::DeviceIndex count = hooks.deviceCount();
      if (index < -1 || index >= count)
        throw lt::ValueError("invalid CUDA device index " + std::to_string(index) + " (" + std::to_string(count) +
                             " CUDA device(s) visible)");
      c10::DeviceIndex i = index == -1 ? hooks.getCurrentDevice() : static_cast<c10::DeviceIndex>(index);
      return hooks.getDefaultGenerator(i);
    }
    default:
      throw lt::ValueError("no default random generator for device type " + c10::DeviceTypeName(type, true));
  }
}

}  // namespace

extern "C" {

int lt_default_generator_get_state(int device_type, int index, lt_tensor **out) {
  LT_TRY
  auto gen = default_generator(device_type, index);
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = lt::wrap(gen.get_state());
  LT_CATCH
}

int lt_default_generator_set_state(int device_type, int index, const lt_tensor *state) {
  LT_TRY
  const at::Tensor &s = lt::get(state);
  if (s.scalar_type() != at::kByte || s.dim() != 1 || !s.is_cpu())
    throw lt::ValueError("RNG state must be a 1-D uint8 CPU tensor (what get_rng_state() returns), got " +
                         std::string(c10::toString(s.scalar_type())) + " of " + std::to_string(s.dim()) + " dim(s) on " +
                         s.device().str());
  auto gen = default_generator(device_type, index);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(s.contiguous());
  LT_CATCH
}

/* The generator's current seed (torch.cuda.initial_seed). */
int lt_default_generator_initial_seed(int device_type, int index, uint64_t *out) {
  LT_TRY
  auto gen = default_generator(device_type, index);
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = gen.current_seed();
  LT_CATCH
}

/* Seeds the generator non-deterministically (torch.cuda.seed); returns the seed chosen. */
int lt_default_generator_seed(int device_type, int index, uint64_t *out) {
  LT_TRY
  auto gen = default_generator(device_type, index);
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = gen.seed();
  LT_CATCH
}

}  // extern "C"
