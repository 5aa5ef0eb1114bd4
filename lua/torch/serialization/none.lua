--[[
  torch.serialization.none — the sentinel that stands for Python's None where Lua's nil cannot:
  an element of a list or tuple read from a pickle (nil would end the array), an optimizer's
  option left to its default (torch.optim's `foreach = None`, ...). Printed "torch.None"; the
  same value as torch.serialization.None.

  A file of its own so that the optimizers, which only compare with it, do not load the pickle
  reader and writer into every training script's Lua heap (docs/PERFORMANCE.md, optimisation 33).

  Usage:  local None = require "torch.serialization.none"; if v == None then ... end
]]
return setmetatable({}, { __tostring = function() return "torch.None" end })
