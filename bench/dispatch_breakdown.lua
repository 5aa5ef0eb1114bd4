--[[
  bench/dispatch_breakdown.lua — where the time of one small-tensor op goes in ltorch: the same
  10-element add through successively more of the Lua layer, best of 5 runs of 100,000 each,
  µs per op (process CPU time). Used to find what to optimise (docs/PERFORMANCE.md).

  Run: build/ltorch bench/dispatch_breakdown.lua [ops=100000]   (ops per timed run)
    raw+free        C.lt_binary + lt_tensor_free at once: the libtorch op + bindings, no Lua object
    ref(luafin)     + a finalizable cdata per result whose __gc is a Lua function (the first design)
    ref(cfin)       + the same with __gc = lt_tensor_free itself (the second design)
    raw+wrap        + memory.wrap: the current design, a ref without __gc in a slab slot, released
                    by the slab sweep after each GC cycle (plus live-byte accounting, GC steps)
    a:add(b), a+b   the public paths (argument checks, metamethod)
    a+b free        a + b with r:free() at once
    big[3], matmul, mul   the other dispatch workloads through the public paths
    sel raw+free, sel raw+wrap, sel batch   big[3]'s select (a view) the same ways: released at
                    once; wrapped; and released in batches of 1,024 without any Lua object (the
                    order the slab's sweep frees in), to tell the batch's cost from the ref's
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local C = _C.C
local memory = require "torch._memory"
pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int bench_db_clock_gettime(int, bench_timespec *) __asm__(\"clock_gettime\");")
pcall(ffi.cdef, "typedef struct bench_ref_lf { lt_tensor *h; } bench_ref_lf; typedef struct bench_ref_cf { lt_tensor *h; } bench_ref_cf;")
local ts = ffi.new("bench_timespec")
local function now() ffi.C.bench_db_clock_gettime(2, ts) return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end

local RefLuaFin = ffi.metatype("bench_ref_lf", { __gc = function(t)
  local h = t.h
  if h ~= nil then t.h = nil; C.lt_tensor_free(h) end
end })
local RefCFin = ffi.metatype("bench_ref_cf", { __gc = ffi.cast("void (*)(bench_ref_cf)", C.lt_tensor_free) })

local a, b = torch.randn(10), torch.randn(10)
local n = tonumber(arg and arg[1] or 100000)
local out = _C.TensorOut()
local function t(name, fn)
  fn()
  local best = 1e9
  for _ = 1, 5 do
    local t0 = now(); fn(); best = math.min(best, now() - t0)
  end
  print(("%-14s %.3f us/op"):format(name, best / n * 1e6))
end
-- the same pressure stepping as torch._memory's wrap, for the two bare ref types
local function stepper()
  local k = 0
  return function()
    k = k + 1
    if k >= 1024 then collectgarbage("step", k * 512 / 1024); k = 0 end
  end
end

t("raw+free", function() for _ = 1, n do C.lt_binary(out, 0, a.h, b.h, 1); C.lt_tensor_free(out[0]) end end)
local s1 = stepper()
t("ref(luafin)", function() for _ = 1, n do C.lt_binary(out, 0, a.h, b.h, 1); local _ = RefLuaFin(out[0]); s1() end end)
local s2 = stepper()
t("ref(cfin)", function() for _ = 1, n do C.lt_binary(out, 0, a.h, b.h, 1); local _ = RefCFin(out[0]); s2() end end)
t("raw+wrap", function() for _ = 1, n do C.lt_binary(out, 0, a.h, b.h, 1); local _ = memory.wrap(out[0]) end end)
t("a:add(b)", function() for _ = 1, n do local _ = a:add(b) end end)
t("a+b", function() for _ = 1, n do local _ = a + b end end)
t("a+b free", function() for _ = 1, n do local r = a + b; r:free() end end)
local big = torch.randn(16, 8)
t("big[3]", function() for _ = 1, n do local _ = big[3] end end)
t("sel raw+free", function() for _ = 1, n do C.lt_select(out, big.h, 0, 3); C.lt_tensor_free(out[0]) end end)
t("sel raw+wrap", function() for _ = 1, n do C.lt_select(out, big.h, 0, 3); local _ = memory.wrap(out[0]) end end)
local batch = ffi.new("lt_tensor*[1024]")
t("sel batch", function()
  local k = 0
  for _ = 1, n do
    C.lt_select(out, big.h, 0, 3)
    batch[k] = out[0]
    k = k + 1
    if k == 1024 then
      for j = 0, 1023 do C.lt_tensor_free(batch[j]) end
      k = 0
    end
  end
  for j = 0, k - 1 do C.lt_tensor_free(batch[j]) end
end)
local m = torch.randn(8, 8)
t("matmul", function() for _ = 1, n do local _ = m:matmul(m) end end)
t("mul", function() for _ = 1, n do local _ = a * b end end)
