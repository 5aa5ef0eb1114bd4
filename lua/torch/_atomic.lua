--[[
  torch._atomic — marks library functions that an interrupt must not stop in their own code.

  Why: torch.no_grad, inference_mode, autocast and autograd Functions change thread state, run
  user code under pcall, then restore the state. A Ctrl-C (or a host's ltorch_interrupt) raised
  between the change and the pcall, or between the pcall's return and the restore, would leave
  grad mode off (or inference mode on) for the rest of the session, silently.

  What: atomic(fn) puts fn in the registry's weak-keyed set "ltorch.atomic" and returns fn. The
  ltorch host's interrupt hooks (runtime/interrupt.c, runtime/embed.c) wait while the innermost
  running Lua function is in the set; the user code such a function calls is a deeper frame and
  stays interruptible, its error reaching the restore through the pcall. Under a stock luajit
  (no ltorch host) the set is unused and nothing changes.

  Usage (internal):
      local atomic = require "torch._atomic"
      local function with_mode(fn, ...) ... end
      atomic(with_mode)
]]
local KEY = "ltorch.atomic"   -- runtime/internal.h ATOMIC_KEY

local registry = debug.getregistry()
local set = registry[KEY]
if type(set) ~= "table" then
  set = setmetatable({}, { __mode = "k" })
  registry[KEY] = set
end

return function(fn)
  set[fn] = true
  return fn
end
