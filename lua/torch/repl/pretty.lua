--[[
  torch.repl.pretty — how the REPL shows values: tensors and nn modules through their own
  tostring (PyTorch's tensor repr and module repr), tables as nested literals with cycles
  marked and a depth limit, everything else as Lua shows it; optional ANSI colours.

      pretty.format({1, "a", t = {x = torch.ones(2)}})
        --> { 1, "a", t = { x = tensor([1., 1.]) } }
      local t = {}; t.self = t; pretty.format(t)   --> { self = <cycle table: 0x...> }
      pretty.format(deep, {depth = 2})            --> { a = { b = {...3 fields} } }

  A table prints on one line when that fits in `width` (80) columns, else one field per line,
  indented. Array items come first in order, then the other keys sorted (numbers, then
  strings). At most `items` (100) fields per table are shown ("... N more"). Strings are
  quoted inside tables and raw at top level (as print shows them). Colours
  (pretty.enabled = true) are set by the REPL when stdout is a terminal and NO_COLOR is unset.
]]
local M = {}

M.enabled = false

local ESC = string.char(27)
local COLORS = {
  number = "36", string = "32", boolean = "35", ["nil"] = "35", ["function"] = "34",
  meta = "90", key = "0", error = "31", prompt = "1;32", heading = "1",
}

-- s wrapped in the colour of `kind` when colours are on.
function M.paint(kind, s)
  if not M.enabled or not COLORS[kind] then return s end
  return ESC .. "[" .. COLORS[kind] .. "m" .. s .. ESC .. "[0m"
end

local function is_tensor(v)
  local T = package.loaded["torch._tensor"]
  return type(v) == "cdata" and T ~= nil and T.is_tensor(v)
end
M.is_tensor = is_tensor

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__tostring") ~= nil
end

local function function_repr(f)
  local info = debug.getinfo(f, "S")
  if info.what == "C" then return "builtin: " .. tostring(f):match("0x%x+") end
  return ("function: %s:%d"):format(info.short_src, info.linedefined)
end

local IDENT = "^[%a_][%w_]*$"
local KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[w] = true
end

-- Array part first (1..n without holes), then the rest sorted.
local function ordered_keys(t)
  local n, keys, rest = 0, {}, {}
  while rawget(t, n + 1) ~= nil do n = n + 1; keys[n] = n end
  for k in next, t do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys, n, rest
end

local format_value

local function indent_lines(s, pad)
  return (s:gsub("\n", "\n" .. pad))
end

local function format_table(t, o, level, seen)
  if seen[t] then return M.paint("meta", "<cycle " .. tostring(t) .. ">") end
  local keys, n, rest = ordered_keys(t)
  local total = n + #rest
  if total == 0 then return "{}" end
  if level >= o.depth then return M.paint("meta", ("{...%d %s}"):format(total, total == 1 and "field" or "fields")) end
  seen[t] = true
  local parts, shown = {}, 0
  local function add(k, is_array)
    if shown >= o.items then return end
    shown = shown + 1
    local v = format_value(rawget(t, k), o, level + 1, seen, true)
    if is_array then parts[#parts + 1] = v; return end
    local ks
    if type(k) == "string" and k:match(IDENT) and not KEYWORDS[k] then ks = M.paint("key", k)
    else ks = "[" .. format_value(k, o, o.depth, seen, true) .. "]" end
    parts[#parts + 1] = ks .. " = " .. v
  end
  for i = 1, n do add(keys[i], true) end
  for _, k in ipairs(rest) do add(k, false) end
  seen[t] = nil
  if total > shown then parts[#parts + 1] = M.paint("meta", ("... %d more"):format(total - shown)) end
  local one = "{ " .. table.concat(parts, ", ") .. " }"
  if not one:find("\n") and #one + level * 2 <= o.width then return one end
  local pad = string.rep("  ", level + 1)
  for i, p in ipairs(parts) do parts[i] = pad .. indent_lines(p, pad) end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. string.rep("  ", level) .. "}"
end

function format_value(v, o, level, seen, nested)
  local tv = type(v)
  if tv == "string" then
    return nested and M.paint("string", ("%q"):format(v):gsub("\\\n", "\\n")) or v
  elseif tv == "number" or tv == "boolean" or tv == "nil" then
    return M.paint(tv, tostring(v))
  elseif tv == "function" then
    return M.paint("function", function_repr(v))
  elseif is_tensor(v) or (tv ~= "table" and has_tostring(v)) then
    return tostring(v)
  elseif tv == "table" then
    if has_tostring(v) then
      local ok, s = pcall(tostring, v)
      return ok and s or M.paint("error", "<__tostring failed: " .. tostring(s) .. ">")
    end
    return format_table(v, o, level, seen)
  end
  return tostring(v)
end

-- The REPL's representation of v; opts: depth (4), items (100), width (80).
function M.format(v, opts)
  opts = opts or {}
  local o = { depth = opts.depth or 4, items = opts.items or 100, width = opts.width or 80 }
  return format_value(v, o, 0, {}, opts.nested)
end

return M
