--[[
  torch.dtype — the dtype objects (torch.float32, torch.int64, ...) and their lookup.

  A dtype is a small table with `name` ("float32"), `code` (libtorch's c10::ScalarType number),
  `is_floating_point`, `is_complex`, `is_signed` and `itemsize`; tostring gives "torch.float32",
  as PyTorch prints it. PyTorch's aliases are there too: torch.float is float32, torch.double
  float64, torch.half float16, torch.long int64, torch.int int32, torch.short int16, torch.chalf
  complex32, torch.cfloat complex64, torch.cdouble complex128.

  Usage:  local dtype = require "torch.dtype"
          dtype.resolve("float64") --> torch.float64; dtype.resolve(torch.int64) --> same
          dtype.from_code(6)        --> torch.float32
]]
local M = {}

local Dtype = {}
Dtype.__index = Dtype
Dtype.__tostring = function(d) return "torch." .. d.name end

-- code = c10::ScalarType value (c10/core/ScalarType.h).
local definitions = {
  { "uint8", 0, 1, false, false },
  { "int8", 1, 1, false, true },
  { "int16", 2, 2, false, true },
  { "int32", 3, 4, false, true },
  { "int64", 4, 8, false, true },
  { "float16", 5, 2, true, true },
  { "float32", 6, 4, true, true },
  { "float64", 7, 8, true, true },
  { "complex64", 9, 8, false, true, true },
  { "complex128", 10, 16, false, true, true },
  { "complex32", 8, 4, false, true, true },
  { "bool", 11, 1, false, false },
  { "bfloat16", 15, 2, true, true },
  -- libtorch's newer types, as limited there as in PyTorch: the unsigned ones have copies,
  -- comparisons and a few ops ("add_stub" not implemented for 'UInt64'), the float8 ones casts
  -- and torch._scaled_mm
  { "float8_e5m2", 23, 1, true, true },
  { "float8_e4m3fn", 24, 1, true, true },
  { "float8_e5m2fnuz", 25, 1, true, true },
  { "float8_e4m3fnuz", 26, 1, true, true },
  { "uint16", 27, 2, false, false },
  { "uint32", 28, 4, false, false },
  { "uint64", 29, 8, false, false },
  { "float8_e8m0fnu", 44, 1, true, false },
}

local aliases = {
  float = "float32", double = "float64", half = "float16", long = "int64", int = "int32",
  short = "int16", chalf = "complex32", cfloat = "complex64", cdouble = "complex128",
}

M.by_name, M.by_code = {}, {}
for _, d in ipairs(definitions) do
  local obj = setmetatable({ name = d[1], code = d[2], itemsize = d[3], is_floating_point = d[4],
    is_signed = d[5], is_complex = d[6] or false }, Dtype)
  M.by_name[d[1]] = obj
  M.by_code[d[2]] = obj
end
for alias, name in pairs(aliases) do M.by_name[alias] = M.by_name[name] end

function M.is_dtype(v)
  return getmetatable(v) == Dtype
end

-- Accepts a dtype object or a name ("float32", "torch.float32", "long"); errors otherwise.
-- `what` names the function for the message; `level` the stack level to blame.
function M.resolve(v, what, level)
  if getmetatable(v) == Dtype then return v end
  if type(v) == "string" then
    local d = M.by_name[v:gsub("^torch%.", "")]
    if d then return d end
  end
  error(("%s: unknown dtype %s (expected torch.float32, torch.int64, ... or a name like \"float32\")")
    :format(what or "dtype", type(v) == "string" and ("'" .. v .. "'") or tostring(v)), (level or 2) + 1)
end

function M.from_code(code)
  local d = M.by_code[code]
  if not d then error("torch: libtorch returned an unsupported dtype code " .. tostring(code), 2) end
  return d
end

-- The default floating dtype (torch.get_default_dtype / set_default_dtype).
M.default_float = M.by_name.float32

return M
