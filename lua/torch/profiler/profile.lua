--[[
  torch.profiler.profile — PyTorch's profiler object (torch/profiler/profiler.py `profile`) on
  libtorch's Kineto profiler: start/stop/step with a schedule and on_trace_ready, the events as
  PyTorch's FunctionEvents, key_averages and its table, the Chrome trace.

  Usage:
      local P = torch.profiler
      -- function form (PyTorch's `with profile(...) as prof:`); returns the stopped profiler
      local prof = P.profile({activities = {P.ProfilerActivity.CPU}}, function(prof) model(x) end)
      print(prof:key_averages():table({sort_by = "cpu_time_total", row_limit = 10}))
      -- scope form with a schedule: step() after each iteration
      local prof = P.profile({schedule = P.schedule({wait = 1, warmup = 1, active = 2}),
                              on_trace_ready = P.tensorboard_trace_handler("./log")})
      prof:start(); for i = 1, 8 do train_step(); prof:step() end; prof:stop()
  Options: activities (default: CPU, and CUDA when available), record_shapes, profile_memory,
  with_stack (Lua frames: torch.profiler.lua_stack), schedule, on_trace_ready.
  ProfilerActivity.CUDA without a usable GPU warns "CUDA is not available, disabling CUDA
  profiling" and profiles the CPU, as PyTorch does. WARMUP steps record nothing (Kineto's
  prepare step only matters for CUPTI, which starts with recording here).
]]
local native = require "torch.profiler._native"
local events = require "torch.profiler.events"
local sched = require "torch.profiler.schedule"
local rf = require "torch.profiler.record_function"
local lua_stack = require "torch.profiler.lua_stack"
local warnings = require "torch._warnings"

local A = sched.ProfilerAction
local M = {}

local Activity = {}
Activity.__index = Activity
Activity.__tostring = function(a) return "ProfilerActivity." .. a.name end
M.ProfilerActivity = { CPU = setmetatable({ name = "CPU" }, Activity), CUDA = setmetatable({ name = "CUDA" }, Activity) }

local OPTIONS = { activities = true, record_shapes = true, profile_memory = true, with_stack = true, schedule = true,
  on_trace_ready = true }

local function cuda_available()
  local ok, torch = pcall(require, "torch")
  return ok and torch.cuda and torch.cuda.is_available() or false
end

function M.supported_activities()
  local out = { M.ProfilerActivity.CPU }
  if cuda_available() then out[2] = M.ProfilerActivity.CUDA end
  return out
end

local Profile = {}
Profile.__index = Profile

local function check_options(opts, level)
  if type(opts) ~= "table" then error(("profile: expected an options table, got %s"):format(type(opts)), level + 1) end
  for k in pairs(opts) do
    if not OPTIONS[k] then
      local hint = k == "use_cuda" and " (use activities = {ProfilerActivity.CPU, ProfilerActivity.CUDA})" or ""
      error(("profile: unexpected keyword argument '%s'%s"):format(tostring(k), hint), level + 1)
    end
  end
  local acts = opts.activities or M.supported_activities()
  if type(acts) ~= "table" then error("profile: activities must be a list of torch.profiler.ProfilerActivity", level + 1) end
  local set = {}
  for i, a in ipairs(acts) do
    if getmetatable(a) ~= Activity then
      error(("profile: unknown activity #%d (%s): use torch.profiler.ProfilerActivity.CPU or .CUDA"):format(i, tostring(a)),
        level + 1)
    end
    set[a.name:lower()] = true
  end
  if next(set) == nil then error("profile: No valid profiler activities found", level + 1) end
  if set.cuda and not cuda_available() then
    warnings.warn("CUDA is not available, disabling CUDA profiling", level + 1)
    set.cuda = nil
    if not set.cpu then error("profile: No activities specified for the profiler", level + 1) end
  end
  if opts.schedule ~= nil and type(opts.schedule) ~= "function" then
    error("profile: schedule must be a function (torch.profiler.schedule{...})", level + 1)
  end
  if opts.on_trace_ready ~= nil and type(opts.on_trace_ready) ~= "function" then
    error("profile: on_trace_ready must be a function(prof)", level + 1)
  end
  return set
end

function M.new(opts, level)
  opts = opts or {}
  local set = check_options(opts, level + 1)
  local self = setmetatable({ activities = set, use_device = set.cuda and "cuda" or nil,
    record_shapes = not not opts.record_shapes, profile_memory = not not opts.profile_memory,
    with_stack = not not opts.with_stack, schedule = opts.schedule or sched.default,
    record_steps = opts.schedule ~= nil, on_trace_ready = opts.on_trace_ready, step_num = 0,
    started = false, recording = false }, Profile)
  self.current_action = self.schedule(0)
  return self
end

function Profile:start_trace()
  native.start(self.activities, self.record_shapes, self.profile_memory, self.with_stack)
  self.recording = true
  if self.with_stack then lua_stack.install() end
end

function Profile:stop_trace()
  if not self.recording then return end
  local frames = self.with_stack and lua_stack.remove() or {}
  self.recording = false
  if self.result then self.result:free() end
  self.result, self.frames, self.function_events = native.stop(), frames, nil
end

function Profile:_trace_ready()
  if self.on_trace_ready then self.on_trace_ready(self) end
end

-- PyTorch's action_map: what to do when the action changes from prev to cur (cur nil: exit).
function Profile:_transit(prev, cur)
  local rec = function(a) return a == A.RECORD or a == A.RECORD_AND_SAVE end
  if cur == nil then
    if rec(prev) then self:stop_trace(); self:_trace_ready() end
    if prev == A.WARMUP then self:start_trace(); self:stop_trace() end
    return
  end
  if prev == A.RECORD_AND_SAVE and cur ~= nil then
    self:stop_trace(); self:_trace_ready()
    if rec(cur) then self:start_trace() end
    return
  end
  if prev == A.RECORD and (cur == A.NONE or cur == A.WARMUP) then
    warnings.warn("Incorrect schedule: RECORD followed by " .. cur.name, 3)
    self:stop_trace()
  elseif (prev == A.NONE or prev == A.WARMUP) and rec(cur) then
    self:start_trace()
  elseif prev == A.WARMUP and cur == A.NONE then
    warnings.warn("Incorrect schedule: WARMUP followed by NONE", 3)
  end
end

local function step_range(self)
  if self.record_steps then self.step_rec = rf.record_function("ProfilerStep#" .. self.step_num):start() end
end

local function end_step_range(self)
  if self.step_rec then self.step_rec:stop(); self.step_rec = nil end
end

function Profile:start()
  if self.started then error("profile: start() called twice (the profiler is already running)", 2) end
  if native.enabled() then error("profile: another profiler is already running in this thread", 2) end
  self.started = true
  self:_transit(A.NONE, self.current_action)
  step_range(self)
  return self
end

function Profile:stop()
  if not self.started then error("profile: stop() before start()", 2) end
  end_step_range(self)
  self.started = false
  self:_transit(self.current_action, nil)
end

function Profile:step()
  if not self.started then error("profile: step() before start()", 2) end
  end_step_range(self)
  local prev = self.current_action
  self.step_num = self.step_num + 1
  self.current_action = self.schedule(self.step_num)
  if not sched.is_action(self.current_action) then
    error("profile: the schedule returned " .. tostring(self.current_action) .. ", not a ProfilerAction", 2)
  end
  self:_transit(prev, self.current_action)
  step_range(self)
end

function Profile:events()
  if not self.result then error("profile: no results yet (stop() the profiler, or let a recording step finish)", 2) end
  if not self.function_events then
    local list = events.build(self.result:events(), { use_device = self.use_device, profile_memory = self.profile_memory })
    if self.with_stack then events.attach_stacks(list, self.frames) end
    self.function_events = list
  end
  return self.function_events
end

function Profile:key_averages(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("key_averages: expected an options table {group_by_input_shape =}", 2) end
  for k in pairs(opts) do
    if k ~= "group_by_input_shape" and k ~= "group_by_stack_n" then
      error(("key_averages: unexpected keyword argument '%s'"):format(tostring(k)), 2)
    end
  end
  local n = opts.group_by_stack_n or 0
  if type(n) ~= "number" or n < 0 then error("key_averages: group_by_stack_n must be a non-negative integer", 2) end
  if not self.result then error("key_averages: no results yet (stop() the profiler first)", 2) end
  return events.key_averages(self:events(), not not opts.group_by_input_shape, n)
end

function Profile:export_chrome_trace(path)
  if type(path) ~= "string" then error("export_chrome_trace: path must be a string", 2) end
  if path:match("%.gz$") then error("export_chrome_trace: gzip output is not supported; write a .json path", 2) end
  if not self.result then error("export_chrome_trace: no results yet (stop() the profiler first)", 2) end
  self.result:save(path)
end

function Profile:__tostring()
  if not self.result then return "<unfinished torch.profiler.profile>" end
  return self:events():table()
end

-- profile(opts) -> profiler; profile(opts, fn) runs fn(prof) between start and stop and returns
-- the stopped profiler (the profiler stops when fn raises, and the error goes on).
function M.profile(opts, fn)
  local prof = M.new(opts, 2)
  if fn == nil then return prof end
  if type(fn) ~= "function" then error(("profile: expected a function as argument #2, got %s"):format(type(fn)), 2) end
  prof:start()
  local ok, err = pcall(fn, prof)
  if prof.started then prof:stop() end
  if not ok then error(err, 0) end
  return prof
end

return M
