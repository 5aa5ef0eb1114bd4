--[[
  torch.repl.complete — Tab completion candidates for the REPL (runtime/repl.c asks).

      candidates("torch.ma", line, start, _G)  --> { "torch.masked_fill", ..., "torch.matmul", "torch.max", ... }
      candidates("x:ad", ...)                   --> { "x:add", "x:add_", "x:addbmm", ... }  (x a Tensor)
      candidates("pri", ...)                    --> { "print" }

  The word is the text before the cursor back to a space or bracket. `a.b.c.` completes the
  fields of a.b.c, `a.b:` its methods (function-valued members only); a bare word completes
  the session's names (globals, or a debugger frame's locals and upvalues) and keywords.
  Members of: tables (their keys, then the __index chain when it is a table), nn modules
  (parameters, buffers, children, the class chain), Tensors (hand-written methods and getters
  plus every generated method: torch._dispatch's index), torch itself and torch.linalg /
  special / fft (plus the generated functions that load on first use), the names a lazy
  namespace (torch.nn, torch.optim, ...: torch._lazy_namespace) would load, strings (string.*).
  Names starting with `_` are offered only when the typed part starts with `_`. Evaluating
  the path only reads fields (a lazy submodule such as torch.nn may load); errors offer nothing.
]]
local M = {}

local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }

local function add_keys(t, out)
  for k in next, t do if type(k) == "string" then out[k] = true end end
end

local function is_tensor(v)
  local T = package.loaded["torch._tensor"]
  return type(v) == "cdata" and T ~= nil and T.is_tensor(v)
end

-- Generated names: "f" functions or "m" methods, with an optional prefix (linalg_) stripped.
local function generated(variant, prefix, out)
  local ok, dispatch = pcall(require, "torch._dispatch")
  if not ok then return end
  for func, variants, module in dispatch.each_entry() do
    local name = func:match("^[%w_]+")
    if variants:find(variant, 1, true) and (prefix == nil and module == nil or prefix and name:sub(1, #prefix) == prefix) then
      out[prefix and name:sub(#prefix + 1) or name] = true
    end
  end
end

local function tensor_members(out, methods_only)
  local T = require "torch._tensor"
  add_keys(T.Tensor, out)
  if not methods_only then
    local state = require("torch._C").state
    if state.getters then add_keys(state.getters, out) end
    for _, k in ipairs({ "grad", "grad_fn", "requires_grad", "is_leaf" }) do out[k] = true end
  end
  generated("m", nil, out)
end

-- The member names of v.
local function members(v, methods_only)
  local out = {}
  if is_tensor(v) then tensor_members(out, methods_only); return out end
  if type(v) == "string" then add_keys(string, out); return out end
  if type(v) ~= "table" then return out end
  local torch = package.loaded.torch
  if torch and v == torch then
    generated("f", nil, out)
    for _, k in ipairs({ "linalg", "special", "fft" }) do out[k] = true end
    for _, k in ipairs(require("torch._lazy_modules").names()) do out[k] = true end
  elseif torch then
    for _, ns in ipairs({ "linalg", "special", "fft" }) do
      if rawget(torch, ns) == v then generated("f", ns .. "_", out) end
    end
  end
  local lazy_names = require("torch._lazy_namespace").names(v)   -- torch.nn's families not loaded yet, ...
  if lazy_names then for _, k in ipairs(lazy_names) do out[k] = true end end
  local t, hops = v, 0
  while type(t) == "table" and hops < 10 do
    add_keys(t, out)
    local class = rawget(t, "_class")
    if type(class) == "table" then  -- an nn.Module: parameters, buffers, children, class chain
      for _, f in ipairs({ "_parameters", "_buffers", "_modules" }) do
        local map = rawget(t, f)
        if type(map) == "table" and type(map.values) == "table" then add_keys(map.values, out) end
      end
      t = class
    else
      local mt = getmetatable(t)
      local idx = type(mt) == "table" and rawget(mt, "__index") or nil
      t = rawget(t, "__base") or (idx ~= t and idx or nil)
    end
    hops = hops + 1
  end
  if methods_only then
    for k in pairs(out) do
      local ok, f = pcall(function() return v[k] end)
      if not ok or type(f) ~= "function" then out[k] = nil end
    end
  end
  return out
end

-- Follows "a.b.c" from env, reading fields only; nil when any step fails.
local function resolve(path, env)
  local v
  for name in (path .. "."):gmatch("([^.]*)%.") do
    if not name:match("^[%a_][%w_]*$") then return nil end
    local parent = v == nil and env or v
    local ok, x = pcall(function() return parent[name] end)
    if not ok or x == nil then return nil end
    v = x
  end
  return v
end

local function session_names(env, names_fn)
  local out = {}
  if names_fn then for _, k in ipairs(names_fn()) do out[k] = true end else add_keys(env, out) end
  if env ~= _G then add_keys(_G, out) end
  for _, k in ipairs(KEYWORDS) do out[k] = true end
  return out
end

-- line and start (the whole line, the word's offset) are accepted for completers that need
-- context; these candidates depend on the word alone.
function M.candidates(word, _line, _start, env, names_fn)
  local path, sep, partial = word:match("^(.-)([%.:])([%w_]*)$")
  local names
  if path and path ~= "" then
    local v = resolve(path, env)
    if v == nil then return {} end
    names = members(v, sep == ":")
  else
    path, sep, partial = "", "", word
    names = session_names(env, names_fn)
  end
  local show_private = partial:sub(1, 1) == "_"
  local result = {}
  for k in pairs(names) do
    if k:sub(1, #partial) == partial and k:match("^[%a_][%w_]*$") and (show_private or k:sub(1, 1) ~= "_") then
      result[#result + 1] = path .. sep .. k
    end
  end
  table.sort(result)
  return result
end

return M
