--[[
  torch.nn._forward_keywords — keyword arguments to a module's forward, bound the way Python
  binds `m(input=x)` (internal; Module.__call uses it):

      linear({input = x})                    -- PyTorch: linear(input=x)
      loss(x, {target = y})                  -- loss(x, target=y)
      lstm({input = x, hx = {h0, c0}})       -- lstm(input=x, hx=(h0, c0))

  A trailing keyword table (string keys only, no metatable) whose keys name parameters of the
  module's forward is spread onto those parameters, and forward is called with every parameter
  positionally in the signature's order (keyword-only ones, if any, in a trailing table). The
  names are PyTorch's: for ltorch's own layers, the signature of the PyTorch class of the same
  name (torch.nn._forward_sig_gen, generated from the reference PyTorch); for a forward the user
  wrote, its own Lua parameter names (function Net:forward(x, mask) takes {x =, mask =}), as
  Python takes a forward's own names.

  A table none of whose keys is a parameter name is left alone: it is data or one of ltorch's
  own options (rnn(x, {lengths = l})). A table that names some parameters and also other keys
  is an error, as in Python ("Linear.forward: unexpected keyword argument 'inpt' (did you mean
  'input'?)"); so is a lone keyword table naming none of a library layer's parameters, whose
  first parameter is never a table (every layer but Sequential and Identity).
]]
local P = require "torch._pysig"
local lazy = require "torch._lazy_namespace"
local generated = require "torch.nn._forward_sig_gen"

local M = {}

-- library class -> its parsed PyTorch signature, or false for a class that has none
local registered = setmetatable({}, { __mode = "k" })
local cache = setmetatable({}, { __mode = "k" })        -- forward function -> signature or false
local LOOSE = { Sequential = true, Identity = true }   -- forward(input): input may be any value, a table too

--[[ The generated signature of a library class, or nil for a class that has none. A class is the
     library's when torch.nn's index gives it under its own name (a user's Module:extend("Linear")
     is not, even when put in torch.nn as nn.Linear). Looked up and parsed at the class's first
     call with a keyword table: torch.nn loads its families at first use, and the ~150 signatures
     parsed at load kept ~100 KB more of Lua heap alive for every script, which each collector
     cycle marks (docs/PERFORMANCE.md, optimisations 31 and 33). ]]
local function registered_signature(class)
  local sig = registered[class]
  if sig == nil then
    local name = rawget(class, "__name")
    local nn = package.loaded["torch.nn"]
    sig = false
    if type(name) == "string" and generated[name] and nn and lazy.indexed(nn, name) == class then
      sig = P.signature(name .. ".forward", generated[name])
      sig.strict = not LOOSE[name]
    end
    registered[class] = sig
  end
  return sig or nil
end

-- The signature of a forward written in Lua: its own parameter names after self.
local function lua_signature(name, forward)
  local info = debug.getinfo(forward, "u")
  if info.isvararg or (info.nparams or 0) < 2 then return false end
  local names = {}
  for i = 2, info.nparams do names[#names + 1] = debug.getlocal(forward, i) end
  local sig = P.signature(name .. ".forward", table.concat(names, ", "))
  for _, n in ipairs(sig.names) do sig.defaults[n] = P.NONE end   -- Lua parameters are all optional
  sig.nreq = 0
  return sig
end

-- The signature that binds class's forward: the library class's that defines it, or its Lua names.
local function signature(class, forward)
  local sig = cache[forward]
  if sig ~= nil then return sig end
  local c = class
  while c ~= nil and rawget(c, "forward") ~= forward do c = rawget(c, "__base") end
  sig = (c and registered_signature(c)) or lua_signature(class.__name, forward)
  cache[forward] = sig
  return sig
end

local function names_any(sig, kw)
  for k in pairs(kw) do
    if sig.index[k] then return true end
  end
  return false
end

--[[ bind(class, forward, args, n) -> args, n: the call's arguments with a trailing keyword table
     of forward's parameter names spread onto those parameters; unchanged when the last argument
     is no such table. args is a packed array (torch._args.pack). ]]
function M.bind(class, forward, args, n)
  local kw = args[n]
  if not P.is_keywords(kw) or next(kw) == nil then return args, n end
  local sig = signature(class, forward)
  if not sig then return args, n end
  if not names_any(sig, kw) then
    if n == 1 and sig.strict then
      local k = next(kw)
      local best = P.closest(sig.names, k)
      P.fail("%s: unexpected keyword argument '%s'%s", sig.name, tostring(k),
        best and (" (did you mean '" .. best .. "'?)") or "")
    end
    return args, n
  end
  local a = P.bind_given(sig, unpack(args, 1, n))
  local out, last, rest = {}, 0, nil
  for i, name in ipairs(sig.names) do
    local v = a[name]
    if i <= sig.npos then
      out[i] = v
      if v ~= nil then last = i end
    elseif v ~= nil then
      rest = rest or {}
      rest[name] = v
    end
  end
  if rest then last = sig.npos + 1; out[last] = rest end
  return out, last
end

return M
