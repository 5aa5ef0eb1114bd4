-- spec/tools/tools_spec.lua — the helper tools (lua/torch/tools, tools/tool.lua): hand-computed
-- numbers for the estimators, verdicts and exit codes, and malformed input giving exit 2.
local tools = require "torch.tools"
local mem = require "torch.tools.memory"
local comp = require "torch.tools.compute"
local json = require "torch.serialization.json"

local function run(name, argv)
  local out = tools.collector()
  local code = tools.run(name, argv, out)
  return code, out.text()
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

local function near(a, b, rel) return math.abs(a - b) <= (rel or 1e-9) * math.max(math.abs(b), 1) end

-- exit status of a shell command (LuaJIT's os.execute returns the wait status)
local function status(cmd)
  local r = os.execute(cmd .. " >/dev/null 2>&1")
  if type(r) == "number" then return r > 255 and math.floor(r / 256) or r end
  return select(3, r)
end

describe("tool estimate-memory", function()
  it("mixed-precision AdamW costs 16 bytes/parameter: 3B -> 48 GB", function()
    local r = mem.estimate({ params = 3e9 })
    assert.are.equal(6e9, r.weights)
    assert.are.equal(6e9, r.grads)
    assert.are.equal(36e9, r.optimizer)
    assert.are.equal(48e9, r.total)
    assert.are.equal(16, r.bytes_per_param)
  end)

  it("pure bf16 AdamW 8 B/param, fp32 SGD 8 B/param, fp32 AdamW 16 B/param", function()
    assert.are.equal(56e9, mem.estimate({ params = 7e9, precision = "bf16" }).total)
    assert.are.equal(8e9, mem.estimate({ params = 1e9, precision = "fp32", optimizer = "sgd" }).total)
    assert.are.equal(12e9, mem.estimate({ params = 1e9, precision = "fp32", optimizer = "sgd-momentum" }).total)
    assert.are.equal(16e9, mem.estimate({ params = 1e9, precision = "fp32" }).total)
  end)

  it("shards by ZeRO stage, TP and PP", function()
    local z1 = mem.estimate({ params = 1e9, dp = 4, zero = 1 })
    assert.are.equal(2e9, z1.weights); assert.are.equal(2e9, z1.grads); assert.are.equal(3e9, z1.optimizer)
    local z2 = mem.estimate({ params = 1e9, dp = 4, zero = 2 })
    assert.are.equal(0.5e9, z2.grads)
    assert.are.equal(2e9, mem.estimate({ params = 1e9, dp = 8, zero = 3 }).total)
    assert.are.equal(4e9, mem.estimate({ params = 1e9, tp = 2, pp = 2 }).total)
  end)

  it("estimates activations (Korthikanti) and recomputation", function()
    local r = mem.estimate({ params = 1e6, batch = 1, seq = 1024, hidden = 1024, layers = 1, heads = 16 })
    assert.are.equal(1024 * 1024 * (34 + 80), r.activations)
    assert.are.equal("activations", r.binding)
    local rc = mem.estimate({ params = 1e6, batch = 1, seq = 1024, hidden = 1024, layers = 2, recompute = true })
    assert.are.equal(2 * 2 * 1024 * 1024, rc.activations)
    assert.are.equal(5e9, mem.estimate({ params = 1e6, activations_gb = 5, optimizer = "none", precision = "fp32" }).total - 8e6)
  end)

  it("prints the terms and exits 1 when it does not fit", function()
    local code, text = run("estimate-memory", { "--params", "3B", "--gpu-mem", "40" })
    assert.are.equal(1, code)
    assert.matches("48.00 GB per GPU", text, 1, true)
    assert.matches("does not fit", text)
    code = run("estimate-memory", { "--params=3B", "--gpu-mem=80" })
    assert.are.equal(0, code)
    local _, js = run("estimate-memory", { "--params", "350M", "--json" })
    assert.are.equal(350e6 * 16, json.decode(js).total)
  end)

  it("counts the parameters of a doctor setup's model", function()
    local p = tmpfile([[local nn = require("torch").nn
return { model = function() return nn.Sequential(nn.Linear(10, 20), nn.Linear(20, 5)) end }]])
    local code, text = run("estimate-memory", { "--setup", p, "--precision", "fp32", "--optimizer", "sgd" })
    assert.are.equal(0, code, text)
    assert.matches("^325 parameters", text)      -- 10*20+20 + 20*5+5
    assert.matches("weights%s+0.00 GB", text)
    local bad = tmpfile("return {}")
    assert.are.equal(2, (run("estimate-memory", { "--setup", bad })))
    os.remove(p); os.remove(bad)
  end)

  it("rejects malformed input with exit 2", function()
    for _, argv in ipairs({ {}, { "--params", "x" }, { "--params", "1B", "--precision", "fp8" },
      { "--params", "1B", "--zero", "5" }, { "--params", "1B", "--batch", "4" }, { "--params", "1B", "--bogus" },
      { "--params" }, { "--params", "-3" }, { "--params", "1B", "--dp", "1.5" } }) do
      local code, text = run("estimate-memory", argv)
      assert.are.equal(2, code, table.concat(argv, " ") .. ": " .. text)
      assert.matches("usage:", text)
    end
    assert.are.equal(0, (run("estimate-memory", { "--help" })))
  end)
end)

describe("tool estimate-compute", function()
  it("6 N D FLOPs, GPU-hours, wall-clock and cost by hand", function()
    local r = comp.estimate({ params = 1e9, tokens = 20e9, gpus = 8, peak_tflops = 100, mfu = 0.5, price = 2 })
    assert.are.equal(1.2e20, r.flops)
    assert.is_true(near(r.gpu_hours, 1.2e20 / (1e14 * 0.5 * 3600)))
    assert.is_true(near(r.wall_hours, r.gpu_hours / 8))
    assert.is_true(near(r.cost, r.gpu_hours * 2))
    assert.are.equal(20, r.tokens_per_param)
    assert.matches("compute%-optimal", r.regime)
  end)

  it("computes the MFU from a measured throughput, and the sizing regime", function()
    local r = comp.estimate({ params = 1e9, tokens = 1e9, tokens_per_sec = 1e4, peak_tflops = 100 })
    assert.is_true(near(r.mfu, 0.6))
    assert.matches("under%-trained", r.regime)
    assert.matches("over%-trained", comp.estimate({ params = 1e9, tokens_per_param = 200 }).regime)
    local code, text = run("estimate-compute", { "--params", "7B", "--tokens", "140B", "--gpus", "64" })
    assert.are.equal(0, code)
    assert.matches("5.88e%+21 FLOPs", text)
  end)

  it("rejects malformed input with exit 2", function()
    for _, argv in ipairs({ {}, { "--params", "1B" }, { "--params", "1B", "--tokens", "abc" },
      { "--params", "1B", "--tokens", "1B", "--mfu", "1.5" }, { "--params", "1B", "--tokens", "1B", "--gpus", "0" } }) do
      assert.are.equal(2, (run("estimate-compute", argv)), table.concat(argv, " "))
    end
  end)
end)

describe("tool compare-runs", function()
  local base = { 0.80, 0.81, 0.79, 0.80, 0.82, 0.78, 0.80, 0.81 }
  local function runs_json(delta)
    local a, b = {}, {}
    for i, v in ipairs(base) do a[tostring(i - 1)] = v; b[tostring(i - 1)] = v + delta(i) end
    return json.encode({ baseline = a, new = b })
  end

  it("a consistent paired gain is significant (exit 0), though smaller than the seed spread", function()
    local p = tmpfile(runs_json(function(i) return 0.005 + (i % 2) * 0.001 end))
    local code, text = run("compare-runs", { p })
    assert.are.equal(0, code, text)
    assert.matches("verdict: B better", text)
    assert.matches("A = baseline, B = new, 8 paired seeds", text, 1, true)
    code, text = run("compare-runs", { p, "--lower-is-better" })
    assert.are.equal(0, code, text)
    assert.matches("verdict: A better", text)
    os.remove(p)
  end)

  it("a difference within seed noise is inconclusive (exit 1)", function()
    local p = tmpfile(runs_json(function(i) return (i % 2 == 0) and 0.01 or -0.011 end))
    local code, text = run("compare-runs", { p })
    assert.are.equal(1, code, text)
    assert.matches("inconclusive", text)
    os.remove(p)
  end)

  it("reads CSV (config,seed,score) and pairs by seed, ignoring unpaired runs", function()
    local p = tmpfile("config,seed,score\nA,1,0.5\nA,2,0.6\nA,3,0.55\nA,9,0.1\nB,1,0.7\nB,2,0.8\nB,3,0.76\n")
    local code, text = run("compare-runs", { p })
    assert.are.equal(0, code, text)
    assert.matches("3 paired seeds %(1 runs without a partner ignored%)", text)
    os.remove(p)
  end)

  it("pairs JSON arrays by position", function()
    local p = tmpfile(json.encode({ a = { 1, 2, 3, 4 }, b = { 1.5, 2.4, 3.6, 4.5 } }))
    local code, text = run("compare-runs", { p })
    assert.are.equal(0, code, text)
    assert.matches("4 paired seeds", text)
    os.remove(p)
  end)

  it("rejects malformed input with exit 2", function()
    local cases = {
      "{not json", json.encode({ a = { ["0"] = 1 }, b = { ["0"] = 2 }, c = {} }),
      json.encode({ a = { ["0"] = 1, ["1"] = 2 }, b = { ["0"] = "x", ["1"] = 1 } }),
      json.encode({ a = { ["0"] = 1 }, b = { ["0"] = 2 } }),          -- one seed
      "config,seed\nA,1\n", "config,seed,score\nA,1,0.5,9\n", "config,seed,score\nA,1,0.5\nA,1,0.6\nB,1,0.7\n",
    }
    for _, text in ipairs(cases) do
      local p = tmpfile(text)
      local code, out = run("compare-runs", { p })
      assert.are.equal(2, code, text .. " -> " .. out)
      os.remove(p)
    end
    assert.are.equal(2, (run("compare-runs", { "/nonexistent/runs.json" })))
    assert.are.equal(2, (run("compare-runs", {})))
  end)
end)

describe("tool check-splits", function()
  it("passes a clean split (exit 0)", function()
    local p = tmpfile(json.encode({ train = { "a", "b", "c" }, val = { "d" }, test = { "e", "f" } }))
    local code, text = run("check-splits", { p })
    assert.are.equal(0, code, text)
    assert.matches("splits: train 3, val 1, test 2", text, 1, true)
    assert.matches("verdict: clean", text)
    os.remove(p)
  end)

  it("finds overlap, duplicates, group leakage and temporal violations (exit 1)", function()
    local p = tmpfile(json.encode({
      train = { { id = "1", group = "p1", time = 1 }, { id = "2", group = "p2", time = 5 }, { id = "2", group = "p2", time = 5 } },
      val = { { id = "3", group = "p1", time = 3 } },
      test = { { id = "1", group = "p9", time = 9 } },
    }))
    local code, text = run("check-splits", { p, "--temporal" })
    assert.are.equal(1, code)
    assert.matches("train: id 2 listed twice", text, 1, true)
    assert.matches("id 1 in train and test", text, 1, true)
    assert.matches("group p1 in train, val", text, 1, true)
    assert.matches("val starts at 3, before the latest train item %(5%)", text)
    os.remove(p)
  end)

  it("reads CSV with content hashes", function()
    local p = tmpfile("id,split,hash\na,train,h1\nb,train,h2\nc,test,h1\n")
    local code, text = run("check-splits", { p })
    assert.are.equal(1, code)
    assert.matches("hash h1 in train and test", text, 1, true)
    os.remove(p)
  end)

  it("rejects malformed input with exit 2", function()
    for _, text in ipairs({ "[1, 2]", "{\"train\": 3}", "{\"train\": [true]}", "{bad", "id,name\n1,x\n",
      "id,split\n1\n", "", "{\"train\": [{\"group\": \"g\"}]}" }) do
      local p = tmpfile(text)
      local code, out = run("check-splits", { p })
      assert.are.equal(2, code, text .. " -> " .. out)
      os.remove(p)
    end
  end)
end)

describe("tool find-nan-batches", function()
  local script = [[
local torch = require "torch"
local x = torch.randn(40, 3)
%s
local y = torch.randint(2, {40})
local function loader()
  local out = {}
  for s = 0, 39, 10 do out[#out + 1] = { x:narrow(0, s, 10), y:narrow(0, s, 10) } end
  return out
end
return { model = function() return torch.nn.Linear(3, 2) end, loss_fn = torch.nn.CrossEntropyLoss(),
  train_loader = loader, val_loader = loader }
]]
  it("reports the batches and samples with NaN/Inf (exit 1)", function()
    local p = tmpfile(script:format("x[{23, 1}] = 0/0; x[{25, 0}] = 1/0"))
    local code, text = run("find-nan-batches", { p })
    assert.are.equal(1, code, text)
    assert.matches("train batch 2 inputs: 2 non%-finite value%(s%), samples 3, 5", text)
    code, text = run("find-nan-batches", { p, "--split", "val", "--max-batches", "2" })
    assert.are.equal(0, code, text)
    assert.matches("2 batches scanned, 0 with", text)
    os.remove(p)
  end)

  it("is quiet on clean data and rejects a bad setup (exit 2)", function()
    local p = tmpfile(script:format(""))
    assert.are.equal(0, (run("find-nan-batches", { p })))
    os.remove(p)
    local bad = tmpfile("return 42")
    assert.are.equal(2, (run("find-nan-batches", { bad })))
    os.remove(bad)
    assert.are.equal(2, (run("find-nan-batches", { "/nonexistent.lua" })))
    assert.are.equal(2, (run("find-nan-batches", {})))
  end)
end)

describe("tool env", function()
  it("reports libtorch, devices, threads and BLAS", function()
    local code, text = run("env", {})
    assert.are.equal(0, code)
    assert.matches("libtorch%s+%d+%.%d+", text)
    assert.matches("CUDA", text)
    assert.matches("BLAS", text)
    local _, js = run("env", { "--json" })
    local info = json.decode(js)
    assert.are.equal(require("torch").libtorch_version, info.libtorch)
    assert.are.equal(2, (run("env", { "--bogus" })))
  end)
end)

describe("tools/tool.lua command line", function()
  it("gives meaningful exit codes", function()
    local p = tmpfile(json.encode({ train = { "a" }, test = { "a" } }))
    assert.are.equal(1, status("build/ltorch tools/tool.lua check-splits " .. p))
    os.remove(p)
    assert.are.equal(0, status("build/ltorch tools/tool.lua estimate-memory --params 1B"))
    assert.are.equal(0, status("build/ltorch tools/tool.lua compare-runs --help"))
    assert.are.equal(2, status("build/ltorch tools/tool.lua no-such-tool"))
    assert.are.equal(2, status("build/ltorch tools/tool.lua"))
    assert.are.equal(0, status("build/ltorch tools/tool.lua --help"))
  end)
end)
