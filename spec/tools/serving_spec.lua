-- spec/tools/serving_spec.lua — tool serving-capacity (lua/torch/tools/serving.lua): the queueing
-- arithmetic by hand, the SLO verdict, measured latency from a setup, and usage errors (exit 2).
local tools = require "torch.tools"
local serving = require "torch.tools.serving"
local json = require "torch.serialization.json"

local function run(argv)
  local out = tools.collector()
  local code = tools.run("serving-capacity", argv, out)
  return code, out.text()
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

describe("tool serving-capacity", function()
  it("capacity = concurrency / mean; replicas meet utilization and the M/M/1 p99", function()
    local r = serving.plan({ p50 = 20, p99 = 50, qps = 500, slo = 250 })
    assert.are.equal(50, r.capacity)
    assert.are.equal(17, r.replicas)
    local rho = 500 / (17 * 50)
    assert.is_true(math.abs(r.utilization - rho) < 1e-12)
    local p99 = 50 + math.log(100 * rho) / (50 - 500 / 17) * 1e3
    assert.is_true(math.abs(r.p99_est_ms - p99) < 1e-9)
    -- without an SLO only utilization binds: ceil(500 / 40) = 13
    assert.are.equal(13, serving.plan({ p50 = 20, p99 = 50, qps = 500 }).replicas)
    assert.are.equal(200, serving.plan({ p50 = 20, p99 = 50, concurrency = 4 }).capacity)
  end)

  it("prints the plan (exit 0) and exits 1 when p99 alone exceeds the SLO", function()
    local code, text = run({ "--p50", "20", "--p99", "50", "--qps", "500", "--slo", "250" })
    assert.are.equal(0, code, text)
    assert.matches("replicas for 500 req/s: 17", text, 1, true)
    code, text = run({ "--p50", "20", "--p99", "300", "--qps", "500", "--slo", "250" })
    assert.are.equal(1, code, text)
    assert.matches("above the 250 ms SLO", text, 1, true)
    local _, js = run({ "--p50", "10", "--p99", "20", "--qps", "100", "--json" })
    assert.are.equal(100, json.decode(js).capacity)
  end)

  it("measures latency from a setup's model", function()
    local p = tmpfile([[local torch = require "torch"
return { model = function() return torch.nn.Linear(4, 2) end, loss_fn = torch.nn.MSELoss(),
  train_loader = { { torch.randn(8, 4), torch.randn(8, 2) } } }]])
    local code, text = run({ "--setup", p, "--requests", "20", "--qps", "10" })
    assert.are.equal(0, code, text)
    assert.matches("measured 20 requests: p50 [%d.]+ ms", text)
    os.remove(p)
  end)

  it("rejects bad flags and missing files with exit 2", function()
    for _, argv in ipairs({ {}, { "--p50", "x" }, { "--p50", "10" }, { "--p50", "10", "--p99", "5" },
      { "--p50", "10", "--p99", "20", "--bogus" }, { "--p50", "-1", "--p99", "20" },
      { "--p50", "10", "--p99", "20", "--max-util", "2" }, { "--p50", "10", "--p99", "20", "extra" },
      { "--setup", "/nonexistent/setup.lua" }, { "--setup" } }) do
      local code, text = run(argv)
      assert.are.equal(2, code, table.concat(argv, " ") .. ": " .. text)
      assert.matches("usage:", text)
    end
    assert.are.equal(0, (run({ "--help" })))
  end)
end)
