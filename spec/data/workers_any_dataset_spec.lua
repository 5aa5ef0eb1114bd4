-- spec/data/workers_any_dataset_spec.lua — DataLoader workers take the script's own dataset
-- object (torch.data._ship), as PyTorch's workers do, and give the batches of num_workers = 0.
--
-- The datasets come from spec/data/fixtures/script_dataset.lua, loaded as a script is (dofile:
-- nothing there has a module name): a plain metatable class whose transform closes over a
-- nested table, a tensor and a shared upvalue and reads a script global; a Dataset:extend
-- class with a random augmentation; cycles and shared references; a tensor the workers must
-- see without a copy; an IterableDataset class. Also: a class defined here, in busted's
-- environment; an nn module inside a dataset (sent by class name); a worker_init_fn closure
-- sharing an upvalue with the dataset; values that cannot cross (a file handle, a coroutine,
-- a C function no module names, a foreign cdata) refused with their exact path at the user's
-- line; a Lua error in a worker's __getitem re-raised with the worker's traceback.
-- Run: build/ltorch /usr/bin/busted spec/data/workers_any_dataset_spec.lua

local ffi = require "ffi"
local torch = require "torch"
local data = torch.utils.data
local errors = require "spec.support.errors"

local script = dofile("spec/data/fixtures/script_dataset.lua")

local function collect(ds, opts)
  local out = {}
  for b in data.DataLoader(ds, opts):iter() do out[#out + 1] = b end
  return out
end

local function with(base, extra)
  local o = {}
  for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return o
end

-- a and b: the same list of batches (tables of tensors, tensors or numbers), exactly.
local function assert_same_batches(a, b)
  assert.equal(#a, #b)
  for k = 1, #a do
    local x, y = a[k], b[k]
    if torch.is_tensor(x) then x, y = { x }, { y } end
    assert.equal(#x, #y)
    for j = 1, #x do
      assert.is_true(torch.equal(x[j], y[j]), ("batch %d, field %d differs"):format(k, j))
    end
  end
end

describe("DataLoader workers with a script's dataset object", function()
  it("a metatable class with a closure transform: workers = 2 give the batches of workers = 0", function()
    local ds = script.points(13)
    local opts = { batch_size = 3, shuffle = true, generator = 5 }
    local a = collect(ds, opts)
    local b = collect(ds, with(opts, { num_workers = 2 }))
    assert_same_batches(a, b)
    -- the transform's two closures share their upvalue in the workers too
    for _, batch in ipairs(b) do
      for _, shared in ipairs(batch[3]:tolist()) do assert.equal(1, shared) end
    end
  end)

  it("the values are the script's: global, nested table, tensor upvalue", function()
    local ds = script.points(4)
    local b = collect(ds, { batch_size = 4, num_workers = 2 })
    -- x[i] = {3i, 3i+1, 3i+2}; transform: x * 2 * 0.5 + {1, -1, 0.25}; + SCRIPT_OFFSET (100)
    local expect = {}
    for i = 0, 3 do expect[i + 1] = { 3 * i + 101, 3 * i + 1 + 99, 3 * i + 2 + 100.25 } end
    assert.same(expect, b[1][1]:tolist())
    assert.same({ 0, 1, 2, 3 }, b[1][2]:tolist())
  end)

  it("a random augmentation: 1 worker repeats in-process loading, 2 workers their own seeds", function()
    local ds = script.noisy(11)
    local opts = { batch_size = 2, shuffle = true, generator = 9, base_seed = 1234 }
    assert_same_batches(collect(ds, opts), collect(ds, with(opts, { num_workers = 1 })))
    local two = collect(ds, with(opts, { num_workers = 2 }))
    assert_same_batches(two, collect(ds, with(opts, { num_workers = 2 })))
    -- batch k is made by worker k % 2, whose generator is seeded 1234 + worker: replayed here
    local idx = {}
    local g = torch.Generator():manual_seed(9)
    require("torch._generator").random_seed(g)   -- the loader draws its base seed first (used or not)
    for b in data.BatchSampler(data.RandomSampler(ds, { generator = g }), 2, false):iter() do
      idx[#idx + 1] = b
    end
    local expect = {}
    for w = 0, 1 do
      data.manual_seed(1234 + w)
      for k = w + 1, #idx, 2 do
        local samples = {}
        for j, i in ipairs(idx[k]) do samples[j] = { ds:get(i) } end
        expect[k] = data.default_collate(samples)
      end
    end
    assert_same_batches(expect, two)
  end)

  it("cycles and shared references arrive as cycles and shared references", function()
    local b = collect(script.ring(), { batch_size = 4, num_workers = 2 })
    assert.same({ { 0, 1 }, { 1, 1 }, { 2, 1 }, { 3, 1 } }, b[1]:tolist())
  end)

  it("a TensorDataset works with workers, its tensors shared, not copied", function()
    local x, y = torch.randn(10, 3), torch.arange(10)
    local ds = data.TensorDataset(x, y)
    local opts = { batch_size = 4, shuffle = true, generator = 3 }
    assert_same_batches(collect(ds, opts), collect(ds, with(opts, { num_workers = 2 })))
    local here = tonumber(ffi.cast("uintptr_t", x:data_ptr()))
    local seen = collect(script.pointer(x), { batch_size = 2, num_workers = 2 })
    assert.same({ here, here }, seen[1]:tolist())
  end)

  it("an IterableDataset class shards by worker", function()
    local got = {}
    for b in data.DataLoader(script.counter(7), { batch_size = 2, num_workers = 2 }):iter() do
      for _, v in ipairs(b:tolist()) do got[#got + 1] = v end
    end
    table.sort(got)
    assert.same({ 0, 10, 20, 30, 40, 50, 60 }, got)
  end)

  it("a class defined in a spec (busted's environment), with an nn transform sent by class name", function()
    torch.manual_seed(0)
    local net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    local Feats = data.Dataset:extend("Feats")
    function Feats:__init(n) self.n, self.net = n, net end
    function Feats:__len() return self.n end
    function Feats:__getitem(i)
      return torch.no_grad(function() return self.net(torch.full({ 3 }, i / 10, { dtype = torch.float32 })) end)
    end
    local ds = Feats(6)
    assert_same_batches(collect(ds, { batch_size = 4 }), collect(ds, { batch_size = 4, num_workers = 2 }))
  end)

  it("a worker_init_fn closure shares its upvalue with the dataset's methods", function()
    local state = { id = -1 }
    local Tagged = data.Dataset:extend("Tagged")
    function Tagged:__len() return 4 end
    function Tagged:__getitem() return state.id end
    local b = collect(Tagged(), { batch_size = 1, num_workers = 2,
      worker_init_fn = function(id) state.id = id * 10 + 5 end })
    assert.same({ 5, 15, 5, 15 }, { b[1]:item(), b[2]:item(), b[3]:item(), b[4]:item() })
    assert.equal(-1, state.id)   -- the main state's table is untouched
  end)

  describe("refuses what cannot cross, naming its path at the user's line", function()
    local function refused(ds)
      return errors.err(function()
        local loader = data.DataLoader(ds, { batch_size = 2, num_workers = 2 })   -- blamed line
        return loader
      end)
    end

    it("a file handle in a transform's upvalue", function()
      local fh = assert(io.open("spec/data/fixtures/script_dataset.lua"))
      local ds = script.points(4)
      ds.transform = function(v) return v + #fh:read(0) end
      local err = refused(ds)
      assert.matches("DataLoader: dataset.transform.upvalue 'fh' %(a file handle%) cannot be sent to a worker state", err)
      assert.matches("workers_any_dataset_spec.lua:%d+:", err)
      fh:close()
    end)

    it("a coroutine, a C function no module names, a foreign cdata", function()
      local ds = script.points(4)
      ds.state = { co = coroutine.create(function() end) }
      assert.matches("dataset.state.co %(a coroutine%)", refused(ds))
      ds.state = nil
      ds.chars = ("abc"):gmatch(".")
      assert.matches("dataset.chars %(a C function no loaded module names%)", refused(ds))
      ds.chars = nil
      ds.buf = ffi.new("int[4]")
      assert.matches("dataset.buf %(a cdata of type int %[4%], not a tensor%)", refused(ds))
    end)

    it("and at each iteration, which sends the dataset as it is then", function()
      local ds = script.points(4)
      local loader = data.DataLoader(ds, { batch_size = 4, num_workers = 2 })
      ds.transform = function(v) return v * 0, 1 end
      assert.same({ 100, 100, 100 }, collect(ds, { batch_size = 4, num_workers = 2 })[1][1][1]:tolist())
      local b
      for batch in loader:iter() do b = batch end
      assert.same({ 100, 100, 100 }, b[1][1]:tolist())
      ds.log = io.stderr
      local err = errors.err(function()
        local it = loader:iter()   -- not a tail call: the error names this line
        return it
      end)
      assert.matches("workers_any_dataset_spec.lua:%d+: DataLoader: dataset.log %(a file handle%)", err)
    end)

    it("inside a Dataset:extend instance and its class", function()
      local Holder = data.Dataset:extend("Holder")
      local log = io.stderr
      function Holder:__len() return 2 end
      function Holder:__getitem(i) log:write(i) return i end
      assert.matches("getmetatable%(dataset%).__getitem.upvalue 'log' %(a file handle%)", refused(Holder()))
    end)
  end)

  it("a Lua error in a worker's __getitem comes back with the worker's traceback", function()
    local ok, err = pcall(collect, script.faulty(12), { batch_size = 2, num_workers = 2 })
    assert.is_false(ok)
    assert.matches("DataLoader worker 0 raised an error %(batch 2%)", err)
    assert.matches("script dataset: bad sample 5", err)
    assert.matches("stack traceback", err)
    assert.matches("script_dataset.lua:%d+: in function 'explode'", err)
  end)

  it("dataset_factory stays the explicit path, with a worker_init_fn closure", function()
    local f = { module = "spec.data.support.faulty_dataset", args = { 6 } }
    local b = collect(nil, { dataset_factory = f, batch_size = 3, num_workers = 2 })
    assert.same({ 3, 4, 5 }, b[2][2]:tolist())
    local offset = 40
    local c = collect(nil, { dataset_factory = f, batch_size = 3, num_workers = 2,
      worker_init_fn = function(id) data.get_worker_info().id = id + offset end })
    assert.same({ 40, 40, 40 }, c[1][3]:tolist())
    assert.same({ 41, 41, 41 }, c[2][3]:tolist())
  end)
end)
