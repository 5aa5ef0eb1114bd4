--[[
  torch._dispatch_values — Lua values to and from the boxed dispatcher's `lt_value` tagged unions
  (bindings/lt.h), for torch._dispatch.

  pack(p, v, slot, keep) converts Lua value v for schema parameter p (torch._schema) into slot,
  keeping any cdata it allocates in `keep` until the call returns; it answers true, or false plus
  what was expected (for the "argument 'x' must be ..." message). The steps: nil (optional or
  missing), a list parameter (Tensor[], bool[], int[]/float[] with PyTorch's one-int broadcast),
  or one value, converted by the packer of its schema type (PACK_ONE).

  unpack_results(entry, n, bound, slots) turns an op's n result slots back into Lua values; an
  in-place or out= result that aliases an argument comes back as that same argument object.

  Usage:  local values = require "torch._dispatch_values"
          local ok, expected = values.pack(param, v, argv[i], keep)
          local outs, n = values.unpack_results(entry, count, bound, results)
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"

local C, Ref = _C.C, _C.Ref
local istype = ffi.istype
local table_new = require "table.new"
local wrap = memory.wrap

local M = {}

-- C types made once: most calls run in LuaJIT's interpreter (bind's loops keep them out of
-- traces), where ffi.new/ffi.cast with a string would parse the declaration on every call.
local TensorHandleArray = ffi.typeof("const lt_tensor*[?]")
local BoolArray, DoubleArray, Int64Array = ffi.typeof("int[?]"), ffi.typeof("double[?]"), ffi.typeof("int64_t[?]")
local TensorHandle, TensorHandles = ffi.typeof("lt_tensor*"), ffi.typeof("lt_tensor**")
local Int64s, Doubles = ffi.typeof("int64_t*"), ffi.typeof("double*")
M.TensorHandle = TensorHandle

-- V tags (lt_value_tag in bindings/lt.h)
local V = { NONE = 0, TENSOR = 1, INT = 2, DOUBLE = 3, BOOL = 4, SCALAR_INT = 5, SCALAR_DOUBLE = 6,
  SCALAR_BOOL = 7, INT_LIST = 8, DOUBLE_LIST = 9, BOOL_LIST = 10, TENSOR_LIST = 11, OPT_TENSOR_LIST = 12,
  STRING = 13, DEVICE = 14, SCALAR_TYPE = 15, LAYOUT = 16, MEMORY_FORMAT = 17, SYM_INT = 18, SYM_INT_LIST = 19 }
M.V = V

local memory_formats = { contiguous_format = 0, preserve_format = 1, channels_last = 2, channels_last_3d = 3 }
local layouts = { strided = 0, sparse_coo = 1, sparse_csr = 2, mkldnn = 3 }

local function is_int(v) return type(v) == "number" and v == math.floor(v) and v > -2 ^ 63 and v < 2 ^ 63 end

---------------------------------------------------------------- lists

--[[ Fills arr[0 .. n-1] with the handles of the Tensors v[1 .. n]: returns whether some were nil
     (holes, allowed when `optional`), or nil when an element is neither. FILL[n] does it for a
     list of n <= 16 in straight-line code, made once with `load`: a loop here would start a trace
     of its own, and LuaJIT cannot record the way back from it into the op call (NYI: return to
     lower frame), so everything after it, the op call included, would run interpreted. ]]
local function fill_loop(v, n, arr, optional)
  local holes = false
  for i = 1, n do
    local x = v[i]
    if istype(Ref, x) then arr[i - 1] = x.h
    elseif x == nil and optional then arr[i - 1] = nil; holes = true
    else return nil end
  end
  return holes
end

local FILL = {}
for n = 1, 16 do
  local src = { "local istype, Ref = ...", "return function(v, arr, optional)", "  local holes, x = false" }
  for i = 1, n do
    src[#src + 1] = ("  x = v[%d]; if istype(Ref, x) then arr[%d] = x.h elseif x == nil and optional then"
      .. " arr[%d] = nil; holes = true else return nil end"):format(i, i - 1, i - 1)
  end
  src[#src + 1] = "  return holes\nend"
  FILL[n] = assert(load(table.concat(src, "\n"), "=torch._dispatch_values FILL", "t"))(istype, Ref)
end

--[[ The length of a Tensor list: table.maxn, which counts past holes, as a list of optional Tensors
     (Tensor?[]: `{nil, idx}`) needs. A list without holes takes `#v` when no key follows the last
     element: table.maxn is not compiled (LuaJIT stitches the trace around it), and the trace
     recorded after such a stitch cannot return into the op call (NYI), which then ran interpreted
     (docs/PERFORMANCE.md, optimisation 27). ]]
local maxn, next = table.maxn, next
local function list_length(v, optional)
  if optional then return maxn(v) end
  local n = #v
  -- keys beyond n: let maxn find the hole (next from key n, which v holds, or from the start)
  if next(v, n > 0 and n or nil) ~= nil then return maxn(v) end
  return n
end

--[[ A table of Tensors as a handle array. The overloads a call tries share `keep`, and a list
     the call packed without holes is packed once: keep[v] is its array and keep[arr] its length
     (a foreach op with a Scalar argument tries its List and Tensor overloads first, and
     each would copy the same list again). ]]
local function pack_tensor_list(p, v, slot, keep)
  if type(v) ~= "table" then return false, "table of Tensors" end
  local tag = p.element_optional and V.OPT_TENSOR_LIST or V.TENSOR_LIST
  local arr = keep[v]
  if arr ~= nil then
    slot.tag, slot.p, slot.n = tag, arr, keep[arr]
    return true
  end
  local n = list_length(v, p.element_optional)
  arr = TensorHandleArray(n > 0 and n or 1)
  local fill = FILL[n]
  local holes
  if fill then holes = fill(v, arr, p.element_optional) else holes = fill_loop(v, n, arr, p.element_optional) end
  if holes == nil then return false, "table of Tensors" end
  if holes then keep[#keep + 1] = arr else keep[v], keep[arr] = arr, n end
  slot.tag, slot.p, slot.n = tag, arr, n
  return true
end

-- A number or boolean where a list is expected: int[2] takes one int for all (PyTorch's
-- IntArrayRef broadcast); a list of unknown length takes it as a list of one.
local function as_list(p, v)
  if type(v) == "number" or type(v) == "boolean" then
    if p.list > 0 then
      local list = {}
      for i = 1, p.list do list[i] = v end
      return list
    end
    return { v }
  elseif type(v) ~= "table" or istype(Ref, v) or dtype_mod.is_dtype(v) then
    return nil   -- a dtype is no list: x:view(torch.int32) is view.dtype, not view([])
  end
  return v
end

local function pack_bool_list(list, slot, keep)
  local n = #list
  local arr = BoolArray(n > 0 and n or 1)
  for i = 1, n do
    if type(list[i]) ~= "boolean" then return false, "table of booleans" end
    arr[i - 1] = list[i] and 1 or 0
  end
  keep[#keep + 1] = arr
  slot.tag, slot.p, slot.n = V.BOOL_LIST, arr, n
  return true
end

local function pack_number_list(is_float, list, slot, keep)
  local n = #list
  local arr = (is_float and DoubleArray or Int64Array)(n > 0 and n or 1)
  for i = 1, n do
    local x = list[i]
    if is_float then
      if type(x) ~= "number" then return false, "table of numbers" end
    elseif not is_int(x) then
      return false, "table of integers"
    end
    arr[i - 1] = x
  end
  keep[#keep + 1] = arr
  slot.tag, slot.p, slot.n = is_float and V.DOUBLE_LIST or V.INT_LIST, arr, n
  return true
end

local function pack_list(p, v, slot, keep)
  local t = p.type
  if t == "Tensor" then return pack_tensor_list(p, v, slot, keep) end
  local list = as_list(p, v)
  if not list then return false, t .. "[]" end
  if t == "bool" then return pack_bool_list(list, slot, keep) end
  return pack_number_list(t == "float", list, slot, keep)
end

---------------------------------------------------------------- one value, by schema type

local function pack_int(_, v, slot)
  if not is_int(v) then return false, "int" end
  slot.tag, slot.i = V.INT, v
  return true
end

-- An enum given by its code or its name (codes: name -> code).
local function pack_enum(codes, tag, expected)
  return function(_, v, slot)
    local code = type(v) == "number" and v or codes[v]
    if code == nil then return false, expected end
    slot.tag, slot.i = tag, code
    return true
  end
end

local PACK_ONE = {
  Tensor = function(_, v, slot)
    if not istype(Ref, v) then return false, "Tensor" end
    slot.tag, slot.p = V.TENSOR, v.h
    return true
  end,
  int = pack_int,
  SymInt = pack_int,
  float = function(_, v, slot)
    if type(v) ~= "number" then return false, "float" end
    slot.tag, slot.d = V.DOUBLE, v
    return true
  end,
  bool = function(_, v, slot)
    if type(v) ~= "boolean" then return false, "bool" end
    slot.tag, slot.i = V.BOOL, v and 1 or 0
    return true
  end,
  Scalar = function(_, v, slot)
    if type(v) == "boolean" then slot.tag, slot.i = V.SCALAR_BOOL, v and 1 or 0
    elseif is_int(v) then slot.tag, slot.i = V.SCALAR_INT, v
    elseif type(v) == "number" then slot.tag, slot.d = V.SCALAR_DOUBLE, v
    else return false, "number (Scalar)" end
    return true
  end,
  str = function(_, v, slot, keep)
    if type(v) ~= "string" then return false, "string" end
    keep[#keep + 1] = v
    slot.tag, slot.p = V.STRING, v
    return true
  end,
  ScalarType = function(_, v, slot)
    local d = dtype_mod.is_dtype(v) and v or (type(v) == "string" and dtype_mod.by_name[v:gsub("^torch%.", "")])
    if type(v) == "number" and dtype_mod.by_code[v] then d = dtype_mod.by_code[v] end
    if not d then return false, "dtype" end
    slot.tag, slot.i = V.SCALAR_TYPE, d.code
    return true
  end,
  Device = function(_, v, slot)
    if not (device_mod.is_device(v) or type(v) == "string") then return false, "device" end
    local ok, d = pcall(device_mod.resolve, v)
    if not ok then return false, "device" end
    local dt, di = device_mod.codes(d)
    slot.tag, slot.i, slot.n = V.DEVICE, dt, di
    return true
  end,
  Layout = pack_enum(layouts, V.LAYOUT, "layout ('strided')"),
  MemoryFormat = pack_enum(memory_formats, V.MEMORY_FORMAT, "memory format ('contiguous_format', 'channels_last', ...)"),
  Generator = function()
    return false, "nil (explicit generators are not supported; use torch.manual_seed)"
  end,
}

--[[ Converts Lua value v for parameter p into slot (an lt_value), keeping cdata in `keep`.
     Returns true, or false plus what was expected. ]]
function M.pack(p, v, slot, keep)
  if v == nil then
    if p.optional or p.type == "Generator" then slot.tag = V.NONE; return true end
    return false, p.type .. (p.list and "[]" or "")
  end
  if p.list then return pack_list(p, v, slot, keep) end
  local one = PACK_ONE[p.type]
  if not one then return false, p.type end
  return one(p, v, slot, keep)
end

---------------------------------------------------------------- results

-- A Tensor result; an in-place/out= result aliases the argument it wrote: hand back that object.
-- Returns the value and the next index into entry.written.
local function tensor_result(entry, r, ret, bound, next_written)
  local aliased
  if ret and ret.writes then
    local j = entry.written[next_written]
    aliased = j and bound[j]
    next_written = next_written + 1
    if not istype(Ref, aliased) then aliased = nil end
  end
  local t = wrap(ffi.cast(TensorHandle, r.p))
  if aliased then t:free(); t = aliased end
  return t, next_written
end

local function tensor_list_result(r)
  local n = tonumber(r.n)
  local list = table_new(n, 0)
  local hs = ffi.cast(TensorHandles, r.p)
  for j = 0, n - 1 do list[j + 1] = wrap(hs[j]) end
  -- The handles now belong to Lua; release only the array (as an int list would be).
  r.tag = V.INT_LIST
  C.lt_value_release(r)
  return list
end

local function number_list_result(r, tag)
  local list = {}
  local p = ffi.cast(tag == V.INT_LIST and Int64s or Doubles, r.p)
  for j = 0, tonumber(r.n) - 1 do list[j + 1] = tonumber(p[j]) end
  C.lt_value_release(r)
  return list
end

-- A result that is not a Tensor: its Lua value (nil for a tag with none).
local function plain_result(r, ret)
  local tag = r.tag
  if tag == V.TENSOR_LIST then return tensor_list_result(r)
  elseif tag == V.INT then
    local v = tonumber(r.i)
    if ret and ret.type == "ScalarType" then v = dtype_mod.from_code(v) end
    return v
  elseif tag == V.DOUBLE then return r.d
  elseif tag == V.BOOL then return r.i ~= 0
  elseif tag == V.INT_LIST or tag == V.DOUBLE_LIST then return number_list_result(r, tag)
  elseif tag == V.STRING then
    local s = ffi.string(r.p, r.n)
    C.lt_value_release(r)
    return s
  elseif tag == V.DEVICE then
    return device_mod.from_codes(tonumber(r.i), tonumber(r.n))
  end
  return nil
end

function M.unpack_results(entry, n, bound, slots)
  local outs = table_new(n, 0)
  -- The k-th result annotated (a!) aliases the k-th argument annotated (a!) (entry.written).
  local next_written = 1
  for i = 0, n - 1 do
    local r, ret = slots[i], entry.returns[i + 1]
    if r.tag == V.TENSOR then
      outs[i + 1], next_written = tensor_result(entry, r, ret, bound, next_written)
    else
      outs[i + 1] = plain_result(r, ret)
    end
  end
  return outs, n
end

return M
