--[[
  torch._guard — every "set a thread state, run a Lua function, restore it" of the library.

  Why: grad mode, inference mode, autocast, anomaly mode, a Function's forward (grad off), a Lua
  backward run for the engine, an RNG fork and a backward job must be put back whatever the
  function raised: an error of its own, Ctrl-C, a host's count hook (lua_sethook with
  LUA_MASKCOUNT that raises) or a memory error from the host's allocator. Such an error can land
  on any Lua instruction, so the set, the protected call and the restore must have none of their
  own in between: PyTorch does this with C++ destructors, ltorch with one C function per state
  (runtime/guard.c) that sets, lua_pcall()s, restores (allocating nothing in Lua) and re-raises.

  What (each returns fn's results, or re-raises fn's error after the restore):
      grad(enabled, fn, ...)                  grad mode = enabled
      inference(fn, ...)                      inference mode on
      autocast(code, enabled, dtype, cache, fn)   an autocast region (lt_autocast_enter's arguments)
      anomaly(enabled, fn, ...)               anomaly mode (the JIT off while it is on)
      rng(restore, set, fn, ...)              restore, set: CPU generator states (Tensors; set
                                              may be nil): set before fn, restore after
      fork(states, fn, ...)                   an RNG fork: states = {type, index, state, ...}
                                              (type 0: the CPU generator, else a device type code
                                              and index); each gets its state back after fn
      job(fn, ...)                            an autograd job's service loop: on an error every job
                                              fn started is answered and ended before it re-raises
  When the set itself fails (a bad autocast dtype), nothing runs and the error names `what`
  at the caller's caller: call these as the tail of the public function, e.g.
      return guard.checked("autocast", guard.autocast(code, 1, dtype, -1, fn))
  M.native is true when the C guard is in use.

  Where: under the ltorch runtime (the `ltorch` executable, a host of libltorch, DataLoader
  workers) the C functions come from _LTORCH.guard. On a bare LuaJIT (`require "torch"` from a
  stock luajit) they are Lua: set, pcall, restore. There the window between a set and its
  restore is a few Lua instructions, and only an error from a hook or allocator the program
  itself installed can land in it; ltorch's own Ctrl-C handling exists only in the runtime.
]]
local ffi = require "ffi"
local _C = require "torch._C"

local C = _C.C
local M = {}

local ltorch = rawget(_G, "_LTORCH")
local native = type(ltorch) == "table" and type(ltorch.guard) == "table" and ltorch.guard or nil
M.native = native ~= nil

local FAILED = native and native.failed or {}

--[[ The set failed: raise "what: message" at the caller of the public function (checked is its
     tail call); otherwise pass fn's results through. ]]
function M.checked(what, ...)
  if ... == FAILED then error(what .. ": " .. tostring((select(2, ...))), 2) end
  return ...
end

local function handle(t) return t ~= nil and t.h or nil end

if native then
  local with_rng = native.with_rng
  M.grad = native.with_grad
  M.inference = native.with_inference
  M.autocast = native.with_autocast
  M.job = native.with_job
  M.fork = native.with_fork
  function M.anomaly(enabled, fn, ...) return native.with_anomaly(enabled, (jit.status()), fn, ...) end
  -- C gets raw handles: the Tensors must stay referenced until with_rng returns, so with_rng is
  -- not a tail call (a tail call drops this frame, and the collector could free `restore` while fn
  -- runs); `kept` receives them as arguments after with_rng has returned.
  local function kept(_, _, ...) return ... end
  function M.rng(restore, set, fn, ...) return kept(restore, set, with_rng(handle(restore), handle(set), fn, ...)) end
  return M
end

---------------------------------------------------------------- bare LuaJIT: the same in Lua
local int_out = ffi.new("int[1]")
local function failed() return FAILED, ffi.string(C.lt_last_error()) end

local function finish(restore, a, b, ok, ...)
  restore(a, b)
  if not ok then error((...), 0) end
  return ...
end

local function set_grad(on) C.lt_set_grad_enabled(on) end
function M.grad(enabled, fn, ...)
  C.lt_grad_enabled(int_out)
  local previous = int_out[0]
  if C.lt_set_grad_enabled(enabled and 1 or 0) ~= 0 then return failed() end
  return finish(set_grad, previous, nil, pcall(fn, ...))
end

local function exit_inference(guard) C.lt_inference_mode_exit(guard[0]) end
function M.inference(fn, ...)
  local guard = ffi.new("void*[1]")
  if C.lt_inference_mode_enter(guard) ~= 0 then return failed() end
  return finish(exit_inference, guard, nil, pcall(fn, ...))
end

local AutocastState = ffi.typeof("lt_autocast_state")
local function exit_autocast(code, prev) C.lt_autocast_exit(code, prev) end
function M.autocast(code, enabled, dtype, cache, fn, ...)
  local prev = AutocastState()
  if C.lt_autocast_enter(code, enabled and 1 or 0, dtype, cache, prev) ~= 0 then return failed() end
  return finish(exit_autocast, code, prev, pcall(fn, ...))
end

local function restore_anomaly(previous, jit_off)
  C.lt_set_anomaly_enabled(previous)
  if jit_off and previous == 0 then jit.on() end
end
function M.anomaly(enabled, fn, ...)
  C.lt_anomaly_enabled(int_out)
  local previous = int_out[0]
  if C.lt_set_anomaly_enabled(enabled and 1 or 0) ~= 0 then return failed() end
  local jit_off = enabled and previous == 0 and jit.status()
  if jit_off then jit.off(); jit.flush() end
  return finish(restore_anomaly, previous, jit_off, pcall(fn, ...))
end

local function restore_rng(state) C.lt_rng_set_state(state.h) end
function M.rng(restore, set, fn, ...)
  if set ~= nil and C.lt_rng_set_state(set.h) ~= 0 then return failed() end
  return finish(restore_rng, restore, nil, pcall(fn, ...))
end

local function restore_fork(states)
  for i = 1, #states, 3 do
    if states[i] == 0 then C.lt_rng_set_state(states[i + 2].h)
    else C.lt_default_generator_set_state(states[i], states[i + 1], states[i + 2].h) end
  end
end
function M.fork(states, fn, ...)
  return finish(restore_fork, states, nil, pcall(fn, ...))
end

local depth_out = ffi.new("int[1]")
local function unwind(depth, ok, ...)
  if not ok then
    local err = ...
    C.lt_autograd_unwind(depth, type(err) == "string" and err or "backward was interrupted")
    error(err, 0)
  end
  return ...
end
function M.job(fn, ...)
  if C.lt_autograd_job_depth(depth_out) ~= 0 then return failed() end
  return unwind(depth_out[0], pcall(fn, ...))
end

return M
