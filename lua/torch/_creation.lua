--[[
  torch._creation — making tensors: torch.tensor from nested Lua tables, the factories (zeros,
  ones, full, empty, eye, arange, range, linspace, rand, randn, randint, randperm,
  scalar_tensor), the *_like forms, and torch.from_buffer over memory that already exists.

  Shapes are varargs or a table: torch.zeros(2, 3) == torch.zeros({2, 3}); a trailing table of
  options sets dtype, device, requires_grad. dtype inference follows PyTorch: integral Lua
  numbers make int64, any fractional value the default float dtype, booleans bool (Lua has one
  number type, so `torch.tensor({1, 2})` is int64 — write {dtype = torch.float32} for floats).

  torch.from_buffer(buf, {dtype =, shape =, offset =}) wraps a cdata buffer (an ffi.new array or
  a pointer into C memory) without copying; the buffer object is kept referenced until the last
  tensor using it is gone. A Lua string is immutable, so its bytes are copied once.

  Usage:  local x = torch.tensor({{1, 2}, {3, 4}}, {dtype = torch.float32})
          local y = torch.randn(4, 8, {requires_grad = true})
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local P = require "torch._pysig"
local dtype_mod = require "torch.dtype"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"

local C, check = _C.C, _C.check
local wrap = memory.wrap
local Tensor = T.Tensor

local M = {}
local out = _C.TensorOut()
local int64, float64, bool_dtype = dtype_mod.by_name.int64, dtype_mod.by_name.float64, dtype_mod.by_name.bool
local NO_KWARGS = {}

---------------------------------------------------------------- torch.tensor
-- Walks nested tables: returns shape (list) after checking every row is rectangular.
local function infer_shape(data)
  local shape = {}
  local v = data
  while type(v) == "table" and not T.is_tensor(v) do
    shape[#shape + 1] = #v
    if #v == 0 then
      -- {} is an empty list; a table of keys only (a keyword table, a dict) is no sequence at all
      local k = next(v)
      if k ~= nil then
        error(("tensor: expected a list of numbers (keys 1..n), got a table with key '%s'"):format(tostring(k)), 3)
      end
      break
    end
    v = v[1]
  end
  return shape
end

local function flatten(data, shape, depth, buf, pos, path, info)
  local n = shape[depth]
  if type(data) ~= "table" or #data ~= n then
    local got = type(data) == "table" and ("length " .. #data) or args.typename(data)
    error(("tensor: expected a sequence of length %d at %s, got %s"):format(n, path, got), 0)
  end
  for i = 1, n do
    local v = data[i]
    if depth < #shape then
      pos = flatten(v, shape, depth + 1, buf, pos, path .. "[" .. i .. "]", info)
    else
      local tv = type(v)
      if tv == "number" then
        if v ~= math.floor(v) then info.fractional = true end
        if v ~= v or v == math.huge or v == -math.huge then info.fractional = true end
        info.number = true
        buf[pos] = v
      elseif tv == "boolean" then
        info.boolean = true
        buf[pos] = v and 1 or 0
      else
        error(("tensor: expected a number or boolean at %s[%d], got %s"):format(path, i, args.typename(v)), 0)
      end
      pos = pos + 1
    end
  end
  return pos
end

function M.tensor(data, opts)
  args.opt_table("tensor", 2, opts)
  if T.is_tensor(data) then
    for k in pairs(opts or {}) do
      if k ~= "dtype" and k ~= "device" and k ~= "requires_grad" and k ~= "pin_memory" then
        error(("tensor: unknown option '%s' (expected dtype, device, requires_grad)"):format(tostring(k)), 2)
      end
    end
    local d = opts and opts.dtype and dtype_mod.resolve(opts.dtype, "tensor", 2)
    local r = Tensor.to(Tensor.detach(data), { dtype = d, device = opts and opts.device, copy = true })
    if opts and opts.pin_memory then r = r:pin_memory() end
    if opts and opts.requires_grad then r.requires_grad = true end
    return r
  end
  local td = type(data)
  if td == "number" or td == "boolean" then
    local value, kind = args.scalar(data)
    local default = kind == 2 and bool_dtype or (kind == 1 and int64 or dtype_mod.default_float)
    local o = args.options("tensor", opts, default)
    check(C.lt_scalar_tensor(out, value, kind, o), "tensor")
    return wrap(out[0])
  end
  if td ~= "table" then args.bad("tensor", 1, "table, number, boolean or Tensor", args.typename(data)) end
  local shape = infer_shape(data)
  local numel = 1
  for i = 1, #shape do numel = numel * shape[i] end
  local buf = ffi.new("double[?]", numel > 0 and numel or 1)
  local info = {}
  if numel > 0 then
    local ok, err = pcall(flatten, data, shape, 1, buf, 0, "data", info)
    if not ok then error(err, 2) end
  end
  local default
  if info.fractional then default = dtype_mod.default_float
  elseif info.number then default = int64
  elseif info.boolean then default = bool_dtype
  else default = dtype_mod.default_float end
  local o = args.options("tensor", opts, default)
  local sizes = _C.Int64Array(#shape > 0 and #shape or 1)
  for i = 1, #shape do sizes[i - 1] = shape[i] end
  check(C.lt_from_data(out, buf, float64.code, sizes, #shape, o), "tensor")
  return wrap(out[0])
end

---------------------------------------------------------------- factories
-- PyTorch's size= keyword (torch.zeros(size=(2, 3))): a trailing table's `size` as the sizes.
local function size_keyword(name, ...)
  local n = select("#", ...)
  local kw = n > 0 and select(n, ...) or nil
  if not (args.is_options(kw) and kw.size ~= nil) then return ... end
  if n > 1 then P.fail("%s: got multiple values for argument 'size'", name) end
  local rest = {}
  for k, v in pairs(kw) do if k ~= "size" then rest[k] = v end end
  return kw.size, rest
end

local function sized_factory(name, cfn, default_dtype)
  return function(...)
    local sizes, n, opts = args.sizes(name, 1, size_keyword(name, ...))
    local o = args.options(name, opts, default_dtype and dtype_mod.by_name[default_dtype])
    check(cfn(out, sizes, n, o), name)
    return wrap(out[0])
  end
end

M.zeros = sized_factory("zeros", C.lt_zeros)
M.ones = sized_factory("ones", C.lt_ones)
M.empty = sized_factory("empty", C.lt_empty)
M.rand = sized_factory("rand", C.lt_rand)
M.randn = sized_factory("randn", C.lt_randn)

local FACTORY_KW = "*, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False"
local FULL = P.signature("full", "size, fill_value, " .. FACTORY_KW)

local function full(size, value, opts)
  local sizes, n = args.sizes("full", 1, size)
  local v, kind = args.scalar(value)
  if v == nil then args.bad("full", 2, "number or boolean", args.typename(value)) end
  local default = kind == 2 and bool_dtype or (kind == 1 and int64 or dtype_mod.default_float)
  local o = args.options("full", args.opt_table("full", 3, opts), default)
  check(C.lt_full(out, sizes, n, v, kind, o), "full")
  return wrap(out[0])
end

-- full(size, fill_value, *, dtype=, device=, requires_grad=): positional, keyword or mixed.
function M.full(...) return full(P.lua_form(FULL, P.bind_given(FULL, ...), 2)) end

function M.scalar_tensor(value, opts)
  local v, kind = args.scalar(value)
  if v == nil then args.bad("scalar_tensor", 1, "number or boolean", args.typename(value)) end
  local o = args.options("scalar_tensor", args.opt_table("scalar_tensor", 2, opts))
  check(C.lt_scalar_tensor(out, v, kind, o), "scalar_tensor")
  return wrap(out[0])
end

local function eye(n, m, opts)
  if type(m) == "table" then m, opts = nil, m end
  n = args.int("eye", 1, n)
  m = args.int("eye", 2, m, n)
  local o = args.options("eye", args.opt_table("eye", 3, opts))
  check(C.lt_eye(out, n, m, o), "eye")
  return wrap(out[0])
end

local EYE = P.signature("eye", "n, m=None, " .. FACTORY_KW)
-- eye(n, m=None, *, dtype=, ...): positional, keyword or mixed.
function M.eye(...) return eye(P.lua_form(EYE, P.bind_given(EYE, ...), 2)) end

--[[ arange's start, end, step given by keyword, bound as PyTorch's three overloads bind them:
     arange(end), arange(start, end), arange(start, end, step). Returns the numbers in order and
     the other options. ]]
local function arange_keywords(nums, opts)
  local rest = {}
  for k, v in pairs(opts) do if k ~= "start" and k ~= "end" and k ~= "step" then rest[k] = v end end
  local start, stop, step, n = opts.start, opts["end"], opts.step, #nums
  local bound
  if n == 0 and stop ~= nil and (start ~= nil or step == nil) then bound = { start or 0, stop, step or 1 }
  elseif n == 1 and stop ~= nil and start == nil then bound = { nums[1], stop, step or 1 }
  elseif n == 2 and step ~= nil and start == nil and stop == nil then bound = { nums[1], nums[2], step } end
  if bound == nil then
    local given = {}
    for i = 1, n do given[i] = args.typename(nums[i]) end
    for _, k in ipairs({ "start", "end", "step" }) do if opts[k] ~= nil then given[#given + 1] = k .. "=" .. args.typename(opts[k]) end end
    P.fail("arange: invalid combination of arguments (%s): expected arange(end), arange(start, end) or "
      .. "arange(start, end, step), by position or keyword", table.concat(given, ", "))
  end
  return bound, rest
end
-- arange(end) | arange(start, end[, step]), each optionally followed by options.
function M.arange(a, b, c, d)
  local nums, opts = {}, nil
  for _, v in ipairs({ a, b, c, d }) do
    if type(v) == "table" then opts = v break end
    nums[#nums + 1] = v
  end
  if opts ~= nil and (opts.start ~= nil or opts["end"] ~= nil or opts.step ~= nil) then
    nums, opts = arange_keywords(nums, opts)
  end
  if #nums == 0 then args.number("arange", 1, nil) end
  for i = 1, #nums do args.number("arange", i, nums[i]) end   -- positions as the user wrote them
  local start, stop, step
  if #nums == 1 then start, stop, step = 0, nums[1], 1
  elseif #nums == 2 then start, stop, step = nums[1], nums[2], 1
  else start, stop, step = nums[1], nums[2], nums[3] end
  if step == 0 then error("arange: step must be nonzero", 2) end
  local all_int = args.is_int(start) and args.is_int(stop) and args.is_int(step)
  local o = args.options("arange", opts, all_int and int64 or dtype_mod.default_float)
  check(C.lt_arange(out, start, stop, step, o), "arange")
  return wrap(out[0])
end

-- range(start, end[, step], {dtype= | out=}) is the generated op, after one guard. libtorch's
-- range_out converts start, end and step to int64 for every integer dtype and computes the length
-- as (end - start) / step: a step in (-1, 1) that passes its own checks (start and end finite
-- and within int64, step nonzero, bounds in the step's direction) is an integer division by
-- zero, a SIGFPE. PyTorch 2.11 too:
--   python3 -c 'import torch; torch.range(0, 3, 0.5, dtype=torch.int32)'  -> SIGFPE
-- (arange is safe: lt_arange truncates an integer dtype's step first, and 0 is an error.)
local function range_divides_by_zero(start, stop, step, dt)
  if type(step) ~= "number" or not (step > -1 and step < 1 and step ~= 0) then return false end
  if type(start) == "boolean" then start = start and 1 or 0 end
  if type(stop) == "boolean" then stop = stop and 1 or 0 end
  if type(start) ~= "number" or type(stop) ~= "number" then return false end
  if not (math.abs(start) <= 2 ^ 63 and math.abs(stop) <= 2 ^ 63) then return false end  -- NaN too
  if not ((step > 0 and stop >= start) or (step < 0 and stop <= start)) then return false end
  return dt ~= nil and not (dt.is_floating_point or dt.is_complex or dt == bool_dtype)
end

-- A dtype argument as the op binds a ScalarType: a dtype, its name or its code; nil otherwise.
local function dtype_arg(v)
  if dtype_mod.is_dtype(v) then return v end
  if type(v) == "string" then return (dtype_mod.by_name[v:gsub("^torch%.", "")]) end
  if type(v) == "number" then return dtype_mod.by_code[v] end
end

local generated_range
function M.range(...)
  local a, n = args.pack(...)
  while n > 0 and a[n] == nil do n = n - 1 end
  local kw = NO_KWARGS
  if n > 0 and args.is_options(a[n]) then kw, n = a[n], n - 1 end
  -- each argument as the overloads bind it: positional first, then by keyword, then the default
  local start, stop, step = a[1], a[2], a[3]
  if n < 1 then start = kw.start end
  if n < 2 then stop = kw["end"] end
  if n < 3 then step = kw.step == nil and 1 or kw.step end
  local dt = dtype_arg(kw.dtype)
  if kw.out ~= nil then
    local ok, d = pcall(T.dtype_of, kw.out)  -- a freed out or a non-tensor: the op itself says so
    dt = ok and d or nil
  end
  if range_divides_by_zero(start, stop, step, dt) then
    error(("torch.range: step %s truncates to 0 in %s's integer arithmetic (libtorch would divide by it); "
      .. "use a step of magnitude at least 1 or a floating point dtype"):format(tostring(step), tostring(dt)), 2)
  end
  generated_range = generated_range or dispatch.function_for("range")
  return generated_range(...)
end

-- start / end given as 0-dim tensors (ATen's linspace.Tensor_Tensor, .Tensor_Scalar, .Scalar_Tensor):
-- their values, as ATen reads them with item().
local function tensor_endpoints(start, stop)
  local is_t1, is_t2 = T.is_tensor(start), T.is_tensor(stop)
  if not (is_t1 or is_t2) then return start, stop end
  local d1, d2 = is_t1 and start:dim() or 0, is_t2 and stop:dim() or 0
  if d1 ~= 0 or d2 ~= 0 then
    P.fail("linspace only supports 0-dimensional start and end tensors, but got start with %d dimension(s) and "
      .. "end with %d dimension(s).", d1, d2)
  end
  return is_t1 and start:item() or start, is_t2 and stop:item() or stop
end

local function linspace(start, stop, steps, opts)
  start, stop = tensor_endpoints(start, stop)
  args.number("linspace", 1, start)
  args.number("linspace", 2, stop)
  steps = args.int("linspace", 3, steps)
  if steps < 0 then error("linspace: number of steps must be non-negative", 2) end
  local o = args.options("linspace", args.opt_table("linspace", 4, opts))
  check(C.lt_linspace(out, start, stop, steps, o), "linspace")
  return wrap(out[0])
end

local LINSPACE = P.signature("linspace", "start, end, steps, " .. FACTORY_KW)
-- linspace(start, end, steps, *, dtype=, ...): positional, keyword or mixed.
function M.linspace(...) return linspace(P.lua_form(LINSPACE, P.bind_given(LINSPACE, ...), 3)) end

local RANDINT3 = P.signature("randint", "low, high, size, *, generator=None, " .. FACTORY_KW:sub(4))
local RANDINT2 = P.signature("randint", "high, size, *, generator=None, " .. FACTORY_KW:sub(4))

local function randint(low, high, size, opts)
  low = args.int("randint", 1, low)
  high = args.int("randint", 2, high)
  if high <= low then error(("randint: expected low < high, got low=%d high=%d"):format(low, high), 2) end
  if type(size) ~= "table" then args.bad("randint", 3, "size table", args.typename(size)) end
  local sizes, n = args.sizes("randint", 3, size)
  local o = args.options("randint", args.opt_table("randint", 4, opts), int64)
  check(C.lt_randint(out, low, high, sizes, n, o), "randint")
  return wrap(out[0])
end

--[[ PyTorch's two overloads, told apart as Python does: low is given (by name, or as a third
     value counting high and size given by name), or the call is randint(high, size). ]]
local function randint_signature(...)
  local n = select("#", ...)
  while n > 0 and select(n, ...) == nil do n = n - 1 end
  local last = n > 0 and select(n, ...) or nil
  local kw = P.is_keywords(last) and next(last) ~= nil and last or nil
  local count = (kw and n - 1 or n) + (kw and kw.high ~= nil and 1 or 0) + (kw and kw.size ~= nil and 1 or 0)
  return ((kw and kw.low ~= nil) or count >= 3) and RANDINT3 or RANDINT2
end

-- randint(high, size, *, dtype=, ...) | randint(low, high, size, *, dtype=, ...)
function M.randint(...)
  local sig = randint_signature(...)
  local a = P.bind_given(sig, ...)
  if sig == RANDINT3 then return randint(P.lua_form(sig, a, 3)) end
  return randint(0, P.lua_form(sig, a, 2))
end

local function randperm(n, opts)
  n = args.int("randperm", 1, n)
  if n < 0 then error("randperm: n must be non-negative, got " .. n, 2) end
  local o = args.options("randperm", args.opt_table("randperm", 2, opts), int64)
  check(C.lt_randperm(out, n, o), "randperm")
  return wrap(out[0])
end

local RANDPERM = P.signature("randperm", "n, *, generator=None, " .. FACTORY_KW:sub(4))
-- randperm(n, *, dtype=, ...): positional or keyword.
function M.randperm(...) return randperm(P.lua_form(RANDPERM, P.bind_given(RANDPERM, ...), 1)) end

---------------------------------------------------------------- *_like
local function like(name, factory)
  return function(t, opts, extra)
    T.handle(name, 1, t)
    local o = { dtype = T.dtype_of(t), device = T.device_of(t) }
    local fill
    if name == "full_like" then
      fill, opts = opts, extra
      if args.scalar(fill) == nil then args.bad(name, 2, "number or boolean", args.typename(fill)) end
    end
    if opts ~= nil then
      args.opt_table(name, fill ~= nil and 3 or 2, opts)
      for k, v in pairs(opts) do o[k] = v end
    end
    local size = T.sizes_of(t)
    if fill ~= nil then return M.full(size, fill, o) end
    return factory(size, o)
  end
end
M.zeros_like = like("zeros_like", M.zeros)
M.ones_like = like("ones_like", M.ones)
M.empty_like = like("empty_like", M.empty)
M.rand_like = like("rand_like", M.rand)
M.randn_like = like("randn_like", M.randn)
M.full_like = like("full_like")

---------------------------------------------------------------- from_buffer
local known = { dtype = true, shape = true, offset = true, count = true }

function M.from_buffer(buf, opts)
  opts = args.opt_table("from_buffer", 2, opts) or {}
  for k in pairs(opts) do
    if not known[k] then error(("from_buffer: unknown option '%s' (expected dtype, shape, offset, count)"):format(k), 2) end
  end
  local dt = opts.dtype and dtype_mod.resolve(opts.dtype, "from_buffer", 2) or dtype_mod.by_name.uint8
  local offset = args.int("from_buffer", 2, opts.offset, 0)
  local ptr, nbytes, owner
  if type(buf) == "string" then
    nbytes = #buf - offset
    owner = ffi.new("uint8_t[?]", nbytes > 0 and nbytes or 1)
    if nbytes > 0 then ffi.copy(owner, ffi.cast("const char*", buf) + offset, nbytes) end
    ptr, offset = owner, 0
  elseif type(buf) == "cdata" then
    ptr, owner = ffi.cast("uint8_t*", buf), buf
    -- An array cdata knows its length; a pointer does not (its ctype name ends in '*').
    if not tostring(ffi.typeof(buf)):find("%*>$") then nbytes = ffi.sizeof(buf) - offset end
  else
    args.bad("from_buffer", 1, "cdata buffer or string", args.typename(buf))
  end
  if offset < 0 or (nbytes ~= nil and nbytes < 0) then error("from_buffer: offset outside the buffer", 2) end
  local shape = opts.shape
  if shape == nil then
    local count = opts.count
    if count == nil then
      if nbytes == nil then error("from_buffer: a pointer has no length; give shape or count", 2) end
      if nbytes % dt.itemsize ~= 0 then
        error(("from_buffer: buffer length %d is not a multiple of the element size %d"):format(nbytes, dt.itemsize), 2)
      end
      count = nbytes / dt.itemsize
    end
    shape = { args.int("from_buffer", 2, count) }
  end
  local sizes, n = args.sizes("from_buffer", 2, shape)
  local numel = 1
  for i = 0, n - 1 do numel = numel * tonumber(sizes[i]) end
  if nbytes ~= nil and numel * dt.itemsize > nbytes then
    error(("from_buffer: shape needs %d bytes, the buffer has %d"):format(numel * dt.itemsize, nbytes), 2)
  end
  local id = memory.hold_blob(owner)
  check(C.lt_from_blob(out, ffi.cast("uint8_t*", ptr) + offset, sizes, n, nil, dt.code, id), "from_buffer")
  return wrap(out[0])
end

return M
