/*
 * lt_cpu_generator.cpp — torch.Generator for the CPU: a generator object of its own (PyTorch's
 * torch.Generator()), and the draws the data samplers make with it, so that a sampler's
 * shuffle is PyTorch's stream for the same seed (lua/torch/generator.lua, lua/torch/data/sampler.lua).
 *
 * A NULL generator means libtorch's default CPU generator (the one torch.manual_seed seeds),
 * as generator=None does in PyTorch. The ops lock the generator's mutex themselves; state
 * reads and writes lock it here.
 *
 * Use (from Lua's FFI): lt_cpu_generator_new(&g); lt_cpu_generator_manual_seed(g, 42);
 *   lt_cpu_generator_randperm(&t, g, 10); lt_cpu_generator_free(g).
 */
#include "lt_internal.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randperm.h>

#include <mutex>

struct lt_cpu_generator {
  at::Generator gen;
};

static std::optional<at::Generator> opt(lt_cpu_generator *g) {
  if (g == nullptr) return std::nullopt;
  return g->gen;
}

int lt_cpu_generator_new(lt_cpu_generator **out) {
  LT_TRY
  *out = new lt_cpu_generator{at::make_generator<at::CPUGeneratorImpl>()};
  LT_CATCH
}

void lt_cpu_generator_free(lt_cpu_generator *g) { delete g; }

int lt_cpu_generator_manual_seed(lt_cpu_generator *g, uint64_t seed) {
  LT_TRY
  std::lock_guard<std::mutex> lock(g->gen.mutex());
  g->gen.set_current_seed(seed);
  LT_CATCH
}

int lt_cpu_generator_initial_seed(lt_cpu_generator *g, uint64_t *out) {
  LT_TRY
  std::lock_guard<std::mutex> lock(g->gen.mutex());
  *out = g->gen.current_seed();
  LT_CATCH
}

int lt_cpu_generator_get_state(lt_tensor **out, lt_cpu_generator *g) {
  LT_TRY
  std::lock_guard<std::mutex> lock(g->gen.mutex());
  *out = lt::wrap(g->gen.get_state());
  LT_CATCH
}

int lt_cpu_generator_set_state(lt_cpu_generator *g, const lt_tensor *state) {
  LT_TRY
  const at::Tensor &s = lt::get(state);
  if (s.scalar_type() != at::kByte || s.dim() != 1)
    throw lt::ValueError("RNG state must be a 1-D uint8 tensor (Generator:get_state())");
  std::lock_guard<std::mutex> lock(g->gen.mutex());
  g->gen.set_state(s.contiguous());
  LT_CATCH
}

int lt_cpu_generator_randperm(lt_tensor **out, lt_cpu_generator *g, int64_t n) {
  LT_TRY_OP
  *out = lt::wrap(at::randperm(n, opt(g), at::TensorOptions().dtype(at::kLong)));
  LT_CATCH
}

int lt_cpu_generator_randint(lt_tensor **out, lt_cpu_generator *g, int64_t high, int64_t size) {
  LT_TRY_OP
  *out = lt::wrap(at::randint(high, {size}, opt(g), at::TensorOptions().dtype(at::kLong)));
  LT_CATCH
}

int lt_cpu_generator_random_int64(lt_cpu_generator *g, int64_t *out) {
  LT_TRY_OP
  *out = at::empty({}, at::TensorOptions().dtype(at::kLong)).random_(opt(g)).item<int64_t>();
  LT_CATCH
}

int lt_cpu_generator_multinomial(lt_tensor **out, lt_cpu_generator *g, const lt_tensor *weights, int64_t n,
                             int replacement) {
  LT_TRY_OP
  *out = lt::wrap(at::multinomial(lt::get(weights), n, replacement != 0, opt(g)));
  LT_CATCH
}
