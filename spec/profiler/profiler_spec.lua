--[[
  spec/profiler/profiler_spec.lua — torch.profiler (lua/torch/profiler/) against PyTorch's
  torch.profiler on the same model: the seed's "profile a forward pass" (the op names and call
  counts of key_averages() equal PyTorch's), the table's layout, record_function ranges that nest,
  Chrome traces that parse as JSON with op and range events, schedules with PyTorch's
  ProfilerAction sequence, with_stack's Lua frames, and the bad inputs' errors.

  Run: bash scripts/test.sh spec/profiler/profiler_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local json = require "torch.serialization.json"

local P = torch.profiler
local nn = torch.nn

local function mlp()
  torch.manual_seed(0)
  return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)), torch.randn(8, 16)
end

local function counts(avgs)
  local out = {}
  for _, e in ipairs(avgs) do out[e.key] = e.count end
  return out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function trace_events(path)
  local doc = json.decode(read(path))
  local out = {}
  for _, e in ipairs(doc.traceEvents) do if e.ph == "X" then out[#out + 1] = e end end
  return out
end

describe("torch.profiler", function()
  it("is reachable as torch.profiler with PyTorch's names", function()
    for _, name in ipairs({ "profile", "ProfilerActivity", "schedule", "ProfilerAction", "record_function",
      "tensorboard_trace_handler", "supported_activities" }) do
      assert.is_not_nil(P[name], name)
    end
  end)

  it("the seed's example: an MLP forward's op names and call counts equal PyTorch's", function()
    local model, x = mlp()
    local prof = P.profile({ activities = { P.ProfilerActivity.CPU } }, function() model(x) end)
    local ours = counts(prof:key_averages())
    local theirs = pytorch.run [[
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
x = torch.randn(8, 16)
model(x)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    model(x)
print(json.dumps({e.key: e.count for e in prof.key_averages()}))
]]
    assert.same(theirs, ours)
    assert.equal(2, ours["aten::linear"])
  end)

  it("a training step's forward and backward ops and counts equal PyTorch's", function()
    local model, x = mlp()
    local y = torch.tensor({ 0, 1, 2, 3, 0, 1, 2, 3 })
    local loss_fn = nn.CrossEntropyLoss()
    local prof = P.profile({}, function() loss_fn(model(x), y):backward() end)
    local theirs = pytorch.run [[
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
x, y = torch.randn(8, 16), torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
with torch.profiler.profile() as prof:
    nn.CrossEntropyLoss()(model(x), y).backward()
print(json.dumps({e.key: e.count for e in prof.key_averages()}))
]]
    assert.same(theirs, counts(prof:key_averages()))
  end)

  it("prints PyTorch's table: columns, widths, sort order, row limit and footer", function()
    local model, x = mlp()
    local prof = P.profile({ activities = { P.ProfilerActivity.CPU } }, function() model(x) end)
    local text = prof:key_averages():table({ sort_by = "cpu_time_total", row_limit = 3 })
    local lines = {}
    for l in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    assert.equal(8, #lines)   -- sep, header, sep, 3 rows, sep, footer
    assert.equal("                  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  ",
      lines[2])
    assert.equal("----------------------  ------------  ------------  ------------  ------------  ------------  ------------  ", lines[1])
    assert.truthy(lines[8]:match("^Self CPU time total: [%d%.]+[mu]?s$"))
    -- The rows are the three largest totals, largest first. Which ops those are is wall-clock
    -- (aten::linear holds the others, but a preempted aten::relu can outlast it), so the rows
    -- are checked against the averages' own totals rather than against fixed names.
    local total_of, shown, totals = {}, {}, {}
    for _, e in ipairs(prof:key_averages()) do total_of[e.key] = e.cpu_time_total end
    for i = 4, 6 do
      local name = lines[i]:match("^%s*(%S+)")
      assert.is_not_nil(total_of[name], lines[i])
      shown[name] = true
      totals[#totals + 1] = total_of[name]
      local v, unit = lines[i]:match("%%%s+[%d%.]+[mu]?s%s+[%d%.]+%%%s+([%d%.]+)([mu]?s)")
      assert.near(total_of[name], tonumber(v) * ({ us = 1, ms = 1e3, s = 1e6 })[unit], total_of[name] * 0.01 + 0.01)
    end
    assert.is_true(totals[1] >= totals[2] and totals[2] >= totals[3])
    for name, total in pairs(total_of) do
      if not shown[name] then assert.is_true(total <= totals[3], name) end
    end
  end)

  it("self CPU time excludes children; totals add up", function()
    local model, x = mlp()
    local prof = P.profile({}, function() model(x) end)
    local sum_self = 0
    for _, e in ipairs(prof:events()) do
      sum_self = sum_self + e.self_cpu_time_total
      local kids = 0
      for _, c in ipairs(e.cpu_children) do kids = kids + c.cpu_time_total end
      assert.near(e.cpu_time_total - kids, e.self_cpu_time_total, 1e-6)
    end
    local avg = prof:key_averages():total_average()
    assert.near(sum_self, avg.self_cpu_time_total, 1e-6)
  end)

  it("keeps libtorch's nanosecond times exactly (epoch ns read as doubles round to 256 ns)", function()
    local native = require "torch.profiler._native"
    local x = torch.ones(10)
    native.start({ cpu = true, cuda = false }, false, false, false)
    for _ = 1, 200 do x = x + 1 end
    local events = native.stop():events()
    local on_256, last_end = 0, 0
    for _, e in ipairs(events) do
      assert.is_true(e.start_ns >= 0 and e.end_ns >= e.start_ns)     -- ns since the trace start
      if e.start_ns % 256 == 0 and e.end_ns % 256 == 0 then on_256 = on_256 + 1 end
      last_end = math.max(last_end, e.end_ns)
    end
    assert.is_true(#events >= 200)
    assert.is_true(last_end < 60e9)                 -- relative to the trace, not to 1970
    assert.is_true(on_256 < #events / 4)            -- rounded times would all sit on 256 ns
  end)

  it("record_function ranges nest, in the events and in the Chrome trace", function()
    local model, x = mlp()
    local path = os.tmpname()
    local prof = P.profile({ activities = { P.ProfilerActivity.CPU } }, function()
      P.record_function("outer", function()
        local r = P.record_function("inner"):start()
        model(x)
        r:stop()
      end)
    end)
    local byname = {}
    for _, e in ipairs(prof:events()) do byname[e.name] = e end
    assert.equal("outer", byname.inner.cpu_parent.name)
    assert.equal("inner", byname["aten::linear"].cpu_parent.name)
    prof:export_chrome_trace(path)
    local evs, named = trace_events(path), {}
    os.remove(path)
    for _, e in ipairs(evs) do named[e.name] = named[e.name] or e end
    assert.equal("user_annotation", named.outer.cat)
    assert.equal("cpu_op", named["aten::addmm"].cat)
    assert.is_true(named.outer.dur > 0 and named["aten::addmm"].dur > 0)
    local o, i = named.outer, named.inner
    assert.is_true(i.ts >= o.ts and i.ts + i.dur <= o.ts + o.dur + 1e-3)
  end)

  it("record_shapes groups by input shape as PyTorch does; profile_memory fills the memory columns", function()
    local model, x = mlp()
    local prof = P.profile({ record_shapes = true, profile_memory = true }, function() model(x) end)
    local shapes = {}
    for _, e in ipairs(prof:key_averages({ group_by_input_shape = true })) do
      if e.key == "aten::addmm" then shapes[#shapes + 1] = P and require("torch.profiler.table").shapes_str(e.input_shapes) end
      if e.key == "aten::clamp_min" then assert.equal(1024, e.cpu_memory_usage) end
    end
    table.sort(shapes)
    assert.same({ "[[32], [8, 16], [16, 32], [], []]", "[[4], [8, 32], [32, 4], [], []]" }, shapes)
    local text = prof:key_averages():table({ sort_by = "cpu_memory_usage" })
    assert.truthy(text:find("CPU Mem  Self CPU Mem", 1, true))
  end)

  it("schedule follows PyTorch's ProfilerAction sequence", function()
    local s = P.schedule({ wait = 1, warmup = 1, active = 2, ["repeat"] = 1, skip_first = 1 })
    local got = {}
    for step = 0, 6 do got[#got + 1] = s(step).name end
    local want = pytorch.run [[
from torch.profiler import schedule
s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
print(json.dumps([s(i).name for i in range(7)]))
]]
    assert.same(want, got)
  end)

  it("step() with a schedule calls on_trace_ready once per cycle with ProfilerStep rows", function()
    local model, x = mlp()
    local ready, dir = {}, os.tmpname()
    os.remove(dir)
    local handler = P.tensorboard_trace_handler(dir)
    local prof = P.profile({ schedule = P.schedule({ wait = 1, warmup = 1, active = 2, ["repeat"] = 2 }),
      on_trace_ready = function(p) ready[#ready + 1] = counts(p:key_averages()); handler(p) end })
    prof:start()
    for _ = 1, 9 do model(x); prof:step() end
    prof:stop()
    assert.equal(2, #ready)
    assert.equal(2, ready[1]["ProfilerStep*"])
    assert.equal(4, ready[1]["aten::linear"])
    local f = assert(io.popen("ls '" .. dir .. "'"))
    local files = f:read("*a")
    f:close()
    os.execute("rm -rf '" .. dir .. "'")
    local n = select(2, files:gsub("%.pt%.trace%.json", ""))
    assert.equal(2, n)
  end)

  it("with_stack names the Lua lines that issued the ops and shows Lua time as rows", function()
    local model, x = mlp()
    local src = debug.getinfo(1, "S").short_src
    local prof = P.profile({ with_stack = true }, function()
      local y = model(x)
      return y
    end)
    local line = debug.getinfo(1, "l").currentline - 3
    local site = ("%s:%d: model"):format(src, line)
    local found
    for _, e in ipairs(prof:events()) do
      if e.name == "aten::addmm" then found = e.stack end
    end
    assert.equal(site, found[1])
    assert.equal(1, counts(prof:key_averages())[site])
    for _, e in ipairs(prof:key_averages()) do
      if e.key == site then assert.is_true(e.self_cpu_time_total > 0) end
    end
  end)

  it("CUDA without a GPU profiles the CPU (PyTorch warns and does the same)", function()
    if torch.cuda.is_available() then return end
    local model, x = mlp()
    local prof = P.profile({ activities = { P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA } }, function() model(x) end)
    assert.equal(2, counts(prof:key_averages())["aten::linear"])
  end)

  it("bad inputs raise clear errors at the caller", function()
    assert.has_error(function() P.profile({ activities = { "GPU" } }) end,
      "profile: unknown activity #1 (GPU): use torch.profiler.ProfilerActivity.CPU or .CUDA")
    assert.has_error(function() P.profile({ use_cuda = true }) end)
    local prof = P.profile({})
    assert.has_error(function() prof:stop() end, "profile: stop() before start()")
    assert.has_error(function() prof:key_averages() end, "key_averages: no results yet (stop() the profiler first)")
    local model, x = mlp()
    prof = P.profile({}, function() model(x) end)
    local ok, err = pcall(function() prof:key_averages():table({ sort_by = "cpu_tme" }) end)
    assert.is_false(ok)
    assert.truthy(err:find("unknown sort_by 'cpu_tme'", 1, true))
    assert.truthy(err:find("profiler_spec.lua", 1, true))
    assert.has_error(function() P.schedule({ wait = 1, warmup = 1, active = 0 }) end)
    assert.has_error(function() P.record_function(42) end, "record_function: name must be a string, got number")
    local r = P.record_function("x")
    assert.has_error(function() r:stop() end, "record_function('x'): stop() without start()")
    assert.has_error(function() P.profile({}, function() error("boom") end) end)
    assert.is_false(require("torch.profiler._native").enabled())   -- the error stopped the profiler
  end)
end)
