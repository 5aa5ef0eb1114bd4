// bench/workloads.cpp — the plain C++ (libtorch) side of the side-by-side benchmark; the same
// workloads, sizes, counts and output format as bench/workloads.lua (see there).
// Build (bench/run.lua does it when the binary is missing or older than this file):
//   g++ -O2 -std=c++17 bench/workloads.cpp -o build/bench_workloads_cpp \
//     -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10
// Run:  build/bench_workloads_cpp MODE [SCALE]
#include <torch/torch.h>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

static double scale = 1.0;

static long status_kb(const char *field) {
  std::ifstream f("/proc/self/status");
  std::string line, key = std::string(field) + ":";
  while (std::getline(f, line))
    if (line.compare(0, key.size(), key) == 0) return std::atol(line.c_str() + key.size());
  return -1;
}
static void result(const char *name, double v, const char *unit) { std::printf("RESULT %s %.6g %s\n", name, v, unit); }
static long count(double n, long lo = 1) { long c = (long)(n * scale + 0.5); return c < lo ? lo : c; }
static double now() {  // process CPU time, as in bench/workloads.lua
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double time_loop(long n, const std::function<void()> &fn) {
  for (long i = 0; i < std::max(1L, n / 10); i++) fn();
  double t0 = now();
  for (long i = 0; i < n; i++) fn();
  return now() - t0;
}

template <class Model>
static std::function<void()> train_step(Model model, torch::optim::Optimizer &opt, torch::Tensor x, torch::Tensor y,
                                        std::function<torch::Tensor(torch::Tensor, torch::Tensor)> lossfn) {
  return [model, &opt, x, y, lossfn]() mutable {
    auto loss = lossfn(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
}

static torch::Tensor ce(torch::Tensor out, torch::Tensor y) { return torch::nn::functional::cross_entropy(out, y); }

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "dispatch";
  if (argc > 2) scale = std::atof(argv[2]);
  torch::manual_seed(0);
  namespace nn = torch::nn;
  auto adamw = [](std::vector<torch::Tensor> p, double lr) {
    return torch::optim::AdamW(p, torch::optim::AdamWOptions(lr));
  };
  if (mode == "startup") return 0;  // bench/run.lua times process start + libtorch load
  if (mode == "dispatch") {
    long n = count(200000, 100);
    auto a = torch::randn({10}), b = torch::randn({10});
    auto m1 = torch::randn({8, 8}), m2 = torch::randn({8, 8});
    auto big = torch::randn({16, 8});
    torch::Tensor r;
    result("add_us", time_loop(n, [&] { r = a + b; }) / n * 1e6, "us/op");
    result("mul_us", time_loop(n, [&] { r = a * b; }) / n * 1e6, "us/op");
    result("matmul8_us", time_loop(n, [&] { r = m1.matmul(m2); }) / n * 1e6, "us/op");
    result("index_us", time_loop(n, [&] { r = big[3]; }) / n * 1e6, "us/op");
  } else if (mode == "mlp" || mode == "memory") {
    nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
    auto opt = adamw(model->parameters(), 1e-3);
    auto x = torch::randn({64, 784}), y = torch::randint(10, {64});
    auto step = train_step(model, opt, x, y, ce);
    if (mode == "mlp") {
      long n = count(2000, 3);
      result("mlp_steps_per_s", n / time_loop(n, step), "steps/s");
    } else {
      long n = count(10000, 40), every = std::max(1L, n / 100), warm = n / 10, half = n / 2;
      long rss_warm = 0, max1 = 0, max2 = 0, n1 = 0, n2 = 0;
      double sum1 = 0, sum2 = 0;
      for (long i = 1; i <= n; i++) {
        step();
        if (i == warm) rss_warm = status_kb("VmRSS");
        if (i % every == 0 && i >= warm) {
          long r = status_kb("VmRSS");
          if (i <= half) max1 = std::max(max1, r), sum1 += r, n1++;
          else max2 = std::max(max2, r), sum2 += r, n2++;
        }
      }
      result("mem_rss_after_warmup_kb", rss_warm, "kB");
      result("mem_rss_end_kb", status_kb("VmRSS"), "kB");
      result("mem_growth_kb", max2 - max1, "kB");
      result("mem_growth_mean_kb", sum2 / n2 - sum1 / n1, "kB");
    }
  } else if (mode == "cnn") {
    long n = count(100, 2);
    nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                         nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                         nn::Flatten(), nn::Linear(32 * 7 * 7, 10));
    auto opt = adamw(model->parameters(), 1e-3);
    long bs = count(128, 2);
    auto x = torch::randn({bs, 1, 28, 28}), y = torch::randint(10, {bs});
    result("cnn_steps_per_s", n / time_loop(n, train_step(model, opt, x, y, ce)), "steps/s");
  } else if (mode == "transformer") {
    long n = count(20, 2), layers = 2, bs = 8, seq = scale < 1 ? 16 : 128;
    // C++'s TransformerEncoder is sequence-first (S, N, E); the work is the same as batch-first.
    nn::TransformerEncoder model(nn::TransformerEncoderOptions(
        nn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(512).dropout(0.0), layers));
    auto opt = adamw(model->parameters(), 1e-4);
    auto x = torch::randn({seq, bs, 256});
    auto step = [&] {
      auto out = model->forward(x);
      auto loss = (out * out).mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
    };
    result("transformer_tokens_per_s", n * bs * seq / time_loop(n, step), "tokens/s");
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  result("peak_rss_kb", status_kb("VmHWM"), "kB");
  return 0;
}
