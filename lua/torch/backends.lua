--[[
  torch.backends — what this libtorch build carries, and torch.cuda's memory queries:
    torch.backends.cuda.is_built()            libtorch's CUDA library is loaded (a CUDA build)
    torch.backends.cudnn.is_available()       cuDNN loaded; torch.backends.cudnn.version() -> 91900
    torch.backends.mps.is_available()
    torch.version.cuda                        "13.0" (nil on a CPU-only build, PyTorch's None)
    torch.cuda.nccl.version()                 {2, 28, 9} (nil without NCCL)
    torch.cuda.memory_allocated([d]), max_memory_allocated, memory_reserved, max_memory_reserved,
    torch.cuda.memory_stats([d]) (PyTorch's flat keys: "allocated_bytes.all.current", ...),
    torch.cuda.reset_peak_memory_stats([d]), torch.cuda.empty_cache()

  As in PyTorch (torch/cuda/memory.py), the memory queries answer 0 (memory_stats an empty table)
  and empty_cache does nothing until the CUDA allocator has been used, so they are safe to call
  on a CPU machine (reset_peak_memory_stats raises there, as PyTorch's does); a device argument
  is still checked. Versions come from the loaded libraries
  (bindings/lt_cuda.cpp), no device needed.

  install also puts the rest of torch.cuda and torch.backends in place, each from its own file:
    torch._backend_flags   torch.backends.cudnn/cuda.matmul/mkldnn switches (assignments that set
                           libtorch's context), flags(opts, fn), SDPA switches, preferred libraries
    torch._cuda_streams    torch.cuda.Stream, Event, stream(s, fn), current_stream, default_stream
    torch._cuda_info       device properties, name, capability, mem_get_info, is_bf16_supported,
                           device(d, fn), memory_summary, torch.cuda.amp (deprecated aliases)
    torch._cuda_graphs     torch.cuda.CUDAGraph, graph(g, fn), graph_pool_handle, make_graphed_callables

  Usage:  require("torch.backends").install(torch)   (torch/init.lua does it)
]]
local ffi = require "ffi"
local _C = require "torch._C"
local device_mod = require "torch.device"
local flags = require "torch._backend_flags"
local streams = require "torch._cuda_streams"
local cuda_info = require "torch._cuda_info"
local graphs = require "torch._cuda_graphs"
local C = _C.C

local M = {}

local built, cudart, cudnn, cudnn_rt, nccl =
  ffi.new("int[1]"), ffi.new("int64_t[1]"), ffi.new("int64_t[1]"), ffi.new("int64_t[1]"), ffi.new("int64_t[1]")
local stats = ffi.new("int64_t[?]", C.LT_CUDA_MEMORY_STATS)

local function check(status)
  if status ~= 0 then error(_C.last_error(), 3) end
end

-- The build's versions, read once: { built, cudart, cudnn, cudnn_runtime, nccl } (numbers).
local info
function M.build_info()
  if not info then
    check(C.lt_cuda_build_info(built, cudart, cudnn, cudnn_rt, nccl))
    info = { built = built[0] == 1, cudart = tonumber(cudart[0]), cudnn = tonumber(cudnn[0]),
      cudnn_runtime = tonumber(cudnn_rt[0]), nccl = tonumber(nccl[0]) }
  end
  return info
end

-- 13000 -> "13.0" (CUDART_VERSION is major * 1000 + minor * 10).
local function cuda_version_string(v)
  if v == 0 then return nil end
  return ("%d.%d"):format(math.floor(v / 1000), math.floor(v % 1000 / 10))
end

-- NCCL's code: major * 10000 + minor * 100 + patch from 2.9 on, major * 1000 + minor * 100 +
-- patch before.
local function nccl_triple(v)
  if v == 0 then return nil end
  if v >= 20900 then return { math.floor(v / 10000), math.floor(v % 10000 / 100), v % 100 } end
  return { math.floor(v / 1000), math.floor(v % 1000 / 100), v % 100 }
end

-- The "all" entries of the allocator's statistics, under PyTorch's flat keys; {} while unused.
local STAT_KEYS = {
  "allocated_bytes.all.current", "allocated_bytes.all.peak",
  "reserved_bytes.all.current", "reserved_bytes.all.peak",
  "active_bytes.all.current", "active_bytes.all.peak",
  "allocation.all.current", "allocation.all.peak",
  "segment.all.current", "num_alloc_retries", "num_ooms",
}

local function device_index(device, what)
  if device == nil then return -1 end
  local d = device_mod.resolve(device, what, 4)
  if d.type ~= "cuda" then error(("%s: expected a CUDA device, got '%s'"):format(what, tostring(d)), 4) end
  return d.index or -1
end

local function memory_stats(device, what)
  check(C.lt_cuda_memory_stats(device_index(device, what), stats))
  local out = {}
  if stats[0] == 1 then
    for i, key in ipairs(STAT_KEYS) do out[key] = tonumber(stats[i]) end
  end
  return out
end

local function stat(key, what)
  return function(device) return memory_stats(device, what)[key] or 0 end
end

function M.install(torch)
  local cuda = torch.cuda
  cuda.memory_stats = function(device) return memory_stats(device, "cuda.memory_stats") end
  cuda.memory_allocated = stat("allocated_bytes.all.current", "cuda.memory_allocated")
  cuda.max_memory_allocated = stat("allocated_bytes.all.peak", "cuda.max_memory_allocated")
  cuda.memory_reserved = stat("reserved_bytes.all.current", "cuda.memory_reserved")
  cuda.max_memory_reserved = stat("reserved_bytes.all.peak", "cuda.max_memory_reserved")
  cuda.reset_peak_memory_stats = function(device)
    check(C.lt_cuda_reset_peak_memory_stats(device_index(device, "cuda.reset_peak_memory_stats")))
  end
  cuda.empty_cache = function() check(C.lt_cuda_empty_cache()) end
  cuda.nccl = { version = function() return nccl_triple(M.build_info().nccl) end }

  local backends = { mps = device_mod.mps }
  backends.mps.is_built = function() return false end   -- libtorch for Linux has no MPS
  backends.cuda = { is_built = function() return M.build_info().built end }
  backends.cudnn = {
    is_available = function() return M.build_info().cudnn_runtime > 0 end,
    version = function()
      local v = M.build_info().cudnn_runtime
      return v > 0 and v or nil
    end,
  }
  flags.install(torch, backends)
  torch.backends = flags.namespace("torch.backends", flags.top_level, backends)
  torch.version = { cuda = cuda_version_string(M.build_info().cudart), libtorch = torch.libtorch_version }

  streams.install(cuda)
  cuda_info.install(torch)
  graphs.install(torch)
end

return M
