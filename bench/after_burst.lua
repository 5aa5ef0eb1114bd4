--[[
  bench/after_burst.lua — does a loop of small ops stay as fast after many tensors have been
  alive at once? Times 200,000 adds of 10-element tensors (µs per op, best of 3, process CPU
  time), then keeps N tensors alive together (a burst: a scope around a long loop, a list of
  per-sample tensors), drops them, collects, and times the same loop again. The two should be
  equal (docs/PERFORMANCE.md, optimisations 13 and 14): the slab of result handles
  (bindings/lt_slab.cpp) lowers its top and shrinks after the burst has died, and
  torch.collect() trims the malloc heap. Before that, every later sweep and collection walked
  the burst's high-water mark: 2.2-2.6 us per op instead of 0.5-0.57.

  Run:  taskset -c 0 build/ltorch bench/after_burst.lua [N] [OPS]   (N: the burst, default 200000;
                                                                  OPS: adds per timing, 200000)
  Prints: the two timings, and the slab's top slot and capacity after the burst.
]]
local torch = require "torch"

local BURST = tonumber(arg[1] or 200000)
local OPS = tonumber(arg[2] or 200000)
local a, b = torch.randn(10), torch.randn(10)

local function adds()
  local best = math.huge
  for _ = 1, 3 do
    local t0 = os.clock()
    for _ = 1, OPS do local _ = a + b end
    best = math.min(best, os.clock() - t0)
  end
  return best / OPS * 1e6
end

adds()   -- warm-up: traces compiled, slab at its steady size
print(("a + b before the burst: %.3f us/op"):format(adds()))
-- BURST tensors alive together, then all dropped
local function burst(n)
  local alive = {}
  for i = 1, n do alive[i] = torch.empty(1) end
  return #alive
end
burst(BURST)
torch.collect()
local after = adds()
local slab = require("torch._C").state.slab
print(("a + b after a burst of %d tensors: %.3f us/op (slab top %d, capacity %d)"):format(
  BURST, after, slab.s.top, slab.s.capacity))
