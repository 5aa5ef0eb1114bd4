-- spec/tools/profile_dataloader_spec.lua — tool profile-dataloader (lua/torch/tools/profile_dataloader.lua):
-- samples/s per worker count (a CSVDataset workers can rebuild), a dataset workers cannot take
-- (exit 1), the stall fraction of a setup with a slow loader (exit 1), bad input (exit 2).
local tools = require "torch.tools"
local json = require "torch.serialization.json"

local function run(argv)
  local out = tools.collector()
  local code = tools.run("profile-dataloader", argv, out)
  return code, out.text()
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

describe("tool profile-dataloader", function()
  it("reports samples/s per worker count", function()
    local csv = tmpfile("a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n1,2,0\n3,4,1\n5,6,0\n")
    local p = tmpfile(('return require("torch").utils.data.datasets.CSVDataset(%q)'):format(csv))
    local code, text = run({ p, "--workers", "0,1", "--batch-size", "2", "--json" })
    assert.are.equal(0, code, text)
    local r = json.decode(text)
    assert.are.equal(2, #r.workers)
    for i, w in ipairs({ 0, 1 }) do
      assert.are.equal(w, r.workers[i].workers)
      assert.are.equal(7, r.workers[i].samples)
      assert.are.equal(4, r.workers[i].batches)
      assert.is_true(r.workers[i].samples_per_sec > 0)
    end
    code, text = run({ p, "--workers", "0", "--batches", "2", "--batch-size", "3" })
    assert.are.equal(0, code, text)
    assert.matches("workers 0%s+[%d.]+ samples/s  %(6 samples, 2 batches", text)
    os.remove(p); os.remove(csv)
  end)

  it("exits 1 when a worker count cannot run the dataset", function()
    local p = tmpfile([[local torch = require "torch"
local ds = torch.utils.data.TensorDataset(torch.randn(8, 2))
ds.log = io.stderr   -- an open file cannot cross into a worker's Lua state
return ds]])
    local code, text = run({ p, "--workers", "0,1", "--batch-size", "4" })
    assert.are.equal(1, code, text)
    assert.matches("workers 1   failed: DataLoader:", text, 1, true)
    assert.matches("cannot be sent to a worker state", text, 1, true)
    os.remove(p)
  end)

  it("measures the stall fraction of a setup's training step", function()
    local p = tmpfile([[local torch = require "torch"
local clock = require "torch.tools._clock"
local function loader()
  local n = 0
  return function()
    n = n + 1
    if n > 4 then return nil end
    local t = clock.now()
    while clock.now() - t < 0.05 do end                 -- a slow get(): 50 ms per batch
    return { torch.randn(2, 3), torch.randint(2, {2}) }
  end
end
return { model = function() return torch.nn.Linear(3, 2) end, loss_fn = torch.nn.CrossEntropyLoss(),
  train_loader = loader }]])
    local code, text = run({ p, "--batches", "3" })
    assert.are.equal(1, code, text)
    assert.matches("3 steps: waiting for data", text, 1, true)
    assert.matches("the step waits on data", text, 1, true)
    local _, js = run({ p, "--json", "--max-stall", "1" })
    local s = json.decode(js).step
    assert.are.equal(4, s.batches)
    assert.is_true(s.wait_seconds >= 0.2 and s.stall > 0.2 and s.stall <= 1)
    os.remove(p)
  end)

  it("rejects bad flags, missing and malformed scripts with exit 2", function()
    local ok = tmpfile([[local torch = require "torch"
return torch.utils.data.TensorDataset(torch.randn(8, 2))]])
    local nosetup = tmpfile("return { train_loader = {} }")
    local bad = tmpfile("return 7")
    for _, argv in ipairs({ {}, { "/nonexistent/ds.lua" }, { bad }, { nosetup }, { ok, "--workers", "x" },
      { ok, "--workers", "-1" }, { ok, "--batch-size", "0" }, { ok, "--max-stall", "2" }, { ok, "--bogus" } }) do
      local code, text = run(argv)
      assert.are.equal(2, code, table.concat(argv, " ") .. ": " .. text)
      assert.matches("usage:", text)
    end
    os.remove(ok); os.remove(nosetup); os.remove(bad)
    assert.are.equal(0, (run({ "--help" })))
  end)
end)
