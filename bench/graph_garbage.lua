--[[
  bench/graph_garbage.lua — what a dropped result's autograd graph costs, and whether the
  collector hears of it (torch._memory weighs each result that carries an autograd node, counted
  by the bindings in torch.memory_stats().graph_results; docs/PERFORMANCE.md, optimisation 38).

  Run:  taskset -c 1 build/ltorch bench/graph_garbage.lua [N]
  Prints N forwards (default 40,000, after 4,000 untimed) of an 8-8-4 nn.Sequential on a 2x8
  batch with autograd on, outputs dropped, in process CPU time, with the largest RSS growth over
  the timed loop (sampled every 100 forwards) and the collector cycles it took; the same loop
  freeing each output at once (x:free()), the floor a perfectly timed release would reach; then
  the C++ heap bytes (glibc's mallinfo2, after full collections) that one kept result holds, for
  results without autograd and with graphs of one to four nodes: what _memory.lua's HANDLE_COST
  and GRAPH_COST stand for.
  Output lines: "forward <dropped|freed>: <µs> us, RSS growth <MiB> MiB, <n> cycles, <g> graph
  results" and "bytes <kind>: <B> per result".
]]
local ffi = require "ffi"
local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional

local n = tonumber(arg[1] or 40000)
if not n or n < 100 then error("graph_garbage: N must be a number of at least 100, got " .. tostring(arg[1])) end

pcall(ffi.cdef, [[
struct lt_bench_mallinfo2 { size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost; };
struct lt_bench_mallinfo2 mallinfo2(void);
]])
local function heap_used()
  collectgarbage("collect")
  collectgarbage("collect")
  torch.collect()
  return tonumber(ffi.C.mallinfo2().uordblks)
end

torch.manual_seed(0)
local l1 = nn.Linear(8, 8)
local model = nn.Sequential(l1, nn.ReLU(), nn.Linear(8, 4))
local x, y = torch.randn(2, 8), torch.randint(4, { 2 })
local w, b = l1.weight, l1.bias

local function rss_kb()
  for line in io.lines("/proc/self/status") do
    local v = line:match("^VmRSS:%s+(%d+)")
    if v then return tonumber(v) end
  end
end

local function loop(label, free)
  for _ = 1, 4000 do local out = model(x); if free then out:free() end end
  collectgarbage("collect")
  local stats = torch.memory_stats()
  local r0, high = rss_kb(), 0
  local t0 = os.clock()
  for i = 1, n do
    local out = model(x)
    if free then out:free() end
    if i % 100 == 0 then
      local r = rss_kb()
      if r > high then high = r end
    end
  end
  local us = (os.clock() - t0) / n * 1e6
  local after = torch.memory_stats()
  print(("forward %s: %.2f us, RSS growth %.1f MiB, %d cycles, %d graph results"):format(label, us,
    math.max(high - r0, 0) / 1024, after.gc_cycles - stats.gc_cycles, after.graph_results - stats.graph_results))
end
loop("dropped", false)
loop("freed", true)

-- after the loops: the kept results below leave the malloc heap in pieces that slow later ones
local kinds = {
  { "x + 1, no autograd", function() return x + 1 end },
  { "w * 2, one node", function() return w * 2 end },
  { "F.linear(x, w, b), one node", function() return F.linear(x, w, b) end },
  { "F.relu(F.linear(x, w, b)), two nodes", function() return F.relu(F.linear(x, w, b)) end },
  { "model(x), three nodes", function() return model(x) end },
  { "F.cross_entropy(model(x), y), four nodes", function() return F.cross_entropy(model(x), y) end },
}
local KEPT = 2000
for _, k in ipairs(kinds) do
  local keep = {}
  for i = 1, 10 do keep[i] = k[2]() end
  local before = heap_used()
  for i = 11, KEPT + 10 do keep[i] = k[2]() end
  print(("bytes %s: %.0f per result"):format(k[1], (heap_used() - before) / KEPT))
  assert(#keep == KEPT + 10)   -- kept alive until measured
end
