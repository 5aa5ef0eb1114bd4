-- collectives_spec.lua — torch.distributed over Gloo: init methods, every collective across
-- real processes, and the failure paths (no master, dead peer, misuse) as Lua errors.
--
-- Why: DDP and every multi-process recipe stand on these calls; a collective that hangs or
-- throws a C++ exception instead of a Lua error would stall or kill a training job.
--
-- What: 3 ranks via tools/run.lua run fixtures/collectives.lua (sum/avg/max/min, non-contiguous,
-- broadcast, all_gather, barrier) with env:// and file:// rendezvous; in-process checks for a
-- world of 1, argument errors, and bounded timeouts. Every wait is bounded (timeouts, `timeout`).
--
-- How: build/ltorch /usr/bin/busted spec/distributed/collectives_spec.lua
local torch = require "torch"
local dist = require "torch.distributed"
local h = dofile("spec/distributed/helpers.lua")

describe("torch.distributed", function()
  after_each(function() dist.destroy_process_group() end)

  it("is reachable as torch.distributed and reports its backends", function()
    assert.equal(dist, torch.distributed)
    assert.is_true(dist.is_available())
    assert.is_true(dist.is_gloo_available())
    assert.is_boolean(dist.is_nccl_available())
    assert.is_false(dist.is_initialized())
    assert.equal(0, dist.get_rank())
    assert.equal(1, dist.get_world_size())
  end)

  it("runs every collective across 3 processes (env:// rendezvous)", function()
    local out, rc = h.launch(3, "spec/distributed/fixtures/collectives.lua", 60)
    assert.equal(0, rc, out)
    for r = 0, 2 do assert.truthy(out:find("[rank " .. r .. "] OK " .. r, 1, true), out) end
  end)

  it("rendezvouses through a shared file (file://)", function()
    local path = h.tmpname()
    local out, rc = h.launch(3, "spec/distributed/fixtures/collectives.lua file " .. h.q(path), 60)
    os.remove(path)
    assert.equal(0, rc, out)
    assert.truthy(out:find("OK 2", 1, true), out)
  end)

  it("works as a world of one in this process (tcp://)", function()
    dist.init_process_group{ backend = "gloo", init_method = "tcp://127.0.0.1:" .. h.free_port(),
                             rank = 0, world_size = 1, timeout = 10 }
    assert.is_true(dist.is_initialized())
    assert.equal("gloo", dist.get_backend())
    local t = torch.tensor({ 1.5, 2.5 })
    assert.equal(t, dist.all_reduce(t, { op = "avg" }))
    assert.same({ 1.5, 2.5 }, t:tolist())
    local parts = dist.all_gather({}, t)
    assert.same({ 1.5, 2.5 }, parts[1]:tolist())
    dist.broadcast(t, 0)
    dist.barrier()
    assert.has_error(function() dist.init_process_group{ init_method = "tcp://127.0.0.1:1", rank = 0, world_size = 1 } end,
      "torch.distributed.init_process_group: the default process group is already initialized (call destroy_process_group first)")
    assert.error_matches(function() dist.broadcast(t, 3) end, "out of range")
    assert.error_matches(function() dist.all_reduce(t, { op = "mean" }) end, "unknown op 'mean'")
    dist.destroy_process_group()
    assert.is_false(dist.is_initialized())
    -- a second group in the same process works (fresh key space)
    dist.init_process_group{ init_method = "file://" .. h.tmpname(), rank = 0, world_size = 1, timeout = 10 }
    dist.all_reduce(t)
  end)

  it("raises clear errors for misuse", function()
    assert.error_matches(function() dist.all_reduce(torch.ones(1)) end, "not initialized")
    assert.error_matches(function() dist.init_process_group{ init_method = "udp://x", rank = 0, world_size = 1 } end,
      "unknown init_method")
    assert.error_matches(function() dist.init_process_group{ init_method = "tcp://nohost", rank = 0, world_size = 1 } end,
      "bad init_method")
    assert.error_matches(function() dist.init_process_group{ rank = 2, world_size = 2, init_method = "tcp://127.0.0.1:1" } end,
      "out of range")
    assert.error_matches(function()
      dist.init_process_group{ backend = "mpi", init_method = "file://" .. h.tmpname(), rank = 0, world_size = 1, timeout = 5 }
    end, "unknown distributed backend 'mpi'")
    if not dist.is_nccl_available() then
      assert.error_matches(function()
        dist.init_process_group{ backend = "nccl", init_method = "file://" .. h.tmpname(), rank = 0, world_size = 1, timeout = 5 }
      end, "built without NCCL")
    end
    assert.is_false(dist.is_initialized())
  end)

  it("checks device_id as PyTorch does, and binds the group to it", function()
    local function init(device_id)
      dist.init_process_group{ init_method = "file://" .. h.tmpname(), rank = 0, world_size = 1, timeout = 10,
        device_id = device_id }
    end
    if torch.cuda.device_count() == 0 then
      assert.error_matches(function() init(0) end,
        "device_id cuda:0 is out of range. Please use a device index less than the number of accelerators available: 0.", 1, true)
      assert.error_matches(function() init("cuda:1") end, "device_id cuda:1 is out of range", 1, true)
    end
    assert.error_matches(function() init("cuda") end, "Please use a device_id with index.", 1, true)
    assert.error_matches(function() init("mps") end,
      "device_id mps does not match the current compilation's accelerator support", 1, true)
    assert.is_false(dist.is_initialized())
    init("cpu")   -- PyTorch accepts a CPU device_id and binds nothing
    assert.is_true(dist.is_initialized())
    dist.destroy_process_group()
  end)

  it("times out (a Lua error, bounded) when the master never comes", function()
    local t0 = h.now()
    assert.error_matches(function()
      dist.init_process_group{ init_method = "tcp://127.0.0.1:" .. h.free_port(), rank = 1, world_size = 2, timeout = 2 }
    end, "cannot rendezvous at tcp://127%.0%.0%.1:%d+ as rank 1 of 2")
    assert.is_true(h.now() - t0 < 15)
  end)

  it("turns a dead peer into an error on the survivors", function()
    local script = h.tmpname() .. ".lua"
    local f = assert(io.open(script, "w"))
    f:write([[
      local torch = require "torch"
      local dist = torch.distributed
      dist.init_process_group{ timeout = 20 }
      if dist.get_rank() == 1 then os.exit(0) end   -- leaves without a word
      local ok, err = pcall(dist.all_reduce, torch.ones(3))
      print("SURVIVOR", ok, err)
    ]])
    f:close()
    local out, rc, secs = h.launch(2, script, 60)
    os.remove(script)
    assert.equal(0, rc, out)
    assert.truthy(out:find("SURVIVOR\tfalse\ttorch.distributed.all_reduce: all_reduce failed (gloo)", 1, true), out)
    assert.is_true(secs < 40, "took " .. secs)
  end)
end)
