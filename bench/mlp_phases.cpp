// bench/mlp_phases.cpp — plain libtorch's twin of bench/mlp_phases.lua: the same MLP (or CNN)
// step, phase by phase (forward and loss, zero_grad, backward, optimizer step), with libtorch's
// C++ AdamW as bench/workloads.cpp. Build: cmake --build build --target bench_mlp_phases_cpp
// Run: build/bench_mlp_phases_cpp [STEPS] [mlp|cnn]
// Output: "PHASES cpp <fwd> <zero_grad> <bwd> <step> <total>", µs of process CPU time per step.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

static double clock_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  std::string workload = argc > 2 ? argv[2] : "mlp";
  if (workload != "mlp" && workload != "cnn") {
    std::fprintf(stderr, "WORKLOAD: mlp or cnn, not %s\n", workload.c_str());
    return 2;
  }
  const bool cnn = workload == "cnn";
  long steps = argc > 1 ? std::atol(argv[1]) : (cnn ? 100 : 2000), warm = cnn ? 10 : 200;
  torch::manual_seed(0);
  namespace nn = torch::nn;
  nn::Sequential model;
  torch::Tensor x, y;
  if (cnn) {
    model = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                           nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                           nn::Flatten(), nn::Linear(32 * 7 * 7, 10));
    x = torch::randn({128, 1, 28, 28}), y = torch::randint(10, {128});
  } else {
    model = nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
    x = torch::randn({64, 784}), y = torch::randint(10, {64});
  }
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-3));
  double t[4] = {0, 0, 0, 0};
  // declared outside the loop, as the Python and Lua twins' `loss`: the previous step's loss and
  // what it holds are released by the assignment, inside the forward phase, not between steps
  // where no phase would count them
  torch::Tensor loss;
  for (long i = 0; i < warm + steps; i++) {
    double t0 = clock_s();
    loss = nn::functional::cross_entropy(model->forward(x), y);
    double t1 = clock_s();
    opt.zero_grad();
    double t2 = clock_s();
    loss.backward();
    double t3 = clock_s();
    opt.step();
    double t4 = clock_s();
    if (i >= warm) {
      t[0] += t1 - t0;
      t[1] += t2 - t1;
      t[2] += t3 - t2;
      t[3] += t4 - t3;
    }
  }
  auto us = [&](double v) { return v / steps * 1e6; };
  std::printf("PHASES cpp %.1f %.1f %.1f %.1f %.1f\n", us(t[0]), us(t[1]), us(t[2]), us(t[3]),
              us(t[0] + t[1] + t[2] + t[3]));
  return 0;
}
