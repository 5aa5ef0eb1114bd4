--[[
  torch.profiler.events — PyTorch's FunctionEvent list made from libtorch's profiler events, and
  its key_averages (FunctionEventAvg). This is torch/autograd/profiler.py's _parse_kineto_results
  and profiler_util.py's EventList (_build_tree, key_averages) written out in Lua, so the numbers
  and rows are PyTorch's for the same events.

  What it does, in PyTorch's order:
    1. drop utility events ("[memory]", "profiler::_record_function_*", aten::is_leaf,
       aten::output_nr, aten::_version) and hidden ones; times become µs from the trace start;
    2. a CPU event's memory = the "[memory]" records that start inside it (CPU and device bytes
       apart); records inside no event become zero-length "[memory]" events;
    3. device kernels (CUDA) are attached to the CPU op whose correlation id they link to;
    4. per thread, each event's parent is the innermost event whose [start, end) holds it;
       a child with its parent's name as only child is merged into it (_remove_dup_nodes);
    5. derived times: cpu_time_total = end - start; self_cpu_time_total = total minus the
       children's totals; device totals likewise over kernels.
  key_averages groups by (name, node, device type, legacy, user annotation[, input shapes][,
  top stack entries]) in first-seen order and sums totals, self times, memory and counts.

  Usage (internal, from torch.profiler's profile object):
      local events = require "torch.profiler.events"
      local list = events.build(result:events(), {use_device = nil, profile_memory = false})  -- times: ns since the trace start
      local avgs = events.key_averages(list, {group_by_input_shape = false})
  Both lists are EventLists: arrays with :table(opts), :key_averages(opts) (raw list only),
  :total_average(), .self_cpu_time_total.
]]
local native = require "torch.profiler._native"
local format = require "torch.profiler.table"

local DEV = native.DEVICE
local M = {}

local FILTERED = { ["[memory]"] = true, ["[OutOfMemory]"] = true, ["profiler::_record_function_enter"] = true,
  ["profiler::_record_function_enter_new"] = true, ["profiler::_record_function_exit"] = true,
  ["aten::is_leaf"] = true, ["aten::output_nr"] = true, ["aten::_version"] = true }
local CPU_MEM = { [DEV.CPU] = true, [DEV.MKLDNN] = true, [DEV.IDEEP] = true }
local DEVICE_MEM = { [DEV.CUDA] = true, [DEV.PrivateUse1] = true, [DEV.HIP] = true, [DEV.XPU] = true }
local KERNEL_DEVICES = { [DEV.CUDA] = true, [DEV.PrivateUse1] = true, [DEV.XPU] = true }

local EventList = {}
EventList.__index = EventList
M.EventList = EventList

local function event_list(items, opts)
  items.use_device, items.profile_memory = opts.use_device, opts.profile_memory
  return setmetatable(items, EventList)
end

M.shapes_str = format.shapes_str

local function function_event(f)
  f.kernels, f.cpu_children, f.count, f.node_id = {}, {}, 1, -1
  f.is_legacy = false
  return f
end

-- Memory records sorted by start time, with a binary search for those starting in [lo, hi].
local function memory_index(records)
  local sorted = {}
  for i, r in ipairs(records) do sorted[i] = r end
  table.sort(sorted, function(a, b) if a.ev.start_ns ~= b.ev.start_ns then return a.ev.start_ns < b.ev.start_ns end
    return a.i < b.i end)
  local function first_at_least(t)
    local lo, hi = 1, #sorted + 1
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if sorted[mid].ev.start_ns < t then lo = mid + 1 else hi = mid end
    end
    return lo
  end
  return function(lo_ns, hi_ns)
    local out, i = {}, first_at_least(lo_ns)
    while i <= #sorted and sorted[i].ev.start_ns <= hi_ns do out[#out + 1] = sorted[i]; i = i + 1 end
    return out
  end
end

local function memory_event(ev, id, use_device)
  local us = ev.start_ns / 1000
  return function_event({ id = id, name = ev.name, thread = ev.start_thread, start_us = us, end_us = us,
    fwd_thread = ev.start_thread, input_shapes = {}, stack = {}, scope = 0, use_device = use_device,
    cpu_memory_usage = CPU_MEM[ev.device_type] and ev.nbytes or 0,
    device_memory_usage = DEVICE_MEM[ev.device_type] and ev.nbytes or 0,
    is_async = false, sequence_nr = -1, device_type = DEV.CPU, device_index = 0, is_user_annotation = false })
end

-- Steps 1-3: the FunctionEvents of one result, sorted by (start, -end).
local function parse(raw, opts)
  local mem, oom = {}, {}
  for i, ev in ipairs(raw) do
    if ev.name == "[memory]" then mem[#mem + 1] = { ev = ev, i = i, used = false }
    elseif ev.name == "[OutOfMemory]" then oom[#oom + 1] = ev end
  end
  local in_interval = memory_index(mem)
  local all, frontend, corr, max_id = {}, {}, {}, 0
  for _, ev in ipairs(raw) do
    if not FILTERED[ev.name] and not ev.is_hidden then
      local cpu_mem, dev_mem = 0, 0
      if ev.device_type == DEV.CPU then
        for _, r in ipairs(in_interval(ev.start_ns, ev.end_ns)) do
          cpu_mem = cpu_mem + (CPU_MEM[r.ev.device_type] and r.ev.nbytes or 0)
          dev_mem = dev_mem + (DEVICE_MEM[r.ev.device_type] and r.ev.nbytes or 0)
          r.used = true
        end
      end
      local fe = function_event({ id = ev.correlation_id, name = ev.name:match("^ProfilerStep#") and "ProfilerStep*" or ev.name,
        trace_name = ev.name, thread = ev.start_thread, start_us = ev.start_ns / 1000,
        end_us = ev.end_ns / 1000, fwd_thread = ev.fwd_thread, input_shapes = ev.shapes,
        stack = ev.stack or {}, scope = ev.scope, use_device = opts.use_device, cpu_memory_usage = cpu_mem,
        device_memory_usage = dev_mem, is_async = ev.is_async or ev.start_thread ~= ev.end_thread,
        sequence_nr = ev.sequence_nr, device_type = ev.device_type, device_index = ev.device_index,
        is_user_annotation = ev.activity_type == native.ACTIVITY.USER_ANNOTATION
          or ev.activity_type == native.ACTIVITY.GPU_USER_ANNOTATION })
      max_id = math.max(max_id, fe.id)
      all[#all + 1] = fe
      local link = ev.linked_correlation_id
      if link > 0 then corr[link] = corr[link] or {}; table.insert(corr[link], fe)
      else frontend[#frontend + 1] = fe end
    end
  end
  for _, fe in ipairs(frontend) do
    if fe.device_type == DEV.CPU and not fe.is_async and corr[fe.id] then
      for _, k in ipairs(corr[fe.id]) do
        if KERNEL_DEVICES[k.device_type] then
          fe.kernels[#fe.kernels + 1] = { name = k.name, device = k.device_index, duration = k.end_us - k.start_us }
        elseif k.device_type == DEV.CPU then
          k.thread = fe.thread
        end
      end
    end
  end
  for _, r in ipairs(mem) do
    if not r.used then max_id = max_id + 1; all[#all + 1] = memory_event(r.ev, max_id, opts.use_device) end
  end
  for _, ev in ipairs(oom) do max_id = max_id + 1; all[#all + 1] = memory_event(ev, max_id, opts.use_device) end
  return all
end

-- Python's sorted() is stable: ties keep their earlier order (the `order` field).
local function stable_sort(list, less)
  for i, e in ipairs(list) do e._order = i end
  table.sort(list, function(a, b)
    if less(a, b) then return true end
    if less(b, a) then return false end
    return a._order < b._order
  end)
end

local function by_time(a, b)
  if a.start_us ~= b.start_us then return a.start_us < b.start_us end
  return a.end_us > b.end_us
end

-- Step 4: parents and children per thread (PyTorch's _populate_cpu_children).
local function populate_children(list)
  local threads, order = {}, {}
  for _, e in ipairs(list) do
    if not e.is_async and e.device_type == DEV.CPU then
      if not threads[e.thread] then threads[e.thread] = {}; order[#order + 1] = e.thread end
      table.insert(threads[e.thread], e)
    end
  end
  for _, tid in ipairs(order) do
    local events = threads[tid]
    stable_sort(events, by_time)
    local current = {}
    for _, e in ipairs(events) do
      while #current > 0 do
        local parent = current[#current]
        if e.start_us >= parent.end_us or e.end_us > parent.end_us then
          current[#current] = nil
        else
          parent.cpu_children[#parent.cpu_children + 1] = e
          e.cpu_parent = parent
          break
        end
      end
      current[#current + 1] = e
    end
  end
end

local function remove_dup_nodes(list)
  while true do
    local keep, deleted = {}, false
    for _, e in ipairs(list) do
      local p = e.cpu_parent
      if p and p.name == e.name and #p.cpu_children == 1 then
        p.cpu_children, p.kernels = e.cpu_children, e.kernels
        for _, ch in ipairs(e.cpu_children) do ch.cpu_parent = p end
        deleted = true
      else
        keep[#keep + 1] = e
      end
    end
    if not deleted then return end
    for i = 1, #list do list[i] = keep[i] end
  end
end

-- Step 5: PyTorch's FunctionEvent properties, computed once the tree is final.
local function device_total(e)
  if e._device_total then return e._device_total end
  local t = 0
  if not e.is_async and e.use_device then
    if e.device_type == DEV.CPU then
      for _, k in ipairs(e.kernels) do t = t + k.duration end
      for _, ch in ipairs(e.cpu_children) do t = t + device_total(ch) end
    else
      t = e.end_us - e.start_us
    end
  end
  e._device_total = t
  return t
end

local function derive(e)
  local cpu = e.device_type == DEV.CPU
  e.cpu_time_total = cpu and (e.end_us - e.start_us) or 0
  e.device_time_total = device_total(e)
  local self_cpu, self_dev = 0, 0
  local self_cpu_mem, self_dev_mem = 0, 0
  if not e.is_async and cpu then
    self_cpu, self_cpu_mem, self_dev_mem = e.cpu_time_total, e.cpu_memory_usage, e.device_memory_usage
    for _, ch in ipairs(e.cpu_children) do
      self_cpu = self_cpu - (ch.end_us - ch.start_us)
      self_cpu_mem, self_dev_mem = self_cpu_mem - ch.cpu_memory_usage, self_dev_mem - ch.device_memory_usage
    end
  end
  if not e.is_async and e.use_device then
    self_dev = e.device_time_total
    if cpu then for _, ch in ipairs(e.cpu_children) do self_dev = self_dev - device_total(ch) end end
  end
  e.self_cpu_time_total, e.self_device_time_total = self_cpu, self_dev
  e.self_cpu_memory_usage, e.self_device_memory_usage = self_cpu_mem, self_dev_mem
  e.cpu_time = e.cpu_time_total / e.count
  e.device_time = e.device_time_total / e.count
  e.key = e.name
end

function M.build(raw, opts)
  local list = parse(raw, opts)
  stable_sort(list, by_time)
  populate_children(list)
  remove_dup_nodes(list)
  for _, e in ipairs(list) do derive(e) end
  return event_list(list, opts)
end

local SUMMED = { "cpu_time_total", "device_time_total", "self_cpu_time_total", "self_device_time_total",
  "cpu_memory_usage", "device_memory_usage", "self_cpu_memory_usage", "self_device_memory_usage", "count" }
local COPIED = { "key", "node_id", "is_async", "cpu_parent", "cpu_children", "input_shapes", "stack", "scope",
  "device_type", "is_legacy", "use_device", "is_user_annotation" }

function M.key_averages(list, group_by_input_shape, group_by_stack_n)
  local stats, order = {}, {}
  for _, e in ipairs(list) do
    local key = { e.key, e.node_id, e.device_type, tostring(e.is_legacy), tostring(e.is_user_annotation) }
    if group_by_input_shape then key[#key + 1] = M.shapes_str(e.input_shapes) end
    for i = 1, group_by_stack_n do key[#key + 1] = e.stack[i] end
    key = table.concat(key, "\0")
    local avg = stats[key]
    if not avg then
      avg = { count = 0 }
      for _, f in ipairs(SUMMED) do avg[f] = 0 end
      for _, f in ipairs(COPIED) do avg[f] = e[f] end
      stats[key] = avg
      order[#order + 1] = avg
    end
    for _, f in ipairs(SUMMED) do avg[f] = avg[f] + e[f] end
  end
  for _, avg in ipairs(order) do
    avg.cpu_time = avg.count == 0 and 0 or avg.cpu_time_total / avg.count
    avg.device_time = avg.count == 0 and 0 or avg.device_time_total / avg.count
    local stack = {}
    for i = 1, math.min(group_by_stack_n, #(avg.stack or {})) do stack[i] = avg.stack[i] end
    avg.stack = stack
    if not group_by_input_shape then avg.input_shapes = "" end
  end
  return event_list(order, { use_device = list.use_device, profile_memory = list.profile_memory })
end

-- with_stack: each event's stack = the Lua frame ranges around it (names in `frames`), innermost first.
function M.attach_stacks(list, frames)
  for _, e in ipairs(list) do
    local stack, p = {}, e.cpu_parent
    while p do
      if frames[p.name] then stack[#stack + 1] = p.name end
      p = p.cpu_parent
    end
    e.stack = stack
  end
end

function EventList:table(opts)
  local text = format.build_table(self, opts, 3)   -- not a tail call: errors name the caller's line
  return text
end

function EventList:total_average()
  local total = { key = "Total", count = 0 }
  for _, f in ipairs(SUMMED) do total[f] = 0 end
  for _, e in ipairs(self) do for _, f in ipairs(SUMMED) do total[f] = total[f] + e[f] end end
  total.cpu_time = total.count == 0 and 0 or total.cpu_time_total / total.count
  total.device_time = total.count == 0 and 0 or total.device_time_total / total.count
  return total
end

EventList.__tostring = function(self) return format.build_table(self, {}, 3) end

return M
