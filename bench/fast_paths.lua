--[[
  bench/fast_paths.lua — the per-op fast paths stay compiled and make no Lua garbage but their
  result: for each path (the dispatch workload's add, mul, matmul and x[3], the other indexing
  forms, in-place and unary ops, F.linear, and Linear, ReLU and Linear modules called in a row
  under no_grad, whose three results are the whole garbage), a loop is run until LuaJIT has
  compiled it, then

    traced   the loop has a root trace of its own, and a second run of it starts at most
             MAX_NEW_TRACES new traces and aborts at most MAX_ABORTS (the module chain: 1)
             (side traces for a rare branch, such as a collection step, may come late; an
             uncompiled path keeps recording and aborting, or runs interpreted once
             blacklisted: either fails here);
    bytes    Lua heap bytes per call over CALLS calls with the collector stopped: the result
             tensor's ref (a 24-byte cdata) and nothing else, at most MAX_BYTES_RESULT for a
             path that returns a new tensor and MAX_BYTES_INPLACE for one that does not.

  Nothing is timed: the bounds hold on a loaded machine. A failed check prints why and the
  script exits 1. spec/bench/fast_paths_spec.lua runs it; docs/PERFORMANCE.md says why these
  paths matter (per-op cost against C++).

  Run:  build/ltorch bench/fast_paths.lua      (a few seconds)
]]
local torch = require "torch"
local jutil = require "jit.util"
local vmdef = require "jit.vmdef"

local WARM = 3000            -- calls before the checks: compiled, slab and caches at their size
local CALLS = 500            -- calls counted for bytes (fewer than a collection step's handles)
local MAX_NEW_TRACES = 4
local MAX_ABORTS = 2
local MAX_BYTES_RESULT = 40
local MAX_BYTES_INPLACE = 8

local a, b = torch.randn(10), torch.randn(10)
local m = torch.randn(8, 8)
local big = torch.randn(16, 8)
local mask = big:gt(0)
local row = torch.randn(8)
local slice_key = { 1, { 2, 5 } }
local r
-- Linear, ReLU, Linear called in a row, as a custom forward does: a dozen tail calls in one
-- trace (the runtime's loop-unroll limit, runtime/state.c). nn.Sequential's own loop is not
-- checked here: whether the caller's loop or Sequential's forms its trace first changes from
-- run to run (docs/PERFORMANCE.md, optimisation 39).
-- The modules are made at the path's first call, not here: torch.nn loaded before the first
-- paths ran left `a + b` compiled to a trace with one more allocation in ~1 run in 6.
local l1, act, l2
local function no_grad_chain(x)
  if not l1 then l1, act, l2 = torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4) end
  torch.set_grad_enabled(false)
  local y = l2(act(l1(x)))
  torch.set_grad_enabled(true)
  return y
end

-- name, makes a new tensor, loop, tensors it makes (default 1), aborts allowed when warm (default
-- MAX_ABORTS; the chain of modules, whose recording used to abort on every attempt, at most 1)
local paths = {
  { "a + b", true, function(n) for _ = 1, n do r = a + b end end },
  { "a * b", true, function(n) for _ = 1, n do r = a * b end end },
  { "a:add(b)", true, function(n) for _ = 1, n do r = a:add(b) end end },
  { "m:matmul(m)", true, function(n) for _ = 1, n do r = m:matmul(m) end end },
  { "a:relu()", true, function(n) for _ = 1, n do r = a:relu() end end },
  { "x[3]", true, function(n) for _ = 1, n do r = big[3] end end },
  { "x[{1, {2, 5}}]", true, function(n) for _ = 1, n do r = big[slice_key] end end },
  { "x[mask]", true, function(n) for _ = 1, n do r = big[mask] end end },
  { "x[3] = 1.5", false, function(n) for _ = 1, n do big[3] = 1.5 end end },
  { "x[3] = row", false, function(n) for _ = 1, n do big[3] = row end end },
  { "a:add_(b)", false, function(n) for _ = 1, n do a:add_(b) end end },
  { "F.linear(x, w, b)", true, function(n) local F = torch.nn.functional for _ = 1, n do r = F.linear(big, m, row) end end },
  { "l2(act(l1(x))), no_grad", true, function(n) for _ = 1, n do r = no_grad_chain(big) end end, 3, 1 },
}

-- Trace events while fn(n) runs: root traces started in loop_fn, traces started, aborts.
local function watch(loop_fn, fn, n)
  local roots, started, aborts = 0, 0, {}
  local handler = function(what, _, func, pc, otr, oex)
    if what == "start" then
      started = started + 1
      if func == loop_fn and not otr then roots = roots + 1 end
    elseif what == "abort" then
      local info = jutil.funcinfo(func, pc)
      local why = vmdef.traceerr[otr] or tostring(otr)
      if type(why) == "string" and why:find("%", 1, true) then why = why:format(oex) end
      aborts[#aborts + 1] = ("%s: %s"):format(info.loc or tostring(func), why)
    end
  end
  jit.attach(handler, "trace")
  fn(n)
  jit.attach(handler)
  return roots, started, aborts
end

local failed = 0
local function fail(name, why)
  failed = failed + 1
  print(("FAIL %-16s %s"):format(name, why))
end

for _, p in ipairs(paths) do
  local name, makes, loop, results, max_aborts = p[1], p[2], p[3], p[4] or 1, p[5] or MAX_ABORTS
  local roots = watch(loop, loop, WARM)
  local _, started, aborts = watch(loop, loop, WARM)
  if roots < 1 then fail(name, "no root trace for its loop (not compiled)") end
  if started > MAX_NEW_TRACES then fail(name, ("%d new traces in a warm run"):format(started)) end
  if #aborts > max_aborts then fail(name, ("%d trace aborts in a warm run, first at %s"):format(#aborts, aborts[1])) end

  torch.collect()            -- a fresh collection step count: none falls inside the CALLS below
  collectgarbage("collect")
  collectgarbage("stop")
  local before = collectgarbage("count")
  loop(CALLS)
  local bytes = (collectgarbage("count") - before) * 1024 / CALLS
  collectgarbage("restart")
  local limit = makes and MAX_BYTES_RESULT * results or MAX_BYTES_INPLACE
  if bytes > limit then fail(name, ("%.1f Lua bytes per call (at most %d)"):format(bytes, limit)) end
  print(("%-16s root traces %d, new traces when warm %d, aborts %d, Lua bytes/call %.1f")
    :format(name, roots, started, #aborts, bytes))
end
assert(r ~= nil)
if failed > 0 then
  print(("%d check(s) failed"):format(failed))
  os.exit(1)
end
print("all fast paths compiled, no Lua garbage but their results")
