-- spec/tools/benchmark_spec.lua — tool benchmark-model (lua/torch/tools/benchmark.lua): a row per
-- batch size with positive timings and throughput = batch / latency, a failing model (exit 1),
-- bad setups and flags (exit 2).
local tools = require "torch.tools"
local json = require "torch.serialization.json"

local function run(argv)
  local out = tools.collector()
  local code = tools.run("benchmark-model", argv, out)
  return code, out.text()
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

local setup = [[local torch = require "torch"
return { model = function() return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, %d)) end,
  loss_fn = torch.nn.CrossEntropyLoss(), train_loader = { { torch.randn(6, 4), torch.randint(3, {6}) } } }]]

describe("tool benchmark-model", function()
  it("--profile adds torch.profiler's table of one train step at the largest batch", function()
    local p = tmpfile(setup:format(3))
    local code, text = run({ p, "--batch-sizes", "1,4", "--iters", "2", "--profile", "--json" })
    assert.are.equal(0, code, text)
    local r = json.decode(text)
    assert.are.equal(4, r.profile.batch)
    local counts = {}
    for _, op in ipairs(r.profile.ops) do counts[op.name] = op.count end
    assert.are.equal(1, counts.forward)
    assert.are.equal(1, counts.backward)
    assert.are.equal(2, counts["aten::linear"])
    code, text = run({ p, "--batch-sizes", "2", "--iters", "1", "--profile" })
    assert.are.equal(0, code, text)
    assert.matches("torch.profiler, one train step at batch 2:", text, 1, true)
    assert.matches("Self CPU time total:", text, 1, true)
  end)

  it("times forward and train steps per batch size", function()
    local p = tmpfile(setup:format(3))
    local code, text = run({ p, "--batch-sizes", "1,4", "--iters", "3", "--warmup", "1", "--json" })
    assert.are.equal(0, code, text)
    local r = json.decode(text)
    assert.are.equal("cpu", r.device)
    assert.are.equal(2, #r.results)
    for i, b in ipairs({ 1, 4 }) do
      local row = r.results[i]
      assert.are.equal(b, row.batch)
      assert.is_true(row.forward_ms > 0 and row.train_ms > 0)
      assert.is_true(math.abs(row.forward_sps - b / (row.forward_ms / 1e3)) < 1e-6 * row.forward_sps)
      assert.is_true(row.peak_bytes > 0)
    end
    code, text = run({ p, "--batch-sizes", "2", "--iters", "2" })
    assert.are.equal(0, code, text)
    assert.matches("peak RSS MB", text, 1, true)
    assert.matches("\n%s+2%s+[%d.]+", text)
    os.remove(p)
  end)

  it("exits 1 when a batch size fails, naming the error", function()
    local p = tmpfile(setup:format(3):gsub("Linear%(4, 8%)", "Linear(5, 8)"))
    local code, text = run({ p, "--batch-sizes", "1", "--iters", "1" })
    assert.are.equal(1, code, text)
    assert.matches("batch 1 failed:", text, 1, true)
    os.remove(p)
  end)

  it("rejects bad flags, missing and incomplete setups with exit 2", function()
    local p = tmpfile(setup:format(3))
    local empty = tmpfile("return {}")
    for _, argv in ipairs({ {}, { "/nonexistent/setup.lua" }, { empty }, { p, "--batch-sizes", "0" },
      { p, "--batch-sizes", "a,b" }, { p, "--iters", "0" }, { p, "--device", "tpu" }, { p, "--bogus" } }) do
      local code, text = run(argv)
      assert.are.equal(2, code, table.concat(argv, " ") .. ": " .. text)
      assert.matches("usage:", text)
    end
    os.remove(p); os.remove(empty)
    assert.are.equal(0, (run({ "--help" })))
  end)
end)
