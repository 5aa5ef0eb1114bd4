--[[
  torch._tensor — the Tensor type: the FFI metatype of lt_tensor_ref, its metadata methods and
  properties, and the torch.Size type.

  A tensor is a cdata; `x:method(...)` finds methods in `Tensor` (the table other modules fill:
  math, views, autograd...), `x.prop` reads a property (shape, dtype, device, grad,
  requires_grad, is_leaf, grad_fn, T, ndim, data, is_cuda), `x[i]`/`x[{...}]` indexes (see
  torch._indexing). Operators + - * / % ^ unary- and .. (cat along dim 0) are wired to the math
  module through `operators`; # is size(0). Comparisons are methods (x:lt(y)): Lua's < must
  return a boolean, so `x < y` raises an error saying so.

  torch.Size is a plain 1-based Lua array with a metatable: `x:size()` -> torch.Size({2, 3}),
  `x:size(0)` -> 2 (dims are 0-based, Lua tables are 1-based).

  Usage (internal):  local T = require "torch._tensor"; T.Tensor.foo = function(self) ... end
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"
local args = require "torch._args"

local C, check, Ref, state = _C.C, _C.check, _C.Ref, _C.state
local wrap = memory.wrap

local M = {}

-- Tables that persist across module reloads (the metatype can be set only once per state).
local Tensor = state.methods or {}
local getters = state.getters or {}
local setters = state.setters or {}
local operators = state.operators or {}
state.methods, state.getters, state.setters, state.operators = Tensor, getters, setters, operators
M.Tensor, M.getters, M.setters, M.operators = Tensor, getters, setters, operators

local out = _C.TensorOut()
local int_a, int_b = _C.IntOut(), _C.IntOut()
local i64 = _C.Int64Out()
local dims_buf = _C.Int64Array(64)

function M.is_tensor(v) return ffi.istype(Ref, v) end
local is_tensor = M.is_tensor

-- Checks that argument `pos` of `fname` is a live tensor; returns its handle.
function M.handle(fname, pos, v)
  if not ffi.istype(Ref, v) then args.bad(fname, pos, "Tensor", args.typename(v), 3) end
  local h = v.h
  if h == nil then
    error(fname .. ": tensor was freed (x:free() or a finished torch.scope) and can no longer be used", 3)
  end
  return h
end

---------------------------------------------------------------- torch.Size
local Size = {}
Size.__index = Size
Size.__tostring = function(s)
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return "torch.Size([" .. table.concat(parts, ", ") .. "])"
end
Size.__eq = function(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
function Size.numel(s)
  local n = 1
  for i = 1, #s do n = n * s[i] end
  return n
end
M.Size = Size

function M.new_size(list)
  return setmetatable(list, Size)
end

---------------------------------------------------------------- metadata
--[[ Reads a tensor's sizes or strides (read = C.lt_tensor_sizes or C.lt_tensor_strides) into a
     Lua array, or with `dim` only that entry (no table: the common x:size(-1)), nil when dim is
     not an integer in range; also returns the number of dims. Reading the buffer allocates in
     the interpreter (and filling a table always does), an allocation can run a finalizer, and a
     finalizer may read another tensor's sizes: a read that starts while another is under way
     uses its own buffer instead of the shared one (else it would overwrite dims the outer read
     has not copied yet, a silent wrong shape). ]]
local reading_dims = false
local function read_dims(read, self, what, dim)
  local buf, count = dims_buf, i64
  local outer = reading_dims
  if outer then buf, count = _C.Int64Array(64), _C.Int64Out() end
  reading_dims = true
  local status = read(self.h, buf, 64, count)
  if status ~= 0 then
    reading_dims = outer
    check(status, what, 3)
  end
  local n = tonumber(count[0])
  local s
  if dim == nil then
    s = {}
    for i = 1, n do s[i] = tonumber(buf[i - 1]) end
  elseif args.is_int(dim) and dim >= -n and dim < n then
    s = tonumber(buf[dim < 0 and dim + n or dim])
  end
  reading_dims = outer
  return s, n
end

local function sizes_of(self) return read_dims(C.lt_tensor_sizes, self, "size") end
M.sizes_of = sizes_of

local function dim_of(self)
  check(C.lt_tensor_dim(self.h, i64), "dim", 2)
  return tonumber(i64[0])
end
M.dim_of = dim_of

-- Wraps a possibly negative dim into [0, ndim), with PyTorch's error for out-of-range dims.
function M.wrap_dim(fname, dim, ndim, level)
  local lo, hi = -math.max(ndim, 1), math.max(ndim, 1) - 1
  if not args.is_int(dim) then
    error(("%s: dim must be an integer, got %s"):format(fname,
      type(dim) == "number" and tostring(dim) or args.typename(dim)), (level or 2) + 1)
  end
  if dim < lo or dim > hi then
    error(("%s: dimension out of range (expected to be in range of [%d, %d], but got %s)")
      :format(fname, lo, hi, tostring(dim)), (level or 2) + 1)
  end
  return dim < 0 and dim + math.max(ndim, 1) or dim
end

-- A 0-dim tensor has no dims to ask about (wrap_dim accepts 0 and -1 there, as reductions do).
local function no_dims(fname, dim, n)
  if n == 0 then
    error(("%s: dimension specified as %s but tensor has no dimensions"):format(fname, tostring(dim)), 3)
  end
end

function Tensor.size(self, dim)
  local s, n = read_dims(C.lt_tensor_sizes, self, "size", dim)
  if dim == nil then return M.new_size(s) end
  if s ~= nil then return s end
  no_dims("size", dim, n)
  M.wrap_dim("size", dim, n, 2)   -- raises: dim is no integer in range
end

function Tensor.stride(self, dim)
  local s, n = read_dims(C.lt_tensor_strides, self, "stride", dim)
  if dim == nil or s ~= nil then return s end
  no_dims("stride", dim, n)
  M.wrap_dim("stride", dim, n, 2)   -- raises: dim is no integer in range
end

function Tensor.dim(self, extra) if extra ~= nil then args.no_arguments("dim", extra) end return dim_of(self) end
Tensor.ndimension = Tensor.dim

function Tensor.numel(self, extra)
  if extra ~= nil then args.no_arguments("numel", extra) end
  check(C.lt_tensor_numel(self.h, i64), "numel")
  return tonumber(i64[0])
end
Tensor.nelement = Tensor.numel

local function dtype_of(self)
  check(C.lt_tensor_dtype(self.h, int_a), "dtype", 2)
  return dtype_mod.from_code(int_a[0])
end
M.dtype_of = dtype_of

local function device_of(self)
  check(C.lt_tensor_device(self.h, int_a, int_b), "device", 2)
  return device_mod.from_codes(int_a[0], int_b[0])
end
M.device_of = device_of

function Tensor.element_size(self, extra) args.no_arguments("element_size", extra); return dtype_of(self).itemsize end
function Tensor.is_floating_point(self, extra)
  args.no_arguments("is_floating_point", extra)
  return dtype_of(self).is_floating_point
end
function Tensor.is_complex(self, extra) args.no_arguments("is_complex", extra); return dtype_of(self).is_complex end

-- Dims from innermost to outermost stride in PyTorch's channels-last layouts (0-based).
local CHANNELS_LAST_ORDER = { channels_last = { 4, { 1, 3, 2, 0 } }, channels_last_3d = { 5, { 1, 4, 3, 2, 0 } } }

--[[ is_contiguous() or is_contiguous({memory_format = "channels_last" | "channels_last_3d" |
     "contiguous_format"}): a channels-last tensor is contiguous in that order (c10's
     compute_channels_last_contiguous: dims of size 1 are skipped). ]]
function Tensor.is_contiguous(self, opts)
  local format = opts
  if type(opts) == "table" then
    for k in pairs(opts) do
      if k ~= "memory_format" then error(("is_contiguous: unexpected keyword argument '%s'"):format(tostring(k)), 2) end
    end
    format = opts.memory_format
  end
  if format ~= nil and format ~= "contiguous_format" then
    local layout = CHANNELS_LAST_ORDER[format]
    if layout == nil then
      error(("is_contiguous: memory_format must be 'contiguous_format', 'channels_last' or 'channels_last_3d', got %s")
        :format(tostring(format)), 2)
    end
    local size, stride = Tensor.size(self), Tensor.stride(self)
    if #size ~= layout[1] then return false end
    local expected = 1
    for _, d in ipairs(layout[2]) do
      if size[d + 1] ~= 1 then
        if stride[d + 1] ~= expected then return false end
        expected = expected * size[d + 1]
      end
    end
    return true
  end
  check(C.lt_tensor_is_contiguous(self.h, int_a), "is_contiguous")
  return int_a[0] == 1
end

function Tensor.storage_offset(self, extra)
  args.no_arguments("storage_offset", extra)
  check(C.lt_tensor_storage_offset(self.h, i64), "storage_offset")
  return tonumber(i64[0])
end

function Tensor.data_ptr(self, extra)
  args.no_arguments("data_ptr", extra)
  local p = ffi.new("void*[1]")
  check(C.lt_tensor_data_ptr(self.h, p), "data_ptr")
  return p[0]
end

-- True when both are handles to the very same tensor (PyTorch's `a is b` on tensors).
function Tensor.is_same(self, other)
  M.handle("is_same", 2, other)
  check(C.lt_tensor_same(self.h, other.h, int_a), "is_same")
  return int_a[0] == 1
end

function Tensor.free(self)
  if not is_tensor(self) then args.bad("free", 1, "Tensor", args.typename(self), 1) end
  memory.free(self)
end

-- True once x:free() (or the end of a torch.scope) released the handle.
function Tensor.is_freed(self) return self.h == nil end

---------------------------------------------------------------- properties
getters.shape = function(self) return Tensor.size(self) end
getters.ndim = dim_of
getters.dtype = dtype_of
getters.device = device_of
getters.is_cuda = function(self) return device_of(self).type == "cuda" end
getters.itemsize = function(self) return dtype_of(self).itemsize end
getters.T = function(self)
  local n = dim_of(self)
  if n < 2 then return self end
  local perm = _C.Int64Array(n)
  for i = 0, n - 1 do perm[i] = n - 1 - i end
  check(C.lt_permute(out, self.h, perm, n), "T")
  return wrap(out[0])
end
getters.data = function(self)
  check(C.lt_detach(out, self.h), "data")
  return wrap(out[0])
end
-- x.data = y replaces x's contents (shape, dtype, device) by y's; x stays the same tensor.
setters.data = function(self, v)
  if not ffi.istype(Ref, v) then error("data must be a Tensor, got " .. args.typename(v), 3) end
  check(C.lt_tensor_set_data(self.h, v.h), "data", 3)
end

---------------------------------------------------------------- the metatype
local function index_key(k)
  local tk = type(k)
  return tk == "number" or tk == "table" or tk == "boolean" or (tk == "cdata" and ffi.istype(Ref, k))
end

local mt = {}
local floor = math.floor
mt.__index = function(self, k)
  -- x[i] with an integer i is x:select(0, i) (Python's applySelect): one direct call instead of
  -- the general indexing path. Anything select rejects (0-d tensor, out of range) goes on to the
  -- general path, which raises PyTorch's IndexError message.
  if type(k) == "number" and floor(k) == k and self.h ~= nil and C.lt_select(out, self.h, 0, k) == 0 then
    return wrap(out[0])
  end
  local m = Tensor[k]
  if m ~= nil then return m end
  local g = getters[k]
  if g ~= nil then return g(self) end
  if index_key(k) then return state.index_get(self, k) end
  -- The generated op surface (torch._dispatch) supplies every other ATen method on first use.
  local generated = type(k) == "string" and state.generated_method and state.generated_method(k)
  if generated then return generated end
  error(("Tensor has no attribute or method '%s'"):format(tostring(k)), 2)
end
mt.__newindex = function(self, k, v)
  local s = setters[k]
  if s ~= nil then return s(self, v) end
  if index_key(k) then return state.index_set(self, k, v) end
  error(("cannot set attribute '%s' of a Tensor"):format(tostring(k)), 2)
end
mt.__tostring = function(self) return state.repr(self) end
mt.__len = function(self)
  local s, n = sizes_of(self)
  if n == 0 then error("len() of a 0-d tensor", 2) end
  return s[1]
end
mt.__add = function(a, b) return operators.add(a, b) end
mt.__sub = function(a, b) return operators.sub(a, b) end
mt.__mul = function(a, b) return operators.mul(a, b) end
mt.__div = function(a, b) return operators.div(a, b) end
mt.__mod = function(a, b) return operators.remainder(a, b) end
mt.__pow = function(a, b) return operators.pow(a, b) end
mt.__unm = function(a) return operators.neg(a) end
mt.__concat = function(a, b) return operators.concat(a, b) end
local function no_ordering()
  error("tensors cannot be ordered with < <= > >= (Lua requires a boolean); use x:lt(y), x:le(y), x:gt(y), x:ge(y)", 2)
end
mt.__lt = no_ordering
mt.__le = no_ordering
-- Python's "'Tensor' object is not callable", with the usual cause: an attribute called as a method.
mt.__call = function()
  error("'Tensor' object is not callable (attributes such as x.mT, x.T, x.H, x.real, x.nbytes are read "
    .. "without a call: write x.mT, not x:mT())", 2)
end

if not state.metatype_set then
  ffi.metatype(Ref, mt)
  state.metatype_set = true
end

return M
