--[[
  torch._args — argument parsing shared by every public function: shapes given as varargs or a
  table (`torch.zeros(2, 3)`, `torch.zeros({2, 3})`, `x:view(x:size())`), the trailing keyword
  table (`{dtype = torch.float64, device = "cpu", requires_grad = true}`), dims lists, scalar
  kinds, and the one error format for misuse:
      bad argument #2 to 'view' (number expected, got string)

  A Lua number becomes a libtorch scalar the way a Python one does: an integral value is an int
  (so int64 tensors stay int64: `labels + 1`), anything else a float. Lua cannot tell 1.0 from
  1; pass a dtype when it matters.

  Usage (internal):  local args = require "torch._args"
]]
local ffi = require "ffi"
local _C = require "torch._C"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"

local M = {}

local floor, type, select = math.floor, type, select
local MAX_DIMS = 64

function M.bad(fname, n, expected, got, level)
  error(("bad argument #%d to '%s' (%s expected, got %s)"):format(n, fname, expected, got), (level or 2) + 1)
end

-- Python's "f() takes no arguments (n given)", for methods that take none: raised when `extra`
-- (the first argument past self) is not nil, so a keyword table is never silently dropped.
function M.no_arguments(fname, extra, level)
  if extra ~= nil then error(("%s() takes no arguments (got %s)"):format(fname, M.typename(extra)), (level or 2) + 1) end
end

function M.typename(v)
  local t = type(v)
  if t == "cdata" and ffi.istype(_C.Ref, v) then return "Tensor" end
  if t == "table" and dtype_mod.is_dtype(v) then return "dtype" end
  return t
end

function M.is_int(v)
  return type(v) == "number" and floor(v) == v and v > -2 ^ 63 and v < 2 ^ 63
end

-- Scalar kind code for a Lua value (lt_scalar_kind): 0 float, 1 int, 2 bool.
function M.scalar(v)
  local t = type(v)
  if t == "number" then
    if floor(v) == v and v > -2 ^ 63 and v < 2 ^ 63 then return v, 1 end
    return v, 0
  elseif t == "boolean" then
    return v and 1 or 0, 2
  end
  return nil
end

-- Is `v` a keyword-options table (string keys, no array part)?
function M.is_options(v)
  return type(v) == "table" and getmetatable(v) == nil and v[1] == nil and next(v) ~= nil
end

local function check_int(fname, pos, v, level)
  if not M.is_int(v) then
    M.bad(fname, pos, "integer", M.typename(v) == "number" and tostring(v) or M.typename(v), level + 1)
  end
  return v
end

--[[ pack(...) -> a table of the arguments, and their count (select("#", ...)). Use it instead of
     `{ ... }` on hot paths: LuaJIT 2.1 records that constructor with a guard that fails on every
     later run once 4 or more values are given (LuaJIT issue #606), and each failure records
     another side trace at the same place until LuaJIT gives up and interprets the call, many
     times slower (docs/PERFORMANCE.md, optimisation 9). Up to 8 values go through a fixed-size
     constructor, which records plain stores. Nil arguments leave holes, as in `{ ... }`: read up
     to the count, not to #t. ]]
function M.pack(...)
  local n = select("#", ...)
  if n <= 8 then
    local a1, a2, a3, a4, a5, a6, a7, a8 = ...
    return { a1, a2, a3, a4, a5, a6, a7, a8 }, n
  end
  return { ... }, n
end

--[[ Reads a shape from varargs starting at argument position `first`:
     (2, 3), ({2, 3}), or (torch.Size). A trailing options table is returned separately.
     Returns int64 array, ndim, options (or nil). ]]
function M.sizes(fname, first, ...)
  local n = select("#", ...)
  local opts = nil
  local last = select(n > 0 and n or 1, ...)
  if n > 0 and (M.is_options(last) or (type(last) == "table" and next(last) == nil and n > 1)) then
    opts, n = last, n - 1
  end
  local list
  local a1 = ...
  if n == 1 and type(a1) == "table" then
    list = a1
    n = #list
  elseif n >= 1 then
    list = M.pack(...)
  else
    list = {}
  end
  if n > MAX_DIMS then error(("%s: too many dimensions (%d)"):format(fname, n), 3) end
  local arr = _C.Int64Array(n > 0 and n or 1)
  for i = 1, n do
    local v = list[i]
    if not M.is_int(v) then
      M.bad(fname, first + (a1 == list and 0 or i - 1), "sequence of integers",
        (type(v) == "number" and tostring(v) or M.typename(v)) .. " at position " .. i, 3)
    end
    arr[i - 1] = v
  end
  return arr, n, opts
end

-- A list of dims from a number or a table of numbers (nil = all dims). Returns array, count.
function M.dims(fname, pos, v)
  if v == nil then return nil, 0 end
  if type(v) == "number" then
    local arr = _C.Int64Array(1)
    arr[0] = check_int(fname, pos, v, 3)
    return arr, 1
  end
  if type(v) ~= "table" then M.bad(fname, pos, "dim (integer or table of integers)", M.typename(v), 3) end
  local arr = _C.Int64Array(#v > 0 and #v or 1)
  for i = 1, #v do arr[i - 1] = check_int(fname, pos, v[i], 3) end
  return arr, #v
end

function M.int(fname, pos, v, default)
  if v == nil and default ~= nil then return default end
  if not M.is_int(v) then
    M.bad(fname, pos, "integer", type(v) == "number" and tostring(v) or M.typename(v), 3)
  end
  return v
end

function M.number(fname, pos, v, default)
  if v == nil and default ~= nil then return default end
  if type(v) ~= "number" then M.bad(fname, pos, "number", M.typename(v), 3) end
  return v
end

function M.boolean(fname, pos, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then M.bad(fname, pos, "boolean", M.typename(v), 3) end
  return v
end

function M.opt_table(fname, pos, v)
  if v == nil then return nil end
  if type(v) ~= "table" or getmetatable(v) ~= nil then M.bad(fname, pos, "options table", M.typename(v), 3) end
  return v
end

local known_options = { dtype = true, device = true, requires_grad = true, pin_memory = true }

--[[ Fills an lt_options struct from a keyword table. `default_dtype` is used when the table
     has none. Unknown keys are an error (a typo must not be silently ignored).
     Returns the struct and the resolved dtype and device objects. ]]
function M.options(fname, opts, default_dtype)
  local o = _C.Options()
  local dt, dev = default_dtype or dtype_mod.default_float, device_mod.cpu
  local rg = false
  if opts ~= nil then
    for k in pairs(opts) do
      if not known_options[k] then
        error(("%s: unknown option '%s' (expected dtype, device, requires_grad)"):format(fname, tostring(k)), 3)
      end
    end
    if opts.dtype ~= nil then dt = dtype_mod.resolve(opts.dtype, fname, 3) end
    if opts.device ~= nil then dev = device_mod.check(device_mod.resolve(opts.device, fname, 3), fname, 3) end
    if opts.requires_grad ~= nil then
      if type(opts.requires_grad) ~= "boolean" then
        error(("%s: option requires_grad must be a boolean, got %s"):format(fname, M.typename(opts.requires_grad)), 3)
      end
      rg = opts.requires_grad
      if rg and not (dt.is_floating_point or dt.is_complex) then
        error(("%s: only tensors of floating point dtype can require gradients, got %s"):format(fname, tostring(dt)), 3)
      end
    end
  end
  o.dtype = dt.code
  o.device_type, o.device_index = device_mod.codes(dev)
  o.requires_grad = rg and 1 or 0
  o.pin_memory = 0
  if opts ~= nil and opts.pin_memory ~= nil then
    if type(opts.pin_memory) ~= "boolean" then
      error(("%s: option pin_memory must be a boolean, got %s"):format(fname, M.typename(opts.pin_memory)), 3)
    end
    o.pin_memory = opts.pin_memory and 1 or 0
  end
  return o, dt, dev
end

return M
