# bench/mlp_phases.py — PyTorch's twin of bench/mlp_phases.lua: the same MLP (or CNN, or tiny) step,
# phase by phase (forward and loss, zero_grad, backward, optimizer step), AdamW with foreach=True as
# bench/workloads.py. Run: .venv/bin/python bench/mlp_phases.py [STEPS] [mlp|cnn|tiny]
# Output: "PHASES python <fwd> <zero_grad> <bwd> <step> <total>", µs of process CPU time per step.
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

workload = sys.argv[2] if len(sys.argv) > 2 else "mlp"
if workload not in ("mlp", "cnn", "tiny"):
    sys.exit("WORKLOAD: mlp, cnn or tiny, not " + workload)
cnn, tiny = workload == "cnn", workload == "tiny"
steps = int(sys.argv[1]) if len(sys.argv) > 1 else (100 if cnn else 20000 if tiny else 2000)
warm = 10 if cnn else 2000 if tiny else 200
torch.manual_seed(0)
if cnn:
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    x, y = torch.randn(128, 1, 28, 28), torch.randint(10, (128,))
elif tiny:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
    x, y = torch.randn(2, 8), torch.randint(4, (2,))
else:
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    x, y = torch.randn(64, 784), torch.randint(10, (64,))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
clock = time.process_time
t = [0.0] * 4
for i in range(warm + steps):
    t0 = clock()
    loss = F.cross_entropy(model(x), y)
    t1 = clock()
    opt.zero_grad()
    t2 = clock()
    loss.backward()
    t3 = clock()
    opt.step()
    t4 = clock()
    if i >= warm:
        t[0] += t1 - t0
        t[1] += t2 - t1
        t[2] += t3 - t2
        t[3] += t4 - t3
us = [v / steps * 1e6 for v in t]
print("PHASES python %.1f %.1f %.1f %.1f %.1f" % (*us, sum(us)))
