-- spec/data/worker_errors_spec.lua — DataLoader worker failures are reported, never hang.
--
-- A worker whose dataset raises: the error reaches the main state with the worker's
-- traceback. A worker thread that ends abruptly (pthread_exit, as a crash would): reported as
-- dead within a second. A stuck worker: the loader's `timeout` fires. The loop can be run
-- again afterwards (the pool was shut down cleanly).
-- Run: build/ltorch /usr/bin/busted spec/data/worker_errors_spec.lua

local torch = require "torch"
local data = torch.utils.data

local function loader(opts, extra)
  local o = { batch_size = 4, num_workers = 2,
    dataset_factory = { module = "spec.data.support.faulty_dataset", args = { 32, opts } } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return data.DataLoader(nil, o)
end

local function drain(l) for _ in l:iter() do end end

describe("DataLoader workers", function()
  it("re-raise a worker's Lua error with the worker's traceback", function()
    local ok, err = pcall(drain, loader({ fail_at = 9 }))
    assert.is_false(ok)
    assert.matches("DataLoader worker 0 raised an error %(batch 2%)", err)
    assert.matches("faulty_dataset: bad sample 9", err)
    assert.matches("stack traceback", err)
    assert.matches("faulty_dataset.lua:%d+: in function 'explode'", err)
  end)

  it("report a dead worker thread instead of hanging", function()
    local t0 = os.time()
    local ok, err = pcall(drain, loader({ exit_at = 5 }))
    assert.is_false(ok)
    assert.matches("DataLoader worker 1 died unexpectedly", err)
    assert.is_true(os.time() - t0 <= 3)
  end)

  it("time out on a stuck worker when timeout is set", function()
    local ok, err = pcall(drain, loader({ sleep_at = 1, sleep_s = 2 }, { timeout = 0.5 }))
    assert.is_false(ok)
    assert.matches("timed out after 0.5 s waiting for batch 0 from worker 0", err)
  end)

  it("report a worker whose dataset cannot be built", function()
    local ok, err = pcall(drain, data.DataLoader(data.TensorDataset(torch.arange(4)),
      { num_workers = 1, dataset_factory = { module = "spec.data.support.no_such_module" } }))
    assert.is_false(ok)
    assert.matches("no_such_module", err)
  end)

  it("stop cleanly when the loop is left early, and run again", function()
    for _ = 1, 3 do
      for b in loader({}):iter() do if b[2][1]:item() >= 8 then break end end
    end
    collectgarbage("collect")
    local n = 0
    for _ in loader({}):iter() do n = n + 1 end
    assert.equal(8, n)
  end)
end)
