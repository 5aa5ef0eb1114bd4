--[[
  spec/torch/large_blocks_spec.lua — tensor blocks of 32 KiB and more are mapped apart from the
  malloc heap and kept for reuse when freed (bindings/lt_large_blocks.cpp).

  Checked: a freed block is kept (torch.memory_stats().cached_bytes) and the next tensor of the
  same size takes it back, and so do tensors of nearby sizes (quarter-octave classes; a block up
  to twice a tensor's class serves it); a tensor takes a block just freed that fits rather than
  the closest size (that block is the one still in the CPU's caches), and else the block of its
  own size class; blocks above 32 MiB
  are not kept; torch.collect() gives every kept block back; what is kept never
  exceeds the 256 MiB cap, and a block freed over the cap evicts the blocks freed longest ago
  rather than being dropped itself; small tensors never enter the cache; values are right in reused
  blocks; and a loop that frees big tensors in collector batches, with small allocations in
  between, keeps a flat RSS and a small cache (a guard against blocks not being reused: the
  fragmentation this cache removes shows over longer runs — `build/ltorch bench/memory_trace.lua
  20000` stepped up 5.6 MiB at step 9,000 on the malloc heap and is flat now; this loop grew
  0.8 MiB there and ~0.07 MiB here).

  The cache is off under LTORCH_MALLOC=glibc and in sanitizer builds: then these specs skip (one
  spec checks that it is on everywhere else).

  Run:  build/ltorch /usr/bin/busted spec/torch/large_blocks_spec.lua
]]
local ffi = require "ffi"
local torch = require "torch"
local fresh = require "spec.support.fresh_process"

local MiB = 1024 * 1024
local CAP = 256 * MiB
local block_cache = require "spec.support.block_cache"
local function cached() return torch.memory_stats().cached_bytes end

describe("large tensor blocks", function()
  local it_cached = block_cache.setup("the large-block cache", "cached_bytes", 64 * 1024,   -- 256 KiB
    { it = it, pending = pending, before_each = before_each, after_each = after_each, assert = assert })

  it_cached("keeps a freed block and gives it to the next tensor of that size", function()
    assert.are.equal(0, cached())
    local x = torch.empty(256 * 1024)   -- 1 MiB of floats
    x:free()
    local kept = cached()
    assert.is_true(kept >= MiB and kept < MiB + 8192, "kept " .. kept .. " bytes")
    local y = torch.ones(256 * 1024)
    assert.are.equal(0, cached(), "the same size should have taken the kept block back")
    assert.are.equal(256 * 1024, y:sum():item())
    y:free()
    assert.are.equal(kept, cached())
  end)

  it_cached("lets tensors of nearby sizes share blocks (size classes), a smaller one a bigger block", function()
    torch.empty(256 * 1024):free()   -- 1 MiB
    local kept = cached()
    local near = torch.empty(240 * 1024)   -- 960 KiB: the same class
    assert.are.equal(0, cached(), "a 960 KiB tensor did not take the kept 1 MiB block")
    near:free()
    assert.are.equal(kept, cached())
    local smaller = torch.empty(200 * 1024)   -- 800 KiB: a class below, served from the next ones up
    assert.are.equal(0, cached(), "an 800 KiB tensor did not take the kept 1 MiB block")
    smaller:fill_(1)
    assert.are.equal(200 * 1024, smaller:sum():item())
    smaller:free()
    local tiny = torch.empty(40 * 1024)    -- 160 KiB: too far below to take a 1 MiB block
    assert.are.equal(kept, cached())
    tiny:free()
  end)

  it_cached("gives a tensor the block just freed when it fits, not the closest size", function()
    local a, b = torch.empty(256 * 1024), torch.empty(384 * 1024)   -- 1 MiB, then 1.5 MiB
    local b_data = tonumber(ffi.cast("uintptr_t", b:data_ptr()))
    a:free()
    b:free()   -- freed last
    local t = torch.empty(200 * 1024)   -- 800 KiB: either block fits (at most twice its class)
    assert.are.equal(b_data, tonumber(ffi.cast("uintptr_t", t:data_ptr())), "not the block freed last")
    t:free()
    local far = torch.empty(100 * 1024)   -- 400 KiB: both blocks are more than twice its class
    assert.is_true(tonumber(ffi.cast("uintptr_t", far:data_ptr())) ~= b_data)
    far:free()
  end)

  it_cached("gives a tensor its own size's block when no block just freed fits", function()
    local a, b = torch.empty(256 * 1024), torch.empty(384 * 1024)   -- 1 MiB, 1.5 MiB
    local c, d = torch.empty(16 * 1024), torch.empty(16 * 1024)     -- 64 KiB each
    local a_data = tonumber(ffi.cast("uintptr_t", a:data_ptr()))
    a:free(); b:free(); c:free(); d:free()   -- the two freed last are too small
    local t = torch.empty(240 * 1024)   -- 960 KiB: a's class, though b is more recent
    assert.are.equal(a_data, tonumber(ffi.cast("uintptr_t", t:data_ptr())), "not the block of its own size")
    t:free()
  end)

  it_cached("torch.collect() gives every kept block back", function()
    local ts = {}
    for i = 1, 8 do ts[i] = torch.empty(i * 64 * 1024) end
    for i = 1, 8 do ts[i]:free() end
    assert.is_true(cached() >= 36 * 256 * 1024)
    torch.collect()
    assert.are.equal(0, cached())
  end)

  it_cached("does not keep blocks above 32 MiB (dataset-sized copies are rarely asked for again)", function()
    torch.empty(10 * MiB):free()   -- 40 MiB
    assert.are.equal(0, cached())
    torch.empty(8 * MiB - 1024):free()   -- just under 32 MiB with its header: kept
    assert.is_true(cached() > 0)
  end)

  -- In a fresh process: the address-space limit must not reach the suite's own allocations.
  it_cached("takes a block from the malloc heap when it cannot be mapped (no address space left)", function()
    local r = fresh.run [==[
local ffi = require "ffi"
ffi.cdef [[
typedef struct { unsigned long cur, max; } lt_spec_rlimit;
int getrlimit(int resource, lt_spec_rlimit *r);
int setrlimit(int resource, const lt_spec_rlimit *r);
]]
local RLIMIT_AS = 9
local function vm_kb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmSize:%s+(%d+)%s+kB")
    if kb then return tonumber(kb) end
  end
end
-- Free room on the malloc heap: 28 KiB tensors (under the mapping threshold) made and freed.
local hold = {}
for i = 1, 2000 do hold[i] = torch.empty(7 * 1024) end
for i = 1, 2000 do hold[i]:free() end
hold = nil
torch.collect()
local out = {}
local lim = ffi.new("lt_spec_rlimit")
assert(ffi.C.getrlimit(RLIMIT_AS, lim) == 0)
collectgarbage("collect"); collectgarbage("stop")
-- No address space left for a new mapping: a 64 KiB tensor cannot be mapped apart.
lim.cur = (vm_kb() + 32) * 1024
assert(ffi.C.setrlimit(RLIMIT_AS, lim) == 0)
local ok, t = pcall(torch.ones, 64, 256)
local sum = ok and t:sum():item() or tostring(t)
if ok then t:free() end
local cached = torch.memory_stats().cached_bytes
lim.cur = lim.max
ffi.C.setrlimit(RLIMIT_AS, lim)
collectgarbage("restart")
print(require("cjson").encode({ ok = ok, sum = sum, cached = cached }))
]==]
    assert.is_true(r.ok, tostring(r.sum))
    assert.are.equal(64 * 256, r.sum)
    assert.are.equal(0, r.cached, "the block was mapped after all")
  end)

  it_cached("never keeps small tensors", function()
    for _ = 1, 100 do torch.empty(1000):free() end   -- 4 KB each
    assert.are.equal(0, cached())
  end)

  it_cached("keeps blocks from 32 KiB up (a 64 x 256 layer's activations), none below", function()
    torch.empty(7 * 1024):free()    -- 28 KiB: the malloc heap
    assert.are.equal(0, cached())
    torch.empty(16 * 1024):free()   -- 64 KiB: mapped, then kept
    local kept = cached()
    assert.is_true(kept >= 64 * 1024 and kept < 80 * 1024, "kept " .. kept)
    local again = torch.empty(64, 256)   -- the same class takes it back
    assert.are.equal(0, cached())
    again:free()
  end)

  it_cached("keeps at most 256 MiB, evicting the blocks freed longest ago for a newly freed one", function()
    local big = {}
    for i = 1, 70 do big[i] = torch.empty(MiB) end   -- 70 blocks of 4 MiB: 280 MiB
    for i = 1, 70 do big[i]:free() end
    local full = cached()
    assert.is_true(full <= CAP and full > CAP - 8 * MiB, "kept " .. full)
    local other = torch.empty(3 * 256 * 1024)   -- 3 MiB: another size
    other:free()
    assert.is_true(cached() <= CAP, "over the cap: " .. cached())
    -- the 3 MiB block is kept (it evicted a 4 MiB one): the next 3 MiB tensor reuses it
    local before = cached()
    local again = torch.empty(3 * 256 * 1024)
    assert.is_true(cached() < before, "the newly freed size was not kept")
    again:free()
  end)

  it_cached("gives right values in reused blocks", function()
    local a = torch.randn(512, 512)
    local expected = (a * 2):sum():item()
    for _ = 1, 5 do
      local junk = torch.full({ 512, 512 }, 7.0)
      junk:free()
      local z = torch.zeros(512, 512)
      assert.are.equal(0, z:abs():sum():item())
      local b = a * 2
      assert.is_true(math.abs(b:sum():item() - expected) < 1e-3)
      z:free(); b:free()
    end
  end)

  -- In a fresh process (spec/support/fresh_process.lua): inside the suite's busted process RSS
  -- would also count the Lua heap the earlier specs left to the collector.
  it_cached("keeps RSS flat over a loop that frees big tensors in collector batches", function()
    local r = fresh.run [[
local function rss_kb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmRSS:%s+(%d+)%s+kB")
    if kb then return tonumber(kb) end
  end
end
local w = torch.randn(784, 256)
local x = torch.randn(64, 784)
local function step()
  local h = x:matmul(w):relu()   -- 64 KiB: mapped
  local g = x:t():matmul(h)      -- 784x256: 800 KiB, mapped
  local s = torch.randn(37)       -- small, between the big ones
  return g:sum():item() + s:sum():item()
end
for _ = 1, 300 do step() end
local start = rss_kb()
for _ = 1, 3000 do step() end
print(require("cjson").encode({ grown = rss_kb() - start, cached = torch.memory_stats().cached_bytes }))
]]
    assert.is_true(r.grown < 2048, ("RSS grew %d KiB"):format(r.grown))
    -- one step's big blocks, give or take a collector batch: never thousands of them
    assert.is_true(r.cached < 64 * MiB, ("%d bytes kept"):format(r.cached))
  end)
end)
