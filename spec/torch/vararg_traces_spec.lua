--[[
  spec/torch/vararg_traces_spec.lua — calls that pass 4 or more arguments through a Lua vararg
  function must compile to a handful of traces, not a chain of ~100.

  LuaJIT 2.1 records the constructor `{ ... }` (and `{ f(...) }`) with a guard that fails on
  every later run once 4 or more values go in (LuaJIT issue #606); each failure records another
  side trace at the same place, ~100 of them, then the interpreter: x:view(2, 2, 2, 2) took
  9.5 us instead of 0.5, a module called with 4 inputs 8.3 us instead of 0.09, and
  _foreach_addcdiv_ in every Adam step 3x its time. The library's hot vararg paths use
  torch._args.pack instead. The view and module specs fail on the code before that change (101
  and 121 traces at one place); the no_grad/scope one guards the pcall-result paths that moved
  to pack (they did not chain in this small loop before either). These specs run a loop of 4,000 such calls from a flushed trace cache
  and count the traces LuaJIT starts at any one place: a chain shows as 40 to 100 there, a
  healthy loop as a handful at most.
  A count, not a time: it does not depend on the machine's speed.

  Run:  build/ltorch /usr/bin/busted spec/torch/vararg_traces_spec.lua
]]
local torch = require "torch"
local args = require "torch._args"
-- The trace handler runs inside LuaJIT's VM event: it touches no globals (busted's environment
-- resolves globals through functions, which overflowed the event's small stack).
local tostring, jit_attach, jit_flush = tostring, jit.attach, jit.flush

-- The most traces LuaJIT starts at any one bytecode position while fn runs `loops` times, from a
-- flushed trace cache. A chain starts its ~100 traces at one place (each from the previous one's
-- failing exit, 10 failures per link, over the first ~1,000 calls); a healthy loop starts a few
-- traces at different places, and at most a handful at any one.
local function most_traces_at_one_place(loops, fn)
  jit_flush()
  local at = {}
  local most = 0
  local function on_trace(what, _, func, pc)
    if what == "start" then
      local key = tostring(func) .. ":" .. tostring(pc)
      at[key] = (at[key] or 0) + 1
      if at[key] > most then most = at[key] end
    end
  end
  jit_attach(on_trace, "trace")
  local ok, err = pcall(function() for _ = 1, loops do fn() end end)
  jit_attach(on_trace)   -- detach
  assert(ok, err)
  return most
end

-- A loop calling `call` 200 times, as the unit the counter above repeats.
local function loop_of(call)
  return function() for i = 1, 200 do call(i) end end
end

-- A healthy loop starts at most a handful of traces at one place (a recording that aborts is
-- retried a few times: up to ~12 seen); the chains seen started 101 and 121.
local FEW = 30

describe("vararg calls with 4 or more arguments", function()
  before_each(function() assert.is_true(jit.status(), "these specs need the JIT on") end)

  it("x:view(2, 2, 2, 2) in a loop records a few traces, not a chain of ~100", function()
    local x = torch.randn(16)
    local n = most_traces_at_one_place(20, loop_of(function() return x:view(2, 2, 2, 2) end))
    assert.is_true(n < FEW, ("%d traces started at one place"):format(n))
  end)

  it("a module called with four inputs records a few traces", function()
    local Four = torch.nn.Module:extend("FourInputs")
    function Four:forward(a, b, c, d) return a + b + c + d end
    local m = Four()
    local x = torch.randn(3)
    local n = most_traces_at_one_place(20, loop_of(function() return m(x, x, x, x) end))
    assert.is_true(n < FEW, ("%d traces started at one place"):format(n))
  end)

  it("torch.no_grad and torch.scope returning four values record a few traces", function()
    local x = torch.randn(2)
    local function four() return x, x, x, x end
    local n = most_traces_at_one_place(20, loop_of(function() torch.no_grad(four); torch.scope(four) end))
    assert.is_true(n < FEW, ("%d traces started at one place"):format(n))
    local a, b, c, d = torch.no_grad(four)
    assert.are.equal(x, a); assert.are.equal(x, d); assert.is_not_nil(b); assert.is_not_nil(c)
    -- every value comes back, a nil in the middle too
    assert.are.equal(3, select("#", torch.scope(function() return 1, nil, 3 end)))
  end)

  it("pack keeps every argument and its count, nils included", function()
    local t, n = args.pack(1, nil, 3, nil)
    assert.are.equal(4, n)
    assert.are.same({ 1, nil, 3 }, { t[1], t[2], t[3] })
    assert.is_nil(t[4])
    local many, m = args.pack(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert.are.equal(10, m)
    assert.are.equal(10, many[10])
    local none, z = args.pack()
    assert.are.equal(0, z)
    assert.is_nil(none[1])
  end)
end)
