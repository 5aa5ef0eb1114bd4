--[[
  torch._tensor_properties — the Tensor attributes PyTorch reads without a call: x.mT, x.H,
  x.mH, x.real, x.imag, x.nbytes, x.output_nr, x.retains_grad and the device tests x.is_cpu,
  x.is_meta, x.is_mps, ... (x.T, x.shape, x.ndim, x.dtype, x.device, x.itemsize, x.data live in
  torch._tensor; x.grad, x.grad_fn, x.is_leaf, x.requires_grad in torch.autograd).

  Why: ATen also has methods named mT, mH, output_nr and retains_grad, so `x.mT` found the method
  and gave a function where PyTorch gives a tensor: a ported `y = x.mT @ w` then failed far from
  the line, or `if x.retains_grad then` was always true. As getters (read before the generated
  methods) they are values, as in PyTorch; `x:mT()` is then an error, as x.mT() is in Python.

      x.mT     -- transpose of the last two dims (ATen mT; an error below 2 dims)
      x.H      -- conjugate transpose of a matrix (ATen matrix_H; 2-D only, or 0/1-D)
      x.mH     -- conjugate transpose of the last two dims (ATen mH)
      x.real   -- a view of the real part (the tensor itself when it is not complex)
      x.imag   -- a view of the imaginary part (an error for a non-complex tensor, as PyTorch's)
      x.nbytes -- numel * element size, an integer
]]
local ffi = require "ffi"
local _C = require "torch._C"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"

local C, check = _C.C, _C.check
local getters, Tensor = T.getters, T.Tensor

local M = {}

-- The ATen method `name` called on x (looked up once; the dispatcher picks the overload).
local function aten_method(name)
  local f
  return function(self)
    f = f or dispatch.method_for(name)
    return f(self)
  end
end

-- The ATen function `name` called on x.
local function aten_function(name)
  local f
  return function(self)
    f = f or dispatch.function_for(name, "torch." .. name)
    return f(self)
  end
end

local i64 = ffi.new("int64_t[1]")
local function nbytes(self)
  check(C.lt_tensor_nbytes(self.h, i64), "nbytes")
  return tonumber(i64[0])
end

-- Devices PyTorch tests with an is_<type> attribute.
local DEVICE_TESTS = { "cpu", "meta", "mps", "xpu", "xla", "ipu", "vulkan", "maia", "mtia" }

function M.install()
  getters.mT = aten_method("mT")
  getters.mH = aten_method("mH")
  getters.H = aten_method("matrix_H")
  getters.real = aten_function("real")
  getters.imag = aten_function("imag")
  getters.output_nr = aten_method("output_nr")
  getters.retains_grad = aten_method("retains_grad")
  getters.nbytes = nbytes
  Tensor.nbytes = nil   -- an attribute, not a method, as in PyTorch
  for _, kind in ipairs(DEVICE_TESTS) do
    getters["is_" .. kind] = function(self) return T.device_of(self).type == kind end
  end
end

return M
