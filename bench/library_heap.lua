--[[
  bench/library_heap.lua — what the size of the Lua heap that ltorch's own modules leave costs a
  small op. Each collector cycle marks the whole heap, and the cycles come after a number of
  handles proportional to that heap (torch._memory), so a bigger library heap means more dead
  results waiting between two cycles, out of the CPU's cache when they are released
  (docs/PERFORMANCE.md, "The gap that is left, taken apart again (2026-12-07)").

  Run:  taskset -c 1 build/ltorch bench/library_heap.lua torch [N]   (require "torch" only)
        taskset -c 1 build/ltorch bench/library_heap.lua nn [N]      (also torch.nn, torch.optim)
  N: timed `a + b` calls (default 1,000,000, after 200,000 untimed).
  Output: one line "library_heap <mode>: heap <KB> KB, a + b <µs> us/op" (process CPU time).
]]
local torch = require "torch"

local mode, n = arg[1] or "torch", tonumber(arg[2] or 1000000)
if mode ~= "torch" and mode ~= "nn" then
  error("library_heap: MODE must be 'torch' or 'nn', got '" .. tostring(mode) .. "'")
end
if mode == "nn" then
  require "torch.nn"
  require "torch.optim"
end
collectgarbage("collect")

local a, b = torch.randn(10), torch.randn(10)
local r
local function loop(k) for _ = 1, k do r = a + b end end
loop(math.max(1, math.floor(n / 5)))
local t0 = os.clock()
loop(n)
local dt = os.clock() - t0
assert(r ~= nil)
print(("library_heap %s: heap %.0f KB, a + b %.3f us/op"):format(mode, collectgarbage("count"), dt / n * 1e6))
