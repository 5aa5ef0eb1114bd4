-- spec/data/dataloader_spec.lua — torch.utils.data: datasets, samplers, collate, DataLoader
-- (in-process and with worker threads), checked on small tensors and on real Fashion-MNIST.
--
-- The headline property: a seeded, shuffled Fashion-MNIST loader gives exactly the same
-- batches (order and values) with num_workers = 0 and num_workers = 2.
-- Run: build/ltorch /usr/bin/busted spec/data/dataloader_spec.lua

local torch = require "torch"
local data = torch.utils.data
local T = data.transforms

local FAULTY = "spec.data.support.faulty_dataset"

local function collect(loader)
  local out = {}
  for b in loader:iter() do out[#out + 1] = b end
  return out
end

describe("datasets", function()
  it("TensorDataset / Subset / ConcatDataset index from 0", function()
    local ds = data.TensorDataset(torch.arange(10):view(5, 2), torch.arange(5))
    assert.equal(5, ds:len())
    assert.same({ 6, 7 }, ds:get(3)[1]:tolist())
    local sub = data.Subset(ds, { 4, 0 })
    assert.equal(4, sub:get(0)[2]:item())
    local cat = data.ConcatDataset({ ds, sub })
    assert.equal(7, cat:len())
    assert.equal(0, cat:get(6)[2]:item())
    assert.has_error(function() ds:get(5) end)
  end)

  it("random_split is seeded and partitions the indices", function()
    local ds = data.TensorDataset(torch.arange(10))
    local a = data.random_split(ds, { 0.7, 0.3 }, { generator = 3 })
    local b = data.random_split(ds, { 7, 3 }, { generator = 3 })
    assert.equal(7, a[1]:len()); assert.equal(3, a[2]:len())
    assert.same(a[1].indices, b[1].indices)
    local seen = {}
    for _, s in ipairs(a) do for _, i in ipairs(s.indices) do seen[i] = true end end
    for i = 0, 9 do assert.is_true(seen[i]) end
  end)
end)

describe("samplers", function()
  local ds = data.TensorDataset(torch.arange(10))
  it("Sequential, Random (seeded), Batch", function()
    local s = {}
    for i in data.SequentialSampler(ds):iter() do s[#s + 1] = i end
    assert.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, s)
    local r1, r2 = {}, {}
    for i in data.RandomSampler(ds, { generator = 5 }):iter() do r1[#r1 + 1] = i end
    for i in data.RandomSampler(ds, { generator = 5 }):iter() do r2[#r2 + 1] = i end
    assert.same(r1, r2)
    local bs = data.BatchSampler(data.SequentialSampler(ds), 4, true)
    assert.equal(2, bs:len())
  end)
  it("WeightedRandomSampler never picks a zero weight", function()
    for i in data.WeightedRandomSampler({ 0, 1, 0, 3 }, 50, { generator = 1 }):iter() do
      assert.is_true(i == 1 or i == 3)
    end
  end)
  it("DistributedSampler splits evenly, pads, and reshuffles per epoch", function()
    local parts, all = {}, {}
    for rank = 0, 2 do
      local s = data.DistributedSampler(ds, { num_replicas = 3, rank = rank, seed = 1 })
      assert.equal(4, s:len())
      parts[rank] = {}
      for i in s:iter() do parts[rank][#parts[rank] + 1] = i; all[i] = true end
    end
    for i = 0, 9 do assert.is_true(all[i]) end
    local s = data.DistributedSampler(ds, { num_replicas = 3, rank = 0, seed = 1 })
    s:set_epoch(1)
    local e1 = {}
    for i in s:iter() do e1[#e1 + 1] = i end
    assert.are_not.same(parts[0], e1)
  end)
end)

describe("DataLoader", function()
  it("collates tensors, numbers and nested tables", function()
    local b = data.default_collate({ { x = torch.ones(2), y = 1, z = { 0.5 } }, { x = torch.zeros(2), y = 2, z = { 1.5 } } })
    assert.same({ 2, 2 }, { b.x:size(0), b.x:size(1) })
    assert.equal(torch.int64, b.y.dtype)
    assert.equal(torch.float64, b.z[1].dtype)
  end)

  it("batches, drop_last and len", function()
    local ds = data.TensorDataset(torch.arange(10))
    local l = data.DataLoader(ds, { batch_size = 4 })
    assert.equal(3, l:len())
    local bs = collect(l)
    assert.same({ 8, 9 }, bs[3][1]:tolist())
    assert.equal(2, #collect(data.DataLoader(ds, { batch_size = 4, drop_last = true })))
  end)

  it("iterable datasets, with and without workers", function()
    local Counter = data.IterableDataset:extend()
    function Counter:init(n) self.n = n; return self end
    function Counter:iter() local i = -1; return function() i = i + 1; if i < self.n then return i end end end
    local bs = collect(data.DataLoader(Counter(5), { batch_size = 2 }))
    assert.same({ 4 }, bs[3]:tolist())
  end)

  it("workers: same batches as in-process for a seeded shuffled loader (tensor dataset module)", function()
    local f = { module = FAULTY, args = { 37 } }
    local a = collect(data.DataLoader(nil, { dataset_factory = f, batch_size = 5, shuffle = true, generator = 11 }))
    local b = collect(data.DataLoader(nil, { dataset_factory = f, batch_size = 5, shuffle = true, generator = 11, num_workers = 3 }))
    assert.equal(#a, #b)
    for k = 1, #a do assert.is_true(torch.equal(a[k][1], b[k][1])) end
    -- batch k came from worker k % 3
    for k = 1, #b do assert.equal((k - 1) % 3, b[k][3][1]:item()) end
  end)

  it("workers: per-worker seeding is deterministic", function()
    local f = { module = FAULTY, args = { 12 } }
    local function draws()
      local r = {}
      for b in data.DataLoader(nil, { dataset_factory = f, batch_size = 2, num_workers = 2, generator = 4 }):iter() do
        r[#r + 1] = b[4]:tolist()
      end
      return r
    end
    assert.same(draws(), draws())
  end)

  it("workers: named collate_fn and a main-state collate function", function()
    local f = { module = FAULTY, args = { 8 } }
    local b = collect(data.DataLoader(nil, { dataset_factory = f, batch_size = 4, num_workers = 2,
      collate_fn = FAULTY .. ":collate_pairs" }))
    assert.same({ 4, 5, 6, 7 }, b[2])
    local c = collect(data.DataLoader(nil, { dataset_factory = f, batch_size = 4, num_workers = 2,
      collate_fn = function(s) return #s end }))
    assert.same({ 4, 4 }, c)
  end)

  it("workers: a dataset holding what cannot cross (a file handle) is refused, naming it", function()
    local ds = data.TensorDataset(torch.arange(4))
    ds.log = io.stderr
    local ok, err = pcall(function() local l = data.DataLoader(ds, { num_workers = 2 }); return l end)
    assert.is_false(ok)
    assert.matches("dataset.log %(a file handle%)", err)
    assert.matches("dataset_factory", err)
  end)

  it("Fashion-MNIST: num_workers = 2 gives exactly the batches of num_workers = 0", function()
    local tf = T.Compose({ T.ToTensor(), T.Normalize({ 0.286 }, { 0.353 }) })
    local ds = data.datasets.FashionMNIST("test", { transform = tf })
    local function run(nw)
      return collect(data.DataLoader(ds, { batch_size = 500, shuffle = true, generator = 2024, num_workers = nw }))
    end
    local a, b = run(0), run(2)
    assert.equal(20, #a)
    assert.equal(#a, #b)
    for k = 1, #a do
      assert.same({ 500, 1, 28, 28 }, { a[k][1]:size(0), a[k][1]:size(1), a[k][1]:size(2), a[k][1]:size(3) })
      assert.is_true(torch.equal(a[k][1], b[k][1]), "images differ in batch " .. k)
      assert.is_true(torch.equal(a[k][2], b[k][2]), "labels differ in batch " .. k)
    end
  end)
end)

describe("DataLoader pin_memory", function()
  local function with_stderr(fn)
    local said, real = {}, io.stderr
    io.stderr = { write = function(_, ...) for _, s in ipairs({ ... }) do said[#said + 1] = s end end }  -- luacheck: ignore 122
    local ok, err = pcall(fn)
    io.stderr = real  -- luacheck: ignore 122
    assert(ok, err)
    return table.concat(said)
  end

  it("without a CUDA device warns as PyTorch does and yields the same batches", function()
    if torch.cuda.is_available() then pending("a GPU is visible: spec/gpu checks the pinned batches") return end
    local ds = data.TensorDataset(torch.arange(6):float(), torch.arange(6))
    local loader
    local said = with_stderr(function() loader = data.DataLoader(ds, { batch_size = 4, pin_memory = true }) end)
    assert.matches("'pin_memory' argument is set as true but no accelerator is found", said, 1, true)
    local got = collect(loader)
    assert.are.same({ 0, 1, 2, 3 }, got[1][2]:tolist())
    assert.is_false(got[1][1]:is_pinned())
    assert.are.equal("", with_stderr(function() data.DataLoader(ds, { batch_size = 4 }) end))
  end)

  it("on a CUDA machine pins every CPU tensor of a batch, nested tables included", function()
    if not torch.cuda.is_available() then pending("no CUDA device") return end
    local ds = data.TensorDataset(torch.arange(6):float(), torch.arange(6))
    local got = collect(data.DataLoader(ds, { batch_size = 4, pin_memory = true }))
    assert.is_true(got[1][1]:is_pinned())
    assert.is_true(got[1][2]:is_pinned())
    local x = got[1][1]:to("cuda", { non_blocking = true })
    torch.cuda.synchronize()
    assert.are.same({ 0, 1, 2, 3 }, x:cpu():tolist())
  end)
end)
