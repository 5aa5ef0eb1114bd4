"""bench/workloads.py — the PyTorch side of the side-by-side benchmark (see bench/workloads.lua
for the workloads; the same sizes, counts and output format).

Run:  /usr/bin/python3 bench/workloads.py MODE [SCALE]
"""
import sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1] if len(sys.argv) > 1 else "dispatch"
scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])


def result(name, value, unit):
    print("RESULT %s %.6g %s" % (name, value, unit))


def count(n, lo=1):
    return max(lo, int(n * scale + 0.5))


torch.manual_seed(0)


def time_loop(n, fn):
    for _ in range(max(1, n // 10)):
        fn()
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return time.process_time() - t0


def train_step_fn(model, opt, x, y, lossfn):
    def step():
        loss = lossfn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def mlp_setup():
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(64, 784), torch.randint(10, (64,))
    return train_step_fn(model, opt, x, y, F.cross_entropy)


if mode == "dispatch":
    n = count(200000, 100)
    a, b = torch.randn(10), torch.randn(10)
    m1, m2 = torch.randn(8, 8), torch.randn(8, 8)
    big = torch.randn(16, 8)

    def add():
        r = a + b

    def mul():
        r = a * b

    def mm():
        r = m1.matmul(m2)

    def idx():
        r = big[3]
    result("add_us", time_loop(n, add) / n * 1e6, "us/op")
    result("mul_us", time_loop(n, mul) / n * 1e6, "us/op")
    result("matmul8_us", time_loop(n, mm) / n * 1e6, "us/op")
    result("index_us", time_loop(n, idx) / n * 1e6, "us/op")
elif mode == "mlp":
    n = count(2000, 3)
    step = mlp_setup()
    result("mlp_steps_per_s", n / time_loop(n, step), "steps/s")
elif mode == "memory":
    n = count(10000, 40)
    step = mlp_setup()
    every, warm, half = max(1, n // 100), n // 10, n // 2
    rss_warm, max1, max2, s1, s2 = None, 0, 0, [], []
    for i in range(1, n + 1):
        step()
        if i == warm:
            rss_warm = status_kb("VmRSS")
        if i % every == 0 and i >= warm:
            r = status_kb("VmRSS")
            if i <= half:
                max1 = max(max1, r)
                s1.append(r)
            else:
                max2 = max(max2, r)
                s2.append(r)
    result("mem_rss_after_warmup_kb", rss_warm, "kB")
    result("mem_rss_end_kb", status_kb("VmRSS"), "kB")
    result("mem_growth_kb", max2 - max1, "kB")
    result("mem_growth_mean_kb", sum(s2) / len(s2) - sum(s1) / len(s1), "kB")
elif mode == "cnn":
    n = count(100, 2)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(32 * 7 * 7, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    bs = count(128, 2)
    x, y = torch.randn(bs, 1, 28, 28), torch.randint(10, (bs,))
    result("cnn_steps_per_s", n / time_loop(n, train_step_fn(model, opt, x, y, F.cross_entropy)), "steps/s")
elif mode == "transformer":
    n = count(20, 2)
    layers, bs, seq = 2, 8, (16 if scale < 1 else 128)
    layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(bs, seq, 256)
    step = train_step_fn(model, opt, x, None, lambda out, _: (out * out).mean())
    result("transformer_tokens_per_s", n * bs * seq / time_loop(n, step), "tokens/s")
else:
    raise SystemExit("unknown mode " + mode)
result("peak_rss_kb", status_kb("VmHWM"), "kB")
