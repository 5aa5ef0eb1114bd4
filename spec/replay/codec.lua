--[[
  spec/replay/codec.lua — decodes the replay generators' values into ltorch values and compares
  ltorch's results with PyTorch's (issue #36).

  Why: tools/replay/gen_*_db.py write PyTorch's calls and results as JSON (the encoding is in
  tools/replay/replay_common.py); the replay cases (spec/replay/ops.lua, modules.lua, optims.lua)
  rebuild the same arguments and check what ltorch returns.

  What:
    decode(v)              a JSON value as the argument a Lua user would write: a tensor (with
                           requires_grad), torch.float32 for {"dtype"}, "cpu", "channels_last",
                           a function for {"fn": "torch.nn.functional.gelu"}, a module built by
                           construct() for {"module"}; a dict is a table; None in a list false;
                           {"ix": items}
                           an index key table, {"sl": [start, stop, step]} a slice {start=, ...}
    construct(name, args, n, kw)  torch.nn[name](args..., {kw...}) from encoded arguments
    flatten(x, acc)        the leaves of a result (tensors, numbers, booleans, strings, dtypes),
                           in order: a tuple and a Lua multiple return flatten alike
    compare(want, got, tol_scale, meta)  nil when got matches PyTorch's leaf `want` (only its dtype
                           and shape when meta), else what differs
  uint64 values travel as decimal strings and compare exactly.
  Tolerances are torch.testing's defaults for the dtype (float32: rtol 1.3e-6, atol 1e-5;
  float64: 1e-7, 1e-7; half: 1e-3, 1e-5; bfloat16: 1.6e-2, 1e-5), times tol_scale.
  Use: local codec = require "spec.replay.codec"
]]
local ffi = require "ffi"
local torch = require "torch"
local cjson = require "cjson"

local M = {}
local NULL = cjson.null
M.NULL = NULL

local TOL = {
  float64 = { 1e-7, 1e-7 }, complex128 = { 1e-7, 1e-7 },
  float32 = { 1.3e-6, 1e-5 }, complex64 = { 1.3e-6, 1e-5 },
  float16 = { 1e-3, 1e-5 }, bfloat16 = { 1.6e-2, 1e-5 }, complex32 = { 1e-3, 1e-5 },
}

local function resolve(path)
  local obj = torch
  for part in path:gsub("^torch%.?", ""):gmatch("[^.]+") do
    if type(obj) ~= "table" then return nil end
    obj = obj[part]
  end
  return obj
end
M.resolve = resolve

-- the tensors decoded for the current case by "gi": one PyTorch tensor passed twice is one here
local by_gi, by_sid = {}, {}
function M.begin_case() by_gi, by_sid = {}, {} end

local function decode_tensor(d)
  if d.gi and by_gi[d.gi] then return by_gi[d.gi] end
  local dtype = assert(torch[d.T], "unknown dtype " .. d.T)
  local shape = d.b and { d.b } or d.s
  local sid = d.sid and (d.sid .. d.T)
  local t = sid and by_sid[sid]
  if t then
    t = t   -- a storage shared with an earlier argument
  elseif d.c then
    local real = d.T == "complex128" and torch.float64 or torch.float32
    local rshape = { unpack(shape) }
    rshape[#rshape + 1] = 2
    t = torch.view_as_complex(torch.tensor(d.v, { dtype = real }):reshape(rshape):contiguous())
    if t.dtype ~= dtype then t = t:to(dtype) end
  elseif #d.v == 0 then
    t = torch.empty(shape, { dtype = dtype })
  elseif d.T == "uint64" then   -- decimal strings (exact), written into the tensor's memory
    t = torch.empty(#d.v, { dtype = dtype })
    local p = ffi.cast("uint64_t*", t:data_ptr())
    for i, s in ipairs(d.v) do
      local v = 0ULL
      for c in s:gmatch("%d") do v = v * 10 + (c:byte() - 48) end
      p[i - 1] = v
    end
    t = t:reshape(shape)
  elseif dtype.is_floating_point and dtype.itemsize <= 2 then   -- half, bfloat16, float8: exact from float64
    t = torch.tensor(d.v, { dtype = torch.float64 }):to(dtype):reshape(shape)
  else
    t = torch.tensor(d.v, { dtype = dtype }):reshape(shape)
  end
  t = t:contiguous()
  if sid then by_sid[sid] = t end
  if d.b then t = t:as_strided(d.s, d.st, d.off) end
  if d.rg then t = (d.b and t:detach() or t):requires_grad_(true) end
  if d.gi then by_gi[d.gi] = t end
  return t
end

local decode
function decode(v)
  if v == NULL then return nil end
  if type(v) ~= "table" then return v end
  if v.T then return decode_tensor(v) end
  if v.dtype then return torch[v.dtype] end
  if v.mf then return torch[v.mf] or v.mf end
  if v.layout then return torch[v.layout] or v.layout end
  if v.fn then return resolve(v.fn) end
  if v.module then return M.construct(v.module, v.args, #v.args, v.kw) end
  if v.ix then   -- an index key: x[{items}]
    local key = {}
    for i = 1, #v.ix do key[i] = decode(v.ix[i]) end
    return key
  end
  if v.sl then return { start = decode(v.sl[1]), stop = decode(v.sl[2]), step = decode(v.sl[3]) } end
  if v.D then
    local t = {}
    for k, x in pairs(v.D) do t[k] = decode(x) end
    return t
  end
  local t = {}   -- None in a list (output_size (None, 7)) is false, ltorch's spelling of None there
  for i = 1, #v do
    if v[i] == NULL then t[i] = false else t[i] = decode(v[i]) end
  end
  return t
end
M.decode = decode

-- torch.nn[name](args..., {kw...}) from encoded arguments (the keyword table only when needed);
-- a None argument, or a None in a list (AdaptiveAvgPool2d((None, 7))), is false: ltorch's
-- spelling of None for an option
local function option(v)
  if v == NULL then return false end
  if type(v) == "table" and v[1] ~= nil and not v.T then
    local t = {}
    for i = 1, #v do t[i] = option(v[i]) end
    return t
  end
  return decode(v)
end

function M.construct(name, args, n, kw)
  local cls = torch.nn[name]
  if cls == nil then error("torch.nn." .. name .. " is not in ltorch", 0) end
  local list = {}
  for i = 1, n do list[i] = option(args[i]) end
  if next(kw) ~= nil then
    local t = {}
    for k, v in pairs(kw) do t[k] = option(v) end
    n = n + 1
    list[n] = t
  end
  return cls(unpack(list, 1, n))
end

local function is_dtype(x)
  return type(x) == "table" and getmetatable(x) ~= nil and rawget(x, "is_complex") ~= nil
end

local function flatten(x, acc)
  if torch.is_tensor(x) or type(x) ~= "table" or is_dtype(x) then
    acc[#acc + 1] = x
  elseif x == NULL then
    acc[#acc + 1] = nil
  elseif x.T then
    acc[#acc + 1] = x
  elseif x.dtype and not getmetatable(x) then
    acc[#acc + 1] = x
  else
    for i = 1, table.maxn(x) do flatten(x[i], acc) end
  end
  return acc
end
M.flatten = flatten

local function close(a, b, rtol, atol)
  if a == b then return true end
  if a ~= a and b ~= b then return true end
  if type(a) ~= "number" or type(b) ~= "number" then return false end
  return math.abs(a - b) <= atol + rtol * math.abs(b)
end

local function values_of(t)
  -- clone: a storage-less zero tensor (sgn's gradient on a real input) gets its zeros, as in PyTorch
  t = t:detach():clone():contiguous()
  if t.dtype.is_complex then t = torch.view_as_real(t:resolve_conj()):contiguous() end
  if t.dtype.is_floating_point and t.dtype.itemsize <= 2 then t = t:double() end   -- half, bfloat16, float8
  if t:numel() == 0 then return {} end
  if t.dtype.name == "uint64" then   -- exact, as the generator writes them: decimal strings
    local p, list = ffi.cast("uint64_t*", t:data_ptr()), {}
    for i = 1, t:numel() do list[i] = (tostring(p[i - 1]):gsub("ULL$", "")) end
    return list
  end
  return t:reshape(-1):tolist()
end

local function compare_tensor(want, got, scale, meta)
  if not torch.is_tensor(got) then
    return ("expected a %s tensor, got %s"):format(want.T, type(got) == "table" and "a table" or tostring(got))
  end
  if got.dtype.name ~= want.T then return ("dtype %s, PyTorch %s"):format(got.dtype.name, want.T) end
  local shape = got:size()
  local same = #shape == #want.s
  for i = 1, #want.s do same = same and shape[i] == want.s[i] end
  if not same then
    return ("shape [%s], PyTorch [%s]"):format(table.concat(shape, ", "), table.concat(want.s, ", "))
  end
  if meta then return nil end
  local tol = TOL[want.T] or { 0, 0 }
  local v = values_of(got)
  for i = 1, #want.v do
    local a, b = v[i], want.v[i]
    if type(a) == "boolean" then a = a and 1 or 0 end
    if type(b) == "boolean" then b = b and 1 or 0 end
    if not close(a, b, tol[1] * scale, tol[2] * scale) then
      return ("value %d: %s, PyTorch %s"):format(i - 1, tostring(a), tostring(b))
    end
  end
end

function M.compare(want, got, scale, meta)
  scale = scale or 1
  if type(want) == "table" and want.T then return compare_tensor(want, got, scale, meta) end
  if type(want) == "table" and want.dtype then
    if not is_dtype(got) or got.name ~= want.dtype then
      return ("expected dtype %s, got %s"):format(want.dtype, tostring(got))
    end
    return nil
  end
  if torch.is_tensor(got) and got:numel() == 1 and type(want) ~= "table" then
    return ("a tensor where PyTorch returns the %s %s"):format(type(want), tostring(want))
  end
  if type(want) == "number" and type(got) == "number" then
    if close(got, want, 1.3e-6 * scale, 1e-5 * scale) then return nil end
  elseif want == got then
    return nil
  end
  return ("%s, PyTorch %s"):format(tostring(got), tostring(want))
end

-- table.pack (LuaJIT has none): the values and their count n
function M.pack(...) return { n = select("#", ...), ... } end

-- Compares PyTorch's encoded result `want` with ltorch's packed results (M.pack of the call).
function M.compare_result(want, packed, scale, meta)
  local w = flatten(want, {})
  local g = {}
  for i = 1, packed.n do flatten(packed[i], g) end
  local nw, ng = table.maxn(w), table.maxn(g)
  if nw ~= ng then return ("%d result values, PyTorch %d"):format(ng, nw) end
  for i = 1, nw do
    local why = M.compare(w[i], g[i], scale, meta)
    if why then return ("result %d: %s"):format(i, why) end
  end
end

return M
