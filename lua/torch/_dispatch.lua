--[[
  torch._dispatch — the generated op surface: every overload listed in torch._gen.ops (from
  libtorch's native_functions.yaml) callable as torch.X(...) and x:X(...), through the boxed
  dispatcher in bindings/lt_dispatch.cpp.

  Resolution follows PyTorch's Python binding: the overloads of a name are tried in order
  (those taking Tensors before those taking Scalars at the same position); positional Lua
  arguments fill the non-keyword-only parameters, a trailing table of string keys supplies
  parameters by name (keyword-only ones such as `out`, `dtype`, `alpha`), PyTorch's defaults
  fill the rest. The first overload whose parameters all accept the given values wins. An
  integral Lua number is a Python int, so it matches `int` and `Scalar`, never only `float`.

  Results: one tensor -> a tensor; several -> several Lua values; Tensor[] -> a Lua array;
  an in-place or out= result that aliases an argument returns that same argument object.

  Usage:  local dispatch = require "torch._dispatch"
          dispatch.function_for("logaddexp")(a, b);  dispatch.method_for("addcmul")
          dispatch.entries("add"), dispatch.each_entry(), dispatch.names()  -- the raw entries
          torch._ops  -- the array of bound overloads (entries of torch._gen.ops found in libtorch)

  Lua values become lt_values (and results come back) in torch._dispatch_values; this file
  finds the overloads, binds arguments to parameters and makes the call.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local schema = require "torch._schema"
local args = require "torch._args"
local lt_values = require "torch._dispatch_values"
local binders = require "torch._dispatch_binders"
local gen = require "torch._gen.ops"

local C, Ref, state = _C.C, _C.Ref, _C.state
local istype = ffi.istype
local wrap, reclaim, LT_ERR_MEMORY = memory.wrap, memory.reclaim, memory.LT_ERR_MEMORY
local pack, unpack_results, V = lt_values.pack, lt_values.unpack_results, lt_values.V
local TensorHandle = lt_values.TensorHandle

local M = {}

local MAX_ARGS, MAX_RESULTS = 64, 16
local ValueArray, CountOut = ffi.typeof("lt_value[?]"), ffi.typeof("int[1]")
-- The call buffers, shared by calls that do not overlap. A call can overlap another: packing
-- arguments and wrapping results allocate, an allocation can run a finalizer, and a finalizer
-- may call an op. `in_call` marks the shared buffers as taken; a nested call gets its own. (An
-- error raised by a finalizer, a hook or the allocator in the middle of a call can leave the mark
-- set: later calls then allocate their own buffers too, slower but still right, and the shared
-- tables below keep that one call's arguments referenced.)
local argv = ValueArray(MAX_ARGS)
local results = ValueArray(MAX_RESULTS)
local nresults = CountOut()
local in_call = false
--[[ The tables a call's binding fills, shared like the buffers: `keep` holds the cdata packed so
     far (a Tensor list packed for one overload is reused by the next: torch._dispatch_values)
     and `bound` the values bound to parameters. Emptied when the call ends (done()), so they
     hold nothing between calls; a nested call makes its own. ]]
local table_new = require "table.new"
-- Sized so that their integer keys stay in the array part: shared_args stores nil into the unused
-- slots up to 8, and storing nil under a key a table does not hold adds that key to its hash part,
-- which then rehashed (and shrank) on every call (docs/PERFORMANCE.md, optimisation 27).
local shared_positional, shared_keep, shared_bound = table_new(8, 0), {}, table_new(16, 0)
local clear = require "table.clear"

-- Ends a call: frees the shared buffers (outer: the call was nested and used its own).
local function done(outer)
  if not outer then clear(shared_positional); clear(shared_keep); clear(shared_bound) end
  in_call = outer
end

-- The arguments into the shared table, as torch._args.pack puts them in a new one (which more
-- than 8 arguments take).
local function shared_args(...)
  local n = select("#", ...)
  if n > 8 then return args.pack(...) end
  local t = shared_positional
  local a1, a2, a3, a4, a5, a6, a7, a8 = ...
  t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8] = a1, a2, a3, a4, a5, a6, a7, a8
  return t, n
end
local op_out = ffi.new("lt_op*[1]")

---------------------------------------------------------------- the entries
--[[ torch._gen.ops keeps every entry as a line of one string ("func\tvariants[\tmodule]"), and no
     per-name index is built: both keep the collector's work per cycle small (a string is marked
     at no cost, 2,400 entry tables and their strings are not; see docs/PERFORMANCE.md,
     optimisation 7). A name's entries are found by a plain search when it is first used;
     overloads() caches what it parses. ]]
local entries_text = gen.ops   -- starts with "\n": each line, the first too, follows a newline
assert(entries_text:sub(1, 1) == "\n", "torch._gen.ops: regenerate it with tools/gen_ops.lua")
local find, sub, byte = string.find, string.sub, string.byte
local OPEN_PAREN, DOT = byte("("), byte(".")

local function entry_of(line)
  local func, variants, module = line:match("^([^\t]+)\t([^\t]*)\t?([^\t]*)$")
  return { func, variants, module ~= "" and module or nil }
end

-- The entries of a schema name, in file order: arrays {func line, variants, python module or nil}.
function M.entries(name)
  local list = {}
  local key = "\n" .. name
  local init = 1
  while true do
    local s, e = find(entries_text, key, init, true)
    if not s then break end
    local c = byte(entries_text, e + 1)
    if c == OPEN_PAREN or c == DOT then
      local line_end = find(entries_text, "\n", e + 1, true) or #entries_text + 1
      list[#list + 1] = entry_of(sub(entries_text, s + 1, line_end - 1))
      init = line_end
    else
      init = e + 1
    end
  end
  return list
end

-- Every entry: for func, variants, module in dispatch.each_entry() do ... end (module nil or a name).
function M.each_entry()
  local lines = entries_text:gmatch("\n([^\n]+)")
  return function()
    local line = lines()
    if line then return unpack(entry_of(line), 1, 3) end
  end
end

-- The set of schema names: { name = true }.
function M.names()
  local names = {}
  for name in entries_text:gmatch("\n([%w_]+)[%.(]") do names[name] = true end
  return names
end

---------------------------------------------------------------- overloads
local function order_key(parsed)
  -- Tensor parameters before Scalar ones (PyTorch's sort_overloads); out= variants last (they
  -- match only when `out` is given, so trying them last costs nothing and reads better).
  local key = 0
  for i, a in ipairs(parsed.args) do
    if a.type == "Scalar" then key = key + 2 ^ (-i) end
    if a.kwarg_only and a.writes then key = key + 1000 end
  end
  return key
end

-- PyTorch's varargs rule: a lone positional int[] parameter also takes its ints one by one
-- (x:repeat(2, 1, 2) is x:repeat({2, 1, 2}), as x.repeat(2, 1, 2) is in Python). The parameter
-- when the rule applies to a call as a function (skip_self false) or a method, else false.
local function lone_int_list(params, skip_self)
  local lone
  for _, p in ipairs(params) do
    if not p.kwarg_only and not (skip_self and p.name == "self") then
      if lone ~= nil then return false end
      lone = p
    end
  end
  return (lone and lone.list and (lone.type == "int" or lone.type == "SymInt")) and lone or false
end

--[[ What a call needs to know about an overload, worked out once instead of on every call: which
     variants it has, the varargs rule for either kind of call, and which parameters an in-place
     or out= result aliases (the k-th Tensor parameter annotated (a!) for the k-th such result). ]]
local function prepare(parsed)
  parsed.is_function = parsed.variants:find("f", 1, true) ~= nil
  parsed.is_method = parsed.variants:find("m", 1, true) ~= nil
  parsed.nargs = #parsed.args
  parsed.lone_function = lone_int_list(parsed.args, false)
  parsed.lone_method = lone_int_list(parsed.args, true)
  local written = {}
  for j, p in ipairs(parsed.args) do
    if p.writes and p.type == "Tensor" and not p.list then written[#written + 1] = j end
  end
  parsed.written = written
  local aliased_returns = false
  for _, r in ipairs(parsed.returns) do if r.writes then aliased_returns = true end end
  parsed.aliased_returns = aliased_returns
end

--[[ The schema the loaded libtorch registered for an operator, parsed; nil plus the text when it
     cannot be parsed. Overloads are bound against it rather than against the generated table's
     func line: the table names what exists and how it is exposed (variants, python module), the
     library decides the arguments. With the libtorch the table came from the two parse the same
     (checked op by op in spec/torch/dispatch_schema_spec.lua); with another (a PyTorch 2.x
     libtorch under an op table of 1.13) an overload whose arguments changed is still called with
     the arguments that library expects, never with a stale list. ]]
local schema_text = ffi.new("const char *[1]")
local function live_schema(op)
  if C.lt_op_schema(op, schema_text) ~= 0 then return nil, "(no schema)" end
  local text = ffi.string(schema_text[0]):gsub("^aten::", "")
  local ok, parsed = pcall(schema.parse, text)
  if ok then return parsed end
  -- only the parser's own refusal leaves the overload out; any other error (a memory error, a
  -- host's hook) goes on, or the overload would be missing from the cache for good
  if type(parsed) ~= "string" or not parsed:find("schema: cannot parse", 1, true) then error(parsed, 0) end
  return nil, text
end
M.live_schema = live_schema

-- Parsed, resolved overloads for a name ({entry, op} in trial order); cached per state.
local function overloads(name)
  local cache = state.op_overloads or {}
  state.op_overloads = cache
  local list = cache[name]
  if list then return list end
  list = {}
  for _, e in ipairs(M.entries(name)) do
    local op_name, overload = e[1]:match("^%s*([%w_]+)%.?([%w_]*)%(")
    local ok = C.lt_op_find(op_out, "aten::" .. op_name, overload)
    -- An overload whose registered schema this parser cannot read is left out (the C side would
    -- refuse a call with a wrong argument count anyway; see lt_op_call).
    local parsed = ok == 0 and op_out[0] ~= nil and live_schema(op_out[0])
    if parsed then
      parsed.op = op_out[0]
      parsed.variants = e[2]
      parsed.module = e[3]
      parsed.order = order_key(parsed)
      parsed.position = #list
      prepare(parsed)
      list[#list + 1] = parsed
    end
  end
  table.sort(list, function(a, b)
    if a.order ~= b.order then return a.order < b.order end
    return a.position < b.position
  end)
  cache[name] = list
  return list
end
M.overloads = overloads

--[[ Why an overload did not bind: a format and its arguments, made into text only when the call
     fails (a foreach op with a Scalar argument tries two overloads before the one that binds,
     and formatting each reason cost a string per try). MISMATCH's arguments are the
     parameter's name, what it expects, the value and whether it was given (else the default). ]]
local REPEATED, MISSING = "got multiple values for argument '%s'", "missing argument '%s'"
local MISMATCH, TOO_MANY = "argument '%s' must be %s, got %s", "takes %d positional arguments, got %d"
local UNKNOWN_KEYWORD = "unexpected keyword '%s'"

local function reason_text(why, a, b, v, given)
  if why == MISMATCH then return MISMATCH:format(a, b, given and args.typename(v) or "default") end
  return why:format(a, b)
end

--[[ Binds Lua arguments to one overload's parameters. Returns the number of packed values, or
     nil plus why (a format above) and its arguments. `self_obj` (for methods) goes to the
     parameter named self. ]]
local function bind(entry, self_obj, positional, npos, kwargs, keep, bound, values)
  local params = entry.args
  if npos > 1 then
    local lone = self_obj ~= nil and entry.lone_method or entry.lone_function
    if lone then positional, npos = { { unpack(positional, 1, npos) } }, 1 end
  end
  local pi = 1
  local used_kw = 0
  for i = 1, entry.nargs do
    local p = params[i]
    local v, given
    if self_obj ~= nil and p.name == "self" then
      v, given = self_obj, true
      if kwargs and kwargs.self ~= nil then return nil, REPEATED, "self" end
    elseif not p.kwarg_only and pi <= npos then
      v, given = positional[pi], true
      pi = pi + 1
      if kwargs and kwargs[p.name] ~= nil then
        return nil, REPEATED, p.name
      end
    elseif kwargs and kwargs[p.name] ~= nil then
      v, given = kwargs[p.name], true
      used_kw = used_kw + 1
    elseif p.has_default then
      v = p.default
    elseif p.optional then
      v = nil
    else
      return nil, MISSING, p.name
    end
    local ok, expected = pack(p, v, values[i - 1], keep)
    if not ok then
      return nil, MISMATCH, p.name, expected, v, given
    end
    bound[i] = v
  end
  if pi <= npos then return nil, TOO_MANY, pi - 1, npos end
  if kwargs then
    local n = 0
    for _ in pairs(kwargs) do n = n + 1 end
    if n ~= used_kw then
      for k in pairs(kwargs) do
        local known = false
        for _, p in ipairs(params) do if p.name == k then known = true end end
        if not known then return nil, UNKNOWN_KEYWORD, tostring(k) end
      end
    end
  end
  return entry.nargs
end

M.bind = bind   -- for spec/torch/dispatch_binders_spec.lua, which checks the generated binders against it

local function signatures(list, display)
  local lines = {}
  for _, e in ipairs(list) do lines[#lines + 1] = "  " .. schema.signature(e, display) end
  return table.concat(lines, "\n")
end

-- Errors name the user's line: the first caller outside lua/torch/ (ltorch's own wrappers, fast
-- paths and layers call ops too, in tail position or not). Returns a level for call()'s error().
local LIBRARY = debug.getinfo(1, "S").source:match("^(@.*/)[^/]+$")
local function user_level()
  local level = 3   -- 1: user_level, 2: call, 3: call's caller
  while LIBRARY do
    local info = debug.getinfo(level, "S")
    if info == nil or info.source:sub(1, #LIBRARY) ~= LIBRARY then break end
    level = level + 1
  end
  return level - 1
end

--[[ Calls the overload `entry` with its n arguments packed in av; returns its results. `outer`:
     the caller's in_call (done() ends the call with it). `bound` holds the arguments, and a
     nested call's holds its `keep` (the shared one is an upvalue): call() hands over to this
     function in a tail call, so these are what keeps the objects behind av's pointers alive
     through a collection made before the call returns (an out-of-memory retry, a finalizer). ]]
local function invoke(display, entry, n, outer, av, rv, nr, bound)
  local status = C.lt_op_call(entry.op, av, n, rv, MAX_RESULTS, nr)
  -- out of memory: collect the garbage tensors, empty the caches, retry once (torch._memory);
  -- not an op that writes its arguments (in-place, out=), which may have written some
  if status == LT_ERR_MEMORY and not entry.aliased_returns and reclaim(status) then
    status = C.lt_op_call(entry.op, av, n, rv, MAX_RESULTS, nr)
  end
  if status ~= 0 then
    done(outer)
    local msg = _C.last_error()
    -- libtorch's own message may already name the op ("torch.lu_unpack: Expected tensor ...")
    if msg:sub(1, #display + 2) ~= display .. ": " then msg = display .. ": " .. msg end
    error(msg, user_level())
  end
  local count = nr[0]
  if count == 0 then done(outer); return end
  local r = rv[0]
  if count == 1 and r.tag == V.TENSOR and not entry.aliased_returns then
    -- the common case, one fresh tensor: no result table
    local t = wrap(ffi.cast(TensorHandle, r.p))
    done(outer)
    return t
  end
  local outs
  outs, count = unpack_results(entry, count, bound, rv)
  done(outer)
  return unpack(outs, 1, count)
end

--[[ The generated binders of an overload list for positional calls (torch._dispatch_binders),
     made when the list is first called that way: methods and functions bind `self` differently. ]]
local positional_binders = setmetatable({}, { __mode = "k" })
local function binders_of(list, is_method)
  local pair = positional_binders[list]
  if pair == nil then pair = {}; positional_binders[list] = pair end
  local try = pair[is_method]
  if try == nil then
    try = binders.for_overloads(list, is_method, bind)
    pair[is_method] = try
  end
  return try
end

-- Calls the overloads in `list` with Lua arguments; self_obj non-nil for a method call.
local function call(display, list, self_obj, ...)
  -- not `{ ... }` (see torch._args.pack: with 4 arguments, as _foreach_addcdiv_ in every Adam
  -- step gets, that constructor made a chain of side traces: docs/PERFORMANCE.md, optimisation 9)
  local outer = in_call
  in_call = true   -- before anything allocates: an op called by a finalizer takes its own buffers
  local positional, npos, av, rv, nr, keep, bound
  if outer then
    positional, npos = args.pack(...)
    av, rv, nr = ValueArray(MAX_ARGS), ValueArray(MAX_RESULTS), CountOut()
    keep = {}
    bound = { keep = keep }   -- (see invoke)
  else
    positional, npos = shared_args(...)
    av, rv, nr, keep, bound = argv, results, nresults, shared_keep, shared_bound
  end
  if npos > 0 and positional[npos] == nil then   -- trailing nils mean "not given"
    repeat npos = npos - 1 until npos == 0 or positional[npos] ~= nil
  end
  local kwargs = nil
  if npos > 0 and args.is_options(positional[npos]) then
    kwargs = positional[npos]
    positional[npos] = nil
    npos = npos - 1
  else
    -- no keyword table: the generated binders, straight-line code the JIT compiles
    local entry, n = binders_of(list, self_obj ~= nil)(self_obj, positional, npos, av, keep, bound)
    if entry then return invoke(display, entry, n, outer, av, rv, nr, bound) end
  end
  -- the first overload's reason for not binding (why and its arguments), and the first repeated
  -- argument's name
  local why, why_a, why_b, why_v, why_given, repeated
  -- the overloads tried share keep and bound (bind sets bound[i] up to the overload's own count)
  for _, entry in ipairs(list) do
    if (self_obj == nil and entry.is_function) or (self_obj ~= nil and entry.is_method) then
      local n, reason, a, b, v, given = bind(entry, self_obj, positional, npos, kwargs, keep, bound, av)
      if n then return invoke(display, entry, n, outer, av, rv, nr, bound) end
      if why == nil then why, why_a, why_b, why_v, why_given = reason, a, b, v, given end
      if reason == REPEATED and repeated == nil then repeated = a end
    end
  end
  -- Python's TypeError for f(x, y, other=z): the keyword repeats a positional argument.
  if repeated then done(outer); error(("%s() " .. REPEATED):format(display, repeated), user_level()) end
  local given = {}
  if self_obj ~= nil then given[1] = "Tensor self" end
  for i = 1, npos do given[#given + 1] = args.typename(positional[i]) end
  if kwargs then
    for k, v in pairs(kwargs) do given[#given + 1] = tostring(k) .. "=" .. args.typename(v) end
  end
  done(outer)
  error(("%s: no overload accepts (%s): %s\naccepted signatures:\n%s"):format(display, table.concat(given, ", "),
    why and reason_text(why, why_a, why_b, why_v, why_given) or "no matching variant", signatures(list, display)),
    user_level())
end

-- torch.X for a schema name, or nil when no function variant exists.
function M.function_for(name, display)
  local list = overloads(name)
  local any = false
  for _, e in ipairs(list) do if e.is_function then any = true end end
  if not any then return nil end
  display = display or ("torch." .. name)
  return function(...) return call(display, list, nil, ...) end
end

-- x:X for a schema name, or nil when no method variant exists.
function M.method_for(name)
  local list = overloads(name)
  local any = false
  for _, e in ipairs(list) do if e.is_method then any = true end end
  if not any then return nil end
  local display = "Tensor." .. name
  return function(self, ...)
    if not istype(Ref, self) then args.bad(name, 1, "Tensor", args.typename(self)) end
    return call(display, list, self, ...)
  end
end

-- Every overload found in the loaded libtorch (the count issue #3 reports).
function M.all_ops()
  local all = {}
  for name in pairs(M.names()) do
    for _, e in ipairs(overloads(name)) do all[#all + 1] = e end
  end
  return all
end

-- Names of generated functions in a python module (nn, linalg, special, fft) -> short names.
function M.module_names(module)
  local names = {}
  for func, _, m in M.each_entry() do
    if m == module then names[func:match("^[%w_]+")] = true end
  end
  return names
end

return M
