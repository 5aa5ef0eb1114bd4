--[[
  bench/first_steps.lua — per-step CPU time of the benchmark's small CNN training step
  (bench/workloads.lua "cnn") over its first steps, to see the one-time costs the benchmark's
  warm-up rows sum up: loading and compiling the Lua side, and the heap growing to its working
  size while tensors wait for the collector. bench/first_steps.py does the same in PyTorch.

  Run:  taskset -c 0 build/ltorch bench/first_steps.lua [steps=14]
  Prints one line: "ltorch ms/step" and the CPU milliseconds of each step.
]]
local torch = require "torch"
local ffi = require "ffi"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_fs_timespec;"
  .. " int bench_fs_clock_gettime(int, bench_fs_timespec *) __asm__(\"clock_gettime\");")
local ts = ffi.new("bench_fs_timespec")
local function now()
  ffi.C.bench_fs_clock_gettime(2, ts)   -- CLOCK_PROCESS_CPUTIME_ID, as bench/workloads.lua
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local steps = tonumber(arg[1] or 14)
torch.manual_seed(0)
local model = nn.Sequential(nn.Conv2d(1, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
  nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
local x, y = torch.randn(128, 1, 28, 28), torch.randint(10, { 128 })
local times = {}
for i = 1, steps do
  local t0 = now()
  local loss = F.cross_entropy(model(x), y)
  opt:zero_grad()
  loss:backward()
  opt:step()
  times[i] = ("%.1f"):format((now() - t0) * 1e3)
end
print("ltorch ms/step", table.concat(times, " "))
