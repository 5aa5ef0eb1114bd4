"""bench/first_steps.py — PyTorch side of bench/first_steps.lua: per-step CPU time of the
benchmark's small CNN training step over its first steps.

Run:  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456 \\
        taskset -c 0 /usr/bin/python3 bench/first_steps.py [steps=14]
(the tunables give PyTorch the malloc thresholds the ltorch executable sets, as bench/run.lua does)
Prints one line: "PyTorch ms/step" and the CPU milliseconds of each step.
"""
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 14
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(32 * 7 * 7, 10))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
x, y = torch.randn(128, 1, 28, 28), torch.randint(10, (128,))
times = []
for _ in range(steps):
    t0 = time.process_time()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    times.append("%.1f" % ((time.process_time() - t0) * 1e3))
print("PyTorch ms/step", " ".join(times))
