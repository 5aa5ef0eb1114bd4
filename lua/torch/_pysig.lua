--[[
  torch._pysig — PyTorch's Python signatures, binding Lua arguments the way Python binds a call
  (internal). Shared by torch.nn.functional (through torch.nn._fargs), the nn module
  constructors, the optimizers, the LR schedulers and a few torch factories.

      local S = M.signature("mse_loss", "input, target, size_average=None, reduction='mean'")
      local a = P.bind(S, ...)        -- a.input, a.target, a.reduction == "mean", ...
      local g = M.bind_given(S, ...)  -- only what the caller gave (no defaults filled)

  Positional values fill the parameters in order; a trailing keyword table (string keys, no array
  part) fills them by name; `*` starts the keyword-only ones. Python's None is nil (a nil given
  positionally fills a required parameter, as None does); an empty table that a required
  parameter still lacks is that parameter's value (optim.SGD({}) is an empty parameter list), not
  an empty set of keywords. Misuse reads like Python's and blames the user's line (the first frame
  outside ltorch's nn, optim and factory files):
      mse_loss: got multiple values for argument 'reduction'
      Linear: unexpected keyword argument 'bais' (did you mean 'bias'?)
      StepLR: missing required argument 'step_size'
]]
local pack = require("torch._args").pack
local table_new = require "table.new"

local M = {}

-- Frames of these files are ltorch's own: errors skip them to reach the user's line.
local OWN = { "torch/nn/[%w_]+%.lua$", "torch/optim/[%w_]+%.lua$", "torch/_pysig%.lua$", "torch/_creation%.lua$",
  "torch/_python_defaults%.lua$", "torch/accelerator%.lua$" }

local function own(source)
  for _, pat in ipairs(OWN) do
    if source:find(pat) then return true end
  end
  return false
end

--[[ Raises msg (formatted with ... when given) blaming the first caller outside ltorch's own
     argument-handling files. ]]
function M.fail(msg, ...)
  if select("#", ...) > 0 then msg = msg:format(...) end
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if info == nil or not own(info.source) then break end
    level = level + 1
  end
  error(msg, level)
end

local NONE = {}   -- a default of None: optional, nil when not given
M.NONE = NONE

-- Every signature M.signature made (weak keys): what M.signature_of recognises.
local made = setmetatable({}, { __mode = "k" })

local function parse_default(fname, text)
  if text == "None" then return NONE end
  if text == "True" then return true end
  if text == "False" then return false end
  local s = text:match("^'(.*)'$")
  if s then return s end
  local n = tonumber(text)
  if n == nil then error(("signature of %s: cannot read default %s"):format(fname, text), 3) end
  return n
end

--[[ A signature from Python's text: "input, p=0.5, *, inplace=False". sig.nreq counts the
     leading parameters without a default. ]]
function M.signature(fname, text)
  local sig = { name = fname, names = {}, index = {}, defaults = {}, npos = 0, nreq = 0 }
  local kwonly, seen_default = false, false
  for item in text:gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    if item == "*" then
      kwonly = true
    elseif item ~= "" then
      local name, default = item:match("^([%w_]+)%s*=%s*(.+)$")
      name = name or item
      sig.names[#sig.names + 1] = name
      sig.index[name] = #sig.names
      if default then sig.defaults[name] = parse_default(fname, default); seen_default = true end
      if not kwonly then sig.npos = #sig.names end
      if not seen_default and not kwonly then sig.nreq = #sig.names end
    end
  end
  made[sig] = true
  return sig
end

-- The signature among f's upvalues, or (depth 1) the one signature of the functions among them.
local function upvalue_signature(f, depth)
  local found
  for i = 1, 255 do
    local name, v = debug.getupvalue(f, i)
    if name == nil then break end
    if made[v] then return v end
    if depth > 0 and type(v) == "function" then
      local s = upvalue_signature(v, depth - 1)
      if s ~= nil then
        if found ~= nil and found ~= s then return nil end   -- two candidates: none is the one
        found = s
      end
    end
  end
  return found
end

--[[ signature_of(callable) -> the signature table it binds its arguments with, or nil when it has
     none: a class's own (module, optimizer and scheduler constructors: class.__signature), or a
     function's, found among its upvalues (the functions nn._fargs's definer makes, the losses,
     clip_grad_norm_, ...) or, for a wrapper (F.relu's fast path), those of the one bound function
     it wraps. Introspection only (spec/porting/conformance_spec.lua); the table is
     { name, names = {...}, npos, nreq, defaults = {name -> value or M.NONE} }; do not modify it. ]]
function M.signature_of(x)
  if type(x) == "table" then
    local s = rawget(x, "__signature")
    if made[s] then return s end
  elseif type(x) == "function" then
    return upvalue_signature(x, 1)
  end
  return nil
end

local function is_keywords(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil or v[1] ~= nil then return false end
  for k in pairs(v) do if type(k) ~= "string" then return false end end
  return true
end
M.is_keywords = is_keywords

-- Edit distance, for "did you mean".
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- The closest parameter name (edit distance at most 2, or containing k), or nil.
function M.closest(names, k)
  local best, bd = nil, 3
  for _, name in ipairs(names) do
    local d = distance(tostring(k), name)
    if d < bd or (best == nil and name:find(tostring(k), 1, true)) then best, bd = name, math.min(d, bd) end
  end
  return best
end

local function unknown(sig, k)
  local best = M.closest(sig.names, k)
  M.fail("%s: unexpected keyword argument '%s'%s", sig.name, tostring(k),
    best and (" (did you mean '" .. best .. "'?)") or "")
end

-- The keyword table of (...) when the last value is one; an empty table a required parameter lacks is not.
local function split(sig, n, vals)
  local last = vals[n]
  if n == 0 or not is_keywords(last) then return nil, n end
  if next(last) == nil and n <= sig.nreq then return nil, n end
  return last, n - 1
end

-- Binds (...) to sig; `fill`: put the defaults in. Returns a table name -> value.
local function bind(sig, fill, ...)
  local vals, n = pack(...)   -- not { ... }: see torch._args.pack
  local kw
  kw, n = split(sig, n, vals)
  while n > sig.npos and vals[n] == nil do n = n - 1 end   -- f(x, opts) with opts nil
  if n > sig.npos then
    M.fail("%s: takes at most %d positional arguments but %d were given", sig.name, sig.npos, n)
  end
  local names = sig.names
  local out = table_new(0, #names)   -- sized once: filled key by key it would rehash ~4 times
  for i = 1, n do out[names[i]] = vals[i] end
  if kw then
    for k, v in pairs(kw) do
      local i = sig.index[k]
      if i == nil then unknown(sig, k) end
      if i <= n then M.fail("%s: got multiple values for argument '%s'", sig.name, k) end
      out[k] = v
    end
  end
  for i, name in ipairs(sig.names) do
    if out[name] == nil then
      local d = sig.defaults[name]
      if d == nil and i > n then M.fail("%s: missing required argument '%s'", sig.name, name) end
      if fill and d ~= nil and d ~= NONE then out[name] = d end
    end
  end
  return out
end

function M.bind(sig, ...) return bind(sig, true, ...) end
function M.bind_given(sig, ...) return bind(sig, false, ...) end

--[[ The bound table a as the Lua form (v1, ..., vk, rest): the first k parameters positionally,
     every other given one in the keyword table rest. Returns the values unpacked. ]]
function M.lua_form(sig, a, k)
  local rest = {}
  for i = k + 1, #sig.names do
    local name = sig.names[i]
    if a[name] ~= nil then rest[name] = a[name] end
  end
  local vals = {}
  for i = 1, k do vals[i] = a[sig.names[i]] end
  vals[k + 1] = rest
  return unpack(vals, 1, k + 1)
end

--[[ The bound table a as all of sig's parameters positionally (nil where not given), for Lua
     functions whose optional parameters are positional only. ]]
function M.positional(sig, a)
  local vals = {}
  for i, name in ipairs(sig.names) do vals[i] = a[name] end
  return unpack(vals, 1, #sig.names)
end

--[[ init(class, text[, k]): class's constructor takes PyTorch's signature `text` (positional,
     keyword or mixed) and calls the class's Lua __init with the first k parameters (default: the
     required ones) positionally and every other given one in a trailing table. k = "all" passes
     every parameter positionally (for an __init whose optional parameters are positional). ]]
function M.init(class, text, k)
  local sig = M.signature(class.__name, text)
  local lua_init = class.__init or function() end
  class.__signature = sig
  if k == "all" then
    class.__init = function(self, ...) return lua_init(self, M.positional(sig, M.bind_given(sig, ...))) end
  else
    k = k or sig.nreq
    class.__init = function(self, ...) return lua_init(self, M.lua_form(sig, M.bind_given(sig, ...), k)) end
  end
end

return M
