--[[
  torch.amp — automatic mixed precision: torch.autocast regions and the GradScaler.

  PyTorch's `with torch.autocast("cpu"):` becomes a function call. Inside the region, ops that
  are safe and faster in lower precision (matmul, linear, conv, ...) run in the autocast dtype,
  ops that need range (softmax, losses, reductions over float32 inputs) stay in float32; which
  op does what is libtorch's own list (PyTorch docs: https://pytorch.org/docs/stable/amp.html).

      local y = torch.autocast("cpu", function()
        return model(x)                        -- linear layers compute in bfloat16
      end)
      torch.autocast("cuda", fn, {dtype = torch.bfloat16, enabled = use_amp, cache_enabled = true})

  - device_type "cpu" defaults to bfloat16, "cuda" to float16 (libtorch's defaults; a region
    without `dtype` keeps the enclosing region's dtype, as PyTorch does).
  - Regions nest; leaving one restores the previous state even when fn raises, and leaving the
    outermost one drops the cache of cast weights. fn's results are returned.
  - "cuda" on a build without CUDA is an error naming the build (a disabled region is allowed:
    `enabled = false` asks for nothing). An unsupported dtype is an error (CPU autocast in
    libtorch 1.13 supports only bfloat16).

  Queries with PyTorch's names (also installed on `torch`): is_autocast_enabled(device_type =
  "cuda"), is_autocast_cpu_enabled(), get_autocast_dtype(device_type), get_autocast_cpu_dtype(),
  get_autocast_gpu_dtype(), is_autocast_cache_enabled(), clear_autocast_cache().

  torch.amp.GradScaler (lua/torch/amp/grad_scaler.lua) loads on first use.
]]
local _C = require "torch._C"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"
local guard = require "torch._guard"

local C, check = _C.C, _C.check

local M = {}
local int_out = _C.IntOut()

-- c10::DeviceType codes of the devices autocast knows.
local device_codes = { cpu = 0, cuda = 1 }

local function device_code(fname, pos, v, level)
  level = (level or 2) + 1
  if device_mod.is_device(v) then v = v.type end
  if type(v) ~= "string" then args.bad(fname, pos, "device type string ('cpu' or 'cuda')", args.typename(v), level) end
  local code = device_codes[v]
  if code == nil then
    error(("%s: device_type must be 'cpu' or 'cuda', got '%s'"):format(fname, v), level)
  end
  return code
end

local function option_boolean(fname, opts, key)
  local v = opts[key]
  if v ~= nil and type(v) ~= "boolean" then
    error(("bad argument #3 to '%s' (%s must be a boolean, got %s)"):format(fname, key, args.typename(v)), 4)
  end
  return v
end

local known_options = { dtype = true, enabled = true, cache_enabled = true }

--[[ autocast(device_type, fn, {dtype=, enabled=true, cache_enabled=}) -> fn's results.
     cache_enabled defaults to the current setting (true unless an enclosing region turned it off). ]]
function M.autocast(device_type, fn, opts)
  local code = device_code("autocast", 1, device_type)
  if type(fn) ~= "function" then args.bad("autocast", 2, "function", args.typename(fn)) end
  opts = args.opt_table("autocast", 3, opts) or {}
  for k in pairs(opts) do
    if not known_options[k] then
      error(("bad argument #3 to 'autocast' (unknown option '%s'; expected dtype, enabled, cache_enabled)"):format(tostring(k)), 2)
    end
  end
  local enabled = option_boolean("autocast", opts, "enabled")
  if enabled == nil then enabled = true end
  local cache = option_boolean("autocast", opts, "cache_enabled")
  local dtype = opts.dtype ~= nil and dtype_mod.resolve(opts.dtype, "autocast", 2).code or -1
  -- entered, run and left in one guarded call: left whatever fn raises (torch._guard)
  return guard.checked("autocast", guard.autocast(code, enabled, dtype,
    cache == nil and -1 or (cache and 1 or 0), fn))
end

---------------------------------------------------------------- queries
-- PyTorch 1.13's torch.is_autocast_enabled() means CUDA; 2.4 added the device_type argument.
function M.is_autocast_enabled(device_type)
  local code = device_code("is_autocast_enabled", 1, device_type or "cuda")
  check(C.lt_autocast_is_enabled(code, int_out), "is_autocast_enabled")
  return int_out[0] == 1
end

function M.get_autocast_dtype(device_type)
  local code = device_code("get_autocast_dtype", 1, device_type)
  check(C.lt_autocast_get_dtype(code, int_out), "get_autocast_dtype")
  return dtype_mod.from_code(int_out[0])
end

function M.is_autocast_cpu_enabled() return M.is_autocast_enabled("cpu") end
function M.get_autocast_cpu_dtype() return M.get_autocast_dtype("cpu") end
function M.get_autocast_gpu_dtype() return M.get_autocast_dtype("cuda") end

function M.is_autocast_cache_enabled()
  check(C.lt_autocast_is_cache_enabled(int_out), "is_autocast_cache_enabled")
  return int_out[0] == 1
end

function M.clear_autocast_cache()
  check(C.lt_autocast_clear_cache(), "clear_autocast_cache")
end

-- What torch/init.lua installs on `torch` itself (PyTorch has these at top level).
M.torch_functions = {
  autocast = M.autocast,
  is_autocast_enabled = M.is_autocast_enabled,
  is_autocast_cpu_enabled = M.is_autocast_cpu_enabled,
  get_autocast_cpu_dtype = M.get_autocast_cpu_dtype,
  get_autocast_gpu_dtype = M.get_autocast_gpu_dtype,
  is_autocast_cache_enabled = M.is_autocast_cache_enabled,
  clear_autocast_cache = M.clear_autocast_cache,
}

-- GradScaler needs the whole torch namespace, which is still loading when this file runs.
return setmetatable(M, {
  __index = function(t, k)
    if k == "GradScaler" then
      local G = require "torch.amp.grad_scaler"
      rawset(t, k, G)
      return G
    end
  end,
})
