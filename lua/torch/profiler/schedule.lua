--[[
  torch.profiler.schedule — PyTorch's profiler schedule and ProfilerAction
  (torch/profiler/profiler.py): which steps of a loop the profiler skips, warms up on, records,
  and after which it hands the trace to on_trace_ready.

  schedule{wait =, warmup =, active =, ["repeat"] =, skip_first =, skip_first_wait =} returns
  fn(step) -> ProfilerAction: after skip_first steps, cycles of `wait` NONE, `warmup` WARMUP,
  `active` steps of RECORD whose last is RECORD_AND_SAVE; `repeat` cycles (0: no limit).
  `repeat` is a Lua keyword, so it is written ["repeat"] = n in the table.

  Usage:
      local sched = torch.profiler.schedule({wait = 1, warmup = 1, active = 2, ["repeat"] = 1})
      sched(3) == torch.profiler.ProfilerAction.RECORD_AND_SAVE
]]
local warnings = require "torch._warnings"

local M = {}

local Action = {}
Action.__index = Action
Action.__tostring = function(a) return "ProfilerAction." .. a.name end
local function action(name, value) return setmetatable({ name = name, value = value }, Action) end

M.ProfilerAction = { NONE = action("NONE", 0), WARMUP = action("WARMUP", 1), RECORD = action("RECORD", 2),
  RECORD_AND_SAVE = action("RECORD_AND_SAVE", 3) }
local A = M.ProfilerAction

function M.is_action(v) return getmetatable(v) == Action end

local KEYS = { wait = true, warmup = true, active = true, ["repeat"] = true, skip_first = true, skip_first_wait = true }

local function count(opts, key, default)
  local v = opts[key]
  if v == nil then
    if default == nil then error(("schedule: missing required argument '%s'"):format(key), 4) end
    return default
  end
  if type(v) ~= "number" or v ~= math.floor(v) then
    error(("schedule: '%s' must be an integer, got %s"):format(key, tostring(v)), 4)
  end
  return v
end

function M.schedule(opts)
  if type(opts) ~= "table" then
    error("schedule: expected a table {wait =, warmup =, active =, [\"repeat\"] =, skip_first =}", 2)
  end
  for k in pairs(opts) do
    if not KEYS[k] then error(("schedule: unexpected keyword argument '%s'"):format(tostring(k)), 2) end
  end
  local wait, warmup, active = count(opts, "wait"), count(opts, "warmup"), count(opts, "active")
  local rep, skip_first, skip_first_wait = count(opts, "repeat", 0), count(opts, "skip_first", 0),
    count(opts, "skip_first_wait", 0)
  if wait < 0 or warmup < 0 or active <= 0 or rep < 0 or skip_first < 0 then
    error(("Invalid profiler schedule arguments. Got wait=%d (need >= 0), warmup=%d (need >= 0), active=%d "
      .. "(need > 0), repeat=%d (need >= 0), skip_first=%d (need >= 0)."):format(wait, warmup, active, rep, skip_first), 2)
  end
  if warmup == 0 then warnings.warn("Profiler won't be using warmup, this can skew profiler results", 2) end
  return function(step)
    if type(step) ~= "number" or step < 0 then error(("Step must be non-negative. Got %s."):format(tostring(step)), 2) end
    if step < skip_first then return A.NONE end
    step = step - skip_first
    if skip_first_wait ~= 0 then step = step + wait end
    local num_steps = wait + warmup + active
    if rep > 0 and step / num_steps >= rep then return A.NONE end
    local mod = step % num_steps
    if mod < wait then return A.NONE end
    if mod < wait + warmup then return A.WARMUP end
    return mod < num_steps - 1 and A.RECORD or A.RECORD_AND_SAVE
  end
end

-- Without a schedule the profiler records every step.
function M.default(_) return A.RECORD end

return M
