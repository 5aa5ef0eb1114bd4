// bench/peak_memory.cpp — the C++ floor of bench/peak_memory.lua: the same training steps in
// plain libtorch (bench/workloads.cpp's models and sizes), with tensors freed the moment their
// last reference goes. Linked against libltorch_bindings so that the CPU allocator counting the
// bytes is the one ltorch installs (bindings/lt_allocator.cpp, installed when the library loads;
// lt_memory()'s live/peak bytes): both sides are measured by one counting allocator.
// Build: cmake --build build --target bench_peak_memory_cpp
// Run:   build/bench_peak_memory_cpp [mlp|cnn|transformer|all] [STEPS]   (output as the Lua side's)
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>

extern "C" {
#include "lt.h"
}

static void result(const std::string &name, double v, const char *unit) {
  std::printf("RESULT %s %.10g %s\n", name.c_str(), v, unit);
}

static std::function<void()> build(const std::string &name) {
  namespace nn = torch::nn;
  auto ce = [](torch::Tensor out, torch::Tensor y) { return torch::nn::functional::cross_entropy(out, y); };
  if (name == "mlp") {
    nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
    auto opt = std::make_shared<torch::optim::AdamW>(model->parameters(), torch::optim::AdamWOptions(1e-3));
    auto x = torch::randn({64, 784}), y = torch::randint(10, {64});
    return [=]() mutable {
      auto loss = ce(model->forward(x), y);
      opt->zero_grad();
      loss.backward();
      opt->step();
    };
  }
  if (name == "cnn") {
    nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                         nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                         nn::Flatten(), nn::Linear(32 * 7 * 7, 10));
    auto opt = std::make_shared<torch::optim::AdamW>(model->parameters(), torch::optim::AdamWOptions(1e-3));
    auto x = torch::randn({128, 1, 28, 28}), y = torch::randint(10, {128});
    return [=]() mutable {
      auto loss = ce(model->forward(x), y);
      opt->zero_grad();
      loss.backward();
      opt->step();
    };
  }
  // C++'s TransformerEncoder is sequence-first (S, N, E); the work is the same as batch-first.
  nn::TransformerEncoder model(nn::TransformerEncoderOptions(
      nn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(512).dropout(0.0), 2));
  auto opt = std::make_shared<torch::optim::AdamW>(model->parameters(), torch::optim::AdamWOptions(1e-4));
  auto x = torch::randn({128, 8, 256});
  return [=]() mutable {
    auto out = model->forward(x);
    auto loss = (out * out).mean();
    opt->zero_grad();
    loss.backward();
    opt->step();
  };
}

static void measure(const std::string &name, long steps) {
  torch::manual_seed(0);
  auto step = build(name);
  for (int i = 0; i < 5; i++) step();
  lt_memory_stats *mem = lt_memory();
  mem->peak_bytes = mem->live_bytes;
  int64_t base = mem->live_bytes;
  std::clock_t t0 = std::clock();
  for (long i = 0; i < steps; i++) step();
  double ms = 1000.0 * static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC / steps;
  result(name + "_peak_bytes", static_cast<double>(mem->peak_bytes), "bytes");
  result(name + "_base_bytes", static_cast<double>(base), "bytes");
  result(name + "_gc_cycles_per_step", 0, "cycles");
  result(name + "_ms_per_step", ms, "ms");
}

int main(int argc, char **argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  long steps = argc > 2 ? std::atol(argv[2]) : 50;
  at::set_num_threads(1);
  if (which == "all") {
    for (const char *name : {"mlp", "cnn", "transformer"}) measure(name, steps);
  } else if (which == "mlp" || which == "cnn" || which == "transformer") {
    measure(which, steps);
  } else {
    std::fprintf(stderr, "unknown workload %s (mlp, cnn, transformer or all)\n", which.c_str());
    return 2;
  }
  return 0;
}
