// bench/mlp_phases.cpp — plain libtorch's twin of bench/mlp_phases.lua: the same MLP (or CNN, or
// tiny) step, phase by phase (forward and loss, zero_grad, backward, optimizer step), with
// libtorch's C++ AdamW as bench/workloads.cpp. Build: cmake --build build --target bench_mlp_phases_cpp
// Run: build/bench_mlp_phases_cpp [STEPS] [mlp|cnn|tiny] [count]
// Output: "PHASES cpp <fwd> <zero_grad> <bwd> <step> <total>", µs of process CPU time per step.
// With `count`: the warm-up steps, then STEPS untimed steps inside counted_steps(), for callgrind's
// --toggle-collect (bench/step_cost.sh); prints "COUNTED cpp <workload> <steps>".
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

struct Step {
  torch::nn::Sequential model;
  torch::optim::AdamW *opt;
  torch::Tensor x, y;
  // kept between steps, as the Python and Lua twins' `loss`: the previous step's loss and what it
  // holds are released by the assignment, inside the forward phase, not between steps where no
  // phase would count them
  torch::Tensor loss;
  void run() {
    loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
};

// The steps callgrind counts (bench/step_cost.sh: --toggle-collect=counted_steps*).
__attribute__((noinline)) void counted_steps(Step &s, long steps) {
  for (long i = 0; i < steps; i++) s.run();
}

int main(int argc, char **argv) {
  std::string workload = argc > 2 ? argv[2] : "mlp";
  if (workload != "mlp" && workload != "cnn" && workload != "tiny") {
    std::fprintf(stderr, "WORKLOAD: mlp, cnn or tiny, not %s\n", workload.c_str());
    return 2;
  }
  const bool count = argc > 3 && std::string(argv[3]) == "count";
  const bool cnn = workload == "cnn", tiny = workload == "tiny";
  long steps = argc > 1 ? std::atol(argv[1]) : (cnn ? 100 : tiny ? 20000 : 2000);
  long warm = cnn ? 10 : tiny ? 2000 : 200;
  torch::manual_seed(0);
  namespace nn = torch::nn;
  Step s;
  if (cnn) {
    s.model = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                             nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                             nn::Flatten(), nn::Linear(32 * 7 * 7, 10));
    s.x = torch::randn({128, 1, 28, 28}), s.y = torch::randint(10, {128});
  } else if (tiny) {
    s.model = nn::Sequential(nn::Linear(8, 8), nn::ReLU(), nn::Linear(8, 4));
    s.x = torch::randn({2, 8}), s.y = torch::randint(4, {2});
  } else {
    s.model = nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
    s.x = torch::randn({64, 784}), s.y = torch::randint(10, {64});
  }
  torch::optim::AdamW opt(s.model->parameters(), torch::optim::AdamWOptions(1e-3));
  s.opt = &opt;
  if (count) {
    for (long i = 0; i < warm; i++) s.run();
    counted_steps(s, steps);
    std::printf("COUNTED cpp %s %ld\n", workload.c_str(), steps);
    return 0;
  }
  double t[4] = {0, 0, 0, 0};
  for (long i = 0; i < warm + steps; i++) {
    double t0 = clock_s();
    s.loss = nn::functional::cross_entropy(s.model->forward(s.x), s.y);
    double t1 = clock_s();
    opt.zero_grad();
    double t2 = clock_s();
    s.loss.backward();
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
