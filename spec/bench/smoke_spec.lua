--[[
  spec/bench/smoke_spec.lua — the benchmark suite's smoke mode: bench/run.lua at tiny sizes
  (--scale 0.01, one repetition) runs every workload for ltorch, PyTorch (when /usr/bin/python3
  imports torch) and C++ (when build/bench_workloads_cpp is already built; the spec never compiles
  it), and every figure comes out as a number. No timing is asserted.

  Run: build/ltorch /usr/bin/busted spec/bench/smoke_spec.lua   (~30-60 s)
]]
describe("bench/run.lua smoke mode", function()
  local output, ok, raw = nil, false, {}
  local out = os.tmpname()

  local function has_pytorch()
    local p = io.popen("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1; echo $?")
    local r = p:read("*a"); p:close()
    return r:match("^0") ~= nil
  end
  local function has_cpp()
    local p = io.popen("test build/bench_workloads_cpp -nt bench/workloads.cpp && echo yes")
    local r = p:read("*a"); p:close()
    return r:match("yes") ~= nil
  end

  setup(function()
    local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
    local p = io.popen(("BENCH_NO_CPP_BUILD=1 %s bench/run.lua --reps 1 --scale 0.01 --out %s 2>&1; echo \"exit=$?\"")
      :format(bin, out))
    output = p:read("*a")
    p:close()
    ok = output:match("exit=(%d+)%s*$") == "0"
    local f = io.open(out .. ".raw")
    if f then
      for line in f:lines() do
        local impl, key, v = line:match("^(%S+) (%S+) (%S+)$")
        if impl then raw[impl] = raw[impl] or {}; raw[impl][key] = tonumber(v) end
      end
      f:close()
    end
  end)

  teardown(function() os.remove(out); os.remove(out .. ".raw") end)

  local metrics = { "add_us", "mul_us", "matmul8_us", "index_us", "startup_ms", "mlp_steps_per_s",
    "cnn_steps_per_s", "transformer_tokens_per_s", "mem_rss_after_warmup_kb", "mem_rss_end_kb",
    "mem_growth_kb", "mem_growth_mean_kb", "startup_cpu_ms", "peak_rss_kb@dispatch", "peak_rss_kb@mlp", "peak_rss_kb@memory" }

  it("exits 0 and writes a Markdown table", function()
    assert.is_true(ok, output)
    assert.is_truthy(output:find("| workload | ltorch | PyTorch | C++ |", 1, true), output)
    assert.is_truthy(output:find("Machine: ", 1, true), output)
  end)

  it("reports no failed workload run", function()
    assert.is_nil(output:find("FAILED", 1, true), output)
  end)

  local function check(impl)
    for _, m in ipairs(metrics) do
      local v = raw[impl] and raw[impl][m]
      assert.is_number(v, impl .. " " .. m .. "\n" .. tostring(output))
      assert.is_true(v == v and v > -math.huge and v < math.huge, impl .. " " .. m .. " = " .. tostring(v))
      if not m:find("growth") then assert.is_true(v > 0, impl .. " " .. m .. " = " .. tostring(v)) end
    end
  end

  it("gives every ltorch figure as a number", function() check("ltorch") end)

  it("gives every PyTorch figure as a number (when PyTorch is installed)", function()
    if not has_pytorch() then pending("/usr/bin/python3 cannot import torch") return end
    check("PyTorch")
  end)

  it("gives every C++ figure as a number (when build/bench_workloads_cpp is built)", function()
    if not has_cpp() then pending("build/bench_workloads_cpp not built (build/ltorch bench/run.lua builds it)") return end
    check("C++")
  end)
end)
