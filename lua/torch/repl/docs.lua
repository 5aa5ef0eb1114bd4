--[[
  torch.repl.docs — PyTorch's own documentation at the prompt: the entries tools/gen_help.py
  extracts from PyTorch's docstrings into torch.repl._help_gen (loaded on first use), the
  PyTorch name of a value, and the entry printed.

  Where an entry's text comes from (docs.source): "pytorch" (the name's own docstring),
  "borrowed" (another PyTorch name's docstring: src names it; a `note` written by gen_help.py
  may say how the two relate), "aten" (generated from the ATen schema of an internal op PyTorch
  does not document) and "ltorch" (ltorch's own functions, documented by hand in
  torch.repl._help_ltorch). A PyTorch or borrowed entry wins over an ltorch one, which wins
  over an ATen one.

      docs.name_of(torch.optim.AdamW)     --> "torch.optim.AdamW"
      docs.name_of(nil, "x:add")          --> "torch.Tensor.add"  (from the typed expression)
      docs.entry("torch.matmul")          --> { sig = {...}, doc = "Matrix product of two tensors.",
                                                args = { {"input", "Tensor", "..."}, ... }, src = "torch.matmul" }
      docs.render("torch.matmul", entry)  --> the lines ?torch.matmul prints first
      docs.missing("torch.fbgemm_pack_quantized_matrix") --> "no docstring" (PyTorch has it undocumented)
      docs.source("torch.collect")        --> "ltorch"

  Names are PyTorch's full dotted names (torch.Tensor.add for a method). name_of tries the
  typed expression first (torch.optim.AdamW, F.relu through its value), then looks the value
  up by identity in torch, Tensor, torch.nn(.functional/.init), linalg, special, fft,
  torch.optim and torch.optim.lr_scheduler; a module or optimizer instance is named by its class.
]]
local pretty = require "torch.repl.pretty"

local M = {}

local WIDTH = 78

local loaded, ltorch
-- The generated data: {version, entries = {name -> entry}, missing = {name -> why}} (empty
-- tables when the file is missing or broken: help then shows less).
function M.data()
  if loaded == nil then
    local ok, t = pcall(require, "torch.repl._help_gen")
    loaded = ok and type(t) == "table" and type(t.entries) == "table" and t or { entries = {}, missing = {} }
  end
  return loaded
end

-- The hand-written entries of ltorch's own functions (name -> entry, src = "ltorch").
function M.ltorch()
  if ltorch == nil then
    local ok, t = pcall(require, "torch.repl._help_ltorch")
    ltorch = ok and type(t) == "table" and t or {}
  end
  return ltorch
end

-- The entry of a name: PyTorch's (own or borrowed), else ltorch's, else the one from ATen's schema.
function M.entry(name)
  if not name then return nil end
  local e = M.data().entries[name]
  if e and e.src ~= "aten" then return e end
  return M.ltorch()[name] or e
end

-- Where name's entry comes from: "pytorch", "borrowed", "ltorch" or "aten" (nil: no entry).
function M.source(name, e)
  e = e or M.entry(name)
  if not e then return nil end
  if e.src == "ltorch" or e.src == "aten" then return e.src end
  return e.src == name and "pytorch" or "borrowed"
end

-- Why PyTorch has no text for name ("no docstring", "not in PyTorch"), or nil. Such a name
-- may still have an entry: ltorch's, or one generated from its ATen schema.
function M.missing(name) return name and M.data().missing[name] end

-- Namespaces searched by identity, as {PyTorch prefix, table}.
local function namespaces()
  local torch, T = package.loaded.torch, package.loaded["torch._tensor"]
  if not torch or not T then return {} end
  local list = { { "torch.", torch }, { "torch.Tensor.", T.Tensor } }
  local nn, optim = rawget(torch, "nn") or package.loaded["torch.nn"], package.loaded["torch.optim"]
  -- a value's part is loaded, but maybe by another route than the namespace's own index
  local lazy = require "torch._lazy_namespace"
  if optim then lazy.materialize(optim) end
  if nn then
    lazy.materialize(lazy.materialize(nn).functional)   -- nn.functional loads here if it had not
    for _, k in ipairs({ "functional", "init" }) do
      if type(nn[k]) == "table" then list[#list + 1] = { "torch.nn." .. k .. ".", nn[k] } end
    end
    list[#list + 1] = { "torch.nn.", nn }
  end
  for _, k in ipairs({ "linalg", "special", "fft" }) do
    local t = rawget(torch, k)
    if type(t) == "table" then list[#list + 1] = { "torch." .. k .. ".", t } end
  end
  if optim then
    list[#list + 1] = { "torch.optim.", optim }
    if type(optim.lr_scheduler) == "table" then list[#list + 1] = { "torch.optim.lr_scheduler.", optim.lr_scheduler } end
  end
  return list
end

-- The class of an nn module or optimizer/scheduler instance, else v.
local function class_of(v)
  if type(v) ~= "table" then return v end
  local class = rawget(v, "_class")
  if type(class) == "table" then return class end
  local mt = getmetatable(v)
  if type(mt) == "table" and rawget(mt, "__name") and rawget(v, "__name") == nil then return mt end
  return v
end

-- PyTorch's name for an expression as typed ("x:add", "torch.matmul", "Tensor.add").
local function typed_name(expr)
  if not expr then return nil end
  local method = expr:match(":([%a_][%w_]*)$") or expr:match("^Tensor%.([%a_][%w_]*)$")
  if method then return "torch.Tensor." .. method end
  return expr
end
M.typed_name = typed_name

-- The PyTorch name of value v (typed as expr, when known), or nil.
function M.name_of(v, expr)
  local typed = typed_name(expr)
  if M.entry(typed) then return typed end
  if v == nil then return nil end
  local target = class_of(v)
  for _, ns in ipairs(namespaces()) do
    for k, x in next, ns[2] do
      if x == target and type(k) == "string" and M.entry(ns[1] .. k) then return ns[1] .. k end
    end
  end
  return nil
end

-- text wrapped to WIDTH columns, each line starting with `indent`.
local function wrap(text, indent, first)
  local lines, line = {}, first or indent
  for word in text:gmatch("%S+") do
    if #line + #word + 1 > WIDTH and line:find("%S") then
      lines[#lines + 1] = line
      line = indent
    end
    line = line .. (line:find("%S$") and " " or "") .. word
  end
  if line:find("%S") then lines[#lines + 1] = line end
  return lines
end

local FROM = {
  ltorch = "  (ltorch's own documentation)",
  aten = "  (generated from ATen's schema: PyTorch documents no such function)",
}

-- The lines printed for an entry: signatures, note, summary, arguments, where it came from.
function M.render(name, e)
  local lines = {}
  for _, sig in ipairs(e.sig) do
    for _, l in ipairs(wrap(sig, "      ", "")) do lines[#lines + 1] = pretty.paint("heading", l) end
  end
  if #e.sig == 0 then lines[#lines + 1] = pretty.paint("heading", name) end
  if e.note then for _, l in ipairs(wrap(e.note, "  ")) do lines[#lines + 1] = l end end
  local doc = e.note and (e.src .. ": " .. e.doc) or e.doc   -- borrowed text after a note: say whose
  for _, l in ipairs(wrap(doc, "  ")) do lines[#lines + 1] = l end
  if #e.args > 0 then lines[#lines + 1] = "  Arguments:" end
  for _, a in ipairs(e.args) do
    local head = "    " .. a[1] .. (a[2] ~= "" and (" (" .. a[2] .. ")") or "") .. ":"
    for _, l in ipairs(wrap(a[3], "        ", head)) do lines[#lines + 1] = l end
  end
  local footer = FROM[e.src]
  if not footer and e.note then
    footer = "  (note by ltorch's tools/gen_help.py; then PyTorch's docstring of " .. e.src .. ")"
  elseif not footer then
    footer = "  (from PyTorch's docstring" .. (e.src ~= name and (" of " .. e.src) or "") .. ")"
  end
  lines[#lines + 1] = pretty.paint("meta", footer)
  return lines
end

return M
