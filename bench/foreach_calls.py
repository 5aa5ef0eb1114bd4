# bench/foreach_calls.py — PyTorch's twin of bench/foreach_calls.lua: one call of the foreach ops
# behind the optimizers, on four four-element tensors, under no_grad.
# Run: taskset -c 1 .venv/bin/python bench/foreach_calls.py [N]   (default 20000 calls, best of 7)
# Output: one line per call, µs of process CPU time per call.
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ps = [torch.randn(4) for _ in range(4)]
gs = [torch.randn(4) for _ in range(4)]


def bench(name, fn):
    for _ in range(2000):
        fn()
    best = float("inf")
    for _ in range(7):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    print("%-36s %6.2f us" % (name, best))


with torch.no_grad():
    bench("_foreach_add_(ps, 1)", lambda: torch._foreach_add_(ps, 1))
    bench("_foreach_mul_(ps, 0.9)", lambda: torch._foreach_mul_(ps, 0.9))
    bench("_foreach_lerp_(ps, gs, 0.1)", lambda: torch._foreach_lerp_(ps, gs, 0.1))
    bench("_foreach_addcmul_(ps, gs, gs, 0.1)", lambda: torch._foreach_addcmul_(ps, gs, gs, 0.1))
    bench("_foreach_sqrt(gs)", lambda: torch._foreach_sqrt(gs))
