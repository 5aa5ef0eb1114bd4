--[[
  torch._fallback — hands a call over from a hand-written fast path to the generated op surface
  when the caller uses a form the fast path does not implement (gelu's approximate=, round's
  decimals=, out=, a Tensor where the fast path takes a number, ...). The fast paths keep the
  common forms quick; nothing a PyTorch user writes is silently ignored.

  Usage (internal):  if select("#", ...) > 0 then return fallback.call("gelu", self, ...) end
]]
local M = {}

-- Calls the generated `name` (function variant, else method variant) with the same arguments.
function M.call(name, ...)
  local dispatch = require "torch._dispatch"
  local f = dispatch.function_for(name)
  if f == nil then
    local m = dispatch.method_for(name)
    if m == nil then error(("%s: this form of the call is not supported"):format(name), 3) end
    return m(...)
  end
  return f(...)
end

-- True when `opts` is nil or a table whose keys are all in `allowed` (a set).
function M.only(opts, allowed)
  if opts == nil then return true end
  if type(opts) ~= "table" then return false end
  for k in pairs(opts) do
    if not allowed[k] then return false end
  end
  return true
end

return M
