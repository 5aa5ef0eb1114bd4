--[[
  torch.serialization._lua_tables — how the writers (json.lua, pickle.lua) read a Lua table's
  shape (internal).

  Why: a Lua table is a list or a map only by its keys; both writers must decide it the same way,
  so a checkpoint's structure reads the same in either format.

  What: is_list(t) is true when t has keys 1..#t and nothing else, and at least one element (an
  empty table is written as a map, as PyTorch's empty dict).

  Use:  local tables = require "torch.serialization._lua_tables"; if tables.is_list(v) then ... end
]]
local M = {}

function M.is_list(t)
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

return M
