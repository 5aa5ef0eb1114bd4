--[[
  spec/bench/side_scripts_spec.lua — the diagnostic benchmarks beside bench/run.lua (the ones
  docs/PERFORMANCE.md quotes figures from) still run and print what their headers promise, at
  tiny sizes: after_burst, dispatch_breakdown, first_steps, memory_trace, varying_shapes,
  peak_memory, mlp_phases (MLP, CNN, tiny, and its count mode), large_results, foreach_calls,
  library_heap, graph_garbage, and make_image_folder + data_pipeline. Only the output's shape
  and that figures are numbers are checked (and that the slab is back to a small top after the
  burst); no timing is asserted.

  Run:  build/ltorch /usr/bin/busted spec/bench/side_scripts_spec.lua   (~15 s)
]]
local BIN = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "build/ltorch"

-- Runs a bench script with arguments (and an optional environment prefix); returns its stdout
-- and stderr together, and whether it exited 0.
local function run(script_and_args, env)
  local p = assert(io.popen(("%s%s bench/%s 2>&1; echo \"exit=$?\""):format(env or "", BIN, script_and_args)))
  local out = p:read("*a")
  p:close()
  local code = out:match("exit=(%d+)%s*$")
  return out:gsub("exit=%d+%s*$", ""), code == "0"
end

describe("bench side scripts at tiny sizes", function()
  it("after_burst.lua times the loop before and after a burst, and the slab is small again", function()
    -- a burst well above the slab's steady size (the 8,192 dead handles a collector step waits for)
    local out, ok = run("after_burst.lua 40000 2000")
    assert.is_true(ok, out)
    local before = out:match("a %+ b before the burst: ([%d.]+) us/op")
    local after, top, capacity = out:match("a %+ b after a burst of 40000 tensors: ([%d.]+) us/op %(slab top (%d+), capacity (%d+)%)")
    assert.is_truthy(before, out)
    assert.is_truthy(after, out)
    assert.is_true(tonumber(before) > 0 and tonumber(after) > 0, out)
    assert.is_true(tonumber(top) < 20000 and tonumber(capacity) <= 16384, out)
  end)

  it("dispatch_breakdown.lua prints every variant in microseconds per op", function()
    local out, ok = run("dispatch_breakdown.lua 300")
    assert.is_true(ok, out)
    for _, name in ipairs({ "raw%+free", "ref%(luafin%)", "ref%(cfin%)", "raw%+wrap", "a:add%(b%)", "a%+b", "a%+b free",
                            "big%[3%]", "sel raw%+free", "sel raw%+wrap", "sel batch", "matmul", "mul" }) do
      assert.is_truthy(out:match("\n?" .. name .. "%s+[%d.]+ us/op"), name .. " missing in:\n" .. out)
    end
  end)

  it("first_steps.lua prints one CPU time per step", function()
    local out, ok = run("first_steps.lua 3")
    assert.is_true(ok, out)
    local times = out:match("ltorch ms/step%s+([%d.%s]+)")
    assert.is_truthy(times, out)
    local n = 0
    for v in times:gmatch("[%d.]+") do n = n + 1; assert.is_true(tonumber(v) > 0, out) end
    assert.are.equal(3, n, out)
  end)

  it("memory_trace.lua prints a header and one row per 1,000 steps", function()
    local out, ok = run("memory_trace.lua 2000")
    assert.is_true(ok, out)
    assert.is_truthy(out:match("step%s+rss_kb%s+lua_kb%s+live_bytes%s+allocations"), out)
    local rows = 0
    for step, rss in out:gmatch("\n(%d+)%s+(%d+)%s+[%d.]+%s+%d+%s+%d+") do
      rows = rows + 1
      assert.are.equal(rows * 1000, tonumber(step))
      assert.is_true(tonumber(rss) > 0)
    end
    assert.are.equal(2, rows, out)
  end)

  it("varying_shapes.lua reports its time, the cache and the peak RSS", function()
    local out, ok = run("varying_shapes.lua 20")
    assert.is_true(ok, out)
    assert.is_truthy(out:match("varying shapes: 20 iterations in [%d.]+ s CPU, [%d.]+ MB kept for reuse, peak RSS %d+ kB"), out)
  end)

  it("make_image_folder.lua + data_pipeline.lua give images/s for 0, 1 and 2 workers", function()
    local dir = os.tmpname()
    os.remove(dir)
    local made, made_ok = run(("make_image_folder.lua %s 64"):format(dir))
    assert.is_true(made_ok, made)
    local out, ok = run("data_pipeline.lua 1", ("LTORCH_BENCH_IMAGES=%s "):format(dir))
    os.execute("rm -rf " .. dir)
    assert.is_true(ok, out)
    for workers = 0, 2 do
      local rate = out:match("ltorch num_workers=" .. workers .. "%s+([%d.]+) images/s")
      assert.is_truthy(rate, out)
      assert.is_true(tonumber(rate) > 0, out)
    end
  end)

  it("mlp_phases.lua prints the four phases and their sum in microseconds per step", function()
    local out, ok = run("mlp_phases.lua 3")
    assert.is_true(ok, out)
    local f = { out:match("PHASES lua ([%d.]+) ([%d.]+) ([%d.]+) ([%d.]+) ([%d.]+)") }
    assert.equal(5, #f, out)
    local sum = tonumber(f[1]) + tonumber(f[2]) + tonumber(f[3]) + tonumber(f[4])
    assert.is_true(tonumber(f[1]) > 0 and tonumber(f[3]) > 0 and tonumber(f[4]) > 0, out)
    assert.near(sum, tonumber(f[5]), 0.5, out)
  end)

  it("mlp_phases.lua cnn and tiny time those steps' phases, and it refuses another workload", function()
    for _, w in ipairs({ "cnn", "tiny" }) do
      local out, ok = run("mlp_phases.lua 2 " .. w)
      assert.is_true(ok, out)
      local f = { out:match("PHASES lua ([%d.]+) ([%d.]+) ([%d.]+) ([%d.]+) ([%d.]+)") }
      assert.equal(5, #f, out)
      assert.is_true(tonumber(f[1]) > 0 and tonumber(f[3]) > 0 and tonumber(f[4]) > 0, out)
    end
    local bad, bad_ok = run("mlp_phases.lua 2 resnet")
    assert.is_false(bad_ok, bad)
    assert.matches("WORKLOAD: mlp, cnn or tiny, not resnet", bad, 1, true)
  end)

  it("mlp_phases.lua count runs the steps inside qsort's callback (bench/step_cost.sh) and times nothing", function()
    local out, ok = run("mlp_phases.lua 3 tiny count")
    assert.is_true(ok, out)
    assert.matches("COUNTED lua tiny 3", out, 1, true)
    assert.is_nil(out:match("PHASES"), out)
  end)

  it("large_results.lua times the three ways of dropping a large result", function()
    local out, ok = run("large_results.lua 20")
    assert.is_true(ok, out)
    for _, name in ipairs({ "left to the collector%)", "gt:mm%(x%):free%(%)", "torch%.scope%(function%(%) gt:mm%(x%) end%)" }) do
      assert.is_truthy(out:match(name .. "%s+[%d.]+ us"), name .. " missing in:\n" .. out)
    end
  end)

  it("foreach_calls.lua times one call of each optimizer foreach op", function()
    local out, ok = run("foreach_calls.lua 20")
    assert.is_true(ok, out)
    for _, name in ipairs({ "_foreach_add_", "_foreach_mul_", "_foreach_lerp_", "_foreach_addcmul_", "_foreach_sqrt" }) do
      local us = out:match(name .. "%([^\n]-%)%s+([%d.]+) us")
      assert.is_truthy(us, name .. " missing in:\n" .. out)
      assert.is_true(tonumber(us) > 0, out)
    end
  end)

  it("library_heap.lua times a + b with the torch heap alone, an MLP script's and the whole library's", function()
    local kb = {}
    for _, mode in ipairs({ "torch", "mlp", "all" }) do
      local out, ok = run("library_heap.lua " .. mode .. " 2000")
      assert.is_true(ok, out)
      local heap, cycle, us = out:match("library_heap " .. mode .. ": heap (%d+) KB, full cycle (%d+) us, a %+ b ([%d.]+) us/op")
      assert.is_truthy(heap, out)
      assert.is_true(tonumber(cycle) > 0 and tonumber(us) > 0, out)
      kb[mode] = tonumber(heap)
    end
    assert.is_true(kb.mlp > kb.torch, "the MLP's parts add to the heap")
    assert.is_true(kb.all > kb.mlp + 300, "the parts an MLP does not use stay unloaded")
    local out, ok = run("library_heap.lua torchvision 10")
    assert.is_false(ok)
    assert.is_truthy(out:find("MODE must be 'torch', 'mlp' or 'all', got 'torchvision'", 1, true), out)
  end)

  it("graph_garbage.lua prints the bytes a result holds by graph size and the forward loop, dropped and freed", function()
    local out, ok = run("graph_garbage.lua 3000")
    assert.is_true(ok, out)
    local plain = tonumber(out:match("bytes x %+ 1, no autograd: (%d+) per result"))
    local three = tonumber(out:match("bytes model%(x%), three nodes: (%d+) per result"))
    assert.is_truthy(plain and three, out)
    assert.is_true(three > 2 * plain, "a three-node graph holds more than a plain result:\n" .. out)
    for _, label in ipairs({ "dropped", "freed" }) do
      local us, graphs = out:match("forward " .. label .. ": ([%d.]+) us, RSS growth [%d.]+ MiB, %d+ cycles, (%d+) graph results")
      assert.is_truthy(us, out)
      assert.is_true(tonumber(us) > 0, out)
      assert.are.equal(9000, tonumber(graphs), out)   -- three per forward
    end
    out, ok = run("graph_garbage.lua 5")
    assert.is_false(ok)
    assert.is_truthy(out:find("N must be a number of at least 100, got 5", 1, true), out)
  end)

  it("peak_memory.lua prints peak and base live bytes and GC cycles per step, peak at least base", function()
    local out, ok = run("peak_memory.lua mlp 3")
    assert.is_true(ok, out)
    local peak = tonumber(out:match("RESULT mlp_peak_bytes (%d+) bytes"))
    local base = tonumber(out:match("RESULT mlp_base_bytes (%d+) bytes"))
    local cycles = tonumber(out:match("RESULT mlp_gc_cycles_per_step ([%d.e+-]+) cycles"))
    assert.is_truthy(peak and base and cycles, out)
    -- the MLP's parameters and AdamW's two moments alone are over 3 MB
    assert.is_true(base > 3e6 and peak > base and cycles >= 0, out)
  end)
end)
