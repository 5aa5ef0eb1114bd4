"""bench/data_pipeline.py — PyTorch's DataLoader on the same image folder and pipeline as
bench/data_pipeline.lua (decode + augment + collate), for num_workers 0, 1, 2.

Pipeline per image: PIL decode of the PNG, to float 1x28x28 in [0, 1], random crop 28 with
padding 4, random horizontal flip, normalize; batches of 32, shuffled. torchvision is not in
Debian's python3-torch, so the transforms are written with torch ops (what torchvision does).
Workers are processes (fork), as PyTorch's default on Linux.

Run: build/ltorch bench/make_image_folder.lua && /usr/bin/python3 bench/data_pipeline.py [epochs=3]
"""
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

ROOT = os.environ.get("LTORCH_BENCH_IMAGES", "/tmp/ltorch_fmnist_png")
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


class Folder(torch.utils.data.Dataset):
    def __init__(self, root):
        self.classes = sorted(os.listdir(root))
        self.samples = [(os.path.join(root, c, f), i) for i, c in enumerate(self.classes)
                        for f in sorted(os.listdir(os.path.join(root, c)))]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, y = self.samples[i]
        x = torch.from_numpy(np.asarray(Image.open(path).convert("L"), dtype=np.uint8).copy())
        x = x.unsqueeze(0).float().div(255)
        x = torch.nn.functional.pad(x, (4, 4, 4, 4))
        a, b = torch.randint(0, 9, (2,)).tolist()
        x = x[:, a:a + 28, b:b + 28]
        if torch.rand(1).item() < 0.5:
            x = x.flip(-1)
        return (x - 0.286) / 0.353, y


def main():
    ds = Folder(ROOT)
    for nw in (0, 1, 2):
        g = torch.Generator().manual_seed(0)
        loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True, generator=g, num_workers=nw)
        for _ in loader:
            pass
        t0, n = time.perf_counter(), 0
        for _ in range(EPOCHS):
            for x, _ in loader:
                n += x.shape[0]
        dt = time.perf_counter() - t0
        print(f"pytorch num_workers={nw}  {n / dt:8.0f} images/s  ({n} images, {dt:.2f} s, worker start included)")


if __name__ == "__main__":
    main()
