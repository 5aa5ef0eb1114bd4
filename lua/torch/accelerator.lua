--[[
  torch.accelerator — PyTorch 2.11's device-agnostic accelerator API
  (https://pytorch.org/docs/2.11/accelerator.html), as today's PyTorch examples use it:

      local device = torch.accelerator.is_available() and torch.accelerator.current_accelerator() or "cpu"

  ltorch's libtorch knows one accelerator, CUDA (the build's), so each function is torch.cuda's
  counterpart. As in PyTorch on a machine without a GPU: current_accelerator() is still the
  build's device (cuda) and current_accelerator({check_available = true}) is nil; is_available()
  is false, device_count() 0; the memory counters read 0 and empty_cache() does nothing;
  synchronize, current_device_index, set_device_index, current_stream and get_memory_info raise
  torch.cuda's error (no driver / no device). A build without CUDA has no accelerator:
  current_accelerator() is nil.
]]
local torch = require "torch"
local P = require "torch._pysig"

local M = {}

local cuda = torch.cuda

local function built() return torch.backends.cuda.is_built() end

local CURRENT = P.signature("current_accelerator", "check_available=False")

-- current_accelerator(check_available=false) -> torch.device("cuda") or nil.
function M.current_accelerator(...)
  local a = P.bind(CURRENT, ...)
  if not built() or (a.check_available and not cuda.is_available()) then return nil end
  return torch.device("cuda")
end

function M.is_available() return built() and cuda.is_available() end
function M.device_count() return built() and cuda.device_count() or 0 end

function M.current_device_index() return cuda.current_device() end
function M.set_device_index(device) return cuda.set_device(device) end
M.current_device_idx, M.set_device_idx = M.current_device_index, M.set_device_index   -- PyTorch's deprecated names

function M.synchronize(device) return cuda.synchronize(device) end
function M.current_stream(device) return cuda.current_stream(device) end
function M.set_stream(stream) return cuda.set_stream(stream) end
function M.get_device_capability(device) return cuda.get_device_capability(device) end
function M.get_memory_info(device) return cuda.mem_get_info(device) end

-- The caching allocator's counters (0 where nothing was allocated on a device).
for _, name in ipairs({ "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
  "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "reset_accumulated_memory_stats" }) do
  M[name] = function(...) return cuda[name](...) end
end

return M
