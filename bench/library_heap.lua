--[[
  bench/library_heap.lua — what the size of the Lua heap that ltorch's own modules leave costs a
  small op. Each collector cycle marks the whole heap, and the cycles come after a number of
  handles proportional to that heap (torch._memory), so a bigger library heap means more dead
  results waiting between two cycles, out of the CPU's cache when they are released
  (docs/PERFORMANCE.md, "The gap that is left, taken apart again (2026-12-07)").

  Run:  taskset -c 1 build/ltorch bench/library_heap.lua torch [N]   (require "torch" only)
        taskset -c 1 build/ltorch bench/library_heap.lua mlp [N]     (what an MLP training script loads)
        taskset -c 1 build/ltorch bench/library_heap.lua all [N]     (every part of torch.nn and torch.optim)
  `all` is the heap every script had before torch.nn and torch.optim loaded their parts at first
  use (torch._lazy_namespace, optimisation 33); `mlp` builds bench/workloads.lua's MLP, its AdamW
  and one cross-entropy loss, which load the parts such a script uses.
  N: timed `a + b` calls (default 1,000,000, after 200,000 untimed).
  Output: one line "library_heap <mode>: heap <KB> KB, full cycle <µs> us, a + b <µs> us/op"
  (process CPU time; the full cycle is the mean of 100 `collectgarbage()` calls after the setup).
]]
local torch = require "torch"

local mode, n = arg[1] or "torch", tonumber(arg[2] or 1000000)
if mode ~= "torch" and mode ~= "mlp" and mode ~= "all" then
  error("library_heap: MODE must be 'torch', 'mlp' or 'all', got '" .. tostring(mode) .. "'")
end
if mode == "mlp" then
  local nn = torch.nn
  local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  torch.optim.AdamW(model:parameters(), { lr = 1e-3 })
  torch.nn.functional.cross_entropy(model(torch.randn(2, 784)), torch.tensor({ 1, 2 }))
elseif mode == "all" then
  local lazy = require "torch._lazy_namespace"
  for _, t in ipairs({ torch.nn, torch.nn.functional, torch.nn.utils, torch.optim, torch.optim.functional }) do
    lazy.load_all(t)
  end
  local _ = torch.optim.lr_scheduler
end
collectgarbage("collect")
local c0 = os.clock()
for _ = 1, 100 do collectgarbage("collect") end
local cycle_us = (os.clock() - c0) / 100 * 1e6

local a, b = torch.randn(10), torch.randn(10)
local r
local function loop(k) for _ = 1, k do r = a + b end end
loop(math.max(1, math.floor(n / 5)))
local t0 = os.clock()
loop(n)
local dt = os.clock() - t0
assert(r ~= nil)
print(("library_heap %s: heap %.0f KB, full cycle %.0f us, a + b %.3f us/op"):format(mode, collectgarbage("count"),
  cycle_us, dt / n * 1e6))
