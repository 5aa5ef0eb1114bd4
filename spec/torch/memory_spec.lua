--[[
  spec/torch/memory_spec.lua — how tensor memory lives and dies (lua/torch/_memory.lua; torch.scope:
  lua/torch/_scope.lua).

  Covers: torch.memory_stats() live_bytes rising by a tensor's bytes and falling after
  x:free(); use after free; the slab releasing collected tensors' handles (live_handles back to
  its baseline, reachable tensors intact across GC cycles and re-entrant finalizers, a slot
  reused after x:free(), the closer at lua_close running after other cdata finalizers; a
  small-op loop's garbage released one per new result, big garbage at once);
  torch.scope freeing inner tensors but keeping returned ones (direct and inside a returned table), nested scopes, errors inside a scope; from_buffer keeping its
  ffi buffer alive after the Lua reference is dropped; and the done-means checks: 100,000
  iterations of small-tensor work keep resident memory (VmRSS) growth under 50 MB, and a loop
  dropping 4 MB tensors stays bounded thanks to pressure-driven collection.

  Run:  build/ltorch /usr/bin/busted spec/torch/memory_spec.lua   (prints the measured growth)
]]
local ffi = require "ffi"
local torch = require "torch"
local fresh = require "spec.support.fresh_process"

local function live() return torch.memory_stats().live_bytes end

-- Resident set size of this process in bytes (Linux).
local function rss_bytes()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmRSS:%s+(%d+)%s+kB")
    if kb then return tonumber(kb) * 1024 end
  end
  error("VmRSS not found in /proc/self/status")
end

describe("torch memory accounting", function()
  before_each(function() torch.collect() end)

  it("live_bytes rises by the tensor's bytes and falls after x:free()", function()
    local before = live()
    local x = torch.zeros(1000)
    assert.are.equal(4000, x.nbytes)
    assert.are.equal(before + 4000, live())
    local y = torch.ones(10, 10, { dtype = torch.float64 })
    assert.are.equal(before + 4000 + 800, live())
    x:free()
    assert.are.equal(before + 800, live())
    torch.free(y)
    assert.are.equal(before, live())
  end)

  it("reports peak bytes and an allocation count", function()
    local s0 = torch.memory_stats()
    local x = torch.empty(256)
    local s1 = torch.memory_stats()
    assert.are.equal(s0.allocations + 1, s1.allocations)
    assert.is_true(s1.peak_bytes >= s1.live_bytes)
    x:free()
  end)

  it("a freed tensor raises 'tensor was freed' on use; free is idempotent", function()
    local x = torch.ones(3)
    x:free()
    assert.is_true(x:is_freed())
    x:free()
    assert.error_matches(function() return x + 1 end, "add: tensor was freed (x:free() or a finished torch.scope)", nil, true)
    assert.error_matches(function() return x:sum() end, "sum: tensor was freed", nil, true)
    assert.error_matches(function() return x:tolist() end, "tensor was freed", nil, true)
    assert.has_error(function() torch.free(5) end, "bad argument #1 to 'free' (Tensor expected, got number)")
  end)

  it("freeing one handle keeps storage that a view still uses", function()
    local before = live()
    local base = torch.ones(100)
    local view = base:view(10, 10)
    base:free()
    assert.are.equal(before + 400, live())
    local total = view:sum()
    assert.are.equal(100, total:item())
    total:free()
    view:free()
    assert.are.equal(before, live())
  end)
end)

-- Runs a Lua chunk in a fresh ltorch process (`ltorch -e`); returns its stdout and stderr.
local function run_fresh(script)
  local p = assert(io.popen((arg and arg[-1] or "build/ltorch") .. " -e '" .. script:gsub("'", "'\\''") .. "' 2>&1"))
  local out = p:read("*a")
  p:close()
  return out
end

describe("handle release through the slab (no finalizer per tensor)", function()
  before_each(function() torch.collect() end)
  local function handles() return torch.memory_stats().live_handles end

  it("releases the handles of collected tensors, and their bytes", function()
    local h0, b0 = handles(), live()
    do
      local keep = {}
      for i = 1, 3000 do keep[i] = torch.zeros(16) end
      assert.are.equal(h0 + #keep, handles())
      assert.are.equal(b0 + 3000 * 64, live())
    end
    torch.collect()
    assert.are.equal(h0, handles())
    assert.are.equal(b0, live())
  end)

  it("keeps every reachable tensor intact across many collection cycles", function()
    local keep = {}
    for i = 1, 2000 do
      keep[i] = torch.full({ 2 }, i, { dtype = torch.float64 })
      local _ = torch.ones(64) + 1   -- garbage between the kept ones
      if i % 500 == 0 then collectgarbage("collect") end
    end
    torch.collect()
    for i = 1, 2000, 97 do
      assert.are.equal(i, keep[i][1]:item())
    end
    local sum = 0
    for i = 1, 2000 do sum = sum + keep[i]:sum():item() end
    assert.are.equal(2000 * 2001, sum)
  end)

  --[[ Drops a probe: garbage whose finalizer runs inside some later allocation, possibly inside
       a wrap or a resize of the slab, and makes a tensor (ones(n) * n) there: every keep_every-th
       goes into `keep`, the others are freed at once when free_others is set. One probe per
       40-50 tensors: LuaJIT runs a finalizer's own pending finalizers nested, so thousands of
       tensor-making finalizers due at once overflow its C stack (a LuaJIT limit, seen in the
       full suite with one probe per tensor). `counter.made` counts the finalizers that ran. ]]
  local function drop_probe(counter, keep, n, keep_every, free_others)
    local _ = ffi.gc(ffi.new("int[1]"), function()
      counter.made = counter.made + 1
      local t = torch.ones(n) * n
      if counter.made % keep_every == 0 then keep[#keep + 1] = t elseif free_others then t:free() end
    end)
  end

  it("stays consistent when finalizers make and drop tensors in the middle of wraps", function()
    local counter, keep = { made = 0 }, {}
    for i = 1, 20000 do
      if i % 50 == 0 then drop_probe(counter, keep, 2, 7, false) end
      local x = torch.full({ 1 }, i, { dtype = torch.float64 })
      if i % 1000 == 0 then keep[#keep + 1] = x end
    end
    collectgarbage("collect")
    torch.collect()
    assert.is_true(counter.made > 0)
    for _, t in ipairs(keep) do
      local v = t:sum():item()
      assert.is_true(v == 4 or v % 1000 == 0, "a kept tensor changed: " .. v)
    end
  end)

  local slab = require("torch._C").state.slab
  local C = require("torch._C").C

  it("gives a dead burst's slots back: the slab shrinks, and the tensors around it stay intact", function()
    local S = slab.s
    local h0, top0 = handles(), S.top   -- earlier specs' tensors may hold slots up to top0
    local before = {}
    for i = 1, 10 do before[i] = torch.full({ 3 }, i) end
    local held = { burst = {} }
    for i = 1, 30000 do
      held.burst[i] = torch.full({ 1 }, i)
      if i == 25000 then held.survivor = torch.full({ 2 }, -5) end   -- a high slot that stays in use
    end
    assert.is_true(S.top >= 30000 and S.capacity >= 30000)
    held.burst = nil
    torch.collect()
    assert.are.equal(0, C.lt_slab_check(S))
    -- the survivor holds its slot, so the slab cannot drop below it yet
    assert.is_true(S.top >= 25000, "top " .. S.top)
    assert.are.equal(-10, held.survivor:sum():item())
    held.survivor = nil
    torch.collect()
    assert.are.equal(0, C.lt_slab_check(S))
    assert.is_true(S.top <= top0 + 64, ("top %d, was %d before the burst"):format(S.top, top0))
    assert.is_true(S.capacity <= math.max(4096, 4 * S.top), "capacity " .. S.capacity)
    assert.are.equal(S.capacity, slab.live_capacity)   -- the table of refs followed
    for i = 1, 10 do assert.are.equal(3 * i, before[i]:sum():item()) end
    -- and it grows again as it should, slots handed out once each, lowest first
    local again = {}
    for i = 1, 5000 do again[i] = torch.full({ 1 }, i, { dtype = torch.float64 }) end
    assert.is_true(S.top <= top0 + 64 + 5000, "top " .. S.top)
    torch.collect()
    assert.are.equal(0, C.lt_slab_check(S))
    local sum = 0
    for i = 1, 5000 do sum = sum + again[i]:item() end
    assert.are.equal(5000 * 5001 / 2, sum)
    assert.are.equal(h0 + 10 + 5000, handles())
  end)

  it("stays consistent when finalizers make and drop tensors while bursts die and the slab resizes", function()
    local counter, keep = { made = 0 }, {}
    collectgarbage("collect")
    torch.collect()
    local top0 = slab.s.top   -- earlier specs' tensors still alive hold slots up to top0
    for round = 1, 6 do
      do
        local burst = {}
        for i = 1, 8000 do
          if i % 40 == 0 then drop_probe(counter, keep, 3, 5, true) end
          burst[i] = torch.full({ 1 }, round)
        end
        for i = 1, #burst, 1000 do keep[#keep + 1] = burst[i] end
      end
      collectgarbage("collect")
      torch.collect()
      assert.are.equal(0, C.lt_slab_check(slab.s))
    end
    assert.is_true(counter.made > 0)
    -- a burst takes 8,000 slots above the kept tensors' (48) and the probes' survivors when no
    -- collection runs inside it (the collection step follows the Lua heap, which is big here)
    assert.is_true(slab.s.top < 8000 + top0 + #keep + 100, ("top %d (%d before)"):format(slab.s.top, top0))
    for _, t in ipairs(keep) do
      local v = t:sum():item()
      assert.is_true(v == 9 or (v >= 1 and v <= 6), "a kept tensor changed: " .. v)
    end
  end)

  it("stays consistent in the interpreter too, where every pointer read allocates", function()
    -- Fresh process with the JIT off: finalizers then run in the middle of wraps, sweeps and
    -- resizes at many more points (the flaw a Lua-side slab trim had, caught only by a CI run).
    local script = [=[
      local ffi = require "ffi"
      local torch = require "torch"
      local _C = require "torch._C"
      jit.off()
      local S = _C.state.slab.s
      local made, keep, worst = 0, {}, 0
      for round = 1, 4 do
        local burst = {}
        for i = 1, 6000 do
          if i % 30 == 0 then
            local _ = ffi.gc(ffi.new("int[1]"), function()
              made = made + 1
              local t = torch.ones(2) * 10
              if made % 4 == 0 then keep[#keep + 1] = t else t:free() end
            end)
          end
          burst[i] = torch.full({ 1 }, round)
          if i % 500 == 0 then
            local status = _C.C.lt_slab_check(S)
            if status ~= 0 then worst = status end
            if torch.memory_stats().live_handles < 0 then worst = -1 end
          end
        end
        for i = 1, #burst, 600 do keep[#keep + 1] = burst[i] end
        burst = nil
        collectgarbage("collect")
        torch.collect()
      end
      local bad = 0
      for _, t in ipairs(keep) do
        local v = t:sum():item()
        if not (v == 20 or v == 1 or v == 2 or v == 3 or v == 4) then bad = bad + 1 end
      end
      io.write(made, " ", worst, " ", bad, " ", S.top)
    ]=]
    local out = run_fresh(script)
    local made, worst, bad, top = out:match("^(%d+) (%-?%d+) (%d+) (%d+)$")
    assert.is_truthy(made, out)
    assert.is_true(tonumber(made) > 0, out)
    assert.are.equal("0", worst, "slab check failed: " .. out)
    assert.are.equal("0", bad, "kept tensors changed: " .. out)
    assert.is_true(tonumber(top) < 6000, "top " .. top)
  end)

  it("torch.collect() gives the heap memory of a dead burst back to the system", function()
    if os.getenv("LTORCH_SANITIZED") then pending("the sanitizer's allocator keeps freed memory in quarantine") return end
    torch.collect()
    local r0 = rss_bytes()
    local held = { alive = {} }
    for i = 1, 100000 do held.alive[i] = torch.empty(1) end   -- ~60 MB of TensorImpls and handles
    assert.are.equal(100000, #held.alive)
    held.alive = nil
    collectgarbage("collect"); collectgarbage("collect")
    local r1 = rss_bytes()
    torch.collect()
    local r2 = rss_bytes()
    assert.is_true(r1 - r0 > 20e6, ("the burst took only %.1f MB"):format((r1 - r0) / 1e6))
    assert.is_true(r2 - r0 < (r1 - r0) / 2, ("RSS %.1f MB before, %.1f MB after the burst died, %.1f MB after torch.collect()")
      :format(r0 / 1e6, r1 / 1e6, r2 / 1e6))
  end)

  it("a slot reused after x:free() belongs to the new tensor only", function()
    local h0 = handles()
    local a = torch.ones(4)
    a:free()
    local b = torch.full({ 4 }, 7, { dtype = torch.float32 })
    collectgarbage("collect")
    torch.collect()
    assert.are.equal(h0 + 1, handles())
    assert.are.equal(28, b:sum():item())
    assert.is_true(a:is_freed())
  end)

  it("steps the collector for dropped handles, not for handles released at once", function()
    -- Counted in a fresh process: how many collection cycles a loop causes depends on the size
    -- of the Lua heap (a step of the same size finishes less of a cycle in a bigger heap), and
    -- this suite's own heap grows with every spec file. A finalizable sentinel per cycle counts.
    local script = [=[
      local torch = require "torch"
      local cycles = 0
      local function arm()
        local sentinel = newproxy(true)
        getmetatable(sentinel).__gc = function() cycles = cycles + 1; arm() end
      end
      arm()
      local a, b = torch.randn(10), torch.randn(10)
      local function count(loop)
        collectgarbage("collect")
        cycles = 0
        loop()
        return cycles
      end
      local dropped = count(function() for _ = 1, 100000 do local _ = a + b end end)
      local released = count(function() for _ = 1, 100000 do (a + b):free() end end)
      io.write(dropped, " ", released)
    ]=]
    local out = run_fresh(script)
    local dropped, released = out:match("^(%d+) (%d+)$")
    assert.is_truthy(dropped, out)
    dropped, released = tonumber(dropped), tonumber(released)
    -- a step per N dropped handles (the ~1 MB Lua heap in bookkeeping at 512 bytes each,
    -- ~2,000, raised to the floor of 8,192), each finishing a cycle: ~12; released: Lua
    -- garbage only, ~1
    assert.is_true(dropped >= 8, "dropped handles drove " .. dropped .. " cycles")
    assert.is_true(released <= 4, ("released handles drove %d cycles, dropped ones %d"):format(released, dropped))
  end)

  it("closing the Lua state runs other cdata finalizers while tensors are still valid", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
      local ffi = require "ffi"
      local torch = require "torch"
      kept = torch.ones(3)
      local probe = ffi.gc(ffi.new("int[1]"), function()
        local ok, err = pcall(function() return kept:sum() end)
        io.stdout:write(ok and "at close: still usable\n" or ("at close: " .. tostring(err) .. "\n"))
      end)
      anchor = probe
      print(kept:sum():item())
    ]])
    f:close()
    local p = io.popen((arg and arg[-1] or "build/ltorch") .. " " .. script .. " 2>&1; echo rc=$?")
    local out = p:read("*a")
    p:close()
    os.remove(script)
    assert.matches("^3\n", out)
    assert.matches("rc=0\n$", out)
    -- lua_close runs cdata finalizers before userdata ones (the slab's closer is a userdata):
    -- a host's ffi.gc finalizer can still use a tensor; the closer releases it afterwards
    assert.matches("at close: still usable\n", out, 1, true)
  end)
end)

describe("torch.scope", function()
  before_each(function() torch.collect() end)

  it("frees the tensors made inside and keeps the ones returned", function()
    local before = live()
    local inner
    local kept, n = torch.scope(function(k)
      inner = torch.ones(8)
      return torch.full({ 4 }, k), 42
    end, 3)
    assert.are.equal(42, n)
    assert.is_true(inner:is_freed())
    assert.error_matches(function() return inner * 2 end, "mul: tensor was freed", nil, true)
    assert.is_false(kept:is_freed())
    assert.are.same({ 3, 3, 3, 3 }, kept:tolist())
    assert.are.equal(before + kept.nbytes, live())
  end)

  it("keeps tensors inside a returned table", function()
    local inner
    local t = torch.scope(function()
      inner = torch.zeros(2)
      return { weight = torch.ones(2), torch.ones(3), step = 7 }
    end)
    assert.is_true(inner:is_freed())
    assert.are.same({ 1, 1 }, t.weight:tolist())
    assert.are.same({ 1, 1, 1 }, t[1]:tolist())
    assert.are.equal(7, t.step)
  end)

  it("nests: an inner scope hands its result to the outer one, which frees it unless returned", function()
    local inner_tmp, from_inner, outer_tmp, inner_freed, result_alive
    local r = torch.scope(function()
      outer_tmp = torch.ones(2)
      from_inner = torch.scope(function()
        inner_tmp = torch.ones(3)
        return torch.ones(4)
      end)
      inner_freed, result_alive = inner_tmp:is_freed(), not from_inner:is_freed()
      return outer_tmp + 1
    end)
    assert.is_true(inner_freed)
    assert.is_true(result_alive)
    assert.is_true(from_inner:is_freed())
    assert.is_true(outer_tmp:is_freed())
    assert.are.same({ 2, 2 }, r:tolist())
  end)

  it("passes an error on and still frees what was made", function()
    local before = live()
    local inner
    assert.has_error(function()
      torch.scope(function()
        inner = torch.ones(16)
        error("failed inside the scope", 0)
      end)
    end, "failed inside the scope")
    assert.is_true(inner:is_freed())
    assert.are.equal(before, live())
    local payload = {}
    local ok, err = pcall(torch.scope, function() error(payload) end)
    assert.is_false(ok)
    assert.is_true(rawequal(payload, err))
  end)

  it("rejects a non-function", function()
    assert.has_error(function() torch.scope(nil) end, "bad argument #1 to 'scope' (function expected, got nil)")
    assert.has_error(function() torch.scope({}) end, "bad argument #1 to 'scope' (function expected, got table)")
  end)
end)

describe("torch.from_buffer ownership", function()
  -- busted (busted/luajit.lua) caches every ffi.typeof argument in a strong table, which alone
  -- would keep the buffer alive; this test runs with the original ffi.typeof.
  local patched
  setup(function()
    patched = ffi.typeof
    for i = 1, 20 do
      local name, value = debug.getupvalue(patched, i)
      if name == nil then break end
      if name == "original" then ffi.typeof = value end
    end
  end)
  teardown(function() ffi.typeof = patched end)

  it("keeps its ffi buffer alive after the Lua reference is dropped, and lets go after", function()
    torch.collect()
    local held = torch.memory_stats().held_buffers
    -- Made in a helper whose stack frame is gone afterwards, so only the tensor refers to buf.
    local function wrap_new_buffer()
      local buf = ffi.new("float[4]", { 1, 2, 3, 4 })
      return torch.from_buffer(buf, { dtype = torch.float32 }), setmetatable({ buf }, { __mode = "v" })
    end
    local t, watch = wrap_new_buffer()
    collectgarbage()
    collectgarbage()
    -- Peek through helpers: a temporary in this function's frame would keep buf referenced.
    local function alive() return watch[1] ~= nil end
    local function element(i) return watch[1][i] end
    assert.is_true(alive())
    assert.are.equal(held + 1, torch.memory_stats().held_buffers)
    assert.are.same({ 1, 2, 3, 4 }, t:tolist())
    t:mul_(2)
    assert.are.equal(6, element(2))  -- no copy: the tensor writes into the buffer
    t = nil  -- luacheck: ignore
    torch.collect()
    torch.collect()
    assert.are.equal(held, torch.memory_stats().held_buffers)
    assert.is_false(alive())
  end)
end)

describe("torch memory under long loops", function()
  -- In a fresh process (spec/support/fresh_process.lua): inside the suite's busted process the
  -- figure would also count the Lua heap the earlier specs left to the collector.
  it("done-means: 100,000 iterations of small-tensor work grow RSS by under 50 MB", function()
    local r = fresh.run [[
local function rss_bytes()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmRSS:%s+(%d+)%s+kB")
    if kb then return tonumber(kb) * 1024 end
  end
end
local function live() return torch.memory_stats().live_bytes end
local x = torch.arange(16, { dtype = torch.float32 })
local acc = 0
for _ = 1, 5000 do acc = acc + (x * 2 + 1):sum():item() end  -- warm-up: JIT, allocator pools
collectgarbage()
torch.collect()
local live0 = live()
local before, max_live = rss_bytes(), 0
local t0 = os.clock()
for i = 1, 100000 do
  local y = (x * 2 + 1):sum()
  if i % 1000 == 0 then
    acc = acc + y:item()
    max_live = math.max(max_live, live() - live0)
  end
end
print(require("cjson").encode({ growth = rss_bytes() - before, max_live = max_live, acc = acc, s = os.clock() - t0 }))
]]
    print(("\n[memory_spec] 100k iterations: RSS growth %.2f MB, max live tensor bytes %d, %.2f s")
      :format(r.growth / 2 ^ 20, r.max_live, r.s))
    assert.is_true(r.acc > 0)
    assert.is_true(r.growth < 50 * 2 ^ 20, ("RSS grew by %.1f MB"):format(r.growth / 2 ^ 20))
    assert.is_true(r.max_live < 16 * 2 ^ 20, "live tensor bytes grew to " .. r.max_live)
  end)

  it("releases a small-op loop's garbage one per new result, and big garbage at once", function()
    local S = require("torch._C").state.slab.s
    local a, b = torch.randn(10), torch.randn(10)
    torch.collect()
    -- Collector steps come every N new handles, N growing with the Lua heap (at most 65,536),
    -- and a cycle can take several steps: a whole suite's heap makes both large, so the loop
    -- runs until a few thousand calls after the first queued sweep.
    local max_queued, r, until_call, prev, not_draining, excess = 0, nil, 300000, 0, 0, 0
    for i = 1, 300000 do
      r = a + b
      local q = S.nqueued
      if q > prev then
        if max_queued == 0 then until_call = i + 5000 end   -- the first queued sweep
        if q > max_queued then max_queued = q end
        if q - i > excess then excess = q - i end
      elseif prev > 0 and q >= prev then
        not_draining = not_draining + 1   -- a new result that released nothing from the queue
      end
      prev = q
      if i >= until_call then break end
    end
    assert.is_true(r ~= nil)
    -- The cycles' dead results were queued (not released in one batch); the queue never held
    -- more than this loop's results so far (what it queued is the loop's garbage, not a
    -- forward's activations; torch.collect() above released everything older), and each new
    -- result released one of them (a sweep that found exactly one dead handle reads as a miss).
    assert.is_true(max_queued > 0, "nothing was ever queued")
    assert.is_true(excess <= 1024, ("the queue held %d more handles than the loop had made"):format(excess))
    assert.is_true(not_draining < 10, not_draining .. " new results released nothing from a non-empty queue")
    torch.memory_stats()
    assert.are.equal(0, S.nqueued)   -- stats count live bytes: they release the queue first
    torch.collect()
    for _ = 1, 100 do
      local big = torch.empty(512 * 1024)  -- luacheck: ignore (2 MiB each, dropped)
      assert.are.equal(0, S.nqueued, "a cycle's garbage of big tensors was queued")
    end
  end)

  it("200 dropped 4 MB tensors stay bounded by pressure-driven collection", function()
    torch.collect()
    local before_live, before_rss, max_live = live(), rss_bytes(), 0
    for _ = 1, 200 do
      local big = torch.zeros(1024 * 1024)  -- luacheck: ignore (4 MB, pages touched; dropped below)
      max_live = math.max(max_live, live() - before_live)
      big = nil  -- luacheck: ignore
    end
    local growth = rss_bytes() - before_rss
    print(("\n[memory_spec] 200 x 4 MB: max live %.1f MB, RSS growth %.1f MB")
      :format(max_live / 2 ^ 20, growth / 2 ^ 20))
    -- Without collection under pressure all 800 MB would stay live until the Lua GC ran.
    assert.is_true(max_live < 200 * 2 ^ 20, ("live tensor bytes reached %.1f MB"):format(max_live / 2 ^ 20))
    assert.is_true(growth < 300 * 2 ^ 20, ("RSS grew by %.1f MB"):format(growth / 2 ^ 20))
  end)
end)
