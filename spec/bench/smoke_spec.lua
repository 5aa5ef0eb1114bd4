--[[
  spec/bench/smoke_spec.lua — the benchmark suite's smoke mode: bench/run.lua at tiny sizes
  (--scale 0.01, one repetition) runs every workload for ltorch, PyTorch (the setup's
  .venv PyTorch, spec/support/pytorch.lua) and C++ (when build/bench_workloads_cpp is already built; the spec never compiles
  it), and every figure comes out as a number. No timing is asserted.

  Workload 5 (epoch: one epoch of recipes/train_classifier.lua's default config) runs at
  limit_train 550 / limit_eval 50; its sample counts and a val accuracy above chance are checked
  so a broken loader or training loop shows here, and the table must describe every workload.

  Run: build/ltorch /usr/bin/busted spec/bench/smoke_spec.lua   (~40-70 s)
]]
describe("bench/run.lua smoke mode", function()
  local output, ok, raw = nil, false, {}
  local out = os.tmpname()

  local pytorch = require "spec.support.pytorch"
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

  local metrics = { "add_us", "mul_us", "matmul8_us", "index_us", "forward8_us", "startup_ms", "mlp_steps_per_s",
    "cnn_steps_per_s", "transformer_tokens_per_s", "mlp_warmup_s", "cnn_warmup_s", "transformer_warmup_s", "mem_rss_after_warmup_kb", "mem_rss_end_kb",
    "mem_growth_kb", "mem_growth_mean_kb", "startup_cpu_ms", "peak_rss_kb@dispatch", "peak_rss_kb@mlp", "peak_rss_kb@memory",
    "epoch_wall_s", "epoch_cpu_s", "epoch_data_wall_s", "peak_rss_kb@epoch" }

  it("exits 0 and writes a Markdown table", function()
    assert.is_true(ok, output)
    assert.is_truthy(output:find("| workload | ltorch | PyTorch | C++ |", 1, true), output)
    assert.is_truthy(output:find("Machine: ", 1, true), output)
  end)

  it("describes every workload in one line under the table", function()
    for _, n in ipairs({ "1 · op dispatch", "2 · MLP step", "3 · small CNN step", "4 · transformer step",
      "5 · full recipe epoch", "6 · memory", "7 · start-up" }) do
      assert.is_truthy(output:find("\n- " .. n, 1, true), n .. "\n" .. output)
    end
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

  -- Workload 5 trained on the limited split and learned something (chance is 0.1; at this size
  -- one epoch reaches ~0.6).
  local function check_epoch(impl)
    local r = raw[impl] or {}
    assert.are.equal(550, r.epoch_train_n, impl .. " epoch_train_n")
    assert.are.equal(50, r.epoch_val_n, impl .. " epoch_val_n")
    assert.is_true((r.epoch_val_acc or 0) > 0.3, impl .. " epoch_val_acc = " .. tostring(r.epoch_val_acc))
  end

  it("gives every ltorch figure as a number", function() check("ltorch"); check_epoch("ltorch") end)

  it("gives every PyTorch figure as a number (when PyTorch is installed)", function()
    if not pytorch.available() then pending(pytorch.python .. " cannot import torch") return end
    check("PyTorch")
    check_epoch("PyTorch")
  end)

  it("gives every C++ figure as a number (when build/bench_workloads_cpp is built)", function()
    if not has_cpp() then pending("build/bench_workloads_cpp not built (build/ltorch bench/run.lua builds it)") return end
    check("C++")
    check_epoch("C++")
    -- libtorch's own C++ transformer module, the C++-only row
    local api = raw["C++"].transformer_api_tokens_per_s
    assert.is_true(type(api) == "number" and api > 0, "C++ transformer_api_tokens_per_s = " .. tostring(api))
  end)
end)

-- The GPU mode (bench/gpu/check.sh runs it on a CUDA machine) on a build without CUDA: a clear
-- refusal, not a table of n/a. Where CUDA is present these are pending (the GPU check runs it).
describe("bench GPU mode without a GPU", function()
  local torch = require "torch"
  local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
  local function run(cmd)
    local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
    local s = p:read("*a"); p:close()
    return s, s:match("exit=(%d+)%s*$")
  end

  it("bench/run.lua --device cuda refuses, naming the missing device", function()
    if torch.cuda.is_available() then pending("this build has CUDA") return end
    local s, code = run(bin .. " bench/run.lua --device cuda --reps 1 --scale 0.01 --out /dev/null")
    assert.are.equal("1", code)
    assert.matches("%-%-device cuda: .* sees no CUDA device", s)
  end)

  it("bench/run.lua --device cuda names the workloads it can run", function()
    local s, code = run(bin .. " bench/run.lua --device cuda --only dispatch --out /dev/null")
    assert.are_not.equal("0", code)
    assert.matches("%-%-device cuda runs only mlp, cnn and transformer, not dispatch", s)
  end)

  it("a CPU-only workload under BENCH_DEVICE=cuda is an error, not a CPU run", function()
    local s, code = run("BENCH_DEVICE=cuda " .. bin .. " bench/workloads.lua dispatch 0.01")
    assert.are_not.equal("0", code)
    assert.matches("only the mlp, cnn and transformer workloads run on a GPU, not dispatch", s)
    assert.is_nil(s:find("RESULT", 1, true))
  end)
end)
