--[[
  torch.finfo / torch.iinfo — the numeric limits of a dtype, as PyTorch's torch.finfo(dtype) and
  torch.iinfo(dtype) give them.

  finfo(dtype = the default dtype): bits, eps, max, min, tiny (= smallest_normal), resolution
  and dtype (a name, "float32", as PyTorch's finfo.dtype is a string). A complex dtype gives its
  real part's limits (finfo(torch.complex64).dtype == "float32").
  iinfo(dtype): bits, min, max, dtype. The 64-bit limits are LuaJIT 64-bit integers
  (-9223372036854775808LL, 9223372036854775807LL, 18446744073709551615ULL), exact, since a Lua
  number cannot hold 2^63 - 1; tonumber() makes them numbers. Every other limit is a number.
  tostring gives PyTorch's repr: finfo(resolution=1e-06, min=-3.40282e+38, ...).

  The float values are the formats' constants (IEEE 754 binary16/32/64, bfloat16, OCP float8);
  spec/torch/type_info_spec.lua checks each against the reference PyTorch.

  Use: torch.finfo(torch.float16).eps; torch.iinfo(x.dtype).max
]]
local ffi = require "ffi"
local dtype_mod = require "torch.dtype"
local args = require "torch._args"

local M = {}

-- name -> bits, eps, max, min, tiny, resolution
local FLOAT = {
  float16 = { 16, 2 ^ -10, 65504, -65504, 2 ^ -14, 1e-3 },
  bfloat16 = { 16, 2 ^ -7, 3.3895313892515355e+38, -3.3895313892515355e+38, 2 ^ -126, 1e-2 },
  float32 = { 32, 2 ^ -23, 3.4028234663852886e+38, -3.4028234663852886e+38, 2 ^ -126, 1e-6 },
  float64 = { 64, 2 ^ -52, 1.7976931348623157e+308, -1.7976931348623157e+308, 2 ^ -1022, 1e-15 },
  float8_e5m2 = { 8, 2 ^ -2, 57344, -57344, 2 ^ -14, 1 },
  float8_e4m3fn = { 8, 2 ^ -3, 448, -448, 2 ^ -6, 1 },
  float8_e5m2fnuz = { 8, 2 ^ -3, 57344, -57344, 2 ^ -15, 1 },
  float8_e4m3fnuz = { 8, 2 ^ -3, 240, -240, 2 ^ -7, 1 },
  float8_e8m0fnu = { 8, 1, 2 ^ 127, 2 ^ -127, 2 ^ -127, 1 },
}
local REAL_OF = { complex32 = "float16", complex64 = "float32", complex128 = "float64" }

local I64, U64 = ffi.typeof("int64_t"), ffi.typeof("uint64_t")
-- name -> bits, min, max
local INT = {
  uint8 = { 8, 0, 255 }, int8 = { 8, -128, 127 }, int16 = { 16, -32768, 32767 },
  int32 = { 32, -2147483648, 2147483647 }, uint16 = { 16, 0, 65535 }, uint32 = { 32, 0, 4294967295 },
  int64 = { 64, I64(-9223372036854775807LL - 1), I64(9223372036854775807LL) },
  uint64 = { 64, U64(0), U64(18446744073709551615ULL) },
}

-- PyTorch prints the limits with C's %g (6 significant digits), which rounds a tie to even on the
-- exact binary value (float16's eps 0.0009765625 prints 0.000976562); LuaJIT's own %g rounds it
-- up, so the C library's formats it.
ffi.cdef [[ int ltorch_type_info_snprintf(char *s, size_t n, const char *format, ...) __asm__("snprintf"); ]]
local gbuf = ffi.new("char[32]")
local function g(v)
  ffi.C.ltorch_type_info_snprintf(gbuf, 32, "%g", ffi.new("double", tonumber(v)))
  return ffi.string(gbuf)
end

local Finfo = { __name = "torch.finfo" }
Finfo.__index = Finfo
Finfo.__tostring = function(f)
  return ("finfo(resolution=%s, min=%s, max=%s, eps=%s, smallest_normal=%s, tiny=%s, dtype=%s)")
    :format(g(f.resolution), g(f.min), g(f.max), g(f.eps), g(f.smallest_normal), g(f.tiny), f.dtype)
end
Finfo.__eq = function(a, b) return a.dtype == b.dtype end

local Iinfo = { __name = "torch.iinfo" }
Iinfo.__index = Iinfo
Iinfo.__tostring = function(i)
  return ("iinfo(min=%s, max=%s, dtype=%s)"):format(g(i.min), g(i.max), i.dtype)
end
Iinfo.__eq = function(a, b) return a.dtype == b.dtype end

local function the_dtype(what, v, n)
  if n == 0 then return nil end
  if not dtype_mod.is_dtype(v) then
    error(("%s(): argument 'type' (position 1) must be torch.dtype, not %s"):format(what, args.typename(v)), 3)
  end
  return v
end

-- torch.finfo(dtype): the limits of a floating (or complex) dtype; the default dtype when none.
function M.finfo(...)
  local d = the_dtype("finfo", ..., select("#", ...)) or dtype_mod.default_float
  local name = REAL_OF[d.name] or d.name
  local f = FLOAT[name]
  if not f then
    error("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'", 2)
  end
  return setmetatable({ bits = f[1], eps = f[2], max = f[3], min = f[4], tiny = f[5], smallest_normal = f[5],
    resolution = f[6], dtype = name }, Finfo)
end

-- torch.iinfo(dtype): the limits of an integer dtype (bool is refused, as in PyTorch).
function M.iinfo(...)
  local n = select("#", ...)
  if n == 0 then error('iinfo() missing 1 required positional arguments: "type"', 2) end
  local d = the_dtype("iinfo", ..., n)
  if d.name == "bool" then error("torch.bool is not supported by torch.iinfo", 2) end
  local i = INT[d.name]
  if not i then
    error("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'", 2)
  end
  return setmetatable({ bits = i[1], min = i[2], max = i[3], dtype = d.name }, Iinfo)
end

return M
