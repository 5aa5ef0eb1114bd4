--[[
  torch._cuda_info — torch.cuda's device queries and contexts (PyTorch's torch/cuda/__init__.py and
  memory.py), over bindings/lt_cuda_graph.cpp (cudaDeviceProp, cudaMemGetInfo) and lt_cuda.cpp:

      torch.cuda.get_device_properties(0)   --> { name = "NVIDIA H100 ...", major = 9, minor = 0,
                                                  total_memory = ..., multi_processor_count = ..., ... }
                                                  (PyTorch's _CudaDeviceProperties fields)
      torch.cuda.get_device_name(), torch.cuda.get_device_capability()   --> "NVIDIA ...", 9, 0
      torch.cuda.mem_get_info()             --> free_bytes, total_bytes
      torch.cuda.is_bf16_supported(), torch.cuda.is_tf32_supported(), torch.cuda.is_initialized(), init()
      torch.cuda.device(1, function() ... end)          -- PyTorch's `with torch.cuda.device(1):`
      torch.cuda.device_of(tensor, function() ... end)  -- ... on the tensor's GPU (a CPU tensor: as is)
      print(torch.cuda.memory_summary())
      torch.cuda.amp.autocast(fn, opts), torch.cuda.amp.GradScaler(opts)   -- deprecated aliases
      torch.cuda.can_device_access_peer(0, 1), torch.cuda.set_per_process_memory_fraction(0.5[, d]),
      torch.cuda.get_per_process_memory_fraction([d]), torch.cuda.set_sync_debug_mode("warn"),
      torch.cuda.get_sync_debug_mode(), torch.cuda.reset_accumulated_memory_stats([d]),
      torch.cuda.memory_stats_as_nested_dict([d])   -- memory_stats' keys split at the dots

  Python returns tuples; here get_device_capability and mem_get_info return two values. Without a
  GPU each behaves as PyTorch's does: the properties, mem_get_info and init raise libtorch's error
  ("Found no NVIDIA driver on your system. ..."), is_bf16_supported / is_tf32_supported /
  is_initialized are false, and memory_summary raises (PyTorch's raises KeyError there: the
  allocator has no statistics yet). is_initialized is true once CUDA has been used in this process
  (a current device was asked for, or the allocator has allocated).

  Usage (internal): require("torch._cuda_info").install(torch), from torch.backends.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local args = require "torch._args"
local device_mod = require "torch.device"
local warnings = require "torch._warnings"

local C = _C.C
local M = {}

local props_out = ffi.new("lt_cuda_props")
local int_out, dbl_out = ffi.new("int[1]"), ffi.new("double[1]")
local SYNC_MODES = { default = 0, warn = 1, error = 2 }
local free_out, total_out = ffi.new("int64_t[1]"), ffi.new("int64_t[1]")

local function check(status, level)
  if status ~= 0 then error(_C.last_error(), level + 1) end
end

local function pack(...) return { n = select("#", ...), ... } end

local function cuda_index(v, what, level)
  if v == nil then return -1 end
  local d = device_mod.resolve(v, what, level + 1)
  if d.type ~= "cuda" then error(("%s: expected a CUDA device, got '%s'"):format(what, tostring(d)), level + 1) end
  return d.index or -1
end

local INT_FIELDS = { "major", "minor", "multi_processor_count", "max_threads_per_multi_processor", "max_threads_per_block",
  "warp_size", "regs_per_multiprocessor", "pci_bus_id", "pci_device_id", "pci_domain_id", "shared_memory_per_block",
  "shared_memory_per_block_optin", "shared_memory_per_multiprocessor", "memory_bus_width", "clock_rate",
  "memory_clock_rate" }

local Props = {}
Props.__tostring = function(p)
  return ("_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, multi_processor_count=%d, " ..
    "uuid=%s, pci_bus_id=%d, pci_device_id=%d, pci_domain_id=%d, L2_cache_size=%dMB)"):format(p.name, p.major, p.minor,
    math.floor(p.total_memory / 2 ^ 20), p.multi_processor_count, p.uuid, p.pci_bus_id, p.pci_device_id,
    p.pci_domain_id, math.floor(p.L2_cache_size / 2 ^ 20))
end

local function properties(device, what, level)
  check(C.lt_cuda_device_properties(cuda_index(device, what, level + 1), props_out), level + 1)
  local p = setmetatable({ name = ffi.string(props_out.name), uuid = ffi.string(props_out.uuid),
    total_memory = tonumber(props_out.total_memory), L2_cache_size = tonumber(props_out.L2_cache_size),
    is_integrated = props_out.is_integrated ~= 0, is_multi_gpu_board = props_out.is_multi_gpu_board ~= 0,
    gcnArchName = "NVIDIA" }, Props)
  for _, k in ipairs(INT_FIELDS) do p[k] = tonumber(props_out[k]) end
  return p
end

local ok_init = false
local function is_initialized(cuda)
  if ok_init then return true end
  if not cuda.is_available() then return false end
  ok_init = next(cuda.memory_stats()) ~= nil
  return ok_init
end

--[[ PyTorch's `with torch.cuda.device(d):`: runs fn with device `index` (checked by the caller)
     current, then puts the previous device back (even when fn raises). A negative index (nil, as
     in PyTorch) just runs fn. ]]
local function with_device(cuda, index, fn, ...)
  if index < 0 then return fn(...) end
  local prev = cuda.current_device()
  cuda.set_device(index)
  ok_init = true
  local res = pack(pcall(fn, ...))
  cuda.set_device(prev)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

local function fmt_bytes(n)
  local units, i = { "B  ", "KiB", "MiB", "GiB", "TiB" }, 1
  while math.abs(n) >= 1024 and i < #units do n, i = n / 1024, i + 1 end
  return i == 1 and ("%7d %s"):format(n, units[i]) or ("%7.2f %s"):format(n, units[i])
end

-- A text table of the allocator's "all" statistics for one device (PyTorch's memory_summary
-- prints the same figures, with per-pool rows ltorch does not collect).
local function memory_summary(cuda, device, level)
  local index = cuda_index(device, "cuda.memory_summary", level + 1)
  local s = cuda.memory_stats(device)
  if s["allocated_bytes.all.current"] == nil then
    error("cuda.memory_summary: the CUDA caching allocator has no statistics yet (no 'allocated_bytes.all.current' in " ..
      "memory_stats(): CUDA has not allocated in this process)", level + 1)
  end
  if index < 0 then index = cuda.current_device() end
  local rows = {
    "|===========================================================================|",
    ("|                  PyTorch CUDA memory summary, device ID %-3d               |"):format(index),
    "|---------------------------------------------------------------------------|",
    ("|  CUDA OOMs: %-13d        |        cudaMalloc retries: %-10d  |"):format(s.num_ooms, s.num_alloc_retries),
    "|===========================================================================|",
    "|        Metric         | Cur Usage  | Peak Usage |                          |",
    "|---------------------------------------------------------------------------|",
  }
  for _, r in ipairs { { "Allocated memory", "allocated_bytes" }, { "Active memory", "active_bytes" },
    { "GPU reserved memory", "reserved_bytes" } } do
    rows[#rows + 1] = ("| %-21s | %s | %s |                          |"):format(r[1],
      fmt_bytes(s[r[2] .. ".all.current"]), fmt_bytes(s[r[2] .. ".all.peak"]))
  end
  rows[#rows + 1] = ("| %-21s | %10d | %10d |                          |"):format("Allocations",
    s["allocation.all.current"], s["allocation.all.peak"])
  rows[#rows + 1] = ("| %-21s | %10d |            |                          |"):format("GPU reserved segments",
    s["segment.all.current"])
  rows[#rows + 1] = "|===========================================================================|"
  return table.concat(rows, "\n") .. "\n"
end

local IS_BF16 = P.signature("is_bf16_supported", "including_emulation=True")
local SUMMARY = P.signature("memory_summary", "device=None, abbreviated=False")

-- Peer access, the allocator's memory fraction, the sync debug mode and nested memory stats.
local function install_controls(cuda)
  cuda.can_device_access_peer = function(device, peer)
    check(C.lt_cuda_can_device_access_peer(cuda_index(device, "cuda.can_device_access_peer", 2),
      cuda_index(peer, "cuda.can_device_access_peer", 2), int_out), 2)
    return int_out[0] ~= 0
  end
  cuda.set_per_process_memory_fraction = function(fraction, device)
    if type(fraction) ~= "number" or fraction < 0 or fraction > 1 then
      error(("cuda.set_per_process_memory_fraction: invalid fraction value %s (allowed range: 0~1)"):format(
        tostring(fraction)), 2)
    end
    check(C.lt_cuda_memory_fraction(cuda_index(device, "cuda.set_per_process_memory_fraction", 2), 1, fraction,
      dbl_out), 2)
  end
  cuda.get_per_process_memory_fraction = function(device)
    check(C.lt_cuda_memory_fraction(cuda_index(device, "cuda.get_per_process_memory_fraction", 2), 0, 0, dbl_out), 2)
    return dbl_out[0]
  end
  cuda.set_sync_debug_mode = function(mode)
    local m = type(mode) == "string" and SYNC_MODES[mode] or mode
    if m ~= 0 and m ~= 1 and m ~= 2 then
      error("cuda.set_sync_debug_mode: invalid value of debug_mode, expected one of `default`, `warn`, `error` " ..
        "or 0, 1, 2, got " .. tostring(mode), 2)
    end
    check(C.lt_cuda_sync_debug_mode(m, int_out), 2)
  end
  cuda.get_sync_debug_mode = function()
    check(C.lt_cuda_sync_debug_mode(-1, int_out), 2)
    return int_out[0]
  end
  cuda.reset_accumulated_memory_stats = function(device)
    check(C.lt_cuda_reset_accumulated_memory_stats(cuda_index(device, "cuda.reset_accumulated_memory_stats", 2)), 2)
  end
  cuda.memory_stats_as_nested_dict = function(device)
    local out = {}
    for key, v in pairs(cuda.memory_stats(device)) do
      local t, parts = out, {}
      for part in key:gmatch("[^.]+") do parts[#parts + 1] = part end
      for i = 1, #parts - 1 do
        t[parts[i]] = t[parts[i]] or {}
        t = t[parts[i]]
      end
      t[parts[#parts]] = v
    end
    return out
  end
end

local function install_amp(torch)
  local cuda = torch.cuda
  -- torch.cuda.amp: PyTorch's deprecated aliases of torch.amp with device "cuda"
  cuda.amp = {
    amp_definitely_not_available = function() return not cuda.is_available() end,
    autocast = function(fn, opts)
      warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` " ..
        "instead.", 2, "FutureWarning")
      return torch.amp.autocast("cuda", fn, opts)
    end,
    GradScaler = function(opts)
      warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', " ..
        "args...)` instead.", 2, "FutureWarning")
      return torch.amp.GradScaler("cuda", opts)
    end,
  }
end

function M.install(torch)
  local cuda = torch.cuda
  -- (results held in locals: a tail call would drop the frame that error levels count)
  cuda.get_device_properties = function(device)
    local p = properties(device, "cuda.get_device_properties", 2)
    return p
  end
  cuda.get_device_name = function(device) return properties(device, "cuda.get_device_name", 2).name end
  cuda.get_device_capability = function(device)
    local p = properties(device, "cuda.get_device_capability", 2)
    return p.major, p.minor
  end
  cuda.mem_get_info = function(device)
    check(C.lt_cuda_mem_get_info(cuda_index(device, "cuda.mem_get_info", 2), free_out, total_out), 2)
    ok_init = true
    return tonumber(free_out[0]), tonumber(total_out[0])
  end
  cuda.is_bf16_supported = function(...)
    local a = W.bind(IS_BF16, 2, ...)
    W.bool(IS_BF16, a, "including_emulation", 2)
    if not cuda.is_available() then return false end
    if properties(nil, "cuda.is_bf16_supported", 2).major >= 8 then return true end
    if not a.including_emulation then return false end
    return (pcall(torch.ones, 1, { dtype = torch.bfloat16, device = "cuda" }))
  end
  cuda.is_tf32_supported = function()
    return cuda.is_available() and properties(nil, "cuda.is_tf32_supported", 2).major >= 8
  end
  cuda.is_initialized = function() return is_initialized(cuda) end
  cuda.init = function()
    local ok, err = pcall(cuda.current_device)
    if not ok then error((tostring(err):gsub("^[^\n:]+:%d+: ", "")), 2) end
    ok_init = true
  end
  cuda.device = function(d, fn, ...)
    local index = cuda_index(d, "cuda.device", 2)
    if type(fn) ~= "function" then args.bad("cuda.device", 2, "function", args.typename(fn)) end
    return with_device(cuda, index, fn, ...)
  end
  cuda.device_of = function(t, fn, ...)
    if not torch.is_tensor(t) then args.bad("cuda.device_of", 1, "Tensor", args.typename(t)) end
    if type(fn) ~= "function" then args.bad("cuda.device_of", 2, "function", args.typename(fn)) end
    local d = t.device
    return with_device(cuda, d.type == "cuda" and d.index or -1, fn, ...)
  end
  cuda.memory_summary = function(...)
    local a = W.bind(SUMMARY, 2, ...)
    local s = memory_summary(cuda, a.device, 2)
    return s
  end
  install_controls(cuda)
  -- PyTorch's renamed memory queries: they warn and answer as the new names do
  for old, new in pairs { memory_cached = "memory_reserved", max_memory_cached = "max_memory_reserved",
    reset_max_memory_allocated = "reset_peak_memory_stats", reset_max_memory_cached = "reset_peak_memory_stats" } do
    cuda[old] = function(device)
      warnings.warn(("`torch.cuda.%s` has been renamed to `torch.cuda.%s`"):format(old, new), 2, "FutureWarning")
      return cuda[new](device)
    end
  end
  install_amp(torch)
end

return M
