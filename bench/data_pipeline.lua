--[[
  bench/data_pipeline.lua — image-folder pipeline throughput (decode + augment + collate),
  ltorch's DataLoader with num_workers 0, 1, 2, beside PyTorch's (bench/data_pipeline.py).

  Pipeline per image: read PNG, decode (stb_image), ToTensor (uint8 HW1 -> float 1x28x28),
  RandomCrop(28, padding 4), RandomHorizontalFlip, Normalize; batches of 32, shuffled.
  The folder is 600 Fashion-MNIST test PNGs made by bench/make_image_folder.lua.

  Run: build/ltorch bench/make_image_folder.lua && build/ltorch bench/data_pipeline.lua [epochs=3]
       /usr/bin/python3 bench/data_pipeline.py [epochs=3]
  Prints one line per worker count: "ltorch num_workers=N  IMAGES images/s".
]]
local torch = require "torch"
local data = torch.utils.data
local T = data.transforms

local dir = os.getenv("LTORCH_BENCH_IMAGES") or "/tmp/ltorch_fmnist_png"
local epochs = tonumber(arg[1] or 3)

local tf = T.Compose({ T.ToTensor(), T.RandomCrop(28, { padding = 4 }), T.RandomHorizontalFlip(),
  T.Normalize({ 0.286 }, { 0.353 }) })
local ds = data.datasets.ImageFolder(dir, { transform = tf, channels = 1 })

local function now()
  local ffi = require "ffi"
  pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int bench_dp_clock_gettime(int, bench_timespec *) __asm__(\"clock_gettime\");")
  local ts = ffi.new("bench_timespec")
  ffi.C.bench_dp_clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

for _, nw in ipairs({ 0, 1, 2 }) do
  local loader = data.DataLoader(ds, { batch_size = 32, shuffle = true, generator = 0, num_workers = nw })
  for _ in loader:iter() do end          -- warm-up epoch (worker start, page cache)
  local t0, n = now(), 0
  for _ = 1, epochs do
    for b in loader:iter() do n = n + b[1]:size(0) end
  end
  local dt = now() - t0
  print(("ltorch num_workers=%d  %8.0f images/s  (%d images, %.2f s, worker start included)"):format(nw, n / dt, n, dt))
end
