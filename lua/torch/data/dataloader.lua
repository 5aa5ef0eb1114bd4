--[[
  torch.data.dataloader — DataLoader: batches from a dataset, in-process or from worker threads.

  DataLoader(dataset, {batch_size = 1, shuffle = false, generator = torch.Generator | seed,
             drop_last = false, sampler =, batch_sampler =, collate_fn =,
             num_workers = 0, prefetch_factor = 2, worker_init_fn =, timeout = 0,
             pin_memory = false, dataset_factory = {module =, args = {...}, method =}})
    for batch in loader:iter() do ... end      -- batch = {x, y} for a TensorDataset(x, y)
    for x, y in loader:unpacked() do ... end   -- the same batches, their fields as values
    #loader, loader:len()                      -- the number of batches

  Python's `for x, y in loader:` has no literal Lua form: `for ... in loader do` is an error
  that names the two forms above (a one-variable loop would silently get only x). A loader
  is a userdata proxy over its fields (LuaJIT ignores __len on tables), which is what makes
  `#loader` work; its fields read and write as usual.

  pin_memory = true copies each batch's CPU tensors into page-locked memory (in the main state,
  after collation), so `batch:to("cuda", {non_blocking = true})` overlaps the copy with GPU
  work, as PyTorch's; without a CUDA device it warns once and does nothing, as PyTorch's does.
  persistent_workers is accepted for ported code; workers are started per iteration either way.

  batch_size = false disables batching (samples come one by one, uncollated), as PyTorch's
  batch_size=None. shuffle uses a RandomSampler with the loader's generator (a torch.Generator,
  or a seed number for torch.Generator():manual_seed(seed)); each epoch draws a new permutation.
  Every draw is PyTorch's (lua/torch/_generator.lua): without a generator, after
  torch.manual_seed(s) the order and torch's generator state afterwards are PyTorch's.

  Workers (num_workers > 0): threads with their own Lua states (runtime/workers.c,
  torch.data._worker). As PyTorch's workers get the script's dataset, each worker gets its own
  copy of the dataset object, made once per iteration (torch.data._ship): a class defined in
  the script travels with it (tables, metatables, functions with their upvalues, the globals
  they use; shared references and cycles kept), library values (torch, math,
  torch.utils.data.Dataset, nn classes) go by name and tensors by handle (no data copied: an
  in-memory TensorDataset works as is). What cannot cross is an error naming it, e.g.
  "dataset.transform.upvalue 'fh' (a file handle) cannot be sent to a worker state": open such
  things inside the worker (lazily in __getitem). The explicit path remains:
  `dataset_factory = {module = "my.dataset", args = {...}}` (called as
  require(module).new(unpack(args)), or `method`), or a dataset that carries its own `factory`
  field (the datasets in torch.data.datasets do), builds the dataset in each worker instead.
  worker_init_fn is a function (sent likewise) or {module =, fn =} / "module:fn"; a collate_fn
  function runs in the main state (workers send uncollated samples), a named one in the
  workers. Worker w seeds torch with base_seed + w, where base_seed is drawn from the loader's
  generator per iteration (or `base_seed` in the options); batch k is always made by worker
  k % num_workers, so a seeded run repeats exactly, and batches come back in sampler order
  whatever the worker count.
  Inside a worker, torch.utils.data.get_worker_info() returns {id, num_workers, seed, dataset}.

  Randomness: libtorch's default CPU generator is one per process, shared by the main thread
  and every worker thread, so workers do not call torch.manual_seed (it would reseed the
  training loop's RNG too). Instead each worker seeds its own generator,
  torch.utils.data.rng(), with base_seed + worker id; the built-in random transforms draw from
  it, and so should custom augmentation. In-process loading seeds it with base_seed, so
  num_workers = 0 and 1 give identical augmented batches.
]]
local dataset_mod = require "torch.data.dataset"
local sampler = require "torch.data.sampler"
local collate_mod = require "torch.data.collate"
local T = require "torch._tensor"
local device = require "torch.device"
local ship = require "torch.data._ship"
local G = require "torch._generator"

local DataLoader = {}
DataLoader.__index = DataLoader

local KNOWN = { batch_size = 1, shuffle = 1, generator = 1, drop_last = 1, sampler = 1, batch_sampler = 1,
  collate_fn = 1, num_workers = 1, prefetch_factor = 1, worker_init_fn = 1, timeout = 1,
  dataset_factory = 1, base_seed = 1, pin_memory = 1, persistent_workers = 1 }

-- The loader is a userdata proxy over `store` so that #loader works (see the header).
local function proxy(store)
  local u = newproxy(true)
  local mt = getmetatable(u)
  mt.__index, mt.__newindex = store, store
  mt.__len = function(self) return self:len() end
  mt.__call = function()
    error("a DataLoader is not itself an iterator: write `for batch in loader:iter() do` "
      .. "(batch = {x, y}) or `for x, y in loader:unpacked() do`", 2)
  end
  mt.__tostring = function() return "DataLoader" end
  mt.__metatable = DataLoader
  return u
end

function DataLoader.new(dataset, opts)
  return proxy(DataLoader._new(dataset, opts))
end

function DataLoader._new(dataset, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not KNOWN[k] then error(("DataLoader: unknown option '%s'"):format(tostring(k)), 3) end
  end
  local self = setmetatable({ dataset = dataset, num_workers = opts.num_workers or 0,
    prefetch_factor = opts.prefetch_factor or 2, collate_fn = opts.collate_fn,
    worker_init_fn = opts.worker_init_fn, timeout = opts.timeout or 0,
    dataset_factory = opts.dataset_factory or (dataset and dataset.factory),
    base_seed = opts.base_seed, drop_last = opts.drop_last or false }, DataLoader)
  if dataset == nil then
    -- only a factory given: build the dataset here too (the sampler needs its length)
    if type(self.dataset_factory) ~= "table" then
      error("bad argument #1 to 'DataLoader' (dataset expected, got nil)", 3)
    end
    dataset = require("torch.data._worker").build_dataset(self.dataset_factory)
    self.dataset = dataset
  end
  if self.num_workers < 0 then error("DataLoader: num_workers must be >= 0", 3) end
  -- what cannot reach the workers is refused here, at the user's line; each iteration sends the
  -- dataset as it is then
  if self.num_workers > 0 then self:_shipped(0, 3) end
  if opts.pin_memory and not device.cuda.is_available() then
    require("torch._warnings").warn("'pin_memory' argument is set as true but no accelerator is found, "
      .. "then device pinned memory won't be used.")
  end
  self.pin_memory = opts.pin_memory == true and device.cuda.is_available()
  self.batched = opts.batch_size ~= false
  self.batch_size = self.batched and (opts.batch_size or 1) or nil
  -- nil: torch's global generator, drawn from at each iteration as PyTorch's generator=None
  local g = opts.generator
  if type(g) == "number" then g = G.Generator():manual_seed(g) end
  self.generator = G.check(g, "DataLoader")
  self.iterable = dataset ~= nil and dataset.is_iterable or false
  if self.iterable then
    if opts.shuffle or opts.sampler or opts.batch_sampler then
      error("DataLoader: shuffle, sampler and batch_sampler are not allowed with an IterableDataset", 3)
    end
    return self
  end
  if opts.batch_sampler then
    if opts.batch_size or opts.shuffle or opts.sampler or opts.drop_last then
      error("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last", 3)
    end
    self.batch_sampler = opts.batch_sampler
    return self
  end
  if opts.sampler and opts.shuffle then
    error("DataLoader: sampler option is mutually exclusive with shuffle", 3)
  end
  self.sampler = opts.sampler or (opts.shuffle and sampler.RandomSampler(dataset, { generator = self.generator })
    or sampler.SequentialSampler(dataset))
  if self.batched then
    self.batch_sampler = sampler.BatchSampler(self.sampler, self.batch_size, self.drop_last)
  end
  return self
end

function DataLoader:len()
  if self.iterable then
    local ds = self.dataset
    if ds.len and (ds.len ~= dataset_mod.IterableDataset.len or ds.__len) then
      local n = self.dataset:len()
      if not self.batched then return n end
      return self.drop_last and math.floor(n / self.batch_size) or math.ceil(n / self.batch_size)
    end
    error("DataLoader:len(): this IterableDataset has no len()", 2)
  end
  return (self.batch_sampler or self.sampler):len()
end

-- Index arrays, one per batch (a one-element array per sample when unbatched).
function DataLoader:_index_iter()
  if self.batch_sampler then return self.batch_sampler:iter() end
  local it = self.sampler:iter()
  return function() local i = it(); if i ~= nil then return { i } end end
end

function DataLoader:_collate()
  if not self.batched then return collate_mod.default_convert end
  return type(self.collate_fn) == "function" and self.collate_fn or collate_mod.default_collate
end

function DataLoader:_iter_single()
  local collate, ds = self:_collate(), self.dataset
  require("torch.data").manual_seed(self._base_seed)   -- as worker 0 would be seeded
  if self.iterable then
    local it = ds:iter(nil)
    local bs, drop = self.batch_size or 1, self.drop_last
    return function()
      local samples = {}
      for k = 1, bs do
        local s = it()
        if s == nil then break end
        samples[k] = s
      end
      if #samples == 0 or (drop and #samples < bs) then return nil end
      if not self.batched then return samples[1] end
      return collate(samples)
    end
  end
  local batches = self:_index_iter()
  return function()
    local idx = batches()
    if idx == nil then return nil end
    local samples = {}
    for k = 1, #idx do samples[k] = dataset_mod.sample(ds:get(idx[k])) end
    if not self.batched then return samples[1] end
    return collate(samples)
  end
end

local function fn_spec(v, what)
  if v == nil or type(v) == "string" or type(v) == "table" then return v end
  error(("DataLoader: with num_workers > 0, %s must be a function, or given by name "
    .. "({module =, fn =} or \"module:fn\"), not a %s"):format(what, type(v)), 4)
end

-- The script's objects the workers rebuild (torch.data._ship), for num_workers workers: the
-- dataset unless a factory builds it there, and a worker_init_fn function; nil when there are
-- none. What cannot cross is an error at `level`. With num_workers = 0, only that check.
function DataLoader:_shipped(num_workers, level)
  local roots = {}
  if type(self.dataset_factory) ~= "table" then roots[1] = { "dataset", self.dataset } end
  if type(self.worker_init_fn) == "function" then roots[#roots + 1] = { "worker_init_fn", self.worker_init_fn } end
  if #roots == 0 then return nil end
  local ok, s = pcall(ship.pack, roots, num_workers)
  if not ok then
    error(tostring(s) .. " (num_workers > 0 rebuilds the dataset in each worker's own Lua state: "
      .. "create such a value inside the worker, e.g. lazily in __getitem, or use num_workers = 0, "
      .. "or dataset_factory = {module =, args =})", level + 1)
  end
  return s
end

function DataLoader:_iter_workers()
  local factory = self.dataset_factory
  if type(factory) == "table" and type(factory.module) ~= "string" then
    error("DataLoader: dataset_factory needs module = \"name\" (a module whose .new(...) builds "
      .. "the dataset in each worker)", 3)
  end
  local main_collate = type(self.collate_fn) == "function" and self.collate_fn or nil
  local config = {
    path = package.path, cpath = package.cpath,
    base_seed = self._base_seed,
    dataset = type(factory) == "table" and factory or nil, batched = self.batched, batch_size = self.batch_size,
    worker_init = type(self.worker_init_fn) ~= "function" and fn_spec(self.worker_init_fn, "worker_init_fn") or nil,
    collate = main_collate and "list" or fn_spec(self.collate_fn, "collate_fn"),
    shipped = self:_shipped(self.num_workers, 3),
  }
  local batches = not self.iterable and self:_index_iter() or nil
  local it, close = require("torch.data._pool").iterator({
    num_workers = self.num_workers, prefetch_factor = self.prefetch_factor,
    timeout = self.timeout, config = config, iterable = self.iterable,
    next_indices = batches })
  self._close = close
  if main_collate then
    return function()
      local samples = it()
      if samples ~= nil then return main_collate(samples) end
    end
  end
  return it
end

-- A batch with its CPU tensors in page-locked memory (tables rebuilt with the same keys).
local function pinned(batch)
  if T.is_tensor(batch) then
    return batch.device.type == "cpu" and batch:pin_memory() or batch
  elseif type(batch) == "table" and getmetatable(batch) == nil then
    local out = {}
    for k, v in pairs(batch) do out[k] = pinned(v) end
    return out
  end
  return batch
end

-- for batch in loader:iter() do ... end
function DataLoader:iter()
  -- PyTorch's _BaseDataLoaderIter: the sampler's iterator first (a random sampler draws only at
  -- its first index), then _base_seed = torch.empty((), dtype=torch.int64).random_(generator=g),
  -- drawn whatever num_workers is, so a seeded loader gives identical batches with 0 or N
  -- workers and leaves the generators as PyTorch's does. (The workers' Lua generators take it
  -- as a Lua number: 53 bits.)
  local drawn = G.random_seed(self.generator)
  self._base_seed = self.base_seed or tonumber(drawn)
  local it = self.num_workers > 0 and self:_iter_workers() or self:_iter_single()
  if not self.pin_memory then return it end
  return function()
    local batch = it()
    if batch ~= nil then return pinned(batch) end
  end
end

-- for x, y in loader:unpacked() do: each batch's array fields as separate values.
function DataLoader:unpacked()
  local it = self:iter()
  return function()
    local batch = it()
    if type(batch) ~= "table" or getmetatable(batch) ~= nil then return batch end
    if batch[1] == nil and next(batch) ~= nil then
      error("loader:unpacked(): this batch has named fields, not positions: write "
        .. "`for batch in loader:iter() do` and read batch.<name>", 2)
    end
    return unpack(batch, 1, table.maxn(batch))
  end
end

return setmetatable(DataLoader, { __call = function(_, ...) return DataLoader.new(...) end })
