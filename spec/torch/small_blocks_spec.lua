--[[
  spec/torch/small_blocks_spec.lua — tensor blocks of up to 1 KiB (the allocator's 64-byte
  header included) are kept on per-thread lists by 64-byte class when freed, and the next
  tensor of that class on that thread takes one back (bindings/lt_small_blocks.cpp).

  Checked: a freed block is kept (torch.memory_stats().cached_small_bytes, the calling thread's)
  and the next tensor of its class takes it back; classes are 64 bytes of block (data + header),
  the biggest kept block is 1 KiB and a bigger one is never kept; a thread keeps at most 512 KiB
  of one class and 2 MiB in all; torch.collect() gives everything back; values are right in
  reused blocks; live-byte accounting is unchanged; blocks made by worker threads (a
  DataLoader's) and freed here join this thread's lists, and the workers' own lists go back when
  they exit (the loader runs many times without the process growing).

  The lists are off under LTORCH_MALLOC=glibc and in sanitizer builds: then the cache specs skip;
  one spec checks that they are on everywhere else, one that the variable turns them off.

  Run:  build/ltorch /usr/bin/busted spec/torch/small_blocks_spec.lua
]]
local torch = require "torch"

local KiB = 1024
local HEADER = 64
local function cached() return torch.memory_stats().cached_small_bytes end
-- The block a tensor of `bytes` data bytes takes: data + header, rounded up to 64 bytes.
local function block_of(bytes) return math.ceil((bytes + HEADER) / 64) * 64 end

local block_cache = require "spec.support.block_cache"
local rss_kb = block_cache.rss_kb

describe("small tensor blocks", function()
  local it_cached = block_cache.setup("the small-block lists", "cached_small_bytes", 4,
    { it = it, pending = pending, before_each = before_each, after_each = after_each, assert = assert })

  it_cached("keeps a freed block and gives it to the next tensor of its class", function()
    assert.are.equal(0, cached())
    local x = torch.empty(10)            -- 40 bytes + header: a 128-byte block
    x:free()
    assert.are.equal(128, cached())
    local y = torch.empty(12)            -- 48 + 64 = 112: the same class
    assert.are.equal(0, cached())
    local z = torch.empty(2)             -- 8 + 64 = 72: also 128, none kept now: a new block
    assert.are.equal(0, cached())
    y:free(); z:free()
    assert.are.equal(256, cached())
  end)

  it_cached("sizes classes by 64 bytes of block, up to 1 KiB; bigger blocks are never kept", function()
    local sizes = { 1, 16, 17, 64, 200, 240 }   -- float counts: 4 .. 960 data bytes
    local ts, expected = {}, 0
    for i, n in ipairs(sizes) do ts[i] = torch.empty(n) end
    for i, n in ipairs(sizes) do
      ts[i]:free()
      expected = expected + block_of(4 * n)
      assert.are.equal(expected, cached(), "after a tensor of " .. n .. " floats")
    end
    assert.are.equal(128 + 128 + 192 + 320 + 896 + 1024, expected)
    assert.are.equal(1024, block_of(4 * 240))  -- the biggest class
    torch.empty(241):free()                   -- 964 + 64 > 1 KiB: libtorch's allocator
    torch.empty(1000):free()
    assert.are.equal(expected, cached())
    -- every dtype goes by bytes: 120 doubles = 960 bytes, class 1 KiB, takes the kept float block
    local d = torch.empty(120, { dtype = torch.float64 })
    assert.are.equal(expected - 1024, cached())
    d:free()
  end)

  it_cached("keeps at most 512 KiB of a class and 2 MiB in all on a thread", function()
    local ts = {}
    for i = 1, 6000 do ts[i] = torch.empty(10) end      -- 6,000 blocks of 128 bytes: 750 KiB
    for i = 1, 6000 do ts[i]:free() end
    assert.are.equal(512 * KiB, cached())
    torch.collect()
    -- 16 classes x 512 KiB would be 8 MiB: the thread's cap stops at 2 MiB
    local per_class = 8192
    for c = 1, 16 do
      local floats = math.floor((c * 64 - HEADER) / 4)
      local batch = {}
      for i = 1, math.floor(per_class / c) do batch[i] = torch.empty(math.max(floats, 1)) end
      for i = 1, #batch do batch[i]:free() end
    end
    local kept = cached()
    assert.is_true(kept <= 2 * 1024 * KiB, "kept " .. kept)
    assert.is_true(kept > 1024 * KiB, "kept only " .. kept)
  end)

  it_cached("torch.collect() gives every kept block back", function()
    for _ = 1, 100 do torch.empty(3):free() end
    for _ = 1, 100 do torch.empty(100):free() end
    assert.is_true(cached() > 0)
    torch.collect()
    assert.are.equal(0, cached())
  end)

  it_cached("gives right values in reused blocks, and counts live bytes as before", function()
    local live0 = torch.memory_stats().live_bytes
    for round = 1, 50 do
      local junk = torch.full({ 7 }, round)
      junk:free()
      local z = torch.zeros(7)
      assert.are.equal(0, z:abs():sum():item())
      local a = torch.arange(7, { dtype = torch.float32 })
      local b = a + 1
      assert.are.same({ 1, 2, 3, 4, 5, 6, 7 }, b:tolist())
      z:free(); a:free(); b:free()
    end
    torch.collect()   -- the temporaries of sum() and item() above
    assert.are.equal(live0, torch.memory_stats().live_bytes)
  end)

  it_cached("takes blocks that worker threads made, and workers give theirs back when they exit", function()
    local data = torch.utils.data
    local factory = { module = "spec.data.support.faulty_dataset", args = { 40 } }
    -- Each pass starts two worker threads that make small tensors (the samples and their
    -- batches), frees the batches here, and ends the threads (their lists go back to malloc).
    local function pass()
      local n, sum = 0, 0
      for b in data.DataLoader(nil, { dataset_factory = factory, batch_size = 4, num_workers = 2 }):iter() do
        n = n + b[1]:size(0)
        sum = sum + b[1]:sum():item()
        b[1]:free()
      end
      return n, sum
    end
    local n, sum = pass()
    assert.are.equal(40, n)
    assert.are.equal(2 * (39 * 40 / 2), sum)
    for _ = 1, 5 do pass() end
    torch.collect()
    local before = rss_kb()
    for _ = 1, 30 do assert.are.same({ 40, sum }, { pass() }) end
    torch.collect()
    local grown = rss_kb() - before
    assert.is_true(grown < 4096, ("RSS grew %d KiB over 30 passes of worker threads"):format(grown))
    assert.is_true(cached() <= 2 * 1024 * KiB)
  end)
end)

describe("the bindings library", function()
  -- The lists' thread-exit hook, the CPU allocator and its blocks' deleter live in it and libtorch
  -- keeps pointers to them, so it must never be unloaded (a host's ffi.load closes it at lua_close).
  it("is linked -z nodelete", function()
    local p = assert(io.popen("readelf -d build/libltorch_bindings.so 2>&1"))
    local out = p:read("*a")
    p:close()
    if not out:find("Dynamic section", 1, true) then pending("readelf cannot read build/libltorch_bindings.so") return end
    assert.is_truthy(out:match("FLAGS_1%)%s+Flags:[^\n]*NODELETE"), out)
  end)
end)

describe("small tensor blocks, off", function()
  it("LTORCH_MALLOC=glibc turns the lists off", function()
    local cmd = "LTORCH_MALLOC=glibc " .. (arg and arg[-1] or "build/ltorch") .. " -e 'local torch = require \"torch\"; torch.empty(4):free(); "
      .. "io.write(torch.memory_stats().cached_small_bytes)' 2>&1"
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    assert.are.equal("0", out)
  end)
end)
