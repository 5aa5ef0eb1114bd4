--[[
  torch._views — shape and conversion methods: view, reshape, expand, permute, transpose, t,
  squeeze, unsqueeze, narrow, select, flatten, split, chunk, *_as forms; to / cpu / cuda /
  float / double / long / ...; clone, contiguous, detach, copy_, fill_, zero_; item and tolist.

  Dims are 0-based and may be negative, as in PyTorch. Shapes are varargs or a table:
  x:view(-1, 4) == x:view({-1, 4}).

  Usage:  x:view(2, -1); x:permute(1, 0); x:to("cuda"); x:to(torch.float64); x:tolist()
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"
local T = require "torch._tensor"

local C, check, Ref = _C.C, _C.check, _C.Ref
local wrap = memory.wrap
local Tensor = T.Tensor
local istype = ffi.istype

local fallback = require "torch._fallback"

local M = {}
local out = _C.TensorOut()
local d_out, i_out = _C.DoubleOut(), _C.Int64Out()

local function shaped(name, cfn)
  return function(self, ...)
    T.handle(name, 1, self)
    local sizes, n = args.sizes(name, 2, ...)
    check(cfn(out, self.h, sizes, n), name)
    return wrap(out[0])
  end
end
local view_shape = shaped("view", C.lt_view)
-- x:view(torch.int32): PyTorch's view(dtype), the same bytes read as another dtype (ATen's
-- view.dtype); any other argument is a shape.
function Tensor.view(self, first, ...)
  if dtype_mod.is_dtype(first) then return fallback.call("view", self, first, ...) end
  return view_shape(self, first, ...)
end
Tensor.reshape = shaped("reshape", C.lt_reshape)
Tensor.expand = shaped("expand", C.lt_expand)
Tensor.permute = shaped("permute", C.lt_permute)
M.reshape, M.permute = Tensor.reshape, Tensor.permute

-- x:view_as(other) is x:view(other:size()); sizes_of returns (sizes, ndim): keep only the table.
local function as_form(name, cfn)
  return function(self, other)
    T.handle(name, 1, self)
    T.handle(name, 2, other)
    local sizes, n = args.sizes(name, 2, (T.sizes_of(other)))
    check(cfn(out, self.h, sizes, n), name)
    return wrap(out[0])
  end
end
Tensor.view_as = as_form("view_as", C.lt_view)
Tensor.reshape_as = as_form("reshape_as", C.lt_reshape)
Tensor.expand_as = as_form("expand_as", C.lt_expand)

function M.transpose(self, d0, d1)
  T.handle("transpose", 1, self)
  check(C.lt_transpose(out, self.h, args.int("transpose", 2, d0), args.int("transpose", 3, d1)), "transpose")
  return wrap(out[0])
end
Tensor.transpose, Tensor.swapaxes, M.swapaxes = M.transpose, M.transpose, M.transpose

function M.t(self, extra)
  T.handle("t", 1, self)
  args.no_arguments("t", extra)
  local n = T.dim_of(self)
  if n > 2 then error(("t: expects a tensor with <= 2 dimensions, but self is %dD"):format(n), 2) end
  check(C.lt_t(out, self.h), "t")   -- ATen's t, as PyTorch's (its backward node is TBackward0)
  return wrap(out[0])
end
Tensor.t = M.t

-- A second handle to the same tensor (shares storage and autograd identity).
function Tensor.alias(self)
  T.handle("alias", 1, self)
  check(C.lt_tensor_shallow_copy(out, self.h), "alias")
  return wrap(out[0])
end

-- dim: nil (every size-1 dim), a dim, or a table of dims (squeeze.dims; {} squeezes none)
function M.squeeze(self, dim)
  T.handle("squeeze", 1, self)
  if type(dim) == "table" and not T.is_tensor(dim) then return fallback.call("squeeze", self, { dim = dim }) end
  local has = dim ~= nil
  check(C.lt_squeeze(out, self.h, has and 1 or 0, has and args.int("squeeze", 2, dim) or 0), "squeeze")
  return wrap(out[0])
end
Tensor.squeeze = M.squeeze

function M.unsqueeze(self, dim)
  T.handle("unsqueeze", 1, self)
  check(C.lt_unsqueeze(out, self.h, args.int("unsqueeze", 2, dim)), "unsqueeze")
  return wrap(out[0])
end
Tensor.unsqueeze = M.unsqueeze

-- start: an integer, or a 0-dim integral tensor (narrow.Tensor)
function M.narrow(self, dim, start, length)
  T.handle("narrow", 1, self)
  if T.is_tensor(start) then
    local dt = start.dtype
    if start:dim() ~= 0 or dt.is_floating_point or dt.is_complex or dt == dtype_mod.by_name.bool then
      error("narrow: start must be an 0-dim integral Tensor.", 2)
    end
    start = start:item()
  end
  check(C.lt_narrow(out, self.h, args.int("narrow", 2, dim), args.int("narrow", 3, start),
    args.int("narrow", 4, length)), "narrow")
  return wrap(out[0])
end
Tensor.narrow = M.narrow

function M.select(self, dim, index)
  T.handle("select", 1, self)
  check(C.lt_select(out, self.h, args.int("select", 2, dim), args.int("select", 3, index)), "select")
  return wrap(out[0])
end
Tensor.select = M.select

function M.flatten(self, start_dim, end_dim)
  T.handle("flatten", 1, self)
  check(C.lt_flatten(out, self.h, args.int("flatten", 2, start_dim, 0), args.int("flatten", 3, end_dim, -1)), "flatten")
  return wrap(out[0])
end
Tensor.flatten = M.flatten

-- The most views split/chunk return: a Lua array holds at most 2^27 entries (LuaJIT's
-- LJ_MAX_ASIZE). PyTorch raises for counts its std::vector cannot hold and runs out of memory on
-- the others long before; checked before the first view is made, never by looping.
local MAX_PIECES = 2 ^ 27
local function check_pieces(fname, n, dim)
  if n > MAX_PIECES then
    error(("%s: would make %.0f views along dim %d, more than a Lua array holds (2^27)"):format(fname, n, dim), 3)
  end
end

-- split(size_or_sizes, dim=0) -> a Lua array of views
function M.split(self, split_size, dim)
  T.handle("split", 1, self)
  if T.dim_of(self) == 0 then error("split: expects at least a 1-dimensional tensor", 2) end
  dim = T.wrap_dim("split", args.int("split", 3, dim, 0), T.dim_of(self), 2)
  local size = Tensor.size(self, dim)
  local pieces, start = {}, 0
  if type(split_size) == "table" then
    local total = 0
    for i = 1, #split_size do total = total + args.int("split", 2, split_size[i]) end
    if total ~= size then
      error(("split: sizes %s sum to %d, but dim %d has size %d"):format(table.concat(split_size, ","), total, dim, size), 2)
    end
    for i = 1, #split_size do
      pieces[i] = M.narrow(self, dim, start, split_size[i])
      start = start + split_size[i]
    end
  else
    split_size = args.int("split", 2, split_size)
    if split_size <= 0 then error("split: split_size must be positive, got " .. split_size, 2) end
    check_pieces("split", math.ceil(size / split_size), dim)
    repeat  -- at least one piece, as in PyTorch (an empty dim gives one empty piece)
      local len = math.min(split_size, size - start)
      pieces[#pieces + 1] = M.narrow(self, dim, start, len)
      start = start + len
    until start >= size
  end
  return pieces
end
Tensor.split = M.split

function M.chunk(self, chunks, dim)
  T.handle("chunk", 1, self)
  chunks = args.int("chunk", 2, chunks)
  if chunks <= 0 then error("chunk: number of chunks must be positive, got " .. chunks, 2) end
  if T.dim_of(self) == 0 then error("chunk: expects at least a 1-dimensional tensor", 2) end
  dim = T.wrap_dim("chunk", args.int("chunk", 3, dim, 0), T.dim_of(self), 2)
  local size = Tensor.size(self, dim)
  if size == 0 then  -- PyTorch gives `chunks` empty pieces here
    check_pieces("chunk", chunks, dim)
    local pieces = {}
    for i = 1, chunks do pieces[i] = M.narrow(self, dim, 0, 0) end
    return pieces
  end
  local split_size = math.ceil(size / chunks)
  check_pieces("chunk", math.ceil(size / split_size), dim)
  return M.split(self, split_size, dim)
end
Tensor.chunk = M.chunk

---------------------------------------------------------------- conversions
--[[ The arguments of to(...) (PyTorch's _parse_to): a dtype, a device, another tensor (its dtype
     and device), booleans and an options table {dtype=, device=, non_blocking=, copy=,
     memory_format=}, in any order. After a dtype, device or tensor, a first boolean is
     non_blocking and a second copy (Python's positional to(device, dtype, non_blocking, copy)).
     Returns dtype, device (nil when not given) and the options table. Errors blame the caller
     of `what` (Tensor.to, Module.to). ]]
function M._parse_to(what, a, b, c)
  local dt, dev, opts, flags
  for i, v in ipairs({ a, b, c }) do
    if istype(Ref, v) then
      dt, dev = T.dtype_of(v), T.device_of(v)
    elseif dtype_mod.is_dtype(v) then
      dt = v
    elseif type(v) == "string" then
      if dtype_mod.by_name[v:gsub("^torch%.", "")] then dt = dtype_mod.resolve(v) else dev = device_mod.resolve(v, what, 3) end
    elseif device_mod.is_device(v) or type(v) == "number" then
      dev = device_mod.resolve(v, what, 3)
    elseif type(v) == "boolean" and i > 1 then
      flags = flags or {}
      flags[#flags + 1] = v
    elseif type(v) == "table" then
      opts = v
    else
      args.bad(what, i + 1, "dtype, device, Tensor or options", args.typename(v), 3)
    end
  end
  if opts then
    if opts.dtype ~= nil then dt = dtype_mod.resolve(opts.dtype, what, 3) end
    if opts.device ~= nil then dev = device_mod.resolve(opts.device, what, 3) end
  end
  if flags then
    local o = { non_blocking = flags[1], copy = flags[2] }
    for k, v in pairs(opts or {}) do o[k] = v end
    opts = o
  end
  return dt, dev, opts
end
local parse_to = M._parse_to

--[[ to(dtype) | to(device) | to(device, dtype) | to(other_tensor) |
     to({dtype=, device=, non_blocking=, copy=}) ]]
local TO_OPTIONS = { dtype = true, device = true, non_blocking = true, copy = true }
function Tensor.to(self, a, b, c)
  T.handle("to", 1, self)
  local dt, dev, opts = parse_to("to", a, b, c)
  if opts and not fallback.only(opts, TO_OPTIONS) then   -- memory_format, ...: ATen's to.dtype_layout binds them
    local kw = {}
    for k, v in pairs(opts) do kw[k] = v end
    kw.dtype, kw.device = dt or T.dtype_of(self), dev or T.device_of(self)
    return fallback.call("to", self, kw)
  end
  local dtc, devt, devi = -1, -1, -1
  if dt then dtc = dt.code end
  if dev then
    device_mod.check(dev, "to", 2)
    devt, devi = device_mod.codes(dev)
  end
  check(C.lt_to(out, self.h, dtc, devt, devi, opts and opts.non_blocking and 1 or 0, opts and opts.copy and 1 or 0), "to")
  return wrap(out[0])
end

for method, name in pairs({ float = "float32", double = "float64", half = "float16", bfloat16 = "bfloat16",
  chalf = "complex32", cfloat = "complex64", cdouble = "complex128",
  long = "int64", int = "int32", short = "int16", char = "int8", byte = "uint8", bool = "bool" }) do
  local d = dtype_mod.by_name[name]
  -- x:float({memory_format = ...}) as PyTorch's x.float(memory_format=...); other keys are errors
  Tensor[method] = function(self, opts)
    if opts ~= nil and not args.is_options(opts) then args.bad(method, 2, "keyword table", args.typename(opts)) end
    return Tensor.to(self, d, opts)
  end
end
function Tensor.cpu(self, opts)
  if opts ~= nil and not args.is_options(opts) then args.bad("cpu", 2, "keyword table", args.typename(opts)) end
  return Tensor.to(self, device_mod.cpu, opts)
end
-- cuda(device=None, non_blocking=False, memory_format=...): an index, "cuda:1", a device, or keywords
function Tensor.cuda(self, device, opts)
  if args.is_options(device) then device, opts = device.device, device end
  if opts ~= nil and not args.is_options(opts) then args.bad("cuda", 3, "keyword table", args.typename(opts)) end
  if opts ~= nil and opts.device ~= nil then
    local o = {}
    for k, v in pairs(opts) do if k ~= "device" then o[k] = v end end
    opts = o
  end
  local dev
  if device == nil or type(device) == "number" then
    dev = device_mod.new("cuda", device ~= nil and args.int("cuda", 2, device) or nil)
  else
    dev = device_mod.resolve(device, "cuda", 2)
  end
  return Tensor.to(self, dev, opts)
end

local legacy_names = { float32 = "Float", float64 = "Double", float16 = "Half", bfloat16 = "BFloat16",
  int64 = "Long", int32 = "Int", int16 = "Short", int8 = "Char", uint8 = "Byte", bool = "Bool",
  complex32 = "ComplexHalf", complex64 = "ComplexFloat", complex128 = "ComplexDouble",
  uint16 = "UInt16", uint32 = "UInt32", uint64 = "UInt64", float8_e5m2 = "Float8_e5m2",
  float8_e4m3fn = "Float8_e4m3fn", float8_e5m2fnuz = "Float8_e5m2fnuz",
  float8_e4m3fnuz = "Float8_e4m3fnuz", float8_e8m0fnu = "Float8_e8m0fnu" }
-- type() -> "torch.FloatTensor" (PyTorch's legacy name); type(dtype) converts.
function Tensor.type(self, dt)
  if dt ~= nil then return Tensor.to(self, dtype_mod.resolve(dt, "type", 2)) end
  local d = T.dtype_of(self)
  local prefix = T.device_of(self).type == "cuda" and "torch.cuda." or "torch."
  return prefix .. legacy_names[d.name] .. "Tensor"
end

-- clone() and contiguous() are fast paths; a memory_format (or any other argument) goes to ATen's
-- op, which binds it (x:clone({memory_format = torch.channels_last})).
function Tensor.clone(self, ...)
  T.handle("clone", 1, self)
  if select("#", ...) > 0 then return fallback.call("clone", self, ...) end
  check(C.lt_clone(out, self.h), "clone")
  return wrap(out[0])
end

function Tensor.contiguous(self, ...)
  T.handle("contiguous", 1, self)
  if select("#", ...) > 0 then return fallback.call("contiguous", self, ...) end
  check(C.lt_contiguous(out, self.h), "contiguous")
  return wrap(out[0])
end

-- PyTorch's memory formats; ltorch names them by string (torch._dispatch_values packs them).
M.contiguous_format, M.preserve_format = "contiguous_format", "preserve_format"
M.channels_last, M.channels_last_3d = "channels_last", "channels_last_3d"

function Tensor.detach(self, extra)
  args.no_arguments("detach", extra)
  T.handle("detach", 1, self)
  check(C.lt_detach(out, self.h), "detach")
  return wrap(out[0])
end

function Tensor.copy_(self, src)
  T.handle("copy_", 1, self)
  T.handle("copy_", 2, src)
  check(C.lt_copy_(self.h, src.h), "copy_")
  return self
end

function Tensor.fill_(self, value)
  T.handle("fill_", 1, self)
  local v, kind = args.scalar(value)
  if v == nil then args.bad("fill_", 2, "number or boolean", args.typename(value)) end
  check(C.lt_fill_(self.h, v, kind), "fill_")
  return self
end

function Tensor.zero_(self, extra)
  args.no_arguments("zero_", extra)
  T.handle("zero_", 1, self)
  check(C.lt_zero_(self.h), "zero_")
  return self
end
M.clone, M.detach = Tensor.clone, Tensor.detach

---------------------------------------------------------------- values out
-- item(): a Lua number (boolean for bool tensors); the tensor must hold exactly one element.
-- A uint64 is read as a double, as tolist() reads it: an int64 read would wrap values >= 2^63.
function Tensor.item(self)
  T.handle("item", 1, self)
  local dt = T.dtype_of(self)
  if dt.is_complex then
    error("item: a complex tensor has no Lua number form (Lua has no complex type); not supported yet", 2)
  end
  if dt.is_floating_point or dt.name == "uint64" then
    check(C.lt_tensor_item_double(self.h, d_out), "item")
    return d_out[0]
  end
  check(C.lt_tensor_item_int64(self.h, i_out), "item")
  if dt.name == "bool" then return i_out[0] ~= 0 end
  return tonumber(i_out[0])
end

local function build(buf, sizes, depth, pos, as_bool)
  local n = sizes[depth]
  local t = {}
  if depth == #sizes then
    for i = 1, n do
      local v = tonumber(buf[pos + i - 1])
      if as_bool then v = v ~= 0 end
      t[i] = v
    end
    return t, pos + n
  end
  for i = 1, n do t[i], pos = build(buf, sizes, depth + 1, pos, as_bool) end
  return t, pos
end

-- The values as nested Lua arrays (1-based tables); a 0-dim tensor gives its item().
-- Also the bulk read used by printing: flat = true returns the flat buffer and the sizes (a
-- uint64_t buffer for uint64: a double cannot hold every value, 2^64 - 1 included).
function Tensor.tolist(self, flat)
  T.handle("tolist", 1, self)
  local sizes, ndim = T.sizes_of(self)
  if ndim == 0 and not flat then return Tensor.item(self) end
  local dt = T.dtype_of(self)
  local numel = 1
  for i = 1, ndim do numel = numel * sizes[i] end
  local buf, code
  if dt.is_complex then
    error("tolist: a complex tensor has no Lua number form (Lua has no complex type); not supported yet", 2)
  elseif dt.name == "uint64" and flat then   -- printing: the exact values, as int64 bits read unsigned
    buf, code = ffi.new("uint64_t[?]", math.max(numel, 1)), 4
  elseif dt.is_floating_point or dt.name == "uint64" then
    buf, code = ffi.new("double[?]", math.max(numel, 1)), 7
  else
    buf, code = ffi.new("int64_t[?]", math.max(numel, 1)), 4
  end
  check(C.lt_tensor_copy_to_buffer(self.h, code, buf, numel), "tolist")
  if flat then return buf, sizes, numel end   -- printing: a zero tensor's zeros, as PyTorch prints it
  if numel > 0 and fallback.call("_is_zerotensor", self) then
    error("tolist() shouldn't be called on a tensor with unallocated storage", 2)
  end
  return (build(buf, sizes, 1, 0, dt.name == "bool"))
end

return M
