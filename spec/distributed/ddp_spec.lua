-- ddp_spec.lua — nn.parallel.DistributedDataParallel (c10d's Reducer) matches single-process
-- training when the script calls plain `loss:backward()`, as a PyTorch script does.
--
-- Why: data parallelism is only correct if N ranks on N shards compute exactly what one process
-- computes on the whole batch; a subtle averaging or broadcast bug — or a backward that does not
-- synchronize at all — silently changes training.
--
-- What: 2 Gloo ranks on loopback (tools/run.lua) train a float64 model from *different* random
-- inits (DDP broadcasts rank 0's) with small buckets, 8 samples each; after 6 steps the
-- parameters must be identical across ranks and within 1e-6 (in practice ~1e-16) of one process
-- trained on the 16-sample batches: SGD, SGD with momentum, AdamW, gradient accumulation with
-- no_sync, BatchNorm (per-rank statistics, rank 0's buffers, as PyTorch), a parameter no rank
-- uses and one only rank 1 uses (find_unused_parameters), gradient_as_bucket_view, static_graph,
-- the ddp:backward alias, and the fp16/bf16 compression hooks (to their precision). Unused
-- parameters without find_unused_parameters: the next forward raises on every rank naming them
-- (no hang). ZeroRedundancyOptimizer over AdamW equals AdamW with each rank holding part of the
-- state. In-process (world of 1): state_dict prefixes, forward delegation, no_sync, options.
--
-- How: build/ltorch /usr/bin/busted spec/distributed/ddp_spec.lua
local torch = require "torch"
local nn = require "torch.nn"
local dist = require "torch.distributed"
local h = dofile("spec/distributed/helpers.lua")

describe("DistributedDataParallel across 2 processes", function()
  local exact = { "plain", "momentum", "adamw", "accumulate", "batchnorm", "unused", "partial",
                  "bucket_view", "static", "alias" }
  local loose = { fp16 = 1e-3, bf16 = 1e-2 }
  local function check_mode(mode, tol)
    local out, rc = h.launch(2, "spec/distributed/fixtures/ddp_parity.lua " .. mode, 90)
    assert.equal(0, rc, out)
    for r = 0, 1 do
      local d = tonumber(out:match("%[rank " .. r .. "%] RANKDIFF (%S+)"))
      assert.equal(0, d, out)                       -- identical across ranks
    end
    local ref, moved = out:match("REFDIFF (%S+) MOVED (%S+)")
    assert.truthy(ref, out)
    assert.is_true(tonumber(ref) < tol, out)        -- equal to the single process
    assert.is_true(tonumber(moved) > 1e-3, out)     -- and training did change the weights
    return out
  end
  for _, mode in ipairs(exact) do
    it("loss:backward() equals one process on the whole batches (" .. mode .. ")", function()
      local out = check_mode(mode, 1e-6)
      if mode == "unused" then
        assert.truthy(out:find("[rank 0] SIDEGRAD nil", 1, true), out)   -- no rank used it
      elseif mode == "partial" then
        assert.truthy(out:find("[rank 0] SIDEGRAD set", 1, true), out)   -- rank 1's, averaged
      end
    end)
  end
  for mode, tol in pairs(loose) do
    it("compresses gradients with the " .. mode .. " comm hook", function() check_mode(mode, tol) end)
  end

  it("shards AdamW's state with ZeroRedundancyOptimizer and trains exactly like AdamW", function()
    local out = check_mode("zero", 1e-6)
    local a = tonumber(out:match("%[rank 0%] LOCALSTATE (%d+)"))
    local b = tonumber(out:match("%[rank 1%] LOCALSTATE (%d+)"))
    assert.truthy(a and b, out)
    assert.equal(4, a + b)                            -- every parameter's state on exactly one rank
    assert.is_true(a < 4 and b < 4, out)
  end)

  it("names parameters without gradients on every rank at the next forward instead of hanging", function()
    local out, rc, secs = h.launch(2, "spec/distributed/fixtures/ddp_unused.lua strict", 60)
    assert.equal(0, rc, out)
    assert.truthy(out:find("Expected to have finished reduction in the prior iteration", 1, true), out)
    assert.truthy(out:find("Those parameters are: extra.weight, dead.weight.", 1, true), out)  -- rank 0
    assert.truthy(out:find("Those parameters are: dead.weight.", 1, true), out)                -- rank 1
    assert.truthy(out:find("find_unused_parameters = true", 1, true), out)
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
    ddp:no_sync(function() ddp(x):sum():backward() end)
    local g1 = net.weight.grad:clone()
    ddp(x):sum():backward()
    assert.is_true(net.weight.grad:allclose(g1 * 2))
    assert.error_matches(function() nn.parallel.DistributedDataParallel(42) end, "expected an nn.Module")
  end)

  it("refuses options it would otherwise ignore, and the old explicit sync", function()
    local net = nn.Linear(3, 1)
    local DDP = nn.parallel.DistributedDataParallel
    assert.error_matches(function() DDP(net, { find_unused_parameter = true }) end,
      "unexpected keyword 'find_unused_parameter'")
    assert.error_matches(function() DDP(net, { process_group = {} }) end, "only the default group")
    assert.error_matches(function() DDP(net, { mixed_precision = {} }) end, "torch.autocast")
    assert.error_matches(function() DDP(net, { device_ids = { "cuda:0" } }) end, "module is on cpu")
    assert.error_matches(function() DDP(net, { bucket_cap_mb = -1 }) end, "positive")
    local ddp = DDP(net, { device_ids = { "cpu" }, check_reduction = true })
    assert.error_matches(function() ddp:sync_gradients() end, "loss:backward%(%) after a forward")
    assert.error_matches(function() ddp:register_comm_hook(nil, function() end) end, "not supported")
    assert.error_matches(function() ddp:no_sync() end, "expected a function")
  end)

  it("ZeroRedundancyOptimizer in a world of one: the whole state, PyTorch's arguments or a clear error", function()
    local ZeRO = dist.optim.ZeroRedundancyOptimizer
    local net = nn.Linear(3, 2)
    local opt = ZeRO(net:parameters(), { optimizer_class = torch.optim.SGD, lr = 0.1, momentum = 0.9 })
    net(torch.randn(4, 3)):sum():backward()
    opt:step()
    local n = 0
    for _ in pairs(opt:local_state_dict().state) do n = n + 1 end
    assert.equal(2, n)
    opt.param_groups[1].lr = 0.01                      -- a scheduler's edit reaches the local optimizer
    opt:step()
    assert.equal(0.01, opt.optim.param_groups[1].lr)
    assert.error_matches(function() ZeRO(net:parameters(), { lr = 0.1 }) end, "give the optimizer class")
    assert.error_matches(function() ZeRO(net:parameters(), { optimizer_class = torch.optim.SGD, lr = 0.1,
      overlap_with_ddp = true }) end, "overlap_with_ddp: not supported")
    assert.error_matches(function() opt:consolidate_state_dict() end, "not implemented")
  end)

  it("needs an initialized process group", function()
    dist.destroy_process_group()
    assert.error_matches(function() nn.parallel.DistributedDataParallel(nn.Linear(1, 1)) end, "not initialized")
  end)
end)
