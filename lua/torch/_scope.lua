--[[
  torch._scope — torch.scope(fn, ...) and unscoped(fn, ...): which tensors a piece of code may
  release when it returns. torch._memory records every new handle in the active scope's list
  (memory.swap_scope); this file decides, when fn returns, which of them go.

  torch.scope(fn, ...)   runs fn(...) and releases every tensor created inside that fn does not
                         return (directly, or inside a returned table one level deep). Errors
                         propagate after the release. Nested scopes hand kept tensors to the
                         parent.
  unscoped(fn, ...)      runs fn(...) outside any scope, so the tensors it makes outlive it:
                         state that belongs to an object (an optimizer's moments made inside a
                         scope-wrapped training step).

  Usage:  local scope = require "torch._scope"; scope.scope(fn, ...); scope.unscoped(fn, ...)
  Public: torch.scope (lua/torch/init.lua).
]]
local ffi = require "ffi"
local Ref = require("torch._C").Ref
local memory = require "torch._memory"
local pack = require("torch._args").pack

local M = {}

local function keep_returned(keep, v)
  if ffi.istype(Ref, v) then
    keep[v] = true
  elseif type(v) == "table" then
    for _, x in pairs(v) do
      if ffi.istype(Ref, x) then keep[x] = true end
    end
  end
end

function M.scope(fn, ...)
  if type(fn) ~= "function" then
    error(("bad argument #1 to 'scope' (function expected, got %s)"):format(type(fn)), 2)
  end
  local list = {}
  local parent = memory.swap_scope(list)
  local results = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  memory.swap_scope(parent)
  local keep = {}
  if results[1] then
    for i = 2, table.maxn(results) do keep_returned(keep, results[i]) end
  end
  for i = 1, #list do
    local t = list[i]
    if keep[t] then
      if parent then parent[#parent + 1] = t end
    else
      memory.free(t)
    end
  end
  if not results[1] then error(results[2], 0) end
  return unpack(results, 2, table.maxn(results))
end

function M.unscoped(fn, ...)
  local saved = memory.swap_scope(nil)
  local results = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  memory.swap_scope(saved)
  if not results[1] then error(results[2], 0) end
  return unpack(results, 2, table.maxn(results))
end

return M
