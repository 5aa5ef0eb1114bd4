--[[
  examples/extension/swish.lua — the Lua side of the native extension example: loads libswish
  (built by CMakeLists.txt beside this file via cmake/ltorch_extension.cmake) with ffi.load and
  wraps its kernels in a torch.autograd.Function, so swish(x) = x * sigmoid(x) takes part in
  autograd like a built-in op.

  Tensors reach C as data pointers: inputs are made contiguous, must be float32 or float64 on the
  CPU (anything else is a Lua error naming what was passed), outputs are allocated here with
  torch.empty_like. The tensors stay referenced in Lua for the whole C call.

  Usage:
      local swish = require("swish").load("/path/to/libswish.so")   -- or $LTORCH_SWISH_LIB
      local y = swish.apply(x)           -- x: float32/float64 CPU tensor, any shape
]]
local ffi = require "ffi"
local torch = require "torch"

ffi.cdef [[
void swish_forward_f32(const float *x, float *y, int64_t n);
void swish_forward_f64(const double *x, double *y, int64_t n);
void swish_backward_f32(const float *x, const float *g, float *dx, int64_t n);
void swish_backward_f64(const double *x, const double *g, double *dx, int64_t n);
]]

local M = {}

local function kernels(lib, x, what)
  if x.is_cuda or x.device.type ~= "cpu" then
    error(what .. ": expected a CPU tensor, got device " .. tostring(x.device), 3)
  end
  if x.dtype == torch.float32 then
    return lib.swish_forward_f32, lib.swish_backward_f32, "float*"
  elseif x.dtype == torch.float64 then
    return lib.swish_forward_f64, lib.swish_backward_f64, "double*"
  end
  error(what .. ": expected float32 or float64, got " .. tostring(x.dtype), 3)
end

function M.load(path)
  path = path or os.getenv("LTORCH_SWISH_LIB") or "swish"
  local lib = ffi.load(path)
  local Swish = torch.autograd.Function("SwishBackward")

  function Swish.forward(ctx, x)
    local fwd, _, ptr = kernels(lib, x, "swish")
    x = x:contiguous()
    local y = torch.empty_like(x)
    fwd(ffi.cast(ptr, x:data_ptr()), ffi.cast(ptr, y:data_ptr()), x:numel())
    ctx:save_for_backward(x)
    return y
  end

  function Swish.backward(ctx, g)
    local x = ctx.saved_tensors[1]
    local _, bwd, ptr = kernels(lib, x, "swish backward")
    g = g:to(x.dtype):contiguous()
    local dx = torch.empty_like(x)
    bwd(ffi.cast(ptr, x:data_ptr()), ffi.cast(ptr, g:data_ptr()), ffi.cast(ptr, dx:data_ptr()), x:numel())
    return dx
  end

  M.Swish, M.apply, M.lib = Swish, Swish.apply, lib
  return M
end

return M
