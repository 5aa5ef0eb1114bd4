--[[
  torch.nn._release — when a container may release an intermediate tensor at once, as C++'s
  `x = layer(x)` does, instead of leaving it to the next Lua collection.

  Why: a Lua handle that nothing references still holds its tensor until the collector finds it.
  In a chain of layers most outputs are dead as soon as the next layer has returned (a conv's
  output, which ReLU does not save), yet each lived until the next collection: peak memory per
  training step 1.26x C++'s for a small CNN (docs/PERFORMANCE.md, "Peak live bytes").
  Releasing a handle (x:free()) drops only its reference: a tensor autograd saved, or a view of
  it, stays alive through theirs. The one risk is Lua code still holding the handle itself, so a
  handle is released only where no such code can exist:
    keeps_nothing(m)   m and every module under it run the library's own forward (defined under
                       lua/torch/: none keeps a tensor it was given or made), none has a
                       forward or forward pre-hook (a hook may keep what it sees) and none is
                       parametrized (parametrize.cached() keeps computed weights); a function
                       (a Transformer's activation) qualifies when the library defines it
    intermediate(x, out, producer_ok, consumer_ok, ...)   x, made by a producer and given to a
                       consumer, which returned out, may be released: both keep nothing
                       (producer_ok, consumer_ok: keeps_nothing's answers, each module's asked
                       once per forward: a consumer is the next step's producer), x is a live tensor,
                       out is another tensor (not x passed through), and x is none of the
                       container's own arguments (...), nor in a table among them: those belong
                       to its caller
    intermediate_of(x, out, producer_ok, consumer_ok, n, a1, packed)   the same with the
                       container's n arguments given as a1 (n == 1) or an array: for a loop over
                       layers that must compile (Sequential), where `...` would stop its trace
    privately(m, fn, ...)   fn(...) inside torch.scope when m keeps nothing: the tensors fn makes
                       and does not return are released on return. Only for modules whose forward
                       makes no tensor it stores (not BatchNorm's counter, not a Lazy module's
                       parameters): a Transformer layer and MultiheadAttention.
  Users of it: nn.Sequential, nn.TransformerEncoder, TransformerEncoderLayer, MultiheadAttention.
]]
local ffi = require "ffi"
local Ref = require("torch._C").Ref
local scope = require("torch._scope").scope

local M = {}
local istype = ffi.istype

local LIBRARY = debug.getinfo(1, "S").source:gsub("nn/_release%.lua$", "")   -- "@<dir>/torch/"
local library_fn = setmetatable({}, { __mode = "k" })   -- function -> defined under lua/torch/

local function is_library_fn(fn)
  local v = library_fn[fn]
  if v == nil then
    v = type(fn) == "function" and debug.getinfo(fn, "S").source:sub(1, #LIBRARY) == LIBRARY
    library_fn[fn] = v
  end
  return v
end

local function has_hooks(m)
  local pre, post = rawget(m, "_forward_pre_hooks"), rawget(m, "_forward_hooks")
  return (pre ~= nil and #pre > 0) or (post ~= nil and #post > 0)
end

function M.keeps_nothing(m)
  if type(m) == "function" then return is_library_fn(m) end
  if type(m) ~= "table" then return false end
  local class = rawget(m, "_class")
  if class == nil or not is_library_fn(class.forward) or has_hooks(m) then return false end
  local mods = rawget(m, "_modules")
  -- a parametrized tensor is computed on each read, and parametrize.cached() keeps it in a table
  if mods ~= nil and mods.values.parametrizations ~= nil then return false end
  if mods ~= nil then
    for _, name in ipairs(mods.names) do
      local child = mods.values[name]
      if child ~= nil and not M.keeps_nothing(child) then return false end
    end
  end
  return true
end

-- Whether x is the argument a, or a value in a table a (a table of the caller's tensors).
local function is_argument(x, a)
  if rawequal(x, a) then return true end
  if type(a) == "table" and not istype(Ref, a) then
    for _, v in pairs(a) do if rawequal(x, v) then return true end end
  end
  return false
end

local function releasable(x, out, producer_ok, consumer_ok)
  return producer_ok and consumer_ok and istype(Ref, x) and x.h ~= nil and istype(Ref, out) and not rawequal(x, out)
end

function M.intermediate(x, out, producer_ok, consumer_ok, ...)
  if not releasable(x, out, producer_ok, consumer_ok) then return false end
  for i = 1, select("#", ...) do
    if is_argument(x, (select(i, ...))) then return false end
  end
  return true
end

--[[ intermediate for a container whose arguments are a1 (when n == 1) or the array `packed`
     (n of them, when n > 1): a loop that passes on no `...` (NYI in LuaJIT's traces when the
     trace starts inside the vararg function, as a container's loop over its layers does). ]]
function M.intermediate_of(x, out, producer_ok, consumer_ok, n, a1, packed)
  if not releasable(x, out, producer_ok, consumer_ok) then return false end
  if n == 1 then return not is_argument(x, a1) end
  for i = 1, n do
    if is_argument(x, packed[i]) then return false end
  end
  return true
end

-- fn(...) for module m, inside torch.scope when m keeps nothing: every tensor fn makes and does
-- not return is released on return (only library code runs there, and none of it stores one).
function M.privately(m, fn, ...)
  if M.keeps_nothing(m) then return scope(fn, ...) end
  return fn(...)
end

return M
