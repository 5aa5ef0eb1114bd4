--[[
  torch.data.dataset — the Dataset protocol and its combinators (torch.utils.data.Dataset & co.).

  Protocol (map-style): an object with `ds:len()` (number of samples) and `ds:get(i)` with a
  0-based index i in [0, len) returning one sample (a tensor, number, string or a table of
  those). Iterable-style: `ds:iter(worker_info)` returns a Lua iterator of samples; with
  num_workers > 0 each worker calls it with worker_info = {id =, num_workers =, seed =} and
  should yield only its own shard (PyTorch's get_worker_info() pattern).

  What:
    Dataset:extend()                 a new class whose instances get `__index` = the class
    TensorDataset(t1, t2, ...)       get(i) -> {t1[i], t2[i], ...}; all tensors share dim 0
    ConcatDataset({ds1, ds2, ...})   ds1's samples, then ds2's, ...
    Subset(ds, indices)              get(i) -> ds:get(indices[i + 1]) (indices: Lua array, 0-based)
    random_split(ds, lengths, {generator = seed|Generator})
                                     lengths are counts, or fractions summing to 1 (remainders
                                     go round-robin to the first splits, as PyTorch does)
    IterableDataset:extend()         a class for iterable datasets

  Use:
    local data = torch.utils.data
    local ds = data.TensorDataset(torch.randn(100, 3), torch.arange(100))
    local train, val = unpack(data.random_split(ds, {0.8, 0.2}, {generator = 42}))
]]
local Generator = require "torch.data._rng"

local M = {}

local function class(parent)
  local c = {}
  c.__index = c
  if parent then setmetatable(c, { __index = parent, __call = function(cls, ...) return cls.new(...) end })
  else setmetatable(c, { __call = function(cls, ...) return cls.new(...) end }) end
  return c
end

local Dataset = class()
M.Dataset = Dataset
function Dataset:extend() local c = class(self); c.new = function(...) return setmetatable({}, c):init(...) end; return c end
function Dataset.new() return setmetatable({}, Dataset) end
function Dataset:init() return self end
function Dataset:len() error("Dataset:len() is not implemented by this dataset", 2) end
function Dataset:get() error("Dataset:get(i) is not implemented by this dataset", 2) end

local IterableDataset = class()
M.IterableDataset = IterableDataset
IterableDataset.is_iterable = true
function IterableDataset:extend() local c = class(self); c.new = function(...) return setmetatable({}, c):init(...) end; return c end
function IterableDataset:init() return self end
function IterableDataset:iter() error("IterableDataset:iter() is not implemented by this dataset", 2) end

local function check_index(name, i, n)
  if type(i) ~= "number" or i ~= math.floor(i) then
    error(("bad argument #1 to '%s.get' (integer index expected, got %s)"):format(name, type(i)), 3)
  end
  if i < 0 or i >= n then
    error(("%s.get: index %d out of range for a dataset of %d samples (indices are 0-based)")
      :format(name, i, n), 3)
  end
end
M.check_index = check_index

---------------------------------------------------------------- TensorDataset
local TensorDataset = class(Dataset)
M.TensorDataset = TensorDataset
function TensorDataset.new(...)
  local tensors = { ... }
  if #tensors == 0 then error("bad argument #1 to 'TensorDataset' (at least one tensor expected)", 2) end
  local n = tensors[1]:size(0)
  for k, t in ipairs(tensors) do
    if t:size(0) ~= n then
      error(("TensorDataset: size mismatch between tensors: tensor 1 has %d samples, tensor %d has %d")
        :format(n, k, t:size(0)), 2)
    end
  end
  return setmetatable({ tensors = tensors, n = n }, TensorDataset)
end
function TensorDataset:len() return self.n end
function TensorDataset:get(i)
  check_index("TensorDataset", i, self.n)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t:select(0, i) end
  return out
end

---------------------------------------------------------------- ConcatDataset
local ConcatDataset = class(Dataset)
M.ConcatDataset = ConcatDataset
function ConcatDataset.new(datasets)
  if type(datasets) ~= "table" or #datasets == 0 then
    error("bad argument #1 to 'ConcatDataset' (non-empty array of datasets expected)", 2)
  end
  local cum, total = {}, 0
  for k, ds in ipairs(datasets) do
    if ds.is_iterable then error("ConcatDataset: dataset " .. k .. " is iterable (map-style expected)", 2) end
    total = total + ds:len()
    cum[k] = total
  end
  return setmetatable({ datasets = datasets, cumulative_sizes = cum }, ConcatDataset)
end
function ConcatDataset:len() return self.cumulative_sizes[#self.cumulative_sizes] end
function ConcatDataset:get(i)
  local cum = self.cumulative_sizes
  check_index("ConcatDataset", i, cum[#cum])
  local lo, hi = 1, #cum                       -- binary search: first k with cum[k] > i
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cum[mid] > i then hi = mid else lo = mid + 1 end
  end
  return self.datasets[lo]:get(i - (cum[lo - 1] or 0))
end

---------------------------------------------------------------- Subset
local Subset = class(Dataset)
M.Subset = Subset
function Subset.new(dataset, indices)
  if type(indices) ~= "table" then
    error("bad argument #2 to 'Subset' (Lua array of 0-based indices expected, got " .. type(indices) .. ")", 2)
  end
  return setmetatable({ dataset = dataset, indices = indices }, Subset)
end
function Subset:len() return #self.indices end
function Subset:get(i)
  check_index("Subset", i, #self.indices)
  return self.dataset:get(self.indices[i + 1])
end

---------------------------------------------------------------- random_split
function M.generator(g, default_seed)
  if type(g) == "table" and g.randperm then return g end
  if type(g) == "number" then return Generator(g) end
  if g == nil then return Generator(default_seed or os.time()) end
  error("generator: a seed number or a torch.utils.data.Generator expected, got " .. type(g), 3)
end

function M.random_split(dataset, lengths, opts)
  opts = opts or {}
  local n = dataset:len()
  local counts, sum = {}, 0
  local fractions = true
  for _, l in ipairs(lengths) do if l > 1 or l ~= l then fractions = false end sum = sum + l end
  if fractions and math.abs(sum - 1) < 1e-9 and n > 0 then
    local given = 0
    for k, f in ipairs(lengths) do counts[k] = math.floor(n * f); given = given + counts[k] end
    for k = 0, n - given - 1 do local j = k % #counts + 1; counts[j] = counts[j] + 1 end
  else
    for k, l in ipairs(lengths) do counts[k] = l end
    if sum ~= n then
      error(("random_split: sum of input lengths (%d) does not equal the length of the dataset (%d)")
        :format(sum, n), 2)
    end
  end
  local perm = M.generator(opts.generator):randperm(n)
  local out, offset = {}, 0
  for k, c in ipairs(counts) do
    local idx = {}
    for j = 1, c do idx[j] = perm[offset + j] end
    offset = offset + c
    out[k] = Subset(dataset, idx)
  end
  return out
end

return M
