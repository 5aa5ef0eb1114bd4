--[[
  torch.device — device objects ("cpu", "cuda", "cuda:1", "mps", "meta") and the availability checks.

  A device is a table { type = "cuda", index = 1 } (index nil when not given); tostring gives
  "cuda:1". Asking for a device this libtorch build cannot use is an error that names the
  build, never a silent fallback to the CPU. "meta" is PyTorch's device of shapes without data:
  always available; ops give shapes, dtypes and devices (bindings/lt_meta_kernels.cpp adds the
  kernels PyTorch registers from Python), and reading values is an error.

  Usage:  local device = require "torch.device"
          device.resolve("cuda:0")           --> device object (checked when used)
          device.check(d)                    --> error unless d is usable here
          torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.synchronize([d]),
          torch.cuda.current_device(), torch.cuda.set_device(d), torch.cuda.manual_seed[_all](s)
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
-- c10's other device types: parsed, named in errors, never usable here
local other_type_names = { [2] = "mkldnn", [3] = "opengl", [4] = "opencl", [5] = "ideep", [6] = "hip", [7] = "fpga",
  [8] = "maia", [9] = "xla", [10] = "vulkan", [11] = "metal", [12] = "xpu", [15] = "hpu", [16] = "ve", [17] = "lazy",
  [18] = "ipu", [19] = "mtia", [20] = "privateuseone" }
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
  local name = type_names[type_code] or other_type_names[type_code] or ("device" .. type_code)
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
    error(("%s: invalid device '%s' (expected \"cpu\", \"cuda\", \"cuda:N\", \"mps\" or \"meta\")"):format(what or "device", v), level)
  end
  return M.from_codes(int_type[0], int_index[0])
end

function M.codes(d)
  return type_codes[d.type] or error("device: unsupported device type " .. d.type, 2), d.index or -1
end

-- Errors (naming the build) unless the device can be used in this process.
function M.check(d, what, level)
  if not type_codes[d.type] then
    error(("%s: device '%s' is not supported by ltorch"):format(what or "device", tostring(d)), (level or 2) + 1)
  end
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

-- A CUDA device index from nil (the current device: -1), a number, "cuda", "cuda:N" or a device
-- object; anything else (a CPU device, say) is an error naming the function.
local function cuda_index(v, what)
  if v == nil then return -1 end
  local d = M.resolve(v, what, 3)
  if d.type ~= "cuda" then
    error(("%s: expected a CUDA device, got '%s'"):format(what, tostring(d)), 3)
  end
  return d.index or -1
end

-- The C side's message already names the function.
local function cuda_check(status)
  if status ~= 0 then error(_C.last_error(), 3) end
end

-- Waits for every queued kernel on the device (default: the current one) to finish:
-- torch.cuda.synchronize([device]). Time GPU work only between two of these.
function M.cuda.synchronize(device)
  cuda_check(C.lt_cuda_synchronize(cuda_index(device, "cuda.synchronize")))
end

-- The index of the current CUDA device.
function M.cuda.current_device()
  cuda_check(C.lt_cuda_current_device(int_type))
  return int_type[0]
end

-- Makes `device` (a number, "cuda:N" or a device object) the current CUDA device.
function M.cuda.set_device(device)
  if device == nil then error("cuda.set_device: expected a CUDA device, got nil", 2) end
  cuda_check(C.lt_cuda_set_device(cuda_index(device, "cuda.set_device")))
end

local function seed_of(seed, what)
  if type(seed) ~= "number" or seed ~= math.floor(seed) or seed < 0 or seed >= 2 ^ 53 then
    error(("%s: expected a non-negative integer seed, got %s"):format(what, tostring(seed)), 3)
  end
  return seed
end

-- Seeds the current CUDA device's generator (torch.manual_seed seeds the CPU and every GPU).
function M.cuda.manual_seed(seed)
  cuda_check(C.lt_cuda_manual_seed(seed_of(seed, "cuda.manual_seed"), -1, 0))
end

-- Seeds every visible CUDA device's generator.
function M.cuda.manual_seed_all(seed)
  cuda_check(C.lt_cuda_manual_seed(seed_of(seed, "cuda.manual_seed_all"), -1, 1))
end

--[[ CUDA generator states, as torch.cuda's: a state is a 1-D uint8 CPU tensor. `device` is a
     number, "cuda", "cuda:N" or a device object (default: the current device). Without a GPU,
     get_rng_state / set_rng_state / initial_seed raise libtorch's error (PyTorch's), while the
     *_all forms see no device (an empty list) and seed / seed_all do nothing. ]]
local state_out = ffi.new("lt_tensor*[1]")
local seed_out = ffi.new("uint64_t[1]")
local CUDA = type_codes.cuda

local function wrap_state()
  return require("torch._memory").wrap(state_out[0])
end

function M.cuda.get_rng_state(device)
  _C.check(C.lt_default_generator_get_state(CUDA, cuda_index(device, "cuda.get_rng_state"), state_out), "cuda.get_rng_state")
  return wrap_state()
end

function M.cuda.set_rng_state(new_state, device)
  if not ffi.istype(_C.Ref, new_state) then
    error(("bad argument #1 to 'cuda.set_rng_state' (Tensor expected, got %s)"):format(type(new_state)), 2)
  end
  _C.check(C.lt_default_generator_set_state(CUDA, cuda_index(device, "cuda.set_rng_state"), new_state.h), "cuda.set_rng_state")
end

function M.cuda.get_rng_state_all()
  local states = {}
  for i = 0, M.cuda.device_count() - 1 do states[#states + 1] = M.cuda.get_rng_state(i) end
  return states
end

function M.cuda.set_rng_state_all(new_states)
  if type(new_states) ~= "table" then
    error(("bad argument #1 to 'cuda.set_rng_state_all' (table of states expected, got %s)"):format(type(new_states)), 2)
  end
  for i, state in ipairs(new_states) do M.cuda.set_rng_state(state, i - 1) end
end

function M.cuda.initial_seed()
  _C.check(C.lt_default_generator_initial_seed(CUDA, -1, seed_out), "cuda.initial_seed")
  return tonumber(seed_out[0])
end

-- A non-deterministic seed for the current device (seed) or every device (seed_all).
function M.cuda.seed()
  if M.cuda.device_count() == 0 then return end
  _C.check(C.lt_default_generator_seed(CUDA, -1, seed_out), "cuda.seed")
end

function M.cuda.seed_all()
  if M.cuda.device_count() == 0 then return end
  _C.check(C.lt_default_generator_seed(CUDA, 0, seed_out), "cuda.seed_all")
  cuda_check(C.lt_cuda_manual_seed(seed_out[0], -1, 1))   -- the same seed on every device, as PyTorch
end

M.mps = {}
function M.mps.is_available()
  C.lt_has_backend(13, int_type)
  return int_type[0] == 1
end

return M
