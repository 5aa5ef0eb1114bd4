--[[
  torch.profiler — PyTorch's torch.profiler on libtorch's own profiler (the autograd profiler
  over Kineto): op events with CPU time, input shapes and memory, record_function ranges, Lua
  frames (with_stack), key_averages tables in PyTorch's layout, Chrome traces for Perfetto or
  chrome://tracing, and TensorBoard trace directories.

  Usage (the seed's "Profile a forward pass"):
      local prof = torch.profiler.profile({activities = {torch.profiler.ProfilerActivity.CPU}},
        function() model(x) end)
      print(prof:key_averages():table({sort_by = "cpu_time_total", row_limit = 10}))
      prof:export_chrome_trace("trace.json")
  Python's `with` blocks become a function argument (profile(opts, fn), record_function(name, fn))
  or explicit start/stop (prof:start() ... prof:stop(), r = record_function(name):start() ... r:stop()).
  Parts: profile.lua (the profiler object), schedule.lua, record_function.lua, events.lua
  (FunctionEvents, key_averages), table.lua (the table), lua_stack.lua (Lua frames), _native.lua
  (the bindings), trace_handler.lua (tensorboard_trace_handler).
]]
local profile = require "torch.profiler.profile"
local sched = require "torch.profiler.schedule"
local rf = require "torch.profiler.record_function"
local handler = require "torch.profiler.trace_handler"

return {
  profile = profile.profile,
  ProfilerActivity = profile.ProfilerActivity,
  supported_activities = profile.supported_activities,
  schedule = sched.schedule,
  ProfilerAction = sched.ProfilerAction,
  record_function = rf.record_function,
  tensorboard_trace_handler = handler.tensorboard_trace_handler,
}
