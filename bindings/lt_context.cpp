/*
 * lt_context.cpp — switches of libtorch's global context (at::globalContext()) that PyTorch's
 * torch.* functions set: deterministic algorithms (torch.use_deterministic_algorithms, its
 * warn_only form and torch.set_deterministic_debug_mode) and the float32 matmul precision
 * (torch.set_float32_matmul_precision). Process-wide, as in PyTorch; lua/torch/_determinism.lua
 * is the Lua side.
 */
#include "lt_internal.hpp"

#include <ATen/Context.h>

#include <string>

extern "C" {

int lt_set_deterministic(int on, int warn_only) {
  LT_TRY
  at::globalContext().setDeterministicAlgorithms(on != 0, warn_only != 0);
  LT_CATCH
}

int lt_get_deterministic(int *on, int *warn_only) {
  LT_TRY
  *on = at::globalContext().deterministicAlgorithms() ? 1 : 0;
  *warn_only = at::globalContext().deterministicAlgorithmsWarnOnly() ? 1 : 0;
  LT_CATCH
}

int lt_set_float32_matmul_precision(const char *name) {
  LT_TRY
  if (name == nullptr) throw lt::ValueError("set_float32_matmul_precision: precision is NULL");
  at::globalContext().setFloat32MatmulPrecision(std::string(name));
  LT_CATCH
}

int lt_get_float32_matmul_precision(int *out) {
  LT_TRY
  switch (at::globalContext().float32MatmulPrecision()) {
    case at::Float32MatmulPrecision::HIGHEST: *out = 0; break;
    case at::Float32MatmulPrecision::HIGH: *out = 1; break;
    default: *out = 2; break;
  }
  LT_CATCH
}

}  // extern "C"
