--[[
  torch.profiler.record_function — a named range in the profile (PyTorch's
  torch.profiler.record_function / torch.autograd.profiler.record_function): libtorch's
  at::RecordFunction with USER_SCOPE, so it appears as a row in key_averages() (its ops are its
  children) and as a "user_annotation" event in the Chrome trace. Outside a running profiler a
  range costs one call and records nothing.

  Python's `with record_function("name"):` cannot be written in Lua; the Lua forms are:
      torch.profiler.record_function("data", function() batch = next_batch() end)  -- returns fn's results
      local r = torch.profiler.record_function("step"); r:start(); ...; r:stop()   -- or r:__enter()/r:__exit()
  A range's function form closes the range when the function raises, and re-raises.
]]
local native = require "torch.profiler._native"

local M = {}

local Range = {}
Range.__index = Range
Range.__tostring = function(r) return ("record_function(%q)"):format(r.name) end

function Range:start()
  if self.h ~= nil then error(("record_function('%s'): start() while already started"):format(self.name), 2) end
  self.h = native.range_enter(self.name)
  return self
end

function Range:stop()
  if self.h == nil then error(("record_function('%s'): stop() without start()"):format(self.name), 2) end
  local h = self.h
  self.h = nil
  native.range_exit(h)
end

Range.__enter = Range.start
Range.__exit = Range.stop

local function finish(r, ok, ...)
  r:stop()
  if not ok then error((...), 0) end
  return ...
end

-- record_function(name) -> range object; record_function(name, fn, ...) -> fn(...)'s results.
function M.record_function(name, fn, ...)
  if type(name) ~= "string" then
    error(("record_function: name must be a string, got %s"):format(type(name)), 2)
  end
  local r = setmetatable({ name = name }, Range)
  if fn == nil then return r end
  if type(fn) ~= "function" then
    error(("record_function: expected a function as argument #2, got %s"):format(type(fn)), 2)
  end
  r:start()
  return finish(r, pcall(fn, ...))
end

return M
