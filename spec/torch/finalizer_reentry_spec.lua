--[[
  spec/torch/finalizer_reentry_spec.lua — a finalizer that runs torch code in the middle of
  another torch call must not change that call's answer.

  LuaJIT runs finalizers (__gc of userdata, ffi.gc of cdata) inside whatever allocation
  triggers a collection step, and torch calls allocate while they work: a generated op packs
  its arguments and wraps its results, x:size() and x:stride() fill a Lua table. Both once kept
  their data in one shared buffer per Lua state, so a finalizer that called an op or read a
  shape in between overwrote it: a generated op silently lost its `alpha` (1 + 10 instead of
  1 + 2*10) or returned nil, and x:size() returned another tensor's dims. Calls that overlap
  now take their own buffers (torch._dispatch `in_call`, torch._tensor `reading_dims`).

  Each spec arms 50 self-re-arming finalizers that call torch, makes the collector step on
  nearly every allocation, and checks many results. Shape reads are checked with the JIT off
  too: compiled traces sink the allocations that let the finalizer in, the interpreter does not
  (and much of the library runs interpreted).

  Run:  build/ltorch /usr/bin/busted spec/torch/finalizer_reentry_spec.lua
]]
local torch = require "torch"

-- Arms `count` finalizers that each run `work` and re-arm themselves until stop() is called.
-- The collector is made to step on almost every allocation until then.
local function arm_finalizers(count, work)
  local state = { calls = 0, armed = true }
  local function arm()
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = function()
      if not state.armed then return end
      state.calls = state.calls + 1
      work()
      arm()
    end
  end
  for _ = 1, count do arm() end
  collectgarbage("setpause", 10)
  collectgarbage("setstepmul", 1000)
  function state.stop()
    state.armed = false
    collectgarbage("setpause", 200)
    collectgarbage("setstepmul", 200)
    collectgarbage()
  end
  return state
end

-- Counts mismatches between what a call gave and what it should have, keeping the first.
local function tally()
  local t = { wrong = 0 }
  function t.check(got, want, where)
    if got ~= want then
      t.wrong = t.wrong + 1
      t.first = t.first or (where .. ": " .. got)
    end
  end
  return t
end

describe("torch calls overlapped by a finalizer that calls torch", function()
  it("generated ops keep their own arguments and results", function()
    local ts = { torch.tensor({ 1 }, { dtype = torch.float32 }), torch.tensor({ 2 }, { dtype = torch.float32 }),
      torch.tensor({ 3 }, { dtype = torch.float32 }) }
    local us = { torch.tensor({ 10 }, { dtype = torch.float32 }), torch.tensor({ 20 }, { dtype = torch.float32 }),
      torch.tensor({ 30 }, { dtype = torch.float32 }) }
    local a, b = torch.tensor({ 1.5, 2.5 }), torch.tensor({ 3.5, 4.5 })
    local fin = arm_finalizers(50, function()
      local _ = torch.logaddexp(a, b)
      local _ = torch._foreach_add(us, ts)
    end)
    local results = tally()
    local want_q = ("%.4f"):format(math.log(math.exp(1) + math.exp(10)))
    local ok, err = pcall(function()
      -- At least 3000 calls, and on until the finalizers have run often enough: the heap the
      -- suite built before this spec decides how much allocation a collection cycle takes (a
      -- full run once ended 3000 calls with exactly 100 finalizer runs).
      local i = 0
      while (i < 3000 or fin.calls <= 300) and i < 300000 do
        i = i + 1
        local r = torch._foreach_add(ts, us, { alpha = 2 })
        results.check(r and ("%g %g %g"):format(r[1]:item(), r[2]:item(), r[3]:item()) or "nil", "21 42 63",
          "call " .. i)
        results.check(("%.4f"):format(torch.logaddexp(ts[1], us[1]):item()), want_q, "logaddexp call " .. i)
      end
    end)
    fin.stop()
    assert.is_true(ok, tostring(err))
    assert.is_true(fin.calls > 300, "finalizers ran " .. fin.calls .. " times")
    assert.are.equal(0, results.wrong, "wrong results, first: " .. tostring(results.first))
  end)

  for _, jit_mode in ipairs({ "on", "off" }) do
    it("x:size() and x:stride() read their own tensor (JIT " .. jit_mode .. ")", function()
      local big = torch.zeros(7, 6, 5, 4, 3)
      local x = torch.zeros(2, 3)
      local fin = arm_finalizers(50, function()
        local _ = big:size()
        local _ = big:stride()
      end)
      local shapes = tally()
      local ok, err = pcall(function()
        if jit_mode == "off" then jit.off(); jit.flush() end   -- flush: traces compiled earlier would still run
        -- Until the finalizers have run often enough (the heap before this spec, in a full
        -- suite, decides how much allocation a collection cycle takes).
        local i = 0
        while fin.calls < 300 and i < 4000000 do
          i = i + 1
          local _ = { i, i, i, i, i, i, i, i }   -- allocation that moves the collector along
          local s, st = x:size(), x:stride()
          shapes.check(("%d:%s:%s/%d:%s:%s"):format(#s, tostring(s[1]), tostring(s[2]), #st, tostring(st[1]),
            tostring(st[2])), "2:2:3/2:3:1", "read " .. i)
        end
      end)
      jit.on()
      fin.stop()
      assert.is_true(ok, tostring(err))
      assert.is_true(fin.calls >= 300, "finalizers ran " .. fin.calls .. " times")
      assert.are.equal(0, shapes.wrong, "wrong shapes, first: " .. tostring(shapes.first))
    end)
  end
end)
