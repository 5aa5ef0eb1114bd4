--[[
  torch.profiler.table — PyTorch's profiler table (torch/autograd/profiler_util.py, _build_table):
  the same columns, widths, number formats and footer, so `print(prof:key_averages():table(...))`
  reads as PyTorch's `print(prof.key_averages().table(...))` does.

  Columns: Name | Self CPU % | Self CPU | CPU total % | CPU total | CPU time avg
           then, when device time was recorded: Self CUDA | Self CUDA % | CUDA total | CUDA time avg
           then, with profile_memory: CPU Mem | Self CPU Mem (and CUDA Mem | Self CUDA Mem)
           then # of Calls, and Input Shapes / Source Location when any event has them
  Each column is right-aligned in 12 characters (Name: the longest name + 4, at most 55; a name of
  52 or more is cut to 52 and "..."), two spaces apart; the footer is "Self CPU time total: ...".

  Usage (internal): EventList:table(opts) calls build_table(list, opts, level) with opts
  {sort_by =, row_limit = 100, max_name_column_width = 55, max_shapes_column_width = 80,
   max_src_column_width = 75, header =, top_level_events_only = false, time_unit = nil}.
]]
local M = {}

local SORT_KEYS = { cpu_time = "cpu_time", cpu_time_total = "cpu_time_total", self_cpu_time_total = "self_cpu_time_total",
  cpu_memory_usage = "cpu_memory_usage", self_cpu_memory_usage = "self_cpu_memory_usage", count = "count" }
for _, dev in ipairs({ "device", "cuda", "xpu", "privateuse1" }) do
  SORT_KEYS[dev .. "_time"] = "device_time"
  SORT_KEYS[dev .. "_time_total"] = "device_time_total"
  SORT_KEYS["self_" .. dev .. "_time_total"] = "self_device_time_total"
  SORT_KEYS[dev .. "_memory_usage"] = "device_memory_usage"
  SORT_KEYS["self_" .. dev .. "_memory_usage"] = "self_device_memory_usage"
end
M.SORT_KEYS = SORT_KEYS

local OPTIONS = { sort_by = true, row_limit = true, max_src_column_width = true, max_name_column_width = true,
  max_shapes_column_width = true, header = true, top_level_events_only = true, time_unit = true }

-- ("%.<n>f"):format(x) rounding an exact tie to even, as C's printf and Python do (LuaJIT's own
-- formatter rounds ties away from zero: 1.125 -> "1.13" where PyTorch prints "1.12").
local function fixed(x, n)
  local scale = 10 ^ n
  local scaled = math.abs(x) * scale
  local low = math.floor(scaled)
  if scaled - low == 0.5 and low % 2 == 0 then
    return ("%." .. n .. "f"):format((x < 0 and -low or low) / scale)
  end
  return ("%." .. n .. "f"):format(x)
end
M.fixed = fixed

local function format_time(us)
  if us >= 1e6 then return fixed(us / 1e6, 3) .. "s" end
  if us >= 1e3 then return fixed(us / 1e3, 3) .. "ms" end
  return fixed(us, 3) .. "us"
end
M.format_time = format_time

local function time_unit_str(us, unit)
  if unit == "s" then return fixed(us / 1e6, 3) .. "s" end
  if unit == "ms" then return fixed(us / 1e3, 3) .. "ms" end
  if unit == "us" then return fixed(us, 3) .. "us" end
  return format_time(us)
end

local function format_share(us, total)
  if total == 0 then return "NaN" end
  return fixed(us * 100 / total, 2) .. "%"
end

local function format_memory(n)
  local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
  if math.abs(n) >= GB then return fixed(n / GB, 2) .. " GB" end
  if math.abs(n) >= MB then return fixed(n / MB, 2) .. " MB" end
  if math.abs(n) >= KB then return fixed(n / KB, 2) .. " KB" end
  return ("%d B"):format(n)
end

-- Python's str() of a list of int lists: "[[8, 16], [], [32]]" (a string stays as it is).
local function shapes_text(shapes)
  if type(shapes) ~= "table" then return tostring(shapes or "") end
  local parts = {}
  for i, s in ipairs(shapes) do parts[i] = "[" .. table.concat(s, ", ") .. "]" end
  return "[" .. table.concat(parts, ", ") .. "]"
end
M.shapes_str = shapes_text

local function check_opts(opts, level)
  if type(opts) ~= "table" then
    error(("table: expected an options table ({sort_by =, row_limit =}), got %s"):format(type(opts)), level)
  end
  for k in pairs(opts) do
    if not OPTIONS[k] then error(("table: unexpected keyword argument '%s'"):format(tostring(k)), level) end
  end
  if opts.sort_by ~= nil and not SORT_KEYS[opts.sort_by] then
    local names = {}
    for k in pairs(SORT_KEYS) do names[#names + 1] = k end
    table.sort(names)
    error(("table: unknown sort_by '%s' (one of: %s)"):format(tostring(opts.sort_by), table.concat(names, ", ")), level)
  end
  if opts.time_unit ~= nil and opts.time_unit ~= "s" and opts.time_unit ~= "ms" and opts.time_unit ~= "us" then
    error(("table: time_unit must be 's', 'ms' or 'us', got '%s'"):format(tostring(opts.time_unit)), level)
  end
end

local function sorted_copy(events, attr)
  local copy = {}
  for i, e in ipairs(events) do copy[i] = { e = e, i = i } end
  table.sort(copy, function(a, b)
    if a.e[attr] ~= b.e[attr] then return a.e[attr] > b.e[attr] end
    return a.i < b.i
  end)
  for i, c in ipairs(copy) do copy[i] = c.e end
  return copy
end

local function trim_path(path, width)
  if #path > width then
    path = path:sub(#path - width + 1)
    if #path > 3 then path = "..." .. path:sub(4) end
  end
  return path
end

-- The columns for these events: headers, widths, which optional parts are shown.
local function layout(events, opts)
  local L = { name_max = opts.max_name_column_width == nil and 55 or opts.max_name_column_width,
    use_device = events.use_device, profile_memory = events.profile_memory, left = {} }
  local shapes_max = opts.max_shapes_column_width == nil and 80 or opts.max_shapes_column_width
  local src_max = opts.max_src_column_width == nil and 75 or opts.max_src_column_width
  local name_w, shapes_w, src_w = 0, 0, 0
  for _, e in ipairs(events) do
    L.device_time = L.device_time or e.self_device_time_total > 0
    L.device_mem = L.device_mem or e.self_device_memory_usage > 0
    L.shapes = L.shapes or (type(e.input_shapes) == "table" and #e.input_shapes > 0)
    name_w = math.max(name_w, #e.key)
    shapes_w = math.max(shapes_w, #shapes_text(e.input_shapes))
    for _, st in ipairs(e.stack or {}) do L.stack = true; src_w = math.max(src_w, #st) end
  end
  L.shapes_w, L.src_w = math.min(shapes_w + 4, shapes_max), math.min(src_w + 4, src_max)
  L.dev = L.use_device and L.use_device:upper() or "None"
  local headers = { "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg" }
  local function push(...) for _, h in ipairs({ ... }) do headers[#headers + 1] = h end end
  if L.device_time then push("Self " .. L.dev, "Self " .. L.dev .. " %", L.dev .. " total", L.dev .. " time avg") end
  if L.profile_memory then
    push("CPU Mem", "Self CPU Mem")
    if L.use_device and L.device_mem then push(L.dev .. " Mem", "Self " .. L.dev .. " Mem") end
  end
  push("# of Calls")
  L.widths = { math.min(name_w + 4, L.name_max) }
  for i = 2, #headers do L.widths[i] = 12 end
  if L.shapes then push("Input Shapes"); L.widths[#headers] = L.shapes_w end
  if L.stack then push("Source Location"); L.widths[#headers] = L.src_w; L.left[#headers] = true end
  L.headers = headers
  return L
end

local function format_row(L, values)
  local parts = {}
  for i, w in ipairs(L.widths) do
    local v = tostring(values[i] == nil and "" or values[i])
    local pad = (" "):rep(math.max(0, w - #v))
    parts[i] = (L.left[i] and (v .. pad) or (pad .. v)) .. "  "
  end
  return table.concat(parts)
end

-- One event's cells, in the headers' order.
local function cells(L, e, sums, unit)
  local name = e.key
  if #name >= L.name_max - 3 then name = name:sub(1, L.name_max - 3) .. "..." end
  local v = { name, format_share(e.self_cpu_time_total, sums.cpu), time_unit_str(e.self_cpu_time_total, unit),
    e.is_async and 0 or format_share(e.cpu_time_total, sums.cpu), time_unit_str(e.cpu_time_total, unit),
    time_unit_str(e.cpu_time, unit) }
  local function add(...) for _, x in ipairs({ ... }) do v[#v + 1] = x end end
  if L.device_time then
    add(time_unit_str(e.self_device_time_total, unit), format_share(e.self_device_time_total, sums.device),
      time_unit_str(e.device_time_total, unit), time_unit_str(e.device_time, unit))
  end
  if L.profile_memory then
    add(format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage))
    if L.use_device and L.device_mem then add(format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)) end
  end
  add(e.count)
  if L.shapes then add(shapes_text(e.input_shapes):sub(1, L.shapes_w)) end
  if L.stack then add(e.stack[1] and trim_path(e.stack[1], L.src_w) or "") end
  return v
end

-- build_table(events, opts, level) -> the table as one string (each line ends with "\n"); errors
-- are raised `level` frames above build_table (error()'s counting).
function M.build_table(events, opts, level)
  opts = opts or {}
  check_opts(opts, level + 1)
  if #events == 0 then return "" end
  local row_limit, unit = opts.row_limit == nil and 100 or opts.row_limit, opts.time_unit
  local L = layout(events, opts)
  if L.device_time and not L.use_device then error("use_device is None, but there is device performance data.", level) end
  if opts.sort_by then events = sorted_copy(events, SORT_KEYS[opts.sort_by]) end
  local sep_parts = {}
  for i, w in ipairs(L.widths) do sep_parts[i] = ("-"):rep(w) .. "  " end
  local sep = table.concat(sep_parts)
  local sums = { cpu = 0, device = 0 }
  for _, e in ipairs(events) do
    sums.cpu = sums.cpu + e.self_cpu_time_total
    if e.device_type ~= 0 and not e.is_user_annotation then sums.device = sums.device + e.self_device_time_total end
  end
  local out = {}
  local function append(s) out[#out + 1] = s; out[#out + 1] = "\n" end
  if opts.header ~= nil then append(("="):rep(#sep - 2)); append(tostring(opts.header)) end
  if opts.top_level_events_only then
    append(("="):rep(#sep - 2)); append("This report only display top-level ops statistics")
  end
  append(sep); append(format_row(L, L.headers)); append(sep)
  local shown = 0
  for _, e in ipairs(events) do
    if shown == row_limit then break end
    if not (opts.top_level_events_only and e.cpu_parent ~= nil) then
      shown = shown + 1
      append(format_row(L, cells(L, e, sums, unit)))
      if L.stack then
        for k = 2, #e.stack do
          local blank = {}
          for i = 1, #L.headers - 1 do blank[i] = "" end
          blank[#L.headers] = trim_path(e.stack[k], L.src_w)
          append(format_row(L, blank))
        end
        append(format_row(L, {}))
      end
    end
  end
  append(sep)
  append("Self CPU time total: " .. time_unit_str(sums.cpu, unit))
  if L.device_time then append("Self " .. L.dev .. " time total: " .. time_unit_str(sums.device, unit)) end
  return table.concat(out)
end

return M
