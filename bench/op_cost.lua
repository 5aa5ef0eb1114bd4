--[[
  bench/op_cost.lua — one dispatch workload's op, counted by callgrind: instructions and cache
  misses per op, the same under any machine load (docs/PERFORMANCE.md, issue #39).

  The op runs WARM times first (compiled, slab and caches at their size), then N times inside a
  callback that the C library's qsort calls once (bench/counted.lua), so `--toggle-collect=qsort`
  counts only those N calls: a function's inclusive count / N is its cost per op.

  Run:  bash bench/op_cost.sh OP [N]         (the callgrind command and the per-op table)
        build/ltorch bench/op_cost.lua OP N  (the loop alone, no valgrind)
  OP:   add | mul | matmul | index | add_free (add, each result freed at once: no deferred release)
]]
local torch = require "torch"
local counted = require "bench.counted"

local op, n = arg[1] or "add", tonumber(arg[2] or 20000)
local WARM = 30000
local a, b = torch.randn(10), torch.randn(10)
local m1, m2 = torch.randn(8, 8), torch.randn(8, 8)
local big = torch.randn(16, 8)
local r

local loops = {
  add = function(k) for _ = 1, k do r = a + b end end,
  mul = function(k) for _ = 1, k do r = a * b end end,
  matmul = function(k) for _ = 1, k do r = m1:matmul(m2) end end,
  index = function(k) for _ = 1, k do r = big[3] end end,
  add_free = function(k) for _ = 1, k do r = a + b; r:free() end end,
}
local loop = loops[op]
if not loop then error("op_cost: unknown OP '" .. tostring(op) .. "' (add, mul, matmul, index, add_free)") end

loop(WARM)
counted(loop, n)
assert(r ~= nil)
print(string.format("op_cost: %s, %d counted calls after %d warm ones", op, n, WARM))
