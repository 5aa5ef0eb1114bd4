--[[
  spec/torch/memory_pressure_spec.lua — memory the collector can see (lua/torch/_memory.lua,
  bindings/lt_allocator.cpp): the rule that counts device results for the collection trigger,
  the recovery from out-of-memory errors, and the GC cycle count.

  Covers: the counting rule (lt_debug_count_result applies device_bytes_made's rule to a CPU
  tensor): a fresh storage counts its bytes once, a view of it, a .grad read, a re-wrap and a
  meta tensor add nothing, an output autograd also saves (a second TensorImpl on its storage)
  counts once, and a new window (lt_device_memory_poll) counts a storage again at most once;
  the poll answers 0 when no device result was made. Out of memory, reproduced with the CPU
  allocator's fault injection (lt_debug_alloc_limit): garbage tensors dropped but not yet
  collected hold most of the limit, and the next allocation succeeds after the collection and
  retry, through the generic dispatcher, the unary, binary and matmul fast paths; a real
  out-of-memory (live tensors) still raises libtorch's message, naming the op. gc_cycles counts
  finished collection cycles; graph_results counts the results that carry an autograd node, and
  a forward loop with autograd that drops its outputs steps the collector by them. Before backward, the forward's dropped intermediates are collected
  so that autograd alone holds the activations and frees them as C++ does.

  Run:  bash scripts/test.sh spec/torch/memory_pressure_spec.lua
]]
local ffi = require "ffi"
local torch = require "torch"
local C = require("torch._C").C

pcall(ffi.cdef, "void lt_debug_alloc_limit(int64_t max_live_bytes, int64_t fail_after_allocs);")
local function no_faults() ffi.C.lt_debug_alloc_limit(0, -1) end
local function count(t) return tonumber(C.lt_debug_count_result(t.h)) end
local MB = 1024 * 1024

describe("device_bytes_made's counting rule", function()
  before_each(function() C.lt_device_memory_poll() end)   -- a fresh window

  it("counts a fresh storage's bytes once, and nothing for views of it", function()
    local x = torch.zeros(100, 10)
    assert.are.equal(4000, count(x))
    assert.are.equal(0, count(x))            -- the same storage again in this window
    assert.are.equal(0, count(x[3]))         -- a view (select)
    assert.are.equal(0, count(x:t()))        -- a view of the whole storage
    assert.are.equal(0, count(x:detach()))   -- a second TensorImpl on the same storage
    local y = torch.ones(7, { dtype = torch.float64 })
    assert.are.equal(56, count(y))
  end)

  it("adds nothing for a shared TensorImpl (a .grad read), and nothing for meta tensors", function()
    local w = torch.ones(50, { requires_grad = true })
    w:sum():backward()
    C.lt_device_memory_poll()
    local g = w.grad   -- wraps the TensorImpl autograd keeps
    assert.are.equal(0, count(g))
    assert.are.equal(0, count(torch.empty(1000, { device = "meta" })))
  end)

  it("counts an output that autograd also saves once", function()
    local x = torch.randn(64, { requires_grad = true })
    local y = x:exp()   -- exp saves its result: a second TensorImpl on y's storage
    assert.is_not_nil(y.grad_fn)
    assert.are.equal(256, count(y))
    assert.are.equal(0, count(y))
  end)

  it("a new window counts a live storage again at most once (the over-count the poll corrects)", function()
    local x = torch.zeros(25)
    assert.are.equal(100, count(x))
    C.lt_device_memory_poll()
    assert.are.equal(100, count(x[{ { 1, 10 } }]))   -- a view, first seen in this window
    assert.are.equal(0, count(x))
  end)

  it("the poll answers 0 on a machine whose results were all CPU tensors", function()
    local _ = torch.ones(10) + 1
    assert.are.equal(0, tonumber(C.lt_device_memory_poll()))
    assert.are.equal(0, torch.memory_stats().device_bytes_made)
  end)
end)

describe("out of memory: a full collection and one retry", function()
  local base, x
  before_each(function()
    torch.collect()
    x = torch.randn(1024, 1024)   -- 4 MiB, live
    base = torch.memory_stats().live_bytes
    collectgarbage("stop")   -- garbage stays until someone collects it
  end)
  after_each(function()
    no_faults()
    collectgarbage("restart")
    x = nil
    torch.collect()
  end)

  -- Drops 7 tensors of 4 MiB (garbage not yet collected), then caps live bytes 9 MiB above the
  -- baseline: 28 MiB of garbage hold most of the limit.
  local function garbage_then_cap()
    for _ = 1, 7 do local _ = x * 2 end
    assert.is_true(torch.memory_stats().live_bytes >= base + 28 * MB)
    ffi.C.lt_debug_alloc_limit(base + 9 * MB, -1)
  end

  for _, case in ipairs({
    { "a binary fast op", function() return x + 1 end },
    { "a tensor-tensor binary fast op", function() return x * x end },
    { "a unary fast op", function() return x:exp() end },
    { "matmul", function() return x:matmul(x) end },
    { "the generic dispatcher", function() return torch.cumprod(x, 0) end },
  }) do
    it("the next allocation succeeds after the retry: " .. case[1], function()
      garbage_then_cap()
      local ok, r = pcall(case[2])
      assert.is_true(ok, tostring(r))
      assert.are.same({ 1024, 1024 }, r:size())
      assert.is_true(torch.memory_stats().live_bytes <= base + 9 * MB)
    end)
  end

  it("the retried result is the op's result", function()
    local want = torch.cumprod(x, 0)
    garbage_then_cap()
    assert.is_true(torch.equal(want, torch.cumprod(x, 0)))
  end)

  it("a real out-of-memory (live tensors) still raises libtorch's message, naming the op", function()
    ffi.C.lt_debug_alloc_limit(base + 9 * MB, -1)
    local keep = { x * 2, x * 2 }
    local ok, err = pcall(function() return x + 1 end)
    assert.is_false(ok)
    assert.matches("add: out of memory: allocating 4194304 bytes would exceed the injected limit", err, 1, true)
    ok, err = pcall(function() return torch.cumprod(x, 0) end)
    assert.is_false(ok)
    assert.matches("cumprod: out of memory: allocating 4194304 bytes", err, 1, true)
    assert.are.equal(2, #keep)
  end)

  it("another error is not retried", function()
    local calls = torch.memory_stats().gc_cycles
    local ok, err = pcall(function() return x + torch.ones(3) end)
    assert.is_false(ok)
    assert.matches("must match the size", err, 1, true)
    assert.are.equal(calls, torch.memory_stats().gc_cycles)   -- no collection ran
  end)
end)

describe("before backward", function()
  after_each(function() collectgarbage("restart") end)

  it("the forward's dropped intermediates do not live through backward (autograd frees them as in C++)", function()
    torch.collect()
    collectgarbage("stop")   -- only the collection before backward may find the garbage handles
    -- The collection runs only for a forward that made at least the Lua heap's size and a
    -- quarter of what was live after the last full collection (torch._memory): in a whole suite
    -- both grow with every spec file, so each tensor here is at least half of either (16 MiB at
    -- the least; a power of two of float32 elements)
    local need = math.max(16 * MB, collectgarbage("count") * 1024 / 2 + MB,
      torch.memory_stats().live_bytes / 8 + MB)
    local n = 2 ^ math.ceil(math.log(need / 4) / math.log(2))
    local bytes = 4 * n
    local x = torch.randn(n, { requires_grad = true })
    local base = torch.memory_stats().live_bytes
    local loss
    do
      local a = x:exp()   -- saved by exp's backward (its result)
      local b = a * 2     -- saved by nothing
      loss = b:sum()
    end
    assert.is_true(torch.memory_stats().live_bytes >= base + 2 * bytes)
    loss:backward()
    -- left: x.grad (one tensor's bytes) and the scalar loss; a and b were garbage and are gone
    assert.is_true(torch.memory_stats().live_bytes <= base + bytes + 4096,
      "live after backward: " .. (torch.memory_stats().live_bytes - base) .. " of " .. bytes)
    assert.are.equal(n, x.grad:numel())
  end)
end)

describe("before backward, step after step", function()
  -- A tensor big enough that each forward below qualifies for the collection (see above) with
  -- one tensor of its size: at least the Lua heap, which a whole suite makes large.
  local function big_leaf()
    local need = math.max(16 * MB, collectgarbage("count") * 1024 + MB,
      torch.memory_stats().live_bytes / 4 + MB)
    local n = 2 ^ math.ceil(math.log(need / 4) / math.log(2))
    return torch.randn(n, { requires_grad = true }), 4 * n
  end
  local function cycles() return torch.memory_stats().gc_cycles end

  after_each(function() collectgarbage("restart") end)

  it("skips the collection while the forward's owners release its intermediates, and measures again", function()
    torch.collect()
    collectgarbage("stop")   -- only ltorch's own collections run: none by chance between steps
    local x = big_leaf()
    local per_step = {}
    for step = 1, 18 do
      local a = x:exp()   -- saved by exp's backward: autograd holds it after the handle goes
      local b = a * 2
      local loss = b:sum()
      a:free(); b:free()   -- released by their owner, as nn.Sequential does: no garbage left
      local before = cycles()
      loss:backward()
      per_step[step] = cycles() - before   -- x.grad accumulates in place: no new bytes
    end
    assert.is_true(per_step[1] >= 1 and per_step[2] >= 1, "the first two steps collect")   -- and find nothing
    for step = 3, 17 do assert.are.equal(0, per_step[step], "step " .. step .. " collected") end
    assert.is_true(per_step[18] >= 1, "the 18th step measures again")
  end)

  it("never skips it for a forward that leaves its intermediates to the collector", function()
    torch.collect()
    collectgarbage("stop")
    local x, bytes = big_leaf()
    local base = torch.memory_stats().live_bytes
    for step = 1, 6 do
      local loss
      do
        local a = x:exp()
        loss = (a * 2):sum()
      end
      local before = cycles()
      loss:backward()
      assert.is_true(cycles() - before >= 1, "step " .. step .. " did not collect")
      assert.is_true(torch.memory_stats().live_bytes <= base + bytes + 4096,
        "step " .. step .. ": the forward's garbage lived through backward")
    end
  end)
end)

describe("gc_cycles", function()
  it("counts finished collection cycles", function()
    local before = torch.memory_stats().gc_cycles
    collectgarbage("collect")
    collectgarbage("collect")
    assert.is_true(torch.memory_stats().gc_cycles >= before + 2)
  end)
end)

describe("a training loop with little Lua garbage of its own", function()
  it("still ends a collection cycle every few hundred backward passes", function()
    -- each step leaves its output, its loss and the loss's graph to the collector; found only
    -- when a cycle ends, their C++ memory fragmented the malloc heap when cycles came ~430
    -- steps apart (torch._memory.after_backward's step). Run in a process of its own: a cycle's
    -- length follows the Lua heap, and this one's holds every spec loaded so far.
    local script = [[
      local torch = require "torch"
      local nn, F = torch.nn, torch.nn.functional
      torch.manual_seed(0)
      local model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
      local opt = torch.optim.SGD(model:parameters(), { lr = 1e-3 })
      local x, y = torch.randn(2, 4), torch.randint(4, { 2 })
      local function steps(n)
        for _ = 1, n do
          local loss = F.cross_entropy(model(x), y)
          opt:zero_grad()
          loss:backward()
          opt:step()
        end
      end
      steps(50)
      local before = torch.memory_stats().gc_cycles
      steps(2000)
      print("cycles " .. (torch.memory_stats().gc_cycles - before))
    ]]
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "build/ltorch"
    local p = assert(io.popen(("%s %s 2>&1"):format(bin, path)))
    local out = p:read("*a")
    p:close()
    os.remove(path)
    local cycles = tonumber(out:match("cycles (%d+)"))
    assert.is_truthy(cycles, out)
    assert.is_true(cycles >= 5, ("%d collection cycles in 2,000 steps"):format(cycles))
  end)
end)

describe("results that carry an autograd node", function()
  local function graphs() return torch.memory_stats().graph_results end

  it("are counted (graph_results), and nothing else is", function()
    local w = torch.randn(3, { requires_grad = true })
    local x = torch.randn(3)
    local g = graphs()
    local a = w * 2
    assert.are.equal(g + 1, graphs())
    local v = a:view(3, 1)                                  -- a view records a node too
    assert.are.equal(g + 2, graphs())
    local plain = x * 2                                     -- no grad
    local leaf = torch.randn(3, { requires_grad = true })   -- a leaf has no node
    local detached = a:detach()
    local quiet = torch.no_grad(function() return w * 2 end)
    local grad_read = w.grad                                -- nil: no backward yet
    assert.are.equal(g + 2, graphs())
    assert.is_nil(grad_read)
    assert.are.equal(5, #{ v, plain, leaf, detached, quiet })
  end)

  it("step the collector: a forward loop that drops its outputs collects every few hundred", function()
    -- each output keeps three nodes and the intermediates nn.Sequential released; counted as
    -- handles alone (one per forward) they waited ~3,000 forwards for a cycle. Run in a process
    -- of its own: a cycle's length follows the Lua heap, and this one's holds every spec so far.
    local r = require("spec.support.fresh_process").run([[
      local nn = torch.nn
      local model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
      local x = torch.randn(2, 8)
      for _ = 1, 200 do model(x) end
      local before, graphs = torch.memory_stats().gc_cycles, torch.memory_stats().graph_results
      for _ = 1, 3000 do model(x) end
      print(require("cjson").encode({ cycles = torch.memory_stats().gc_cycles - before,
        graphs = torch.memory_stats().graph_results - graphs }))
    ]])
    local cycles = r.cycles
    assert.are.equal(9000, r.graphs)   -- three per forward: Linear, ReLU, Linear
    assert.is_true(cycles >= 3, ("%d collection cycles in 3,000 forwards"):format(cycles))
  end)
end)
