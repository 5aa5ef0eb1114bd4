--[[
  bench/varying_shapes.lua — a loop whose tensor sizes change on every iteration (as with
  variable-length batches): the case that the large-block cache (bindings/lt_large_blocks.cpp)
  must not make slow or fat. 3,000 iterations of randn(rows, 256) -> matmul -> relu -> sum, with
  rows drawn from 64..2,063 by a fixed LCG (64 KiB to 2 MiB per tensor), all results left to
  the collector.

  Run:  taskset -c 0 build/ltorch bench/varying_shapes.lua
        LTORCH_MALLOC=glibc GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456 \
          taskset -c 0 build/ltorch bench/varying_shapes.lua     (the same loop on the malloc heap)
  Prints: CPU seconds, the bytes the cache keeps at the end, peak RSS (VmHWM, kB).
]]
local torch = require "torch"

local ITERATIONS = tonumber(arg[1] or 3000)
torch.manual_seed(0)
local w = torch.randn(256, 256)
local t0 = os.clock()
local state = 12345
for _ = 1, ITERATIONS do
  state = (state * 1103515245 + 12345) % 2147483648
  local rows = 64 + state % 2000
  local x = torch.randn(rows, 256)
  local _ = x:matmul(w):relu():sum():item()
end
local seconds = os.clock() - t0
local f = assert(io.open("/proc/self/status"))
local peak = f:read("*a"):match("VmHWM:%s+(%d+)")
f:close()
print(("varying shapes: %d iterations in %.2f s CPU, %.1f MB kept for reuse, peak RSS %s kB"):format(
  ITERATIONS, seconds, torch.memory_stats().cached_bytes / 2 ^ 20, peak))
