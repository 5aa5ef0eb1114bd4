-- ddp_spec.lua — nn.parallel.DistributedDataParallel matches single-process training.
--
-- Why: data parallelism is only correct if N ranks on N shards compute exactly what one process
-- computes on the whole batch; a subtle averaging or broadcast bug silently changes training.
--
-- What: 2 Gloo ranks on loopback (tools/run.lua) train a float64 MLP from *different* random
-- inits (DDP broadcasts rank 0's) with small buckets; after 6 steps the parameters must be
-- bit-identical across ranks and within 1e-12 of one process trained on the concatenated
-- batches — plain SGD, SGD with momentum, and gradient accumulation with no_sync. Unused
-- parameters: an error on every rank naming them (no hang), or zeros/nil with
-- find_unused_parameters. In-process (world of 1): state_dict prefixes, forward delegation.
--
-- How: build/ltorch /usr/bin/busted spec/distributed/ddp_spec.lua
local torch = require "torch"
local nn = require "torch.nn"
local dist = require "torch.distributed"
local h = dofile("spec/distributed/helpers.lua")

describe("DistributedDataParallel across 2 processes", function()
  for _, mode in ipairs({ "plain", "momentum", "accumulate" }) do
    it("equals single-process training on the concatenated batches (" .. mode .. ")", function()
      local out, rc = h.launch(2, "spec/distributed/fixtures/ddp_parity.lua " .. mode, 90)
      assert.equal(0, rc, out)
      for r = 0, 1 do
        local d = tonumber(out:match("%[rank " .. r .. "%] RANKDIFF (%S+)"))
        assert.equal(0, d, out)                       -- identical across ranks
      end
      local ref, moved = out:match("REFDIFF (%S+) MOVED (%S+)")
      assert.truthy(ref, out)
      assert.is_true(tonumber(ref) < 1e-12, out)      -- equal to the single process
      assert.is_true(tonumber(moved) > 1e-3, out)     -- and training did change the weights
    end)
  end

  it("names parameters without gradients on every rank instead of hanging", function()
    local out, rc, secs = h.launch(2, "spec/distributed/fixtures/ddp_unused.lua strict", 60)
    assert.equal(0, rc, out)
    for r = 0, 1 do
      local line = out:match("%[rank " .. r .. "%] ERR ([^\n]*)")
      assert.truthy(line, out)
      assert.truthy(line:find("parameters that did not receive gradients", 1, true), line)
      assert.truthy(line:find("extra.weight (gradient on 1 of 2 ranks)", 1, true), line)
      assert.truthy(line:find("dead.weight (gradient on 0 of 2 ranks)", 1, true), line)
      assert.falsy(line:find("main.weight", 1, true), line)
      assert.truthy(line:find("find_unused_parameters", 1, true), line)
    end
    assert.is_true(secs < 45)
  end)

  it("treats missing gradients as zeros with find_unused_parameters", function()
    local out, rc = h.launch(2, "spec/distributed/fixtures/ddp_unused.lua find", 60)
    assert.equal(0, rc, out)
    for r = 0, 1 do
      local p = "%[rank " .. r .. "%] GRAD "
      assert.equal("2", out:match(p .. "main.weight (%S+)"), out)   -- (1 + 1) * 2 ranks / 2
      assert.equal("1", out:match(p .. "extra.weight (%S+)"), out)  -- (0 + 2) / 2
      assert.equal("nil", out:match(p .. "dead.weight (%S+)"), out) -- unused everywhere
    end
  end)
end)

describe("DistributedDataParallel in one process", function()
  before_each(function()
    dist.init_process_group{ init_method = "file://" .. h.tmpname(), rank = 0, world_size = 1, timeout = 10 }
  end)
  after_each(function() dist.destroy_process_group() end)

  it("delegates forward and keeps PyTorch's state_dict keys", function()
    local net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    local ddp = nn.parallel.DistributedDataParallel(net)
    assert.equal(net, ddp.module)
    local x = torch.randn(4, 3)
    assert.is_true(ddp(x):allclose(net(x)))
    local sd = ddp:state_dict()
    assert.truthy(sd["module.0.weight"])
    assert.truthy(sd["module.1.running_mean"])
    local plain = ddp:state_dict{ prefix = false }
    assert.truthy(plain["0.weight"])
    assert.is_nil(plain["module.0.weight"])
    ddp:load_state_dict(plain)
    ddp:load_state_dict(sd)
    nn.parallel.consume_prefix_in_state_dict_if_present(sd, "module.")
    assert.truthy(sd["0.bias"])
    assert.equal(#net:parameters(), #ddp:parameters())
  end)

  it("averages (world of 1: keeps) gradients and skips syncing inside no_sync", function()
    local net = nn.Linear(3, 1)
    local ddp = nn.parallel.DistributedDataParallel(net, { bucket_cap_mb = 1 })
    local x = torch.randn(5, 3)
    ddp:no_sync(function() ddp:backward(ddp(x):sum()) end)
    local g1 = net.weight.grad:clone()
    ddp:backward(ddp(x):sum())
    assert.is_true(net.weight.grad:allclose(g1 * 2))
    assert.error_matches(function() nn.parallel.DistributedDataParallel(42) end, "expected an nn.Module")
  end)

  it("needs an initialized process group", function()
    dist.destroy_process_group()
    assert.error_matches(function() nn.parallel.DistributedDataParallel(nn.Linear(1, 1)) end, "not initialized")
  end)
end)
