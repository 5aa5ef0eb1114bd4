--[[
  examples/extension/swish.lua — the Lua side of the native extension example: loads libswish
  (built by CMakeLists.txt beside this file via cmake/ltorch_extension.cmake) with ffi.load and
  wraps its kernels in a torch.autograd.Function, so swish(x) = x * sigmoid(x) takes part in
  autograd like a built-in op.

  Tensors reach C as data pointers: inputs are made contiguous, must be float32 or float64 on the
  CPU or a CUDA device (anything else is a Lua error naming what was passed), outputs are
  allocated here with torch.empty_like (so on the input's device). The tensors stay referenced in
  Lua for the whole C call.

  CPU tensors call swish.c's loops. CUDA tensors call swish.cu's launchers on the default stream
  (NULL: the stream libtorch uses, so the kernels queue in order with torch's own ops), which
  must be on the current CUDA device (torch.cuda.set_device). The launchers are looked up the
  first time a CUDA tensor arrives, so a libswish built without the CUDA toolkit loads and serves
  CPU tensors; given a CUDA tensor it is an error saying to rebuild with the toolkit. A launch
  that fails is an error naming the cudaError_t number.

  Usage:
      local swish = require("swish").load("/path/to/libswish.so")   -- or $LTORCH_SWISH_LIB
      local y = swish.apply(x)           -- x: float32/float64 CPU or CUDA tensor, any shape
      swish.has_cuda()                   -- true when the library has the CUDA kernels
  Each load returns its own table (Swish, apply, lib, has_cuda), so two builds can be loaded
  side by side.
]]
local ffi = require "ffi"
local torch = require "torch"

ffi.cdef [[
void swish_forward_f32(const float *x, float *y, int64_t n);
void swish_forward_f64(const double *x, double *y, int64_t n);
void swish_backward_f32(const float *x, const float *g, float *dx, int64_t n);
void swish_backward_f64(const double *x, const double *g, double *dx, int64_t n);
int swish_forward_f32_cuda(const float *x, float *y, int64_t n, void *stream);
int swish_forward_f64_cuda(const double *x, double *y, int64_t n, void *stream);
int swish_backward_f32_cuda(const float *x, const float *g, float *dx, int64_t n, void *stream);
int swish_backward_f64_cuda(const double *x, const double *g, double *dx, int64_t n, void *stream);
]]

local M = {}

-- lib's CUDA launchers as { f32 = {fwd, bwd}, f64 = {fwd, bwd} }, or nil when it has none.
local function find_cuda(lib)
  local ok, f32f = pcall(function() return lib.swish_forward_f32_cuda end)
  if not ok then return nil end
  return { f32 = { f32f, lib.swish_backward_f32_cuda },
           f64 = { lib.swish_forward_f64_cuda, lib.swish_backward_f64_cuda } }
end

-- Raises the launch status of a CUDA launcher as an error.
local function check_launch(status, what)
  if status ~= 0 then
    error(("%s: CUDA kernel launch failed (cudaError_t %d)"):format(what, status), 3)
  end
end

function M.load(path)
  path = path or os.getenv("LTORCH_SWISH_LIB") or "swish"
  local lib = ffi.load(path)
  local cuda   -- find_cuda(lib), once asked for; false when the library has none

  local function has_cuda()
    if cuda == nil then cuda = find_cuda(lib) or false end
    return cuda ~= false
  end

  -- The forward and backward kernels for x, their pointer type, and whether they are CUDA
  -- launchers (which take a stream and return a status).
  local function kernels(x, what)
    local dev = x.device
    local on_cuda = dev.type == "cuda"
    if on_cuda then
      if not has_cuda() then
        error(("%s: got a CUDA tensor, but %s was built without the CUDA kernels; rebuild the "
          .. "extension with the CUDA toolkit (nvcc on PATH or -DCMAKE_CUDA_COMPILER) to use it on "
          .. "the GPU"):format(what, path), 3)
      end
      local current = torch.cuda.current_device()
      if (dev.index or current) ~= current then
        error(("%s: x is on %s but the current CUDA device is %d; call torch.cuda.set_device(%d) "
          .. "first"):format(what, tostring(dev), current, dev.index), 3)
      end
    elseif x.is_cuda or dev.type ~= "cpu" then
      error(what .. ": expected a CPU or CUDA tensor, got device " .. tostring(dev), 3)
    end
    if x.dtype == torch.float32 then
      if on_cuda then return cuda.f32[1], cuda.f32[2], "float*", true end
      return lib.swish_forward_f32, lib.swish_backward_f32, "float*", false
    elseif x.dtype == torch.float64 then
      if on_cuda then return cuda.f64[1], cuda.f64[2], "double*", true end
      return lib.swish_forward_f64, lib.swish_backward_f64, "double*", false
    end
    error(what .. ": expected float32 or float64, got " .. tostring(x.dtype), 3)
  end

  local Swish = torch.autograd.Function("SwishBackward")

  function Swish.forward(ctx, x)
    local fwd, _, ptr, on_cuda = kernels(x, "swish")
    x = x:contiguous()
    local y = torch.empty_like(x)
    local xp, yp = ffi.cast(ptr, x:data_ptr()), ffi.cast(ptr, y:data_ptr())
    if on_cuda then
      check_launch(fwd(xp, yp, x:numel(), nil), "swish")
    else
      fwd(xp, yp, x:numel())
    end
    ctx:save_for_backward(x)
    return y
  end

  function Swish.backward(ctx, g)
    local x = ctx.saved_tensors[1]
    local _, bwd, ptr, on_cuda = kernels(x, "swish backward")
    g = g:to(x.dtype):contiguous()
    local dx = torch.empty_like(x)
    local xp, gp, dxp = ffi.cast(ptr, x:data_ptr()), ffi.cast(ptr, g:data_ptr()), ffi.cast(ptr, dx:data_ptr())
    if on_cuda then
      check_launch(bwd(xp, gp, dxp, x:numel(), nil), "swish backward")
    else
      bwd(xp, gp, dxp, x:numel())
    end
    return dx
  end

  return { Swish = Swish, apply = Swish.apply, lib = lib, has_cuda = has_cuda }
end

return M
