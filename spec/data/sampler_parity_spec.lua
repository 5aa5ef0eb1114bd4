--[[
  spec/data/sampler_parity_spec.lua — the samplers and DataLoader's random draws
  (lua/torch/data/sampler.lua, distributed_sampler.lua, dataloader.lua, lua/torch/_generator.lua)
  against PyTorch 2.11: the same seeds give the same orders, and torch's global generator (or
  the explicit torch.Generator) is left in the same state, checked by the next torch.rand(1)
  or randperm drawn from it.

  Cases: torch.manual_seed(0) then a shuffled DataLoader over 10 items (two epochs, batch_size 1
  and 3 with drop_last, with an explicit generator); RandomSampler without a generator, with
  replacement and num_samples over several chunks of 32, num_samples above n without
  replacement, an explicit generator; WeightedRandomSampler with and without replacement;
  SubsetRandomSampler with a generator; DistributedSampler shuffled per seed and epoch, padded
  (n < num_replicas), drop_last, unshuffled; its error without a process group and for a bad
  rank; RandomSampler's errors; and under 2 Gloo ranks, DistributedSampler(ds) takes its rank
  and world size from the process group and splits the data.

  Run:  build/ltorch /usr/bin/busted spec/data/sampler_parity_spec.lua
]]
local torch = require "torch"
local data = torch.utils.data
local pytorch = require "spec.support.pytorch"

local function collect(it)
  local out = {}
  for v in it do out[#out + 1] = type(v) == "table" and v or v end
  return out
end

-- a DataLoader's batches as arrays of sample indices (the dataset holds 0..n-1)
local function batches(loader)
  local out = {}
  for b in loader:iter() do out[#out + 1] = b[1]:tolist() end
  return out
end

local function ds(n) return data.TensorDataset(torch.arange(n)) end
local function G(seed) return torch.Generator():manual_seed(seed) end
local function next_rand() return torch.rand(1):item() end
local function g_next(g) return require("torch._generator").randperm(g, 6) end

local PY = [[
from torch.utils.data import *
def L(it): return [x if isinstance(x, int) else x.tolist() for x in it]
def G(s): return torch.Generator().manual_seed(s)
def loader_batches(dl): return [b.tolist() for b in dl]
def nxt(): return torch.rand(1).item()
def gnext(g): return torch.randperm(6, generator=g).tolist()
r = {}
torch.manual_seed(0)
dl = DataLoader(list(range(10)), shuffle=True)
r['dl1'] = [b[0] for b in loader_batches(dl)]
r['dl1_rand'] = nxt()
r['dl1_epoch2'] = [b[0] for b in loader_batches(dl)]
r['dl1_rand2'] = nxt()
torch.manual_seed(7)
r['dl3'] = loader_batches(DataLoader(list(range(10)), batch_size=3, shuffle=True, drop_last=True))
r['dl3_rand'] = nxt()
g = G(11)
r['dlg'] = loader_batches(DataLoader(list(range(10)), batch_size=4, shuffle=True, generator=g))
r['dlg_next'] = gnext(g)
torch.manual_seed(1)
r['rs'] = L(RandomSampler(range(10)))
r['rs_rand'] = nxt()
torch.manual_seed(2)
r['rs_repl'] = L(RandomSampler(range(7), replacement=True, num_samples=70))
r['rs_repl_rand'] = nxt()
torch.manual_seed(3)
r['rs_over'] = L(RandomSampler(range(10), num_samples=25))
r['rs_over_rand'] = nxt()
g = G(4)
r['rs_g'] = L(RandomSampler(range(10), generator=g)) + L(RandomSampler(range(10), generator=g))
r['rs_g_next'] = gnext(g)
g = G(5)
r['rs_g_repl'] = L(RandomSampler(range(9), replacement=True, num_samples=33, generator=g))
r['rs_g_repl_next'] = gnext(g)
torch.manual_seed(6)
r['w_repl'] = L(WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 12))
r['w_norepl'] = L(WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, replacement=False))
r['w_rand'] = nxt()
g = G(8)
r['w_g'] = L(WeightedRandomSampler([1, 2, 3, 4], 6, generator=g))
r['w_g_next'] = gnext(g)
g = G(9)
r['sub_g'] = L(SubsetRandomSampler([10, 11, 12, 13, 14, 15, 16], generator=g))
r['sub_g_next'] = gnext(g)
def dsamp(n, **kw):
    out = []
    for rank in range(kw['num_replicas']):
        s = DistributedSampler(range(n), rank=rank, **kw)
        s.set_epoch(kw.get('seed', 0) % 3)
        out.append(L(s))
    return out
r['ds_shuffle'] = dsamp(11, num_replicas=3, seed=5)
r['ds_pad'] = dsamp(2, num_replicas=5, seed=1)
r['ds_drop'] = dsamp(11, num_replicas=3, drop_last=True)
r['ds_noshuffle'] = dsamp(7, num_replicas=2, shuffle=False)
print(json.dumps(r))
]]

describe("samplers and DataLoader draw PyTorch's random streams", function()
  local r
  setup(function() r = pytorch.run(PY) end)

  it("torch.manual_seed(0) then a shuffled DataLoader over 10 items: PyTorch's order and state", function()
    torch.manual_seed(0)
    local dl = data.DataLoader(ds(10), { shuffle = true })
    local function firsts() local o = {} for _, b in ipairs(batches(dl)) do o[#o + 1] = b[1] end return o end
    assert.same(r.dl1, firsts())
    assert.equals(r.dl1_rand, next_rand())
    assert.same(r.dl1_epoch2, firsts())
    assert.equals(r.dl1_rand2, next_rand())
    torch.manual_seed(7)
    assert.same(r.dl3, batches(data.DataLoader(ds(10), { batch_size = 3, shuffle = true, drop_last = true })))
    assert.equals(r.dl3_rand, next_rand())
    local g = G(11)
    assert.same(r.dlg, batches(data.DataLoader(ds(10), { batch_size = 4, shuffle = true, generator = g })))
    assert.same(r.dlg_next, g_next(g))
  end)

  it("RandomSampler: no generator, replacement in chunks of 32, num_samples above n, a generator", function()
    torch.manual_seed(1)
    assert.same(r.rs, collect(data.RandomSampler(ds(10)):iter()))
    assert.equals(r.rs_rand, next_rand())
    torch.manual_seed(2)
    assert.same(r.rs_repl, collect(data.RandomSampler(ds(7), { replacement = true, num_samples = 70 }):iter()))
    assert.equals(r.rs_repl_rand, next_rand())
    torch.manual_seed(3)
    assert.same(r.rs_over, collect(data.RandomSampler(ds(10), { num_samples = 25 }):iter()))
    assert.equals(r.rs_over_rand, next_rand())
    local g = G(4)
    local both = collect(data.RandomSampler(ds(10), { generator = g }):iter())
    for _, v in ipairs(collect(data.RandomSampler(ds(10), { generator = g }):iter())) do both[#both + 1] = v end
    assert.same(r.rs_g, both)
    assert.same(r.rs_g_next, g_next(g))
    g = G(5)
    assert.same(r.rs_g_repl, collect(data.RandomSampler(ds(9), { replacement = true, num_samples = 33, generator = g })
      :iter()))
    assert.same(r.rs_g_repl_next, g_next(g))
  end)

  it("RandomSampler draws nothing until its first index, as PyTorch's generator does", function()
    torch.manual_seed(1)
    local before = torch.get_rng_state()
    local it = data.RandomSampler(ds(10)):iter()
    assert.is_true(before:equal(torch.get_rng_state()))
    assert.same(r.rs, collect(it))
    assert.is_false(before:equal(torch.get_rng_state()))
  end)

  it("WeightedRandomSampler and SubsetRandomSampler", function()
    torch.manual_seed(6)
    assert.same(r.w_repl, collect(data.WeightedRandomSampler({ 0.1, 0.9, 0.4, 0.7, 3.0, 0.6 }, 12):iter()))
    assert.same(r.w_norepl, collect(data.WeightedRandomSampler({ 0.9, 0.4, 0.05, 0.2, 0.3, 0.1 }, 5,
      { replacement = false }):iter()))
    assert.equals(r.w_rand, next_rand())
    local g = G(8)
    assert.same(r.w_g, collect(data.WeightedRandomSampler(torch.tensor({ 1, 2, 3, 4 }), 6, { generator = g }):iter()))
    assert.same(r.w_g_next, g_next(g))
    g = G(9)
    assert.same(r.sub_g, collect(data.SubsetRandomSampler({ 10, 11, 12, 13, 14, 15, 16 }, g):iter()))
    assert.same(r.sub_g_next, g_next(g))
  end)

  it("DistributedSampler: shuffled per seed + epoch, padded, drop_last, unshuffled", function()
    local function dsamp(n, opts)
      local out = {}
      for rank = 0, opts.num_replicas - 1 do
        local o = { rank = rank }
        for k, v in pairs(opts) do o[k] = v end
        local s = data.DistributedSampler(ds(n), o)
        s:set_epoch((opts.seed or 0) % 3)
        out[#out + 1] = collect(s:iter())
        assert.equals(#out[#out], s:len())
      end
      return out
    end
    assert.same(r.ds_shuffle, dsamp(11, { num_replicas = 3, seed = 5 }))
    assert.same(r.ds_pad, dsamp(2, { num_replicas = 5, seed = 1 }))
    assert.same(r.ds_drop, dsamp(11, { num_replicas = 3, drop_last = true }))
    assert.same(r.ds_noshuffle, dsamp(7, { num_replicas = 2, shuffle = false }))
  end)

  it("raises PyTorch's errors", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("sampler_parity_spec.lua:%d+: DistributedSampler: Default process group has not been initialized, "
      .. "please make sure to call init_process_group.", err(function() return data.DistributedSampler(ds(4)) end))
    assert.matches("Invalid rank 2, rank should be in the interval %[0, 1%]",
      err(data.DistributedSampler, ds(4), { num_replicas = 2, rank = 2 }))
    assert.matches("RandomSampler: num_samples should be a positive integer value, but got num_samples=0",
      err(data.RandomSampler, ds(0)))
    assert.matches("RandomSampler: replacement should be a boolean value, but got replacement=yes",
      err(data.RandomSampler, ds(3), { replacement = "yes" }))
    assert.matches("WeightedRandomSampler: num_samples should be a positive integer value, but got num_samples=1.5",
      err(data.WeightedRandomSampler, { 1, 2 }, 1.5))
    assert.matches("DataLoader: generator must be a torch.Generator",
      err(data.DataLoader, ds(3), { shuffle = true, generator = "x" }))
  end)
end)

describe("DistributedSampler under a process group", function()
  it("takes rank and world size from the group: 2 Gloo ranks split the data", function()
    local h = dofile("spec/distributed/helpers.lua")
    local out, rc = h.launch(2, "spec/data/fixtures/distributed_sampler_ranks.lua", 60)
    assert.equals(0, rc, out)
    local seen, ranks = {}, {}
    for rank, world, list in out:gmatch("RANK (%d) (%d) ([%d,]+)") do
      assert.equals("2", world)
      ranks[#ranks + 1] = rank
      for v in list:gmatch("%d+") do seen[#seen + 1] = tonumber(v) end
    end
    table.sort(ranks)
    assert.same({ "0", "1" }, ranks, out)
    assert.equals(12, #seen)   -- 11 items padded to 2 * 6
    local ref = pytorch.run([[
from torch.utils.data import DistributedSampler
out = []
for rank in range(2):
    s = DistributedSampler(range(11), num_replicas=2, rank=rank, seed=3); s.set_epoch(1); out += list(s)
print(json.dumps(sorted(out)))]])
    table.sort(seen)
    assert.same(ref, seen)
  end)
end)
