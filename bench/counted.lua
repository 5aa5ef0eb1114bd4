--[[
  bench/counted.lua — runs a function once inside a callback of the C library's qsort, so that
  callgrind's `--toggle-collect=qsort` counts that call alone (what ran before it, start-up and
  warm-up, is not counted). Used by bench/op_cost.lua and bench/mlp_phases.lua's count mode.

  Usage:  local counted = require "bench.counted"
          counted(loop, n)   -- calls loop(n) inside qsort's comparison callback
]]
local ffi = require "ffi"

pcall(ffi.cdef, [[
void bench_counted_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) __asm__("qsort");
]])

return function(fn, ...)
  local args, nargs = { ... }, select("#", ...)
  local ran = false
  local cmp = ffi.cast("int (*)(const void *, const void *)", function()
    if not ran then ran = true; fn(unpack(args, 1, nargs)) end
    return 0
  end)
  ffi.C.bench_counted_qsort(ffi.new("int[2]"), 2, ffi.sizeof("int"), cmp)
  cmp:free()
  assert(ran, "bench.counted: qsort never called the comparison")
end
