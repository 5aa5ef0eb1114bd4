--[[
  torch.tools._clock — wall-clock seconds for the timing tools (benchmark-model, profile-dataloader,
  serving-capacity): CLOCK_MONOTONIC through the FFI, os.clock when that is unavailable.
]]
local ffi = require "ffi"

local M = {}

M.now = os.clock
do
  pcall(ffi.cdef, "typedef struct ltorch_tools_timespec { long tv_sec; long tv_nsec; } ltorch_tools_timespec;")
  pcall(ffi.cdef, "int ltorch_tools_clock_gettime(int clk_id, ltorch_tools_timespec *tp) __asm__(\"clock_gettime\");")
  local ts = ffi.new("ltorch_tools_timespec")
  if pcall(ffi.C.ltorch_tools_clock_gettime, 1, ts) then
    M.now = function() ffi.C.ltorch_tools_clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end
  end
end

-- percentile(sorted array, q in [0, 1]) by linear interpolation (numpy's default)
function M.percentile(sorted, q)
  local n = #sorted
  if n == 0 then return nil end
  local pos = 1 + (n - 1) * q
  local lo = math.floor(pos)
  local hi = math.min(lo + 1, n)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
end

return M
