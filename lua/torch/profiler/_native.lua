--[[
  torch.profiler._native — the one place torch.profiler calls libtorch's profiler (the lt_profiler_*
  and lt_record_function_* functions of bindings/lt_profiler.cpp): start/stop the Kineto profiler,
  read a result's events into plain Lua tables, save the Chrome trace, open and close
  record_function ranges.

  Usage (internal):
      local native = require "torch.profiler._native"
      native.start({cpu = true, cuda = false}, record_shapes, profile_memory, with_stack)
      local result = native.stop()             -- owned; freed by the collector or result:free()
      local events = result:events()
      -- events[i] = {name=, start_ns=, end_ns=, start_thread=, end_thread=, fwd_thread=,
      --   sequence_nr=, correlation_id=, linked_correlation_id=, device_type=, device_index=,
      --   device_resource_id=, nbytes=, scope=, activity_type=, is_async=, is_hidden=, shapes={{...}}}
      result:save(path)
      local range = native.range_enter("name"); native.range_exit(range)
  Times are nanoseconds since the trace start, as Lua numbers. libtorch's are Unix-epoch
  nanoseconds (about 1.8e18): a double holds those only to 256 ns, so the difference is taken in
  64-bit integers first. (Read as doubles, an op shorter than 256 ns could start and end at the
  same time as the op before it, sort as its child, and be merged away as a duplicate node:
  a profiled step then lost one of two back-to-back aten::resolve_conj calls now and then.)
]]
local ffi = require "ffi"
local _C = require "torch._C"

local C, check = _C.C, _C.check
local tonumber = tonumber

local M = {}

-- c10::DeviceType codes and libkineto::ActivityType codes the profiler's Lua side reads.
M.DEVICE = { CPU = 0, CUDA = 1, MKLDNN = 2, IDEEP = 5, HIP = 6, XPU = 12, MTIA = 19, PrivateUse1 = 20 }
M.ACTIVITY = { USER_ANNOTATION = 1, GPU_USER_ANNOTATION = 2 }

local count_out, start_out = ffi.new("int64_t[1]"), ffi.new("uint64_t[1]")
local event_out = ffi.new("lt_profiler_event")
local dims_out, ndim_out = ffi.new("const int64_t*[1]"), ffi.new("int[1]")
local on_out = ffi.new("int[1]")

function M.start(activities, record_shapes, profile_memory, with_stack)
  local bits = (activities.cpu and C.LT_PROFILER_CPU or 0) + (activities.cuda and C.LT_PROFILER_CUDA or 0)
  check(C.lt_profiler_start(bits, record_shapes and 1 or 0, profile_memory and 1 or 0, with_stack and 1 or 0),
    "torch.profiler")
end

function M.enabled()
  check(C.lt_profiler_enabled(on_out), "torch.profiler")
  return on_out[0] ~= 0
end

local Result = {}
Result.__index = Result

-- ns from the trace start `t0` (uint64) to `ns` (uint64), exact, negative if before it.
local function since(ns, t0) return tonumber(ffi.cast("int64_t", ns - t0)) end

local function read_event(h, i, ev, t0)
  check(C.lt_profiler_result_event(h, i, ev), "torch.profiler")
  local shapes = {}
  for k = 0, ev.n_shapes - 1 do
    check(C.lt_profiler_result_shape(h, i, k, dims_out, ndim_out), "torch.profiler")
    local shape = {}
    for d = 0, ndim_out[0] - 1 do shape[d + 1] = tonumber(dims_out[0][d]) end
    shapes[k + 1] = shape
  end
  return {
    name = ffi.string(ev.name), start_ns = since(ev.start_ns, t0), end_ns = since(ev.end_ns, t0),
    start_thread = tonumber(ev.start_thread), end_thread = tonumber(ev.end_thread),
    fwd_thread = tonumber(ev.fwd_thread), sequence_nr = tonumber(ev.sequence_nr),
    correlation_id = tonumber(ev.correlation_id), linked_correlation_id = tonumber(ev.linked_correlation_id),
    device_type = ev.device_type, device_index = ev.device_index,
    device_resource_id = tonumber(ev.device_resource_id), nbytes = tonumber(ev.nbytes), scope = ev.scope,
    activity_type = ev.activity_type, is_async = ev.is_async ~= 0, is_hidden = ev.is_hidden ~= 0,
    shapes = shapes,
  }
end

-- events() -> list of event tables (in libtorch's order), times in ns since the trace start.
function Result:events()
  check(C.lt_profiler_result_count(self.h, count_out, start_out), "torch.profiler")
  local out, t0 = {}, start_out[0]
  for i = 0, tonumber(count_out[0]) - 1 do out[i + 1] = read_event(self.h, i, event_out, t0) end
  return out
end

function Result:save(path)
  check(C.lt_profiler_result_save(self.h, path), "export_chrome_trace")
end

function Result:free()
  if self.h ~= nil then C.lt_profiler_result_free(ffi.gc(self.h, nil)); self.h = nil end
end

function M.stop()
  local out = ffi.new("lt_profiler_result*[1]")
  check(C.lt_profiler_stop(out), "torch.profiler")
  return setmetatable({ h = ffi.gc(out[0], C.lt_profiler_result_free) }, Result)
end

-- A record_function range: an owned handle; range_exit ends it, the collector ends a lost one.
function M.range_enter(name)
  local out = ffi.new("lt_record_function*[1]")
  check(C.lt_record_function_enter(out, name), "record_function")
  return ffi.gc(out[0], C.lt_record_function_free)
end

function M.range_exit(h)
  check(C.lt_record_function_exit(ffi.gc(h, nil)), "record_function")
end

return M
