--[[
  spec/profiler/table_spec.lua — torch.profiler's FunctionEvent tree, key_averages and table
  (lua/torch/profiler/events.lua, table.lua) character for character against PyTorch's
  (torch/autograd/profiler_util.py) on the same fixed events: nested ops, a user range, memory
  records inside ops and one outside every op, input shapes; sorted by several keys, with and
  without shapes, memory columns and a row limit. Times are fixed, so the tables must be equal.

  Run: bash scripts/test.sh spec/profiler/table_spec.lua
]]
local pytorch = require "spec.support.pytorch"
local events = require "torch.profiler.events"

-- name, start ns, end ns, input shapes, user annotation ("[memory]": start = end, nbytes)
local RAW = {
  { "my_range", 0, 21000, {}, true },
  { "aten::linear", 1000, 9000, { { 8, 16 }, { 32, 16 }, { 32 } } },
  { "aten::t", 1500, 2500, { { 32, 16 } } },
  { "aten::addmm", 3000, 8000, { { 32 }, { 8, 16 }, { 16, 32 }, {}, {} } },
  { "[memory]", 3500, 3500, nil, false, 1024 },
  { "aten::relu", 10000, 12500, { { 8, 32 } } },
  { "aten::clamp_min", 10500, 12000, { { 8, 32 }, {} } },
  { "[memory]", 11000, 11000, nil, false, 1024 },
  { "aten::linear", 13000, 20000, { { 8, 32 }, { 4, 32 }, { 4 } } },
  { "aten::addmm", 14000, 19000, { { 4 }, { 8, 32 }, { 32, 4 }, {}, {} } },
  { "[memory]", 15000, 15000, nil, false, 128 },
  { "[memory]", 22000, 22000, nil, false, -1024 },
}

local PY = [[
from torch.autograd.profiler_util import EventList, FunctionEvent
raw = json.loads(%q)
def inside(s, e): return sum(r[5] for r in raw if r[0] == "[memory]" and s <= r[1] <= e)
evts, used, i = [], set(), 0
for r in raw:
    if r[0] == "[memory]": continue
    i += 1
    for j, m in enumerate(raw):
        if m[0] == "[memory]" and r[1] <= m[1] <= r[2]: used.add(j)
    evts.append(FunctionEvent(id=i, name=r[0], thread=1, start_us=r[1] / 1000, end_us=r[2] / 1000, fwd_thread=1,
        input_shapes=r[3], stack=[], cpu_memory_usage=inside(r[1], r[2]), is_user_annotation=r[4]))
for j, m in enumerate(raw):
    if m[0] == "[memory]" and j not in used:
        i += 1
        evts.append(FunctionEvent(id=i, name="[memory]", thread=1, start_us=m[1] / 1000, end_us=m[1] / 1000,
            input_shapes=[], stack=[], cpu_memory_usage=m[5]))
evts.sort(key=lambda e: [e.time_range.start, -e.time_range.end])
el = EventList(evts, use_device=None, profile_memory=%s)
el._build_tree()
out = []
for shapes, sort_by, limit in %s:
    out.append(el.key_averages(group_by_input_shapes=shapes).table(sort_by=sort_by, row_limit=limit))
print(json.dumps(out))
]]

local CASES = { { false, "cpu_time_total", 10 }, { true, "self_cpu_time_total", 100 }, { false, "count", 3 },
  { true, "cpu_memory_usage", 5 }, { false, "self_cpu_memory_usage", 100 } }

local function raw_events()
  local out = {}
  for i, r in ipairs(RAW) do
    out[i] = { name = r[1], start_ns = r[2], end_ns = r[3], start_thread = 1, end_thread = 1, fwd_thread = 1,
      sequence_nr = -1, correlation_id = i, linked_correlation_id = 0, device_type = 0, device_index = 0,
      device_resource_id = 0, nbytes = r[6] or 0, scope = 0, activity_type = r[5] and 1 or (r[6] and 9 or 0),
      is_async = false, is_hidden = false, shapes = r[4] or {} }
  end
  return out
end

local function py_raw()
  local parts = {}
  for i, r in ipairs(RAW) do
    local shapes = {}
    for k, s in ipairs(r[4] or {}) do shapes[k] = "[" .. table.concat(s, ",") .. "]" end
    parts[i] = ('["%s", %d, %d, [%s], %s, %d]'):format(r[1], r[2], r[3], table.concat(shapes, ","),
      r[5] and "true" or "false", r[6] or 0)
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

local function py_cases()
  local parts = {}
  for i, c in ipairs(CASES) do parts[i] = ('(%s, "%s", %d)'):format(c[1] and "True" or "False", c[2], c[3]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

describe("torch.profiler tables", function()
  for _, memory in ipairs({ false, true }) do
    it("equal PyTorch's _build_table character for character (profile_memory = " .. tostring(memory) .. ")", function()
      local want = pytorch.run(PY:format(py_raw(), memory and "True" or "False", py_cases()))
      local list = events.build(raw_events(), { profile_memory = memory })
      for i, c in ipairs(CASES) do
        local got = events.key_averages(list, c[1], 0):table({ sort_by = c[2], row_limit = c[3] })
        assert.equal(want[i], got)
      end
    end)
  end
end)
