--[[
  torch.repl.help — `?expr` and help(x) at the REPL.

      > ?torch.optim.AdamW
      torch.optim.AdamW(params, {lr = 0.001, betas = {0.9, 0.999}, eps = 1e-08, ...})
        Implements AdamW algorithm, where weight decay does not accumulate in the momentum nor
        variance.
        Arguments:
          params (iterable): iterable of parameters or named_parameters to optimize ...
        (from PyTorch's docstring)
      > ?torch.matmul     -- the same, then ATen's signatures, the doc URL and the overloads
      > help(x)           -- a Tensor: x:describe()

  What is shown: first PyTorch's own documentation of the name (torch.repl.docs: signature in
  ltorch's calling form, summary, arguments; generated from PyTorch's docstrings by
  tools/gen_help.py). Then, for a function, every ATen schema of its name (torch._dispatch's
  index), PyTorch's doc URL for a generated op, or for a hand-written Lua function the
  comment above it (when PyTorch has no documentation of it) and file:line. For an nn class
  or module, the file that defines it (its opening comment block when PyTorch documents no
  such class). For a table, its fields. help(value) finds a function's name by looking it up
  in torch, torch.nn.functional and Tensor; ?expr takes it from the expression's last name.
]]
local pretty = require "torch.repl.pretty"
local docs = require "torch.repl.docs"

local M = {}

local function out(s) io.stdout:write(s, "\n") end

-- The Lua source file of f, and the comment block right above line `line` (or the header).
local function source_lines(f)
  local info = debug.getinfo(f, "S")
  if info.what ~= "Lua" or info.source:sub(1, 1) ~= "@" then return nil, info end
  local fh = io.open(info.source:sub(2))
  if not fh then return nil, info end
  local lines = {}
  for l in fh:lines() do lines[#lines + 1] = l end
  fh:close()
  return lines, info
end

local function comment_above(lines, line)
  local doc, i = {}, line - 1
  while i >= 1 and lines[i]:match("^%s*%-%-") do
    table.insert(doc, 1, (lines[i]:gsub("^%s*%-%-+%s?", "")))
    i = i - 1
  end
  return doc
end

local function header_block(lines, max)
  local doc, i = {}, 1
  if lines[1] and lines[1]:match("^%-%-%[%[") then
    i = 2
    while lines[i] and not lines[i]:match("%]%]") and #doc < max do
      doc[#doc + 1] = lines[i]
      i = i + 1
    end
  else
    while lines[i] and lines[i]:match("^%-%-") and #doc < max do doc[#doc + 1] = lines[i]:gsub("^%-%-%s?", ""); i = i + 1 end
  end
  return doc
end

local function schemas(name, kind)
  local ok, dispatch = pcall(require, "torch._dispatch")
  if not ok or not name then return {} end
  local res = {}
  for _, e in ipairs(dispatch.entries(name)) do
    if kind == nil or e[2]:find(kind, 1, true) then res[#res + 1] = e end
  end
  return res
end

-- Where a function value is published: "torch.X", "Tensor.X", "F.X" (name and display prefix).
local function find_name(v)
  local torch = package.loaded.torch
  if not torch then return nil end
  for k, x in pairs(torch) do if x == v then return k, "torch." end end
  for k, x in pairs(require("torch._tensor").Tensor) do if x == v then return k, "Tensor." end end
  local F = package.loaded["torch.nn.functional"]
  if F then for k, x in pairs(F) do if x == v then return k, "torch.nn.functional." end end end
  return nil
end

-- Hand-written Lua: its signature line and the comment above it, unless PyTorch documents it.
local function help_lua(name, prefix, lines, info, documented, has_schemas)
  local def = lines[info.linedefined] or ""
  if not documented then
    local named = name and (def:find("function%s+[%w_.:]*[.:]?" .. name .. "%s*%(") or def:find(name .. "%s*=%s*function"))
    if not has_schemas then out(pretty.paint("heading", (prefix or "") .. (name or "?") .. (def:match("%b()") or "(...)"))) end
    local doc = named and comment_above(lines, info.linedefined) or {}
    for i = 1, math.min(#doc, 6) do out("  " .. doc[i]) end
  end
  out(pretty.paint("meta", ("  defined at %s:%d"):format(info.short_src, info.linedefined)))
end

local MISSING = {
  ["no docstring"] = "  (PyTorch has no docstring for it: an ATen internal)",
  ["not in PyTorch"] = "  (not a name PyTorch publishes: an ATen internal ltorch binds)",
}

local function help_function(f, name, prefix, documented, missing)
  local kind = prefix == "Tensor." and "m" or "f"
  local ns = prefix and prefix:match("^torch%.(%a+)%.$")
  local aten = (ns == "linalg" or ns == "special" or ns == "fft") and name and (ns .. "_" .. name) or name
  local list = schemas(aten, kind)
  if #list == 0 and prefix == "Tensor." then list = schemas(name) end
  for _, e in ipairs(list) do
    local args, ret = e[1]:match("^[%w_%.]+(%b())%s*%->%s*(.+)$")
    local sig = (prefix or "") .. name .. (args or "()") .. " -> " .. (ret or "?")
    out(documented and pretty.paint("meta", "  ATen: " .. sig) or pretty.paint("heading", sig))
  end
  local lines, info = source_lines(f)
  local generated = info.short_src:find("_dispatch%.lua") or info.short_src:find("_ops_generated%.lua")
  if lines and not generated then
    help_lua(name, prefix, lines, info, documented, #list > 0)
  elseif info.what == "C" and #list == 0 and not documented then
    out((name or "?") .. ": a built-in (C) function")
  end
  if #list > 0 and MISSING[missing] then out(pretty.paint("meta", MISSING[missing])) end
  if #list > 0 and name and (prefix == "torch." or prefix == "Tensor.") then
    out("  https://pytorch.org/docs/stable/generated/" .. (prefix == "Tensor." and "torch.Tensor." or "torch.") .. name .. ".html")
    out(pretty.paint("meta", ("  aten::%s, %d overload%s%s"):format(aten, #list, #list == 1 and "" or "s",
      generated and " (generated binding)" or "")))
  end
end

local function help_class(t, class, documented)
  local probe = rawget(class, "forward") or rawget(class, "__init") or rawget(class, "step")
  if not documented then
    out(pretty.paint("heading", "class " .. rawget(class, "__name")) .. (class ~= t and " (instance)" or ""))
  end
  if type(probe) ~= "function" then return end
  local lines, info = source_lines(probe)
  if not lines then return end
  if not documented then for _, l in ipairs(header_block(lines, 12)) do out(l) end end
  out(pretty.paint("meta", "  ltorch: " .. info.short_src))
end

local function help_table(t, name, documented)
  local class = rawget(t, "_class") or (rawget(t, "__name") and t)
  local mt = getmetatable(t)
  if not class and type(mt) == "table" and rawget(mt, "__name") then class = mt end  -- an optimizer
  if class and rawget(class, "__name") then return help_class(t, class, documented) end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  out(("%s: table with %d fields"):format(name or "value", #keys))
  if #keys > 0 then out("  " .. table.concat(keys, " ", 1, math.min(#keys, 60)) .. (#keys > 60 and " ..." or "")) end
end

-- Help for a value; name/prefix when known from the expression.
function M.help_value(v, name, prefix)
  if pretty.is_tensor(v) then return out(v:describe()) end
  if type(v) == "function" and not name then name, prefix = find_name(v) end
  local full = docs.name_of(v, name and ((prefix or "") .. name))
  local entry = docs.entry(full)
  if entry then for _, l in ipairs(docs.render(full, entry)) do out(l) end end
  if type(v) == "function" then
    local missing = docs.missing(docs.typed_name(name and ((prefix or "") .. name)))
    return help_function(v, name, prefix, entry ~= nil, missing)
  end
  if type(v) == "table" then return help_table(v, name, entry ~= nil) end
  if not entry then out(("%s: %s %s"):format(name or "value", type(v), pretty.format(v, { nested = true }))) end
end

-- help(x): the global the REPL installs.
function M.help(v)
  if v == nil then return require("torch.repl.session").commands.help(require("torch.repl.session").current() or {}, "") end
  M.help_value(v)
end

local function eval_in(s, code)
  local f, err = loadstring("return " .. code, "=help")
  if not f then return false, err end
  setfenv(f, s.env or _G)
  return pcall(f)
end

-- ?expr in a session: evaluates expr in the session's environment.
function M.show(s, expr)
  local head, sep, name = expr:match("^(.-)([%.:]?)([%a_][%w_]*)%s*$")
  local ok, v
  if sep == ":" then  -- x:add is not an expression: look the method up on x
    ok, v = eval_in(s, head)
    if ok then ok, v = pcall(function() return v[name] end) end
  else
    ok, v = eval_in(s, expr)
  end
  if not ok then return require("torch.repl.session").report(v) end
  local prefix
  if sep == ":" or (sep == "." and pretty.is_tensor(select(2, eval_in(s, head)))) then
    prefix = "Tensor."
  elseif head == "torch" then
    prefix = "torch."
  elseif head and head ~= "" then
    prefix = head .. sep
  end
  if type(v) == "function" and (prefix == nil or not schemas(name)[1]) then
    local n, p = find_name(v)
    if n then name, prefix = n, p end
  end
  M.help_value(v, name, prefix)
end

return M
