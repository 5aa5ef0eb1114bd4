"""bench/workloads.py — the PyTorch side of the side-by-side benchmark (see bench/workloads.lua
for the workloads; the same sizes, counts and output format).

Run:  [BENCH_DEVICE=cuda] /usr/bin/python3 bench/workloads.py MODE [SCALE]

The epoch mode is what a PyTorch user writes for recipes/train_classifier.lua's default config
(recipes/classifier_lib.lua + recipes/trainer.lua, step for step): gzipped IDX read with
gzip + torch.frombuffer, the same seeded split, scaling and normalisation, TensorDataset +
DataLoader (shuffle, batch 128, num_workers 0), the same MLP, head-bias init, AdamW,
clip_grad_norm_, per-batch loss/accuracy, evaluation on val under inference_mode, a
metrics.jsonl line and a torch.save checkpoint of model + optimizer + RNG state.
"""
import gzip, json, os, shutil, struct, sys, tempfile, time
import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1] if len(sys.argv) > 1 else "dispatch"
scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
# BENCH_DEVICE=cuda: the mlp, cnn and transformer steps on the GPU, wall time between two
# torch.cuda.synchronize() (as bench/workloads.lua does).
device = os.environ.get("BENCH_DEVICE", "cpu")
on_gpu = device != "cpu"
if on_gpu and mode not in ("mlp", "cnn", "transformer"):
    sys.exit("BENCH_DEVICE=%s: only the mlp, cnn and transformer workloads run on a GPU, not %s" % (device, mode))


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


clock = time.perf_counter if on_gpu else time.process_time


def sync():
    if on_gpu:
        torch.cuda.synchronize()


def time_loop(n, fn):
    """n timed calls after a warm-up of max(n/10, 10 at scale 1); returns (timed, warm-up) seconds."""
    sync()
    t0 = clock()
    for _ in range(max(1, n // 10, count(10))):
        fn()
    sync()
    t1 = clock()
    for _ in range(n):
        fn()
    sync()
    return clock() - t1, t1 - t0


def train_step_fn(model, opt, x, y, lossfn):
    def step():
        loss = lossfn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def mlp_setup():
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(64, 784).to(device), torch.randint(10, (64,)).to(device)
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
    result("add_us", time_loop(n, add)[0] / n * 1e6, "us/op")
    result("mul_us", time_loop(n, mul)[0] / n * 1e6, "us/op")
    result("matmul8_us", time_loop(n, mm)[0] / n * 1e6, "us/op")
    result("index_us", time_loop(n, idx)[0] / n * 1e6, "us/op")
    tiny, x8 = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)), torch.randn(2, 8)
    nf = count(40000, 100)

    def fwd():
        r = tiny(x8)
    result("forward8_us", time_loop(nf, fwd)[0] / nf * 1e6, "us/forward")
elif mode == "mlp":
    n = count(2000, 3)
    step = mlp_setup()
    dt, warm = time_loop(n, step)
    result("mlp_steps_per_s", n / dt, "steps/s")
    result("mlp_warmup_s", warm, "s")
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
                          nn.Linear(32 * 7 * 7, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    bs = count(128, 2)
    x, y = torch.randn(bs, 1, 28, 28).to(device), torch.randint(10, (bs,)).to(device)
    dt, warm = time_loop(n, train_step_fn(model, opt, x, y, F.cross_entropy))
    result("cnn_steps_per_s", n / dt, "steps/s")
    result("cnn_warmup_s", warm, "s")
elif mode == "transformer":
    n = count(20, 2)
    layers, bs, seq = 2, 8, (16 if scale < 1 else 128)
    if on_gpu:
        layers, bs = 4, (8 if scale < 1 else 32)
    layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(bs, seq, 256).to(device)
    step = train_step_fn(model, opt, x, None, lambda out, _: (out * out).mean())
    dt, warm = time_loop(n, step)
    result("transformer_tokens_per_s", n * bs * seq / dt, "tokens/s")
    result("transformer_warmup_s", warm, "s")
elif mode == "epoch":
    FM = os.environ.get("LTORCH_FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"

    def read_idx(path):
        with gzip.open(path, "rb") as f:
            raw = f.read()
        code, ndim = raw[2], raw[3]
        assert raw[0] == 0 and raw[1] == 0 and code == 0x08, path
        dims = struct.unpack(">%dI" % ndim, raw[4:4 + 4 * ndim])
        return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).view(*dims)

    seed, val_size, bs = 0, 5000, 128
    limit_train = count(55000, 2) if scale < 1 else 0
    limit_eval = count(5000, 2) if scale < 1 else 0

    def limit(t, n):
        return t[:n] if 0 < n < t.shape[0] else t

    out_dir = tempfile.mkdtemp()
    w0, c0 = time.perf_counter(), time.process_time()
    images = read_idx(FM + "/train-images-idx3-ubyte.gz")
    labels = read_idx(FM + "/train-labels-idx1-ubyte.gz").long()
    test_images = read_idx(FM + "/t10k-images-idx3-ubyte.gz")
    test_labels = read_idx(FM + "/t10k-labels-idx1-ubyte.gz").long()
    n = images.shape[0]
    torch.manual_seed(seed)
    perm = torch.randperm(n)
    tr_idx, va_idx = limit(perm[:n - val_size], limit_train), limit(perm[n - val_size:], limit_eval)
    x = images.float().div(255)
    xtr = x.index_select(0, tr_idx)
    mean, std = xtr.mean().item(), xtr.std().item()

    def prep(t):
        return t.sub(mean).div(std).view(t.shape[0], 784)
    xte = limit(test_images.float().div(255), limit_eval)
    train = (prep(xtr), labels.index_select(0, tr_idx))
    val = (prep(x.index_select(0, va_idx)), labels.index_select(0, va_idx))
    test = (prep(xte), limit(test_labels, limit_eval))
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 128), nn.ReLU(),
                          nn.Dropout(0.1), nn.Linear(128, 10))
    with torch.no_grad():
        counts = torch.bincount(train[1], minlength=10).double().add(1)
        model[6].bias.copy_((counts / counts.sum()).log().float())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4, foreach=True)
    ce = nn.CrossEntropyLoss()
    gen = torch.Generator()
    gen.manual_seed(seed)
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*train), batch_size=bs, shuffle=True,
                                               generator=gen)
    val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*val), batch_size=max(bs, 1000))
    test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*test), batch_size=max(bs, 1000))
    w1 = time.perf_counter()
    # one epoch (trainer.fit with epochs = 1)
    epoch = 1
    gen.manual_seed(seed * 1048576 + epoch)
    model.train()
    total, seen, correct = 0.0, 0, 0
    for xb, yb in train_loader:
        opt.zero_grad()
        out = model(xb).float()
        loss = ce(out, yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        b = yb.shape[0]
        total, seen = total + loss.item() * b, seen + b
        with torch.no_grad():
            correct += out.argmax(1).eq(yb).sum().item()
    train_loss, train_acc = total / seen, correct / seen
    model.eval()
    with torch.inference_mode():
        vtotal, vn, vcorrect, outs, tgts = 0.0, 0, 0, [], []
        for xb, yb in val_loader:
            out = model(xb).float()
            b = yb.shape[0]
            vtotal += ce(out, yb).item() * b
            vn += b
            vcorrect += out.argmax(1).eq(yb).sum().item()
            outs.append(out)
            tgts.append(yb)
        torch.cat(outs)
        torch.cat(tgts)
    rec = {"epoch": epoch, "train_loss": train_loss, "train_accuracy": train_acc, "val_loss": vtotal / vn,
           "val_accuracy": vcorrect / vn, "lr": 1e-3, "seconds": time.perf_counter() - w1}
    with open(out_dir + "/metrics.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    os.makedirs(out_dir + "/checkpoints", exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch,
                "rng": {"cpu": torch.get_rng_state()}, "best_metric": rec["val_loss"]},
               out_dir + "/checkpoints/checkpoint-00000001.pt")
    w2, c2 = time.perf_counter(), time.process_time()
    shutil.rmtree(out_dir)
    sys.stderr.write("epoch: %d train / %d val, train loss %.4f, val loss %.4f, val acc %.4f\n" % (
        len(train[1]), len(val[1]), train_loss, rec["val_loss"], rec["val_accuracy"]))
    result("epoch_wall_s", w2 - w0, "s")
    result("epoch_cpu_s", c2 - c0, "s")
    result("epoch_data_wall_s", w1 - w0, "s")
    result("epoch_train_n", len(train[1]), "samples")
    result("epoch_val_n", vn, "samples")
    result("epoch_val_acc", rec["val_accuracy"], "")
else:
    raise SystemExit("unknown mode " + mode)
result("peak_rss_kb", status_kb("VmHWM"), "kB")
