--[[
  bench/large_results.lua — what leaving large results to the collector costs in time: a loop
  whose every iteration makes an 800 KB result (a 256x64 by 64x784 matmul) and drops it, three
  ways: left to the collector (it finds them dead after up to 64 MiB of new tensor bytes, so
  each new result is written to memory out of the CPU's cache), x:free() at once, and
  torch.scope around each iteration. PyTorch and C++ free each result as its last reference
  goes, like the second form (docs/PERFORMANCE.md, "Large results left to the collector").

  Run:  taskset -c 1 build/ltorch bench/large_results.lua [N]     (default 3000, after 300 warm)
  Output: µs of process CPU time per iteration for each form.
]]
local torch = require "torch"

local n = tonumber(arg[1] or 3000)
torch.manual_seed(0)
local x, gt = torch.randn(64, 784), torch.randn(64, 256):t()
local kept

local function time(name, fn)
  for _ = 1, math.max(1, math.floor(n / 10)) do fn() end
  local t0 = os.clock()
  for _ = 1, n do fn() end
  print(("%-44s %8.1f us"):format(name, (os.clock() - t0) / n * 1e6))
end

time("r = gt:mm(x)   (left to the collector)", function() kept = gt:mm(x) end)
time("gt:mm(x):free()", function() gt:mm(x):free() end)
time("torch.scope(function() gt:mm(x) end)", function() torch.scope(function() gt:mm(x) end) end)
assert(kept ~= nil)
