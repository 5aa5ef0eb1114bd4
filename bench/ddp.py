"""bench/ddp.py — PyTorch's side of bench/ddp.lua (same models, batches, optimizer, bucket caps,
timing): run by bench/ddp.lua under `python -m torch.distributed.run`; prints
"RESULT steps_per_s <x>" from rank 0. Arguments: MODEL (mlp|wide) CAP (MB or "one") STEPS."""
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def main():
    model_name, cap, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    if model_name == "mlp":
        model, batch = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)), 64
    else:
        model, batch = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                                     nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)), 32
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1e6 if cap == "one" else float(cap))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, 784), torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()

    for _ in range(5):
        step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    secs = time.perf_counter() - t0
    if dist.get_rank() == 0:
        print(f"RESULT steps_per_s {steps / secs:.6g}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
