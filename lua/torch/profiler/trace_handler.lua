--[[
  torch.profiler.trace_handler — PyTorch's tensorboard_trace_handler(dir_name, worker_name,
  use_gzip): an on_trace_ready callback that writes each finished trace as
  <dir>/<worker>.<time in ns>.pt.trace.json (worker defaults to "<hostname>_<pid>"), the layout
  TensorBoard's profiler plugin reads.

  Usage:
      torch.profiler.profile({schedule = ..., on_trace_ready = torch.profiler.tensorboard_trace_handler("./log")})
]]
local ffi = require "ffi"

pcall(ffi.cdef, "int getpid(void);")
pcall(ffi.cdef, "int gethostname(char *name, size_t len);")
-- a name of our own for clock_gettime: a plain declaration by another module (its own timespec
-- type) would otherwise decide the argument type for every caller in the process
pcall(ffi.cdef, "int lt_profiler_clock_gettime(int clk_id, int64_t *tp) __asm__(\"clock_gettime\");")

local M = {}

local function default_worker()
  local buf = ffi.new("char[256]")
  local host = ffi.C.gethostname(buf, 255) == 0 and ffi.string(buf) or "localhost"
  return ("%s_%d"):format(host, ffi.C.getpid())
end

local last_ns = 0
local function time_ns()
  local ts = ffi.new("int64_t[2]")
  ffi.C.lt_profiler_clock_gettime(0, ts)   -- CLOCK_REALTIME, as Python's time.time_ns()
  local ns = tonumber(ts[0]) * 1e9 + tonumber(ts[1])
  if ns <= last_ns then ns = last_ns + 1 end   -- two traces in one ns still get two names
  last_ns = ns
  return ns
end

function M.tensorboard_trace_handler(dir_name, worker_name, use_gzip)
  if type(dir_name) ~= "string" or dir_name == "" then
    error("tensorboard_trace_handler: dir_name must be a non-empty string", 2)
  end
  if use_gzip then error("tensorboard_trace_handler: use_gzip is not supported; traces are written as .json", 2) end
  return function(prof)
    local ok = os.execute("mkdir -p '" .. dir_name:gsub("'", "'\\''") .. "'")
    if ok ~= 0 and ok ~= true then error("Can't create directory: " .. dir_name, 2) end
    worker_name = worker_name or default_worker()
    local path = ("%s/%s.%.0f.pt.trace.json"):format(dir_name, worker_name, time_ns())
    prof:export_chrome_trace(path)
    prof.last_trace_path = path
  end
end

return M
