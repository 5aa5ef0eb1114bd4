--[[
  torch.repl.pretty — how the REPL shows values: tensors and nn modules through their own
  tostring (PyTorch's tensor repr and module repr), tables as nested literals with cycles
  marked and a depth limit, everything else as Lua shows it; optional ANSI colours.

      pretty.format({1, "a", t = {x = torch.ones(2)}})
        --> { 1, "a", t = { x = tensor([1., 1.]) } }
      local t = {}; t.self = t; pretty.format(t)   --> { self = <cycle table: 0x...> }
      pretty.format(deep, {depth = 2})            --> { a = { b = {...3 fields} } }
      pretty.format(print)                        --> builtin: print
      pretty.format(setmetatable({}, {__tostring = error}))
        --> <__tostring failed: ...> {}

  Nothing fails: every call into user code (__tostring, a tensor's repr) is protected, and a
  value that still cannot be shown prints as `<cannot print TYPE: reason>`. Only raw access
  is used on tables (rawget, next), so __index, __pairs, __len and __lt are never called.

  A table prints on one line when that fits in `width` (80) columns, else one field per line,
  indented. Array items come first in order, then the other keys sorted (numbers, then
  strings; tables with more than SORT_LIMIT keys are not sorted). At most `items` (100) fields
  per table and `budget` (2000) values in all are shown ("... N more"). Strings are quoted
  inside tables (cut after 200 bytes) and raw at top level (as print shows them). Colours
  (pretty.enabled = true) are set by the REPL when stdout is a terminal and NO_COLOR is unset.
]]
local M = {}

M.enabled = false

local ESC = string.char(27)
local COLORS = {
  number = "36", string = "32", boolean = "35", ["nil"] = "35", ["function"] = "34",
  meta = "90", key = "0", error = "31", prompt = "1;32", heading = "1",
}
local SORT_LIMIT = 10000
local STRING_LIMIT = 200

-- s wrapped in the colour of `kind` when colours are on.
function M.paint(kind, s)
  if not M.enabled or not COLORS[kind] then return s end
  return ESC .. "[" .. COLORS[kind] .. "m" .. s .. ESC .. "[0m"
end

local function is_tensor(v)
  if type(v) ~= "cdata" then return false end
  local T = package.loaded["torch._tensor"]
  if T == nil then return false end
  local ok, yes = pcall(T.is_tensor, v)
  return ok and yes
end
M.is_tensor = is_tensor

-- An error value as text, whatever it is (its own __tostring may fail too).
local function error_text(e)
  if type(e) == "string" then return e end
  local ok, s = pcall(tostring, e)
  return ok and type(s) == "string" and s or ("a " .. type(e) .. " error value")
end
M.error_text = error_text

-- tostring(v) protected: the string, or nil and why not.
local function safe_tostring(v)
  local ok, s = pcall(tostring, v)
  if not ok then return nil, error_text(s) end
  if type(s) ~= "string" then return nil, "__tostring returned a " .. type(s) end
  return s
end
M.safe_tostring = safe_tostring

-- "table: 0x..." without trusting __tostring (just the type when it is overridden).
local function address(v)
  local s = safe_tostring(v)
  if s and s:find("^" .. type(v) .. ": ") then return s end
  return type(v)
end

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__tostring") ~= nil
end

-- Names of the standard library's C functions ("print", "string.format"), built once.
local builtin_names
local function builtin_name(f)
  if not builtin_names then
    builtin_names = {}
    for _, lib in ipairs({ "_G", "string", "table", "math", "io", "os", "coroutine", "debug", "bit", "jit", "package" }) do
      local t = lib == "_G" and _G or rawget(_G, lib)
      if type(t) == "table" then
        for k, v in next, t do
          if type(k) == "string" and type(v) == "function" and builtin_names[v] == nil then
            builtin_names[v] = lib == "_G" and k or (lib .. "." .. k)
          end
        end
      end
    end
  end
  return builtin_names[f]
end

local function function_repr(f)
  local info = debug.getinfo(f, "S")
  if info and info.what ~= "C" then return ("function: %s:%d"):format(info.short_src, info.linedefined) end
  local s = safe_tostring(f) or "?"
  return "builtin: " .. (builtin_name(f) or s:match("0x%x+") or s)
end

local IDENT = "^[%a_][%w_]*$"
local KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[w] = true
end

local TYPE_ORDER = { number = 1, string = 2, boolean = 3 }

-- Keys of other types sort after numbers and strings, by their (raw) address.
local function key_before(a, b)
  local ta, tb = type(a), type(b)
  local ra, rb = TYPE_ORDER[ta] or 9, TYPE_ORDER[tb] or 9
  if ra ~= rb then return ra < rb end
  if ta ~= tb then return ta < tb end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return not a and b end
  return address(a) < address(b)
end

-- Array part first (1..n without holes), then the rest (sorted when not too many).
local function ordered_keys(t)
  local n, keys, rest = 0, {}, {}
  while rawget(t, n + 1) ~= nil do n = n + 1; keys[n] = n end
  for k in next, t do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then rest[#rest + 1] = k end
  end
  if #rest <= SORT_LIMIT then pcall(table.sort, rest, key_before) end
  return keys, n, rest
end

local format_value

local function indent_lines(s, pad)
  return (s:gsub("\n", "\n" .. pad))
end

local function count_label(total)
  return M.paint("meta", ("{...%d %s}"):format(total, total == 1 and "field" or "fields"))
end

local function key_text(k, o, seen)
  if type(k) == "string" and k:match(IDENT) and not KEYWORDS[k] then return M.paint("key", k) end
  return "[" .. format_value(k, o, o.depth, seen, true) .. "]"
end

-- Lays out the parts of a table on one line or one per line.
local function layout(parts, level, width)
  local one = "{ " .. table.concat(parts, ", ") .. " }"
  if not one:find("\n") and #one + level * 2 <= width then return one end
  local pad = string.rep("  ", level + 1)
  for i, p in ipairs(parts) do parts[i] = pad .. indent_lines(p, pad) end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. string.rep("  ", level) .. "}"
end

local function format_table(t, o, level, seen)
  if seen[t] then return M.paint("meta", "<cycle " .. address(t) .. ">") end
  local keys, n, rest = ordered_keys(t)
  local total = n + #rest
  if total == 0 then return "{}" end
  if level >= o.depth or o.budget <= 0 then return count_label(total) end
  seen[t] = true
  local parts, shown = {}, 0
  local function add(k, is_array)
    if shown >= o.items or o.budget <= 0 then return end
    shown, o.budget = shown + 1, o.budget - 1
    local v = format_value(rawget(t, k), o, level + 1, seen, true)
    parts[#parts + 1] = is_array and v or (key_text(k, o, seen) .. " = " .. v)
  end
  for i = 1, n do add(keys[i], true) end
  for _, k in ipairs(rest) do add(k, false) end
  seen[t] = nil
  if total > shown then parts[#parts + 1] = M.paint("meta", ("... %d more"):format(total - shown)) end
  return layout(parts, level, o.width)
end

local function format_string(v, nested)
  if not nested then return v end
  local cut = #v > STRING_LIMIT and v:sub(1, STRING_LIMIT) or v
  local s = M.paint("string", (("%q"):format(cut):gsub("\\\n", "\\n")))
  if cut ~= v then s = s .. M.paint("meta", ("...(%d bytes)"):format(#v)) end
  return s
end

-- A value whose metatable has __tostring: its text, or why not (and, for tables, the fields).
local function format_custom(v, o, level, seen)
  local s, why = safe_tostring(v)
  if s then return s end
  local note = M.paint("error", "<__tostring failed: " .. why .. ">")
  if type(v) == "table" then return note .. " " .. format_table(v, o, level, seen) end
  return note .. " " .. address(v)
end

local function format_thread(v)
  local ok, status = pcall(coroutine.status, v)
  return address(v) .. (ok and (" (" .. status .. ")") or "")
end

function format_value(v, o, level, seen, nested)
  local tv = type(v)
  if tv == "string" then return format_string(v, nested) end
  if tv == "number" or tv == "boolean" or tv == "nil" then return M.paint(tv, tostring(v)) end
  if tv == "function" then return M.paint("function", function_repr(v)) end
  if tv == "thread" then return format_thread(v) end
  if is_tensor(v) then
    local s, why = safe_tostring(v)
    if s then return s end
    local ok, head = pcall(function() return ("Tensor%s %s"):format(tostring(v:size()):match("%[.*%]"), tostring(v.dtype)) end)
    return M.paint("error", ("<%s: cannot print: %s>"):format(ok and head or "Tensor", why:match("^[^\n]*")))
  end
  if has_tostring(v) then return format_custom(v, o, level, seen) end
  if tv == "table" then return format_table(v, o, level, seen) end
  local s, why = safe_tostring(v)
  return s or M.paint("error", "<" .. tv .. ": cannot print: " .. why .. ">")
end

-- The REPL's representation of v; opts: depth (4), items (100), width (80), budget (2000),
-- nested (quote strings). Never raises.
function M.format(v, opts)
  opts = opts or {}
  local o = { depth = opts.depth or 4, items = opts.items or 100, width = opts.width or 80,
    budget = opts.budget or 2000 }
  local ok, s = pcall(format_value, v, o, 0, {}, opts.nested)
  if ok then return s end
  return M.paint("error", ("<cannot print %s: %s>"):format(type(v), error_text(s)))
end

return M
