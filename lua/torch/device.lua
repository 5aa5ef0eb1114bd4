--[[
  torch.device — device objects ("cpu", "cuda", "cuda:1", "mps") and the availability checks.

  A device is a table { type = "cuda", index = 1 } (index nil when not given); tostring gives
  "cuda:1". Asking for a device this libtorch build cannot use is an error that names the
  build, never a silent fallback to the CPU.

  Usage:  local device = require "torch.device"
          device.resolve("cuda:0")           --> device object (checked when used)
          device.check(d)                    --> error unless d is usable here
          torch.cuda.is_available(), torch.cuda.device_count()
]]
local ffi = require "ffi"
local _C = require "torch._C"
local C = _C.C

local M = {}

local Device = {}
Device.__index = Device
Device.__tostring = function(d)
  return d.index and (d.type .. ":" .. d.index) or d.type
end
Device.__eq = function(a, b) return a.type == b.type and a.index == b.index end

local type_names = { [0] = "cpu", [1] = "cuda", [13] = "mps", [14] = "meta" }
local type_codes = { cpu = 0, cuda = 1, mps = 13, meta = 14 }
M.type_codes = type_codes

local int_type, int_index = ffi.new("int[1]"), ffi.new("int[1]")
local cache = {}

function M.is_device(v) return getmetatable(v) == Device end

function M.new(type_name, index)
  local key = type_name .. ":" .. tostring(index)
  local d = cache[key]
  if not d then
    d = setmetatable({ type = type_name, index = index }, Device)
    cache[key] = d
  end
  return d
end

-- A device object from libtorch's (type code, index) pair.
function M.from_codes(type_code, index)
  local name = type_names[type_code] or ("device" .. type_code)
  return M.new(name, index >= 0 and index or nil)
end

-- Parses "cpu", "cuda", "cuda:1", "mps", a device object, or a bare number (a CUDA index).
function M.resolve(v, what, level)
  level = (level or 2) + 1
  if getmetatable(v) == Device then return v end
  if type(v) == "number" then
    if v < 0 or v ~= math.floor(v) or v >= 2 ^ 31 then
      error(("%s: invalid device index %s (expected a non-negative integer)"):format(what or "device", tostring(v)), level)
    end
    return M.new("cuda", v)
  end
  if type(v) ~= "string" then
    error(("%s: expected a device (\"cpu\", \"cuda\", \"cuda:1\", \"mps\"), got %s"):format(what or "device", type(v)), level)
  end
  if C.lt_device_parse(v, int_type, int_index) ~= 0 then
    error(("%s: invalid device '%s' (expected \"cpu\", \"cuda\", \"cuda:N\" or \"mps\")"):format(what or "device", v), level)
  end
  return M.from_codes(int_type[0], int_index[0])
end

function M.codes(d)
  return type_codes[d.type] or error("device: unsupported device type " .. d.type, 2), d.index or -1
end

-- Errors (naming the build) unless the device can be used in this process.
function M.check(d, what, level)
  local t, i = M.codes(d)
  if C.lt_device_check(t, i) ~= 0 then
    error((what or "device") .. ": " .. _C.last_error(), (level or 2) + 1)
  end
  return d
end

M.cpu = M.new("cpu", nil)

M.cuda = {}
function M.cuda.is_available()
  C.lt_has_backend(1, int_type)
  return int_type[0] == 1
end
function M.cuda.device_count()
  C.lt_cuda_device_count(int_type)
  return int_type[0]
end

M.mps = {}
function M.mps.is_available()
  C.lt_has_backend(13, int_type)
  return int_type[0] == 1
end

return M
