--[[
  torch._cuda_streams — torch.cuda's streams and events (PyTorch's torch/cuda/streams.py), over
  libtorch's device-generic c10::Stream and c10::Event (bindings/lt_cuda.cpp).

      local s = torch.cuda.Stream()                   -- a stream of the pool (device, priority)
      torch.cuda.stream(s, function() ... end)        -- PyTorch's `with torch.cuda.stream(s):`
      s:wait_stream(torch.cuda.current_stream())      -- order s after the current stream's work
      local start, stop = torch.cuda.Event({enable_timing = true}), torch.cuda.Event({enable_timing = true})
      start:record(); work(); stop:record(); stop:synchronize()
      print(start:elapsed_time(stop))                 -- milliseconds
      torch.cuda.current_stream(), torch.cuda.default_stream(), torch.cuda.set_stream(s),
      s:query(), s:synchronize(), s:record_event(), s:wait_event(e), s.cuda_stream (cudaStream_t as a number)
      e:query(), e:wait([stream]), e:synchronize()

  torch.cuda.stream(nil, fn) just runs fn, as PyTorch's stream(None) does. The stream is put back
  when fn returns or raises. As in PyTorch, an Event is created lazily on its first record, so
  torch.cuda.Event() works without a GPU and its first record raises; Stream(),
  current_stream() and default_stream() raise at once without one (libtorch's error).

  Usage (internal): require("torch._cuda_streams").install(torch.cuda), from torch.backends.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local args = require "torch._args"
local device_mod = require "torch.device"

local C = _C.C
local M = {}

local id_out, index_out = ffi.new("int64_t[1]"), ffi.new("int[1]")
local ptr_out, dbl_out = ffi.new("void *[1]"), ffi.new("double[1]")

local function check(status, level)
  if status ~= 0 then error(_C.last_error(), level + 1) end
end

local function pack(...) return { n = select("#", ...), ... } end

-- A CUDA device index from nil (-1: the current device), a number, "cuda[:N]" or a device.
local function cuda_index(v, what, level)
  if v == nil then return -1 end
  local d = device_mod.resolve(v, what, level + 1)
  if d.type ~= "cuda" then error(("%s: expected a CUDA device, got '%s'"):format(what, tostring(d)), level + 1) end
  return d.index or -1
end

---------------------------------------------------------------- Stream

local Stream = {}
Stream.__index = function(s, k)
  if k == "cuda_stream" then
    check(C.lt_cuda_stream_op(s._id, s.device_index, 2, id_out), 2)
    return tonumber(id_out[0])
  end
  if k == "device" then return device_mod.new("cuda", s.device_index) end
  local m = Stream[k]
  if m == nil then error("torch.cuda.Stream has no attribute '" .. tostring(k) .. "'", 2) end
  return m
end
Stream.__eq = function(a, b) return a._id == b._id and a.device_index == b.device_index end
Stream.__tostring = function(s)
  return ("<torch.cuda.Stream device=cuda:%d cuda_stream=0x%x>"):format(s.device_index, s.cuda_stream)
end

local function wrap_stream(id, index)
  return setmetatable({ _id = id, device_index = index }, Stream)
end

local function is_stream(v) return getmetatable(v) == Stream end
M.is_stream = is_stream

local function stream_arg(v, what, level)
  if not is_stream(v) then args.bad(what, 1, "torch.cuda.Stream", args.typename(v), level + 1) end
  return v
end

-- which: 0 current, 1 default, 2 new (priority)
local function get_stream(which, device, priority, what, level)
  check(C.lt_cuda_stream_get(which, cuda_index(device, what, level + 1), priority or 0, id_out, index_out), level + 1)
  return wrap_stream(id_out[0], index_out[0])
end
M.get_stream = get_stream

function Stream:query()
  check(C.lt_cuda_stream_op(self._id, self.device_index, 0, id_out), 2)
  return id_out[0] ~= 0
end

function Stream:synchronize()
  check(C.lt_cuda_stream_op(self._id, self.device_index, 1, id_out), 2)
end

function Stream:wait_event(event)
  event:wait(self)
end

function Stream:wait_stream(stream)
  stream_arg(stream, "Stream.wait_stream", 2)
  self:wait_event(stream:record_event())
end

function Stream:record_event(event)
  event = event or M.Event()
  event:record(self)
  return event
end

local STREAM = P.signature("Stream", "device=None, priority=0")
local StreamClass = setmetatable({ __signature = STREAM }, {
  __call = function(_, ...)
    local a = W.bind(STREAM, 2, ...)
    if not args.is_int(a.priority) then args.bad("Stream", 2, "integer priority", args.typename(a.priority)) end
    local s = get_stream(2, a.device, a.priority, "cuda.Stream", 2)
    return s
  end,
})

---------------------------------------------------------------- Event

local Event = {}
Event.__index = Event
Event.__tostring = function(e) return e._recorded and "<torch.cuda.Event>" or "<torch.cuda.Event uninitialized>" end

local function event_op(e, op, stream, other, what)
  local id, index = 0, 0
  if stream ~= nil then id, index = stream._id, stream.device_index end
  local st = C.lt_cuda_event_op(e._h, op, id, index, other, dbl_out)
  if st ~= 0 then error(what .. ": " .. _C.last_error(), 3) end
  return dbl_out[0]
end

function Event:record(stream)
  stream = stream == nil and get_stream(0, nil, 0, "cuda.Event.record", 2) or stream_arg(stream, "Event.record", 2)
  event_op(self, 0, stream, nil, "cuda.Event.record")
  self._recorded = true
end

function Event:wait(stream)
  stream = stream == nil and get_stream(0, nil, 0, "cuda.Event.wait", 2) or stream_arg(stream, "Event.wait", 2)
  event_op(self, 1, stream, nil, "cuda.Event.wait")
end

function Event:query() return event_op(self, 2, nil, nil, "cuda.Event.query") ~= 0 end
function Event:synchronize() event_op(self, 3, nil, nil, "cuda.Event.synchronize") end

-- Milliseconds from this event's record to end_event's (both timing events, both recorded).
function Event:elapsed_time(end_event)
  if getmetatable(end_event) ~= Event then args.bad("Event.elapsed_time", 1, "torch.cuda.Event", args.typename(end_event)) end
  return event_op(self, 4, nil, end_event._h, "cuda.Event.elapsed_time")
end

local EVENT = P.signature("Event", "enable_timing=False, blocking=False, interprocess=False, external=False")
local EventClass = setmetatable({ __signature = EVENT }, {
  __call = function(_, ...)
    local a = W.bind(EVENT, 2, ...)
    for _, k in ipairs { "enable_timing", "blocking", "interprocess", "external" } do W.bool(EVENT, a, k, 2) end
    if a.blocking or a.interprocess or a.external then
      error("torch.cuda.Event: blocking, interprocess and external events are not supported by ltorch " ..
        "(libtorch's device-generic events); use the default Event() or Event({enable_timing = true})", 2)
    end
    check(C.lt_cuda_event_new(a.enable_timing and 1 or 0, ptr_out), 2)
    return setmetatable({ _h = ffi.gc(ptr_out[0], C.lt_cuda_event_free), enable_timing = a.enable_timing }, Event)
  end,
})

---------------------------------------------------------------- stream contexts

-- Makes `stream` current on its device (torch.cuda.set_stream); nil does nothing, as in PyTorch.
local function set_stream(stream, level)
  if stream == nil then return nil end
  stream_arg(stream, "cuda.set_stream", level + 1)
  check(C.lt_cuda_stream_exchange(stream._id, stream.device_index, id_out, index_out), level + 1)
  return wrap_stream(id_out[0], index_out[0])
end
M.set_stream = set_stream

--[[ Runs fn(...) with `stream` (checked by the caller; nil: as is) current, PyTorch's
     `with torch.cuda.stream(stream):`, putting the previous stream back whatever fn does;
     returns fn's results and re-raises fn's error unchanged. ]]
function M.run_on(stream, fn, ...)
  if stream == nil then return fn(...) end
  local prev = set_stream(stream, 2)
  local res = pack(pcall(fn, ...))
  set_stream(prev, 2)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

function M.install(cuda)
  cuda.Stream = StreamClass
  cuda.Event = EventClass
  cuda.ExternalStream = function()
    error("torch.cuda.ExternalStream: wrapping a stream made outside libtorch is not supported by ltorch", 2)
  end
  -- (results held in a local: a tail call would drop this frame and the error level with it)
  cuda.current_stream = function(device)
    local s = get_stream(0, device, 0, "cuda.current_stream", 2)
    return s
  end
  cuda.default_stream = function(device)
    local s = get_stream(1, device, 0, "cuda.default_stream", 2)
    return s
  end
  cuda.set_stream = function(stream) set_stream(stream, 2) end
  cuda.stream = function(stream, fn, ...)
    if stream ~= nil then stream_arg(stream, "cuda.stream", 2) end
    if type(fn) ~= "function" then args.bad("cuda.stream", 2, "function", args.typename(fn)) end
    return M.run_on(stream, fn, ...)
  end
  cuda.StreamContext = cuda.stream
  cuda.streams = { Stream = StreamClass, Event = EventClass, ExternalStream = cuda.ExternalStream }
end

return M
