--[[
  torch._dispatch_binders — straight-line Lua, made once per op name with `load`, that binds a
  call's positional arguments to the overloads of that name, for torch._dispatch.

  torch._dispatch's `bind` interprets an overload's schema on every call: a loop over the
  parameters, each sent through a table of packers by type. Its loops start their own traces and
  each op's different parameter types send them to side exits, so that binding ran interpreted
  (docs/PERFORMANCE.md, "The training step's Lua side, cut down"). For a call without a keyword
  table — the common form: `torch.relu(x)`, `x:add(y)`, `torch._foreach_lerp_(ps, gs, 0.1)` —
  this file writes out what that loop would do for each overload, parameter by parameter, with
  the position, default and type of each fixed in the code. The JIT compiles it into the caller's
  trace like any other Lua.

  The binders are exact: a binder answers the parameter count when, and only when, `bind` would
  bind the overload with the same arguments, and it writes the same slots (Tensor, Scalar, int,
  float and bool parameters are written inline as torch._dispatch_values would; every other type
  goes through its `pack`). A call none binds goes on to `bind`, which says why.

  Usage:  local binders = require "torch._dispatch_binders"
          local try = binders.for_overloads(list, is_method, bind)   -- list: torch._dispatch's
          local entry, n = try(self_obj, positional, npos, slots, keep, bound)  -- nil: none bound
]]
local ffi = require "ffi"
local _C = require "torch._C"
local lt_values = require "torch._dispatch_values"

local M = {}

local V = lt_values.V
-- The generated chunks are named after this file, so torch._dispatch counts them as the library
-- when it looks for the user's line.
local CHUNK_NAME = debug.getinfo(1, "S").source .. " (generated)"

-- A default as a Lua expression: a literal where it is a plain value, else read from the schema.
local function default_expr(p, k, i)
  local d = p.default
  local t = type(d)
  if d == nil then return "nil"
  elseif t == "boolean" then return tostring(d)
  elseif t == "string" then return ("%q"):format(d)
  elseif t == "number" then
    if d ~= d then return "(0/0)" end
    if d == math.huge then return "(1/0)" elseif d == -math.huge then return "(-1/0)" end
    return ("%.17g"):format(d)
  end
  return ("A%d[%d].default"):format(k, i)
end

-- What an absent parameter gets (bind's order: its default, nil when optional, else no binding).
local function absent(p, k, i)
  if p.has_default then return "v = " .. default_expr(p, k, i) end
  if p.optional then return "v = nil" end
  return "return false"
end

-- The Lua that packs `v` into slot i - 1 for parameter p (as torch._dispatch_values.pack does).
local INLINE = {
  Tensor = "if istype(Ref, v) then s.tag, s.p = %d, v.h",
  Scalar = "if type(v) == 'number' then\n"
    .. "      if v == floor(v) and v > -2^63 and v < 2^63 then s.tag, s.i = %d, v else s.tag, s.d = %d, v end\n"
    .. "    elseif type(v) == 'boolean' then s.tag, s.i = %d, v and 1 or 0",
  int = "if type(v) == 'number' and v == floor(v) and v > -2^63 and v < 2^63 then s.tag, s.i = %d, v",
  float = "if type(v) == 'number' then s.tag, s.d = %d, v",
  bool = "if type(v) == 'boolean' then s.tag, s.i = %d, v and 1 or 0",
}
INLINE.SymInt = INLINE.int
local INLINE_TAGS = {
  Tensor = { V.TENSOR }, Scalar = { V.SCALAR_INT, V.SCALAR_DOUBLE, V.SCALAR_BOOL },
  int = { V.INT }, SymInt = { V.INT }, float = { V.DOUBLE }, bool = { V.BOOL },
}

local function pack_code(p, k, i)
  local inline = not p.list and INLINE[p.type]
  if not inline then
    return ("if not pack(A%d[%d], v, slots[%d], keep) then return false end"):format(k, i, i - 1)
  end
  local lines = { ("s = slots[%d]"):format(i - 1), inline:format(unpack(INLINE_TAGS[p.type])) }
  if p.optional then lines[#lines + 1] = ("    elseif v == nil then s.tag = %d"):format(V.NONE) end
  lines[#lines + 1] = "    else return false end"
  return table.concat(lines, "\n    ")
end

-- Whether an overload can bind without a keyword table (an out= variant's `out` cannot).
local function positional_only_possible(entry)
  for _, p in ipairs(entry.args) do
    if p.kwarg_only and not p.has_default and not p.optional then return false end
  end
  return true
end

-- The source of binder number k: function(self_obj, pos, npos, slots, keep, bound) -> n or false.
local function binder_source(entry, k, is_method)
  local out = {}
  local function emit(s, ...) out[#out + 1] = "  " .. s:format(...) end
  out[1] = ("local function b%d(self_obj, pos, npos, slots, keep, bound)"):format(k)
  if is_method and entry.lone_method or not is_method and entry.lone_function then
    -- PyTorch's varargs rule (x:view(2, 3) is x:view({2, 3})) regroups the arguments: bind's job
    emit("if npos > 1 then return bind(E%d, self_obj, pos, npos, nil, keep, bound, slots) or false end", k)
  end
  local positional = 0
  for _, p in ipairs(entry.args) do
    if not p.kwarg_only and not (is_method and p.name == "self") then positional = positional + 1 end
  end
  emit("if npos > %d then return false end", positional)
  emit("local v, s")
  local next_pos = 0
  for i, p in ipairs(entry.args) do
    if is_method and p.name == "self" then
      emit("v = self_obj")
    elseif not p.kwarg_only then
      next_pos = next_pos + 1
      emit("if npos >= %d then v = pos[%d] else %s end", next_pos, next_pos, absent(p, k, i))
    else
      emit("%s", absent(p, k, i))
    end
    emit("%s", pack_code(p, k, i))
    -- every value, as bind does: results that alias an argument are found here, and the table
    -- keeps the Lua objects whose handles were packed alive until the call has returned
    emit("bound[%d] = v", i)
  end
  emit("return %d", entry.nargs)
  out[#out + 1] = "end"
  return table.concat(out, "\n")
end

--[[ A function trying the overloads of `list` (torch._dispatch's, in trial order) of one kind
     (methods or functions) on positional arguments: (self_obj, pos, npos, slots, keep, bound) ->
     the entry that bound and its parameter count, or nil when none did. `bind` is
     torch._dispatch's general binder, used for the varargs rule. ]]
function M.for_overloads(list, is_method, bind)
  local chosen = {}
  for _, entry in ipairs(list) do
    if (is_method and entry.is_method or not is_method and entry.is_function)
        and positional_only_possible(entry) then
      chosen[#chosen + 1] = entry
    end
  end
  local src = { "local U = ...",
    "local istype, Ref, pack, bind, floor = U.istype, U.Ref, U.pack, U.bind, math.floor" }
  for k = 1, #chosen do src[#src + 1] = ("local E%d = U[%d]; local A%d = E%d.args"):format(k, k, k, k) end
  for k, entry in ipairs(chosen) do src[#src + 1] = binder_source(entry, k, is_method) end
  src[#src + 1] = "return function(self_obj, pos, npos, slots, keep, bound)"
  src[#src + 1] = "  local n"
  for k = 1, #chosen do
    src[#src + 1] = ("  n = b%d(self_obj, pos, npos, slots, keep, bound); if n then return E%d, n end"):format(k, k)
  end
  src[#src + 1] = "  return nil\nend"
  local chunk = assert(load(table.concat(src, "\n"), CHUNK_NAME, "t"))
  local U = { istype = ffi.istype, Ref = _C.Ref, pack = lt_values.pack, bind = bind }
  for k, entry in ipairs(chosen) do U[k] = entry end
  return chunk(U)
end

return M
