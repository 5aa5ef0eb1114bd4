--[[
  torch._indexing — x[...] read and write, PyTorch's subscript grammar in Lua syntax.
  Indices are 0-based; negative ones count from the end.

      x[0]                  first row (select, drops the dim)        x[-1]     last row
      x[{0, 2}]             x[0, 2]
      x[{{}, 1}]            x[:, 1]        ({} is a full slice ":")
      x[{{1, 3}}]           x[1:3]         ({start, stop, step}; stop exclusive, any may be nil)
      x[{":", "1:3", 0}]    the same with Python slice strings; "::2", "-2:" also work
      x[{"...", 0}]         x[..., 0]      ("..." is Ellipsis)
      x[{torch.newaxis}]    x[None]        (also the string "None")
      x[mask]               boolean mask selection        x[idx]   integer index tensor
      x[{0, {}}] = 5        assignment of a number or a broadcastable tensor
      x[{}]                 the whole tensor, Python's x[()]

  Usage: installed into the Tensor metatype by torch.init; nothing to call directly.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"

local C, check, Ref, state = _C.C, _C.check, _C.Ref, _C.state
local wrap = memory.wrap
local istype = ffi.istype

local M = {}
local out = _C.TensorOut()
local MAX_ITEMS = 64
local items = ffi.new("lt_index[?]", MAX_ITEMS)

-- The None sentinel (torch.newaxis); a unique table so it cannot collide with user data.
M.newaxis = setmetatable({}, { __tostring = function() return "torch.newaxis" end })

local INT, SLICE, NONE, ELLIPSIS, TENSOR, BOOL = 0, 1, 2, 3, 4, 5

local function slice_bound(v, what, pos)
  if v == nil or v == "" then return 0, 0 end
  local n = tonumber(v)
  if n == nil or not args.is_int(n) then
    error(("index: slice %s at position %d must be an integer, got %s"):format(what, pos, tostring(v)), 0)
  end
  return 1, n
end

local function set_slice(it, start, stop, step, pos)
  it.kind = SLICE
  it.has_start, it.start = slice_bound(start, "start", pos)
  it.has_stop, it.stop = slice_bound(stop, "stop", pos)
  local _, s = slice_bound(step, "step", pos)
  if step == nil or step == "" then s = 1 end
  if s <= 0 then error(("index: slice step at position %d must be positive, got %d"):format(pos, s), 0) end
  it.step = s
end

local function fill_item(it, v, pos)
  it.tensor = nil
  local tv = type(v)
  if tv == "number" then
    if not args.is_int(v) then error(("index: position %d must be an integer, got %s"):format(pos, tostring(v)), 0) end
    it.kind, it.start = INT, v
  elseif tv == "boolean" then
    it.kind, it.start = BOOL, v and 1 or 0
  elseif istype(Ref, v) then
    it.kind, it.tensor = TENSOR, v.h
  elseif v == M.newaxis or v == "None" then
    it.kind = NONE
  elseif v == "..." then
    it.kind = ELLIPSIS
  elseif tv == "string" then
    local a, b, c = v:match("^%s*(-?%d*)%s*:%s*(-?%d*)%s*:?%s*(-?%d*)%s*$")
    if a == nil then
      error(("index: bad slice string '%s' at position %d (expected like \":\", \"1:3\", \"::2\", \"...\")"):format(v, pos), 0)
    end
    set_slice(it, a, b, c, pos)
  elseif tv == "table" then
    set_slice(it, v.start or v[1], v.stop or v[2], v.step or v[3], pos)
  else
    error(("index: unsupported index of type %s at position %d"):format(args.typename(v), pos), 0)
  end
end

-- Fills item i from key[i]; returns the count of ellipses so far.
local function fill_at(key, i, ellipses)
  local it = items[i - 1]
  fill_item(it, key[i], i)
  return it.kind == ELLIPSIS and ellipses + 1 or ellipses
end

--[[ Fills the items array from a key; returns the count. Errors are raised at the user's level.
     Kept compilable inside the caller's loop (`for ... do y = x[{0, {2, 5}}] end`): the count is
     #key, not table.maxn (a C function that ends the trace, and the piece after it could not
     return to the metamethod: nothing compiled); up to 4 items are filled without a loop (a loop
     here is an inner loop of the caller's trace, which LuaJIT refuses to compile). #key may stop
     at a hole ({0, nil, 2}); maxn, which counts to the last item so that the nil raises, is
     asked when a table has no array part or an item follows the border within two places. ]]
local function parse(key)
  if type(key) == "table" and key ~= M.newaxis then
    local n = #key
    if n == 0 or key[n + 2] ~= nil or key[n + 3] ~= nil then n = table.maxn(key) end
    if n > MAX_ITEMS then error("index: too many indices (" .. n .. ")", 0) end
    local ellipses = 0
    if n <= 4 then
      if n >= 1 then ellipses = fill_at(key, 1, ellipses) end
      if n >= 2 then ellipses = fill_at(key, 2, ellipses) end
      if n >= 3 then ellipses = fill_at(key, 3, ellipses) end
      if n == 4 then ellipses = fill_at(key, 4, ellipses) end
    else
      for i = 1, n do ellipses = fill_at(key, i, ellipses) end
    end
    if ellipses > 1 then error("index: an index can only have a single ellipsis ('...')", 0) end
    if n == 0 then  -- x[{}] is Python's x[()]: the whole tensor, like x[...]
      items[0].kind, items[0].tensor = ELLIPSIS, nil
      return 1
    end
    return n
  end
  fill_item(items[0], key, 1)
  return 1
end

-- Levels: the metatype's __index/__newindex tail-call these, so level 2 is the user's code.
function M.get(self, key)
  local ok, n = pcall(parse, key)
  if not ok then error(n, 2) end
  check(C.lt_index_get(out, self.h, items, n), "index")
  return wrap(out[0])
end

function M.set(self, key, value)
  local ok, n = pcall(parse, key)
  if not ok then error(n, 2) end
  if istype(Ref, value) then
    check(C.lt_index_put_(self.h, items, n, value.h), "index assignment")
  else
    local v, kind = args.scalar(value)
    if v == nil then
      error(("index assignment: expected a Tensor, number or boolean value, got %s"):format(args.typename(value)), 2)
    end
    check(C.lt_index_put_scalar_(self.h, items, n, v, kind), "index assignment")
  end
end

state.index_get, state.index_set = M.get, M.set

return M
