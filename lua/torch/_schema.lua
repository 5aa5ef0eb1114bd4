--[[
  torch._schema — parses one ATen operator schema, the `func:` line of native_functions.yaml:

      add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
      max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

  into { name = "add", overload = "Tensor", args = {...}, returns = {...} }, where each arg is
  { name =, type = "Tensor" (the base type), optional = bool, list = nil | 0 (any length) | N,
    writes = bool (an `(a!)` alias annotation), kwarg_only = bool, default = Lua value or nil,
    has_default = bool } and each return { type =, optional =, list =, writes =, name = }.
  `unsupported(entry)` says why an entry cannot be bound from Lua (nil when it can).

  Shared by the generator (tools/gen_ops.lua, to classify entries) and the runtime dispatcher
  (torch._dispatch, which parses an entry the first time it is called).

  Usage:  local schema = require "torch._schema"; local e = schema.parse(func_line)
]]
local M = {}

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- Splits on commas that are not inside (), [] or quotes (a backslash escapes a quote inside one).
local function split_top(s)
  local parts, depth, start, quote, escaped = {}, 0, 1, nil, false
  for i = 1, #s do
    local c = s:sub(i, i)
    if escaped then
      escaped = false
    elseif quote then
      if c == "\\" then escaped = true
      elseif c == quote then quote = nil end
    elseif c == "'" or c == '"' then quote = c
    elseif c == "(" or c == "[" then depth = depth + 1
    elseif c == ")" or c == "]" then depth = depth - 1
    elseif c == "," and depth == 0 then
      parts[#parts + 1] = trim(s:sub(start, i - 1))
      start = i + 1
    end
  end
  local last = trim(s:sub(start))
  if last ~= "" then parts[#parts + 1] = last end
  return parts
end

-- "Tensor(a!)[]?" -> base "Tensor", list 0, optional true, writes true; "int[2]" -> list 2.
local function parse_type(t)
  local writes = t:find("!%)") ~= nil
  t = t:gsub("%b()", "")
  local info = { writes = writes, optional = false }
  if t:sub(-1) == "?" then info.optional, t = true, t:sub(1, -2) end
  local base, dims = t:match("^([%w_:]+)%[(%d*)%]$")
  if base then
    info.list = tonumber(dims) or 0
    if base:sub(-1) == "?" then info.element_optional, base = true, base:sub(1, -2) end
    t = base
  elseif t:match("^[%w_]+%?%[%]$") then
    info.list, info.element_optional, t = 0, true, t:match("^([%w_]+)")
  end
  info.type = t
  return info
end

-- Enum-like defaults in the schema, as PyTorch's code generator maps them.
local named_defaults = {
  Mean = 1, Sum = 2, None_ = 0, contiguous_format = 0, preserve_format = 1, channels_last = 2,
  long = 4, int = 3, float = 6, double = 7, strided = 0,
}

local function parse_default(raw, info)
  if raw == "None" then return nil end
  if raw == "True" then return true end
  if raw == "False" then return false end
  if raw:match("^%[.*%]$") then
    local list = {}
    for _, item in ipairs(split_top(raw:sub(2, -2))) do list[#list + 1] = parse_default(item, {}) end
    return list
  end
  local q = raw:match("^'(.*)'$") or raw:match('^"(.*)"$')
  if q then return (q:gsub("\\(.)", "%1")) end
  if raw == "inf" then return math.huge end
  if raw == "-inf" then return -math.huge end
  local n = tonumber(raw)
  if n then
    -- int[N] x=1 means {1, 1, ...}
    if info.list and info.list > 0 then
      local list = {}
      for i = 1, info.list do list[i] = n end
      return list
    end
    return n
  end
  if named_defaults[raw] ~= nil then return named_defaults[raw] end
  return raw
end

function M.parse(func)
  local head, params, rets = func:match("^%s*([%w_%.]+)(%b())%s*%->%s*(.-)%s*$")
  if not head then error("schema: cannot parse '" .. func .. "'", 2) end
  local name, overload = head:match("^([%w_]+)%.?([%w_]*)$")
  local entry = { name = name, overload = overload or "", args = {}, returns = {}, func = func }
  local kwarg_only = false
  for _, p in ipairs(split_top(params:sub(2, -2))) do
    if p == "*" then
      kwarg_only = true
    else
      local t, n, def = p:match("^(.-)%s+([%w_]+)%s*=%s*(.+)$")
      if not t then t, n = p:match("^(.-)%s+([%w_]+)$") end
      if not t then error("schema: cannot parse argument '" .. p .. "' of " .. head, 2) end
      local arg = parse_type(t)
      arg.name, arg.kwarg_only = n, kwarg_only
      if def then arg.has_default, arg.default = true, parse_default(def, arg) end
      entry.args[#entry.args + 1] = arg
    end
  end
  if rets ~= "()" then
    local body = rets:match("^%((.*)%)$") or rets
    for _, r in ipairs(split_top(body)) do
      local t, n = r:match("^(.-)%s+([%w_]+)$")
      local info = parse_type(t or r)
      info.name = n
      entry.returns[#entry.returns + 1] = info
    end
  end
  return entry
end

M.supported_args = {
  Tensor = true, int = true, SymInt = true, float = true, bool = true, str = true, Scalar = true,
  ScalarType = true, Layout = true, Device = true, MemoryFormat = true, Generator = true,
}
M.supported_returns = {
  Tensor = true, int = true, SymInt = true, float = true, bool = true, Scalar = true,
  ScalarType = true, str = true, Device = true, QScheme = true, Layout = true,
}

-- nil if every argument and return can cross from Lua, else the reason.
function M.unsupported(entry)
  for _, a in ipairs(entry.args) do
    if not M.supported_args[a.type] then
      return ("argument '%s' has type %s"):format(a.name, a.type)
    end
    if a.type == "Generator" and not (a.optional and not a.list) then
      return ("argument '%s': a required Generator"):format(a.name)
    end
    if a.list and not (a.type == "Tensor" or a.type == "int" or a.type == "SymInt" or a.type == "float"
        or a.type == "bool") then
      return ("argument '%s' is a list of %s"):format(a.name, a.type)
    end
  end
  for _, r in ipairs(entry.returns) do
    if not M.supported_returns[r.type] then return ("returns %s"):format(r.type) end
    if r.list and r.type ~= "Tensor" and r.type ~= "int" and r.type ~= "float" and r.type ~= "SymInt" then
      return ("returns a list of %s"):format(r.type)
    end
  end
  return nil
end

-- A readable signature for error messages: "add(Tensor self, Tensor other, *, Scalar alpha=1)".
function M.signature(entry, display_name)
  return (display_name or entry.name) .. entry.func:match("^%s*[%w_%.]+(%b())")
end

return M
