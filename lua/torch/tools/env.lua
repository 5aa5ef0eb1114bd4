--[[
  torch.tools.env — `tool.lua env`: what this ltorch runs on. libtorch and LuaJIT versions, what
  the build carries (CUDA runtime, cuDNN and NCCL versions: known without a GPU), the devices
  libtorch can use (CUDA device count, MPS), intra-op threads, and the BLAS/LAPACK libraries
  actually loaded into the process (read from /proc/self/maps on Linux).
  Options: --json (one JSON object). Exit 0; 1 when --require-cuda is given and CUDA is absent.
]]
local T = require "torch.tools"

local M = { name = "env", summary = "libtorch version, devices, threads, BLAS",
  usage = "usage: ltorch tools/tool.lua env [--json] [--require-cuda]" }

local function blas_libs()
  local f = io.open("/proc/self/maps", "r")
  if not f then return {} end
  local seen, out = {}, {}
  for line in f:lines() do
    local path = line:match("(/%S+)$")
    if path then
      local base = path:match("([^/]+)$")
      if (base:match("blas") or base:match("lapack") or base:match("mkl") or base:match("openblas")
          or base:match("gomp") or base:match("iomp")) and not seen[base] then
        seen[base] = true
        out[#out + 1] = path
      end
    end
  end
  f:close()
  table.sort(out)
  return out
end

function M.collect()
  local torch = require "torch"
  local info = {
    libtorch = torch.libtorch_version or torch.__version__,
    luajit = jit and jit.version or _VERSION,
    threads = torch.get_num_threads and torch.get_num_threads() or nil,
    cuda_built = torch.backends.cuda.is_built(),
    cuda_version = torch.version.cuda,
    cudnn_version = torch.backends.cudnn.version(),
    nccl_version = torch.cuda.nccl.version() and table.concat(torch.cuda.nccl.version(), "."),
    cuda_available = torch.cuda.is_available(),
    cuda_devices = torch.cuda.is_available() and torch.cuda.device_count() or 0,
    mps_available = torch.backends.mps and torch.backends.mps.is_available and torch.backends.mps.is_available() or false,
    blas = blas_libs(),
  }
  return info
end

function M.main(argv, out)
  local o = T.parse(argv, { json = "boolean", require_cuda = "boolean" })
  if o.help then out(M.usage); return 0 end
  local info = M.collect()
  if o.json then
    out(require("torch.serialization.json").encode(info))
  else
    out(("libtorch          %s"):format(info.libtorch))
    out(("LuaJIT            %s"):format(info.luajit))
    out(("intra-op threads  %s"):format(tostring(info.threads)))
    out(("CUDA build        %s"):format(info.cuda_built and ("yes, CUDA " .. tostring(info.cuda_version)) or "no (CPU-only libtorch)"))
    if info.cuda_built then
      out(("cuDNN             %s"):format(info.cudnn_version and tostring(info.cudnn_version) or "not loaded"))
      out(("NCCL              %s"):format(info.nccl_version or "not loaded"))
    end
    out(("CUDA devices      %s (%d device%s)"):format(info.cuda_available and "available" or "not available",
      info.cuda_devices, info.cuda_devices == 1 and "" or "s"))
    out(("MPS               %s"):format(info.mps_available and "available" or "not available"))
    out(("BLAS/OpenMP libs  %s"):format(#info.blas > 0 and table.concat(info.blas, ", ") or "none found in /proc/self/maps"))
  end
  if o.require_cuda and not info.cuda_available then return 1 end
  return 0
end

return M
