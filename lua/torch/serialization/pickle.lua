--[[
  torch.serialization.pickle — the restricted pickle that PyTorch's `.pt` files carry: exactly
  the subset `torch.load(..., weights_only=True)` accepts, read and written in plain Lua.

  Reading never runs code: the only globals accepted are collections.OrderedDict,
  torch._utils._rebuild_tensor_v2 / _rebuild_tensor_v3 / _rebuild_parameter, the typed storages
  (torch.FloatStorage, ...), torch.storage.UntypedStorage and the dtypes (torch.uint16, ...)
  that _rebuild_tensor_v3 names (PyTorch's form, over a byte storage, for the dtypes without a
  typed storage class: uint16/32/64, float8, complex32); any other global is refused by name.
  Everything is bounds-checked (lengths against the input, tensor extents against their storage,
  duplicate dict keys, cycles), so a hostile file ends in a Lua error, never in a crash or a
  huge allocation.
  Nesting has no limit, as in PyTorch's loader: reading and the cycle check are iterative, so
  depth costs memory in proportion to the file and no stack.

  Values: dict -> Lua table (string/integer keys kept as they are, so an optimizer's 0-based
  `state` stays 0-based); list and tuple -> Lua array; int/float -> number (ints beyond 2^53
  are refused); str/bytes -> string; bool -> boolean. None -> nil where Lua can hold it (a dict
  value None leaves the key absent, so `if ckpt.scheduler then` reads as Python's
  `if ckpt["scheduler"] is not None`); in a list or tuple, where nil would end the array, it is
  the sentinel M.None, printed "torch.None" (also torch.serialization.None); saving M.None writes
  None.

  load(bytes, hooks) -> value. hooks.storage(desc) turns a persistent id {key=, dtype=, numel=,
  location=} into a storage (an UntypedStorage: dtype "uint8", numel its bytes);
  hooks.tensor(storage, offset, size, stride, requires_grad, dtype) builds a tensor (dtype, a
  name, only from _rebuild_tensor_v3: the storage's bytes viewed as it). Without hooks, tensors
  come back as descriptor tables ({__tensor = true, storage = desc, ...}), for fuzz and inspect.

  dump(value, hooks) -> bytes (protocol 2). hooks.is_tensor(v) says what is a tensor and
  hooks.tensor(v) returns {key=, dtype=, numel=, size=, stride=, offset=} for it.
  Lua tables with keys 1..n are lists, other tables dicts (an empty table is an empty dict);
  integral numbers are ints, others floats.
]]
local ffi = require "ffi"

local M = {}
M.None = require "torch.serialization.none"   -- the sentinel, in a file of its own

local byte, sub, char, floor = string.byte, string.sub, string.char, math.floor
local MAX_DIMS = 64
local SAFE_INT = 2 ^ 53

-- storage class name -> dtype name (torch.dtype)
M.storage_dtypes = {
  FloatStorage = "float32", DoubleStorage = "float64", HalfStorage = "float16",
  BFloat16Storage = "bfloat16", LongStorage = "int64", IntStorage = "int32", ShortStorage = "int16",
  CharStorage = "int8", ByteStorage = "uint8", BoolStorage = "bool",
  ComplexFloatStorage = "complex64", ComplexDoubleStorage = "complex128",
}
M.dtype_storages = {}
for k, v in pairs(M.storage_dtypes) do M.dtype_storages[v] = k end
-- the dtypes _rebuild_tensor_v3 may name (torch.<name>), with their item sizes
local V3_DTYPES = {}
for _, d in pairs(require("torch.dtype").by_name) do V3_DTYPES[d.name] = d.itemsize end

local allowed = {
  ["collections.OrderedDict"] = true,
  ["torch._utils._rebuild_tensor_v2"] = true,
  ["torch._utils._rebuild_tensor_v3"] = true,
  ["torch._utils._rebuild_parameter"] = true,
  ["torch.storage.UntypedStorage"] = true,
}
for k in pairs(M.storage_dtypes) do allowed["torch." .. k] = true end
for k in pairs(V3_DTYPES) do allowed["torch." .. k] = true end

local dbl = ffi.new("union { double d; uint8_t b[8]; int64_t i; }")

local function fail(msg, pos)
  error(("pickle: %s%s"):format(msg, pos and (" (at byte " .. pos .. ")") or ""), 0)
end

---------------------------------------------------------------- reader
local Reader = {}
Reader.__index = Reader

function Reader:need(n)
  if self.pos + n - 1 > #self.data then fail("truncated data", self.pos) end
  local p = self.pos
  self.pos = p + n
  return p
end

function Reader:u8() return byte(self.data, self:need(1)) end

function Reader:uint(n)
  local p, v = self:need(n), 0
  for i = n - 1, 0, -1 do v = v * 256 + byte(self.data, p + i) end
  return v
end

function Reader:bytes(n)
  if n > #self.data then fail("length " .. n .. " past the end of the data", self.pos) end
  local p = self:need(n)
  return sub(self.data, p, p + n - 1)
end

function Reader:push(v)
  local n = self.n + 1
  self.n, self.stack[n] = n, v
end

function Reader:pop()
  local n = self.n
  if n <= self.floor then fail("stack underflow", self.pos) end
  local v = self.stack[n]
  self.stack[n], self.n = nil, n - 1
  return v
end

function Reader:top()
  if self.n <= self.floor then fail("stack underflow", self.pos) end
  return self.stack[self.n]
end

function Reader:pop_mark()
  local m = self.marks[#self.marks]
  if not m then fail("no MARK on the stack", self.pos) end
  self.marks[#self.marks] = nil
  local items = {}
  for i = m + 1, self.n do items[#items + 1] = self.stack[i]; self.stack[i] = nil end
  self.n = m
  self.floor = self.marks[#self.marks] or 0
  return items
end

function Reader:new_container(kind)
  local t = {}
  self.kind[t] = kind
  return t
end

function Reader:tuple(items)
  self.kind[items] = "tuple"
  return items
end

local function check_key(k, pos)
  local tk = type(k)
  if tk == "string" or tk == "boolean" then return k end
  if tk == "number" and k == floor(k) then return k end
  fail("unsupported dict key of type " .. (tk == "number" and "float" or tk), pos)
end

function Reader:setitem(d, k, v)
  if self.kind[d] ~= "dict" then fail("SETITEM on a non-dict", self.pos) end
  k = check_key(k, self.pos)
  if d[k] ~= nil then fail("duplicate key '" .. tostring(k) .. "'", self.pos) end
  if v ~= M.None then d[k] = v end   -- a None value: the key stays absent (see the header)
end

function Reader:append(l, v)
  if self.kind[l] ~= "list" then fail("APPEND on a non-list", self.pos) end
  l[#l + 1] = v
end

local function int_list(v, what, pos)
  if type(v) ~= "table" or #v > MAX_DIMS then fail(what .. " must be a tuple of at most 64 ints", pos) end
  for i = 1, #v do
    local x = v[i]
    if type(x) ~= "number" or x ~= floor(x) or x < 0 or x >= SAFE_INT then fail(what .. " holds a bad value", pos) end
  end
  return v
end

-- _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) and
-- _rebuild_tensor_v3(..., hooks, dtype[, metadata]): v3's storage is untyped (bytes), read as dtype.
function Reader:rebuild_tensor(a, v3)
  local pos = self.pos
  local storage, offset = a[1], a[2]
  local fname = v3 and "_rebuild_tensor_v3" or "_rebuild_tensor_v2"
  if type(storage) ~= "table" or self.kind[storage] ~= "storage" then fail(fname .. " expects a storage", pos) end
  local dtype, numel_of_storage = nil, storage.desc.numel
  if v3 then
    local g = a[7]
    dtype = type(g) == "table" and self.kind[g] == "global" and g.name:match("^torch%.([%w_]+)$")
    if not dtype or not V3_DTYPES[dtype] then fail("_rebuild_tensor_v3 expects a dtype as its 7th argument", pos) end
    if storage.desc.dtype ~= "uint8" then fail("_rebuild_tensor_v3 expects an UntypedStorage", pos) end
    if numel_of_storage % V3_DTYPES[dtype] ~= 0 then
      fail(("a storage of %d bytes is not a whole number of %s elements"):format(numel_of_storage, dtype), pos)
    end
    numel_of_storage = numel_of_storage / V3_DTYPES[dtype]
  end
  if type(offset) ~= "number" or offset ~= floor(offset) or offset < 0 then fail("bad storage offset", pos) end
  local size, stride = int_list(a[3], "size", pos), int_list(a[4], "stride", pos)
  if #size ~= #stride then fail("size and stride differ in length", pos) end
  local numel, extent = 1, 0
  for i = 1, #size do
    numel = numel * size[i]
    if numel >= SAFE_INT then fail("tensor too large", pos) end
    if size[i] > 0 then extent = extent + (size[i] - 1) * stride[i] end
  end
  if numel > 0 and offset + extent + 1 > numel_of_storage then
    fail(("tensor of size (%s) at offset %d runs past its storage of %d elements"):format(
      table.concat(size, ", "), offset, numel_of_storage), pos)
  end
  local rg = a[5] == true
  if self.hooks.tensor then return self.hooks.tensor(storage.value, offset, size, stride, rg, dtype) end
  return { __tensor = true, storage = storage.desc, offset = offset, size = size, stride = stride, requires_grad = rg,
    dtype = dtype }
end

function Reader:reduce(fn, a)
  local pos = self.pos
  if type(fn) ~= "table" or self.kind[fn] ~= "global" then fail("REDUCE of a non-callable", pos) end
  if self.kind[a] ~= "tuple" then fail("REDUCE arguments are not a tuple", pos) end
  local name = fn.name
  if name == "collections.OrderedDict" then
    if #a ~= 0 then fail("OrderedDict with arguments is not supported", pos) end
    return self:new_container("dict")
  elseif name == "torch._utils._rebuild_tensor_v2" then
    return self:rebuild_tensor(a)
  elseif name == "torch._utils._rebuild_tensor_v3" then
    return self:rebuild_tensor(a, true)
  elseif name == "torch._utils._rebuild_parameter" then
    local t = a[1]
    if t == nil or type(t) ~= "table" and type(t) ~= "cdata" and type(t) ~= "userdata" then fail("bad parameter", pos) end
    return t
  end
  fail("calling " .. name .. " is not allowed", pos)
end

function Reader:persistent(pid)
  local pos = self.pos
  if type(pid) ~= "table" or self.kind[pid] ~= "tuple" or pid[1] ~= "storage" then fail("unsupported persistent id", pos) end
  local cls, key, location, numel = pid[2], pid[3], pid[4], pid[5]
  if type(cls) ~= "table" or self.kind[cls] ~= "global" then fail("storage type is not a storage class", pos) end
  local dtype = cls.name == "torch.storage.UntypedStorage" and "uint8" or M.storage_dtypes[cls.name:match("^torch%.(.*)$") or ""]
  if not dtype then fail(cls.name .. " is not a storage type", pos) end
  if type(key) ~= "string" or not key:match("^[%w_]+$") or #key > 64 then fail("bad storage key", pos) end
  if type(location) ~= "string" then fail("bad storage location", pos) end
  if type(numel) ~= "number" or numel ~= floor(numel) or numel < 0 or numel >= SAFE_INT then fail("bad storage size", pos) end
  local cached = self.storages[key]
  if cached then
    if cached.desc.dtype ~= dtype then fail("storage '" .. key .. "' used with two dtypes", pos) end
    return cached
  end
  local desc = { key = key, dtype = dtype, location = location, numel = numel }
  local s = { desc = desc, value = self.hooks.storage and self.hooks.storage(desc) or desc }
  self.kind[s] = "storage"
  self.storages[key] = s
  return s
end

function Reader:long(n)
  if n == 0 then return 0 end
  if n > 8 then fail("integer of " .. n .. " bytes is too large", self.pos) end
  local p = self:need(n)
  local v = 0ULL
  for i = n - 1, 0, -1 do v = v * 256 + byte(self.data, p + i) end
  if n < 8 and byte(self.data, p + n - 1) >= 128 then v = v - bit.lshift(1ULL, 8 * n) end
  local x = tonumber(ffi.cast("int64_t", v))
  if x >= SAFE_INT or x <= -SAFE_INT then fail("integer beyond 2^53", p) end
  return x
end

function Reader:binfloat()
  local p = self:need(8)
  for i = 0, 7 do dbl.b[7 - i] = byte(self.data, p + i) end
  return dbl.d
end

local ops = {}
ops[0x80] = function(r) local v = r:u8(); if v > 5 then fail("unsupported protocol " .. v, r.pos) end end
ops[0x95] = function(r) r:need(8) end                                  -- FRAME
ops[0x7d] = function(r) r:push(r:new_container("dict")) end           -- } EMPTY_DICT
ops[0x5d] = function(r) r:push(r:new_container("list")) end           -- ] EMPTY_LIST
ops[0x29] = function(r) r:push(r:tuple({})) end                       -- ) EMPTY_TUPLE
ops[0x28] = function(r)                                                -- ( MARK
  r.marks[#r.marks + 1] = r.n
  r.floor = r.n
end
ops[0x74] = function(r) r:push(r:tuple(r:pop_mark())) end             -- t TUPLE
ops[0x85] = function(r) r:push(r:tuple({ r:pop() })) end              -- TUPLE1
ops[0x86] = function(r) local b = r:pop(); r:push(r:tuple({ r:pop(), b })) end
ops[0x87] = function(r) local c = r:pop(); local b = r:pop(); r:push(r:tuple({ r:pop(), b, c })) end
ops[0x4e] = function(r) r:push(M.None) end                            -- N
ops[0x88] = function(r) r:push(true) end
ops[0x89] = function(r) r:push(false) end
ops[0x4b] = function(r) r:push(r:u8()) end                            -- K BININT1
ops[0x4d] = function(r) r:push(r:uint(2)) end                         -- M BININT2
ops[0x4a] = function(r) local v = r:uint(4); r:push(v >= 2 ^ 31 and v - 2 ^ 32 or v) end   -- J
ops[0x8a] = function(r) r:push(r:long(r:u8())) end                    -- LONG1
ops[0x47] = function(r) r:push(r:binfloat()) end                      -- G BINFLOAT
ops[0x58] = function(r) r:push(r:bytes(r:uint(4))) end                -- X BINUNICODE
ops[0x8c] = function(r) r:push(r:bytes(r:u8())) end                   -- SHORT_BINUNICODE
ops[0x42] = function(r) r:push(r:bytes(r:uint(4))) end                -- B BINBYTES
ops[0x43] = function(r) r:push(r:bytes(r:u8())) end                   -- C SHORT_BINBYTES
ops[0x71] = function(r) r.memo[r:u8()] = r:top() end                  -- q BINPUT
ops[0x72] = function(r) r.memo[r:uint(4)] = r:top() end               -- r LONG_BINPUT
ops[0x94] = function(r) r.memo[r.memo_n] = r:top(); r.memo_n = r.memo_n + 1 end   -- MEMOIZE
local function get(r, i)
  local v = r.memo[i]
  if v == nil then fail("memo key " .. i .. " was never stored", r.pos) end
  r:push(v)
end
ops[0x68] = function(r) get(r, r:u8()) end                            -- h BINGET
ops[0x6a] = function(r) get(r, r:uint(4)) end                         -- j LONG_BINGET
local function global(r, name)
  if not allowed[name] then fail("global '" .. name .. "' is not allowed (weights_only subset)", r.pos) end
  local g = { name = name }
  r.kind[g] = "global"
  r:push(g)
end
ops[0x63] = function(r)                                                -- c GLOBAL
  local s, e = r.data:find("\n[^\n]*\n", r.pos)
  if not s or e - r.pos > 256 then fail("bad GLOBAL", r.pos) end
  local mod, name = r.data:sub(r.pos, s - 1), r.data:sub(s + 1, e - 1)
  r.pos = e + 1
  global(r, mod .. "." .. name)
end
ops[0x93] = function(r)                                                -- STACK_GLOBAL
  local name, mod = r:pop(), r:pop()
  if type(mod) ~= "string" or type(name) ~= "string" then fail("bad STACK_GLOBAL", r.pos) end
  global(r, mod .. "." .. name)
end
ops[0x52] = function(r) local a = r:pop(); r:push(r:reduce(r:pop(), a)) end    -- R REDUCE
ops[0x51] = function(r) r:push(r:persistent(r:pop())) end                      -- Q BINPERSID
ops[0x62] = function(r)                                                          -- b BUILD
  r:pop()  -- OrderedDict's state (state_dict `_metadata`): version info only, dropped
  if r.kind[r:top()] ~= "dict" then fail("BUILD is only supported on OrderedDict", r.pos) end
end
ops[0x73] = function(r) local v = r:pop(); local k = r:pop(); r:setitem(r:top(), k, v) end   -- s
ops[0x75] = function(r)                                                          -- u SETITEMS
  local items = r:pop_mark()
  if #items % 2 ~= 0 then fail("odd number of SETITEMS values", r.pos) end
  local d = r:top()
  for i = 1, #items, 2 do r:setitem(d, items[i], items[i + 1]) end
end
ops[0x61] = function(r) local v = r:pop(); r:append(r:top(), v) end            -- a APPEND
ops[0x65] = function(r)                                                          -- e APPENDS
  local items = r:pop_mark()
  local l = r:top()
  for i = 1, #items do r:append(l, items[i]) end
end

local names = { [0x63] = "GLOBAL", [0x69] = "INST", [0x6f] = "OBJ", [0x81] = "NEWOBJ", [0x92] = "NEWOBJ_EX",
  [0x49] = "INT", [0x4c] = "LONG", [0x46] = "FLOAT", [0x53] = "STRING", [0x56] = "UNICODE", [0x70] = "PUT",
  [0x67] = "GET", [0x8b] = "LONG4", [0x50] = "PERSID", [0x82] = "EXT1", [0x83] = "EXT2", [0x84] = "EXT4",
  [0x90] = "ADDITEMS", [0x8f] = "EMPTY_SET", [0x91] = "FROZENSET", [0x96] = "BYTEARRAY8", [0x97] = "NEXT_BUFFER" }

-- Refuses self-containing structures (built through the memo) before anyone walks them.
-- Iterative depth-first walk that visits each container once: a sub-structure shared through
-- the memo (x = [x, x] repeated) is finished the first time and skipped after, so the walk is
-- linear in the number of distinct containers, however many paths lead to them.
local ON_PATH, DONE = 1, 2
local function check_acyclic(root, kind)
  if type(root) ~= "table" or not kind[root] then return end
  local state = { [root] = ON_PATH }
  local nodes, keys, depth = { root }, {}, 1
  while depth > 0 do
    local v = nodes[depth]
    local k, x = next(v, keys[depth])
    if k == nil then
      state[v], nodes[depth], keys[depth], depth = DONE, nil, nil, depth - 1
    else
      keys[depth] = k   -- dict keys are strings, numbers or booleans (check_key): only values nest
      if type(x) == "table" and kind[x] then
        local s = state[x]
        if s == ON_PATH then fail("recursive structure") end
        if s == nil then
          depth = depth + 1
          nodes[depth], keys[depth], state[x] = x, nil, ON_PATH
        end
      end
    end
  end
end

function M.load(data, hooks)
  if type(data) ~= "string" then error("pickle.load: expected a string", 2) end
  local r = setmetatable({ data = data, pos = 1, stack = {}, n = 0, floor = 0, marks = {}, memo = {},
    memo_n = 0, kind = setmetatable({}, { __mode = "k" }), storages = {}, hooks = hooks or {} }, Reader)
  while true do
    local at = r.pos
    local op = r:u8()
    if op == 0x2e then                                                  -- . STOP
      if #r.marks > 0 or r.n ~= 1 then fail("malformed stack at STOP", at) end
      local v = r.stack[1]
      if type(v) == "table" and r.kind[v] == "global" then fail("a bare global is not a value", at) end
      check_acyclic(v, r.kind)
      return v
    end
    local f = ops[op]
    if not f then fail(("opcode %s (0x%02x) is not allowed"):format(names[op] or "?", op), at) end
    f(r)
  end
end

---------------------------------------------------------------- writer
local function u32(n) return char(n % 256, floor(n / 256) % 256, floor(n / 65536) % 256, floor(n / 16777216) % 256) end

local function w_str(out, s) out[#out + 1] = "X" .. u32(#s) .. s end

local function w_num(out, v)
  if v == floor(v) and v > -SAFE_INT and v < SAFE_INT then
    if v >= 0 and v < 256 then out[#out + 1] = "K" .. char(v)
    elseif v >= 0 and v < 65536 then out[#out + 1] = "M" .. char(v % 256, floor(v / 256))
    elseif v >= -2 ^ 31 and v < 2 ^ 31 then out[#out + 1] = "J" .. u32(v < 0 and v + 2 ^ 32 or v)
    else
      dbl.i = v
      local b = {}
      for i = 0, 7 do b[i + 1] = char(tonumber(bit.band(bit.rshift(dbl.i, i * 8), 0xff))) end
      out[#out + 1] = "\138\8" .. table.concat(b)
    end
  else
    dbl.d = v
    local b = {}
    for i = 7, 0, -1 do b[#b + 1] = char(dbl.b[i]) end
    out[#out + 1] = "G" .. table.concat(b)
  end
end

local function w_tuple(out, list)
  out[#out + 1] = "("
  for _, v in ipairs(list) do w_num(out, v) end
  out[#out + 1] = "t"
end

local is_list = require("torch.serialization._lua_tables").is_list

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "boolean" then return (a and 1 or 0) < (b and 1 or 0) end
  return a < b
end

local function w_value(out, v, hooks, path, active, memo)
  local tv = type(v)
  if v == M.None then out[#out + 1] = "N"
  elseif tv == "boolean" then out[#out + 1] = v and "\136" or "\137"
  elseif tv == "number" then w_num(out, v)
  elseif tv == "string" then w_str(out, v)
  elseif hooks.is_tensor(v) then
    local d = hooks.tensor(v)
    local typed = M.dtype_storages[d.dtype]   -- else v3 over bytes, as PyTorch writes it
    if not typed and not V3_DTYPES[d.dtype] then error("save: dtype " .. tostring(d.dtype) .. " has no .pt form", 0) end
    out[#out + 1] = typed and "ctorch._utils\n_rebuild_tensor_v2\n((" or "ctorch._utils\n_rebuild_tensor_v3\n(("
    w_str(out, "storage")
    out[#out + 1] = typed and ("ctorch\n" .. typed .. "\n") or "ctorch.storage\nUntypedStorage\n"
    w_str(out, d.key)
    w_str(out, "cpu")
    w_num(out, typed and d.numel or d.numel * V3_DTYPES[d.dtype])
    out[#out + 1] = "tQ"
    w_num(out, d.offset or 0)
    w_tuple(out, d.size)
    w_tuple(out, d.stride)
    out[#out + 1] = "\137ccollections\nOrderedDict\n)R"
    if not typed then out[#out + 1] = "ctorch\n" .. d.dtype .. "\n" end
    out[#out + 1] = "tR"
  elseif tv == "table" then
    if active[v] then error(("save: %s refers to itself"):format(path), 0) end
    if getmetatable(v) ~= nil and rawget(v, "uninitialized") == true then   -- torch.nn.lazy's placeholder
      error(("save: %s is an uninitialized parameter or buffer of a lazy module: run a forward pass (or load a "
        .. "state dict) first, so it has a shape and values"):format(path), 0)
    end
    -- A table met again is written as a reference to its first copy (memo), as Python's
    -- pickler does for a shared list or dict: the file stays linear and loads shared.
    if memo[v] then out[#out + 1] = "j" .. u32(memo[v]); return end
    memo[v], memo.n = memo.n, memo.n + 1
    active[v] = true
    if is_list(v) then
      out[#out + 1] = "]r" .. u32(memo[v]) .. "("
      for i = 1, #v do w_value(out, v[i], hooks, path .. "[" .. i .. "]", active, memo) end
      out[#out + 1] = "e"
    else
      local keys = {}
      for k in pairs(v) do
        local tk = type(k)
        if tk ~= "string" and tk ~= "boolean" and not (tk == "number" and k == floor(k)) then
          error(("save: %s has a key of type %s (keys are strings or integers)"):format(path, tk), 0)
        end
        keys[#keys + 1] = k
      end
      table.sort(keys, key_less)
      out[#out + 1] = "}r" .. u32(memo[v])
      if #keys > 0 then
        out[#out + 1] = "("
        for _, k in ipairs(keys) do
          w_value(out, k, hooks, path, active, memo)
          w_value(out, v[k], hooks, path .. "." .. tostring(k), active, memo)
        end
        out[#out + 1] = "u"
      end
    end
    active[v] = nil
  else
    error(("save: %s is a %s; checkpoints hold tensors, numbers, strings, booleans and tables"):format(path, tv), 0)
  end
end

function M.dump(value, hooks)
  local out = { "\128\2" }
  w_value(out, value, hooks, "value", {}, { n = 0 })
  out[#out + 1] = "."
  return table.concat(out)
end

return M
