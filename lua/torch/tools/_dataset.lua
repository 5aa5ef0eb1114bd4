--[[
  torch.tools._dataset — loading the dataset the data tools (check-dataset, profile-dataloader) run
  on: a Lua script returning a map-style dataset (ds:len(), ds:get(i) with i 0-based; see
  torch.data.dataset), a function returning one (a factory), or a table with `dataset` (either of
  those). A missing or failing script, or anything else, is a usage error naming the script.
]]
local T = require "torch.tools"

local M = {}

local function callable(v, k)
  if type(v) ~= "table" and type(v) ~= "userdata" then return false end
  local ok, f = pcall(function() return v[k] end)
  return ok and type(f) == "function"
end

function M.is_dataset(v) return callable(v, "len") and callable(v, "get") end

-- load_script(path) -> the value the script returns (a usage error when it cannot be run)
function M.load_script(path)
  if type(path) ~= "string" then T.usage_error("a script is required") end
  local chunk, why = loadfile(path)
  if not chunk then T.usage_error("cannot load %s", tostring(why)) end
  local ok, v = pcall(chunk)
  if not ok then T.usage_error("%s failed: %s", path, tostring(v)) end
  return v
end

-- dataset(v, path) -> dataset, from the value a script returned
function M.dataset(v, path)
  if type(v) == "table" and not M.is_dataset(v) and v.dataset ~= nil then v = v.dataset end
  if type(v) == "function" then
    local ok, ds = pcall(v)
    if not ok then T.usage_error("%s: the dataset factory failed: %s", path, tostring(ds)) end
    v = ds
  end
  if not M.is_dataset(v) then
    T.usage_error("%s must return a dataset (len and get), a factory function, or {dataset = ...}", path)
  end
  return v
end

return M
