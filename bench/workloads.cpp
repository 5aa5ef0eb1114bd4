// bench/workloads.cpp — the plain C++ (libtorch) side of the side-by-side benchmark; the same
// workloads, sizes, counts and output format as bench/workloads.lua (see there).
// Build (bench/run.lua does it when the binary is missing or older than this file), against the
// same libtorch as ltorch, with zlib for the gzipped IDX files of the epoch mode:
//   cmake --build build --target bench_workloads_cpp
// Run:  build/bench_workloads_cpp MODE [SCALE] [OP]   (OP: dispatch's add, mul, matmul, index or forward8
//       alone, as bench/op_cost.sh counts it under callgrind; MODE transformer_api: the
//       transformer step on libtorch's own C++ nn::TransformerEncoder, a row of its own)
// The epoch mode is recipes/train_classifier.lua's default config written as a C++ user would:
// gzipped IDX read with zlib straight into uint8 tensors, the same seeded split, scaling and
// normalisation, then each epoch a randperm of the train split and batches gathered with
// index_select (no per-sample Dataset/collate as in the Lua and Python DataLoaders), the same
// MLP, head-bias init, AdamW, clip_grad_norm_, per-batch loss/accuracy, val under
// InferenceMode in batches of 1000, a metrics.jsonl line and torch::save of model + optimizer.
#include <torch/torch.h>
#include <ftw.h>
#include <sys/stat.h>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "sdpa_encoder.hpp"

// zlib, declared here so that only the runtime library (libz.so.1) is needed.
extern "C" {
void *gzopen(const char *path, const char *mode);
int gzread(void *file, void *buf, unsigned int len);
int gzclose(void *file);
}

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
// n timed calls after a warm-up of max(n/10, 10 at scale 1) calls (as in bench/workloads.lua);
// returns the timed seconds, and the warm-up's in *warmup_s when given.
static double time_loop(long n, const std::function<void()> &fn, double *warmup_s = nullptr) {
  double t0 = now();
  for (long i = 0; i < std::max({1L, n / 10, count(10)}); i++) fn();
  double t1 = now();
  for (long i = 0; i < n; i++) fn();
  if (warmup_s) *warmup_s = t1 - t0;
  return now() - t1;
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

static double wall() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// A gzipped uint8 IDX file -> uint8 tensor of its dims.
static torch::Tensor read_idx(const std::string &path) {
  void *f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open");
  unsigned char magic[4];
  if (gzread(f, magic, 4) != 4 || magic[0] || magic[1] || magic[2] != 0x08) throw std::runtime_error(path + ": not uint8 IDX");
  std::vector<int64_t> dims(magic[3]);
  for (auto &d : dims) {
    unsigned char b[4];
    if (gzread(f, b, 4) != 4) throw std::runtime_error(path + ": truncated");
    d = ((int64_t)b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
  }
  auto t = torch::empty(dims, torch::kUInt8);
  auto *p = (char *)t.data_ptr();
  int64_t left = t.numel();
  while (left > 0) {
    int k = gzread(f, p, (unsigned)std::min<int64_t>(left, 1 << 24));
    if (k <= 0) throw std::runtime_error(path + ": truncated");
    p += k, left -= k;
  }
  gzclose(f);
  return t;
}

static int epoch_workload() {
  namespace nn = torch::nn;
  const char *env = std::getenv("LTORCH_FASHION_MNIST_DIR");
  std::string fm = env && *env ? env : "/usr/share/datasets/fashion-mnist";
  const int64_t seed = 0, val_size = 5000, bs = 128;
  int64_t limit_train = scale < 1 ? count(55000, 2) : 0, limit_eval = scale < 1 ? count(5000, 2) : 0;
  auto limit = [](torch::Tensor t, int64_t n) { return (n > 0 && n < t.size(0)) ? t.narrow(0, 0, n) : t; };
  char tmpl[] = "/tmp/bench_epoch_XXXXXX";
  std::string out = mkdtemp(tmpl);
  double w0 = wall(), c0 = now();
  auto images = read_idx(fm + "/train-images-idx3-ubyte.gz");
  auto labels = read_idx(fm + "/train-labels-idx1-ubyte.gz").to(torch::kLong);
  auto test_images = read_idx(fm + "/t10k-images-idx3-ubyte.gz");
  auto test_labels = read_idx(fm + "/t10k-labels-idx1-ubyte.gz").to(torch::kLong);
  int64_t n = images.size(0);
  torch::manual_seed(seed);
  auto perm = torch::randperm(n);
  auto tr_idx = limit(perm.narrow(0, 0, n - val_size), limit_train);
  auto va_idx = limit(perm.narrow(0, n - val_size, val_size), limit_eval);
  auto x = images.to(torch::kFloat).div(255);
  auto xtr = x.index_select(0, tr_idx);
  double mean = xtr.mean().item<double>(), std = xtr.std().item<double>();
  auto prep = [&](torch::Tensor t) { return t.sub(mean).div(std).view({t.size(0), 784}); };
  auto xte = limit(test_images.to(torch::kFloat).div(255), limit_eval);
  auto train_x = prep(xtr), train_y = labels.index_select(0, tr_idx);
  auto val_x = prep(x.index_select(0, va_idx)), val_y = labels.index_select(0, va_idx);
  auto test_x = prep(xte), test_y = limit(test_labels, limit_eval);
  torch::manual_seed(seed);
  nn::Linear head(128, 10);
  nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Dropout(0.1), nn::Linear(256, 128), nn::ReLU(),
                       nn::Dropout(0.1), head);
  {
    torch::NoGradGuard ng;
    auto counts = torch::bincount(train_y, {}, 10).to(torch::kDouble).add(1);
    head->bias.copy_((counts / counts.sum()).log().to(torch::kFloat));
  }
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(1e-4));
  double w1 = wall();
  // one epoch
  const int64_t epoch = 1, ntr = train_x.size(0);
  auto gen = at::detail::createCPUGenerator(seed * 1048576 + epoch);
  model->train();
  double total = 0;
  int64_t seen = 0, correct = 0;
  auto order = torch::randperm(ntr, gen);
  for (int64_t i = 0; i < ntr; i += bs) {
    auto idx = order.narrow(0, i, std::min(bs, ntr - i));
    auto xb = train_x.index_select(0, idx), yb = train_y.index_select(0, idx);
    opt.zero_grad();
    auto outb = model->forward(xb).to(torch::kFloat);
    auto loss = ce(outb, yb);
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    int64_t b = yb.size(0);
    total += loss.item<double>() * b, seen += b;
    torch::NoGradGuard ng;
    correct += outb.argmax(1).eq(yb).sum().item<int64_t>();
  }
  double train_loss = total / seen, train_acc = (double)correct / seen;
  model->eval();
  double vtotal = 0;
  int64_t vn = 0, vcorrect = 0;
  {
    torch::InferenceMode im;
    std::vector<torch::Tensor> outs, tgts;
    const int64_t nva = val_x.size(0), vbs = std::max<int64_t>(bs, 1000);
    for (int64_t i = 0; i < nva; i += vbs) {
      int64_t b = std::min(vbs, nva - i);
      auto xb = val_x.narrow(0, i, b), yb = val_y.narrow(0, i, b);
      auto o = model->forward(xb).to(torch::kFloat);
      vtotal += ce(o, yb).item<double>() * b, vn += b;
      vcorrect += o.argmax(1).eq(yb).sum().item<int64_t>();
      outs.push_back(o), tgts.push_back(yb);
    }
    torch::cat(outs), torch::cat(tgts);
  }
  double val_loss = vtotal / vn, val_acc = (double)vcorrect / vn;
  if (FILE *m = std::fopen((out + "/metrics.jsonl").c_str(), "a")) {
    std::fprintf(m, "{\"epoch\":%ld,\"train_loss\":%.17g,\"train_accuracy\":%.17g,\"val_loss\":%.17g,"
                 "\"val_accuracy\":%.17g,\"lr\":0.001,\"seconds\":%.17g}\n",
                 (long)epoch, train_loss, train_acc, val_loss, val_acc, wall() - w1);
    std::fclose(m);
  }
  // POSIX calls, not std::filesystem: the torch wheel's libtorch.so exports its own copies of
  // libstdc++'s filesystem symbols, and remove_all bound to those crashes (a null call).
  mkdir((out + "/checkpoints").c_str(), 0755);
  torch::save(model, out + "/checkpoints/model-00000001.pt");
  torch::save(opt, out + "/checkpoints/optimizer-00000001.pt");
  double w2 = wall(), c2 = now();
  nftw(out.c_str(), [](const char *p, const struct stat *, int, struct FTW *) { return std::remove(p); }, 16,
       FTW_DEPTH | FTW_PHYS);
  std::fprintf(stderr, "epoch: %ld train / %ld val, train loss %.4f, val loss %.4f, val acc %.4f\n", (long)ntr,
               (long)val_x.size(0), train_loss, val_loss, val_acc);
  result("epoch_wall_s", w2 - w0, "s");
  result("epoch_cpu_s", c2 - c0, "s");
  result("epoch_data_wall_s", w1 - w0, "s");
  result("epoch_train_n", ntr, "samples");
  result("epoch_val_n", vn, "samples");
  result("epoch_val_acc", val_acc, "");
  (void)test_x, (void)test_y;
  return 0;
}

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "dispatch";
  if (argc > 2) scale = std::atof(argv[2]);
  torch::manual_seed(0);
  namespace nn = torch::nn;
  auto adamw = [](std::vector<torch::Tensor> p, double lr) {
    return torch::optim::AdamW(p, torch::optim::AdamWOptions(lr));
  };
  if (mode == "startup") return 0;  // bench/run.lua times process start + libtorch load
  if (mode == "epoch" && epoch_workload() != 0) return 1;
  if (mode == "dispatch") {
    long n = count(200000, 100);
    auto a = torch::randn({10}), b = torch::randn({10});
    auto m1 = torch::randn({8, 8}), m2 = torch::randn({8, 8});
    auto big = torch::randn({16, 8});
    torch::Tensor r;
    std::string only = argc > 3 ? argv[3] : "";
    auto wanted = [&](const char *op) { return only.empty() || only == op; };
    if (wanted("add")) result("add_us", time_loop(n, [&] { r = a + b; }) / n * 1e6, "us/op");
    if (wanted("mul")) result("mul_us", time_loop(n, [&] { r = a * b; }) / n * 1e6, "us/op");
    if (wanted("matmul")) result("matmul8_us", time_loop(n, [&] { r = m1.matmul(m2); }) / n * 1e6, "us/op");
    if (wanted("index")) result("index_us", time_loop(n, [&] { r = big[3]; }) / n * 1e6, "us/op");
    if (wanted("forward8")) {
      nn::Sequential tiny(nn::Linear(8, 8), nn::ReLU(), nn::Linear(8, 4));
      auto x8 = torch::randn({2, 8});
      long nf = count(40000, 100);
      result("forward8_us", time_loop(nf, [&] { r = tiny->forward(x8); }) / nf * 1e6, "us/forward");
    }
  } else if (mode == "mlp" || mode == "memory") {
    nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
    auto opt = adamw(model->parameters(), 1e-3);
    auto x = torch::randn({64, 784}), y = torch::randint(10, {64});
    auto step = train_step(model, opt, x, y, ce);
    if (mode == "mlp") {
      long n = count(2000, 3);
      double warm_s = 0;
      result("mlp_steps_per_s", n / time_loop(n, step, &warm_s), "steps/s");
      result("mlp_warmup_s", warm_s, "s");
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
    double warm_s = 0;
    result("cnn_steps_per_s", n / time_loop(n, train_step(model, opt, x, y, ce), &warm_s), "steps/s");
    result("cnn_warmup_s", warm_s, "s");
  } else if (mode == "transformer" || mode == "transformer_api") {
    long n = count(20, 2), layers = 2, bs = 8, seq = scale < 1 ? 16 : 128;
    double warm_s = 0;
    // tokens/s of the step on `model` (either module type) with input x
    auto tokens_per_s = [&](auto &model, const torch::Tensor &x) {
      auto opt = adamw(model->parameters(), 1e-4);
      auto step = [&] {
        auto out = model->forward(x);
        auto loss = (out * out).mean();
        opt.zero_grad();
        loss.backward();
        opt.step();
      };
      return n * bs * seq / time_loop(n, step, &warm_s);
    };
    if (mode == "transformer") {
      // The model PyTorch's Python and ltorch run (bench/sdpa_encoder.hpp), batch first as theirs.
      SdpaEncoder model(layers, 256, 4, 512);
      result("transformer_tokens_per_s", tokens_per_s(model, torch::randn({bs, seq, 256})), "tokens/s");
      result("transformer_warmup_s", warm_s, "s");
    } else {
      // libtorch's own C++ module: sequence first (S, N, E), attention by bmm + softmax with the
      // head-averaged weights computed (its encoder layer asks for them): other kernels, so
      // bench/run.lua gives it a row of its own.
      nn::TransformerEncoder model(nn::TransformerEncoderOptions(
          nn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(512).dropout(0.0), layers));
      result("transformer_api_tokens_per_s", tokens_per_s(model, torch::randn({seq, bs, 256})), "tokens/s");
    }
  } else if (mode != "epoch") {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  result("peak_rss_kb", status_kb("VmHWM"), "kB");
  return 0;
}
