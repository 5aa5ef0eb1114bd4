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

--[[ Wraps fast paths that take no keyword table so that a trailing keyword table
     (torch.cat(xs, {dim = 1}), x:flatten({start_dim = 1})) goes to the generated op, which binds
     keywords to PyTorch's parameter names. Module reloads reassign the fast paths first, so a
     function is never wrapped twice. ]]
function M.keywords_to_generated(tbl, names)
  local is_options = require("torch._args").is_options
  for _, name in ipairs(names) do
    local fast = rawget(tbl, name)
    if fast ~= nil then
      tbl[name] = function(...)
        local n = select("#", ...)
        if n > 0 and is_options((select(n, ...))) then return M.call(name, ...) end
        return fast(...)
      end
    end
  end
end

-- The fast paths that take no keyword table of their own.
M.positional_only = {
  "cat", "concat", "concatenate", "stack", "squeeze", "unsqueeze", "flatten", "split", "chunk",
  "transpose", "swapaxes", "narrow", "select", "index_select", "gather", "permute", "reshape", "view",
  "expand", "mm", "bmm", "matmul", "dot", "outer", "masked_fill", "masked_fill_", "lerp", "where",
  "nonzero", "masked_select", "leaky_relu",
}

return M
