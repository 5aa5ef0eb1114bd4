--[[
  torch.data.dataset — the Dataset protocol and its combinators (torch.utils.data.Dataset & co.).

  Protocol (map-style): an object with `ds:len()` (number of samples) and `ds:get(i)` with a
  0-based index i in [0, len) returning one sample (a tensor, number, string or a table of
  those). Iterable-style: `ds:iter(worker_info)` returns a Lua iterator of samples; with
  num_workers > 0 each worker calls it with worker_info = {id =, num_workers =, seed =} and
  should yield only its own shard (PyTorch's get_worker_info() pattern).

  A subclass ports PyTorch's as nn.Module's do, with Lua spellings of the dunder methods:

      local Squares = data.Dataset:extend("Squares")
      function Squares:__init(n) self.n = n end                  -- __init__ (returns nothing)
      function Squares:__len() return self.n end                 -- __len__   (or :len())
      function Squares:__getitem(i) return torch.tensor(i * i) end  -- __getitem__ (or :get(i)), 0-based
      local ds = Squares(10); print(#ds, ds[3], ds:get(3))        -- 10, tensor(9), tensor(9)

  Instances made by these classes (and the built-ins) support `#ds` (= ds:len()) and `ds[i]`
  (= ds:get(i)): LuaJIT ignores __len on tables, so an instance is a userdata proxy over its
  fields (`self.x = v` and `self.x` work as usual; rawget/pairs on it do not). The older Lua
  constructor `function C:init(...) ...; return self end` still works. Python's spellings
  (`__init__`, `__len__`, `__getitem__`) are errors naming the Lua method to define.

  What:
    Dataset:extend([name])           a new class (name for messages); Class(...) makes an instance
    TensorDataset(t1, t2, ...)       get(i) -> {t1[i], t2[i], ...}; all tensors share dim 0
    ConcatDataset({ds1, ds2, ...})   ds1's samples, then ds2's, ...
    Subset(ds, indices)              get(i) -> ds:get(indices[i + 1]) (indices: Lua array, 0-based)
    StackDataset(ds1, ds2, ...)      get(i) -> {ds1[i], ds2[i], ...}; StackDataset{name = ds, ...}:
                                     get(i) -> {name = ds[i], ...}; all of one length
    ChainDataset({it1, it2, ...})    an IterableDataset yielding it1's samples, then it2's, ...
    random_split(ds, lengths, {generator = seed|Generator})
                                     lengths are counts, or fractions summing to 1 (remainders
                                     go round-robin to the first splits, as PyTorch does);
                                     without a generator the seed is drawn from torch's global
                                     generator, so torch.manual_seed makes it repeat
    IterableDataset:extend([name])   a class for iterable datasets (`iter`, or `__iter`)
    instance(Class, fields)          an instance without running a constructor (for built-ins)

  Use:
    local data = torch.utils.data
    local ds = data.TensorDataset(torch.randn(100, 3), torch.arange(100))
    local train, val = unpack(data.random_split(ds, {0.8, 0.2}, {generator = 42}))
]]
local torch = require "torch"
local Generator = require "torch.data._rng"
local P = require "torch._pysig"

local M = {}

local function class(parent, name)
  local c = { __name = name or (parent and parent.__name) or "Dataset" }
  c.__index = c
  setmetatable(c, { __index = parent, __call = function(cls, ...) return cls.new(...) end })
  return c
end

---------------------------------------------------------------- instances
local function describe(u)
  local ok, n = pcall(u.len, u)
  local cls = getmetatable(u)
  return ok and ("%s(%d samples)"):format(cls.__name, n) or ("%s()"):format(cls.__name)
end

-- A userdata proxy over `fields` (whose metatable is the class): #u calls u:len(), u[i] with a
-- number calls u:get(i), getmetatable(u) is the class.
local function instance(cls, fields)
  local store = setmetatable(fields or {}, cls)
  local u = newproxy(true)
  local mt = getmetatable(u)
  mt.__index = function(self, k)
    local v = store[k]
    if v == nil and type(k) == "number" then return self:get(k) end
    return v
  end
  mt.__newindex = store
  mt.__len = function(self) return self:len() end
  mt.__tostring = describe
  mt.__metatable = cls
  return u
end
M.instance = instance

local PYTHON_NAMES = { __init__ = "__init", __len__ = "__len", __getitem__ = "__getitem", __iter__ = "__iter" }

local function check_python_names(cls)
  for py, lua in pairs(PYTHON_NAMES) do
    if cls[py] ~= nil then
      error(("%s defines %s: in Lua write function %s:%s(...)"):format(cls.__name, py, cls.__name, lua), 3)
    end
  end
end

local function noop_init() end
local function lua_init(self) return self end

-- Class(...): __init(self, ...) as PyTorch's __init__, else the Lua-style init(...) -> self.
local function construct(cls, ...)
  check_python_names(cls)
  local self = instance(cls)
  if cls.__init ~= noop_init or cls.init == lua_init then
    cls.__init(self, ...)
    return self
  end
  local made = cls.init(self, ...)
  if made == nil then return self end
  return made
end

local function extend(base, name)
  if name ~= nil and type(name) ~= "string" then
    error("bad argument #1 to 'extend' (class name string or nil expected, got " .. type(name) .. ")", 2)
  end
  local c = class(base, name)
  c.new = function(...) return construct(c, ...) end
  return c
end

---------------------------------------------------------------- Dataset
local Dataset = class(nil, "Dataset")
M.Dataset = Dataset
function Dataset:extend(name) return extend(self, name) end
function Dataset.new() return instance(Dataset) end
Dataset.__init, Dataset.init = noop_init, lua_init

-- len()/get(i) fall back to the Python-named methods; a class defining neither is an error.
function Dataset:len()
  local f = self.__len
  if f == nil then
    local name = getmetatable(self).__name
    error(("%s:len() is not implemented: define function %s:len() (or :__len())"):format(name, name), 2)
  end
  return f(self)
end

function Dataset:get(i)
  local f = self.__getitem
  if f == nil then
    local name = getmetatable(self).__name
    error(("%s:get(i) is not implemented: define function %s:get(i) (or :__getitem(i)), i 0-based")
      :format(name, name), 2)
  end
  return f(self, i)
end

--[[ A sample as the loader keeps it: get(i) returning several values (Python's `return x, y`)
     becomes the table {x, y}, as PyTorch's tuple; one value stays itself. ]]
function M.sample(...)
  if select("#", ...) > 1 then return { ... } end
  return (...)
end

local IterableDataset = class(nil, "IterableDataset")
M.IterableDataset = IterableDataset
IterableDataset.is_iterable = true
function IterableDataset:extend(name) return extend(self, name) end
IterableDataset.__init, IterableDataset.init = noop_init, lua_init

function IterableDataset:iter(...)
  local f = self.__iter
  if f == nil then
    local name = getmetatable(self).__name
    error(("%s:iter() is not implemented: define function %s:iter() (or :__iter())"):format(name, name), 2)
  end
  return f(self, ...)
end

function IterableDataset:len()
  local f = self.__len
  if f == nil then
    error(("%s has no len(): an IterableDataset has one only if it defines :len() or :__len()")
      :format(getmetatable(self).__name), 2)
  end
  return f(self)
end

function IterableDataset:get()
  error(("%s is an IterableDataset: iterate it (ds:iter() or a DataLoader); it has no get(i)")
    :format(getmetatable(self).__name), 2)
end

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
local TensorDataset = class(Dataset, "TensorDataset")
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
  return instance(TensorDataset, { tensors = tensors, n = n })
end
function TensorDataset:len() return self.n end
function TensorDataset:get(i)
  check_index("TensorDataset", i, self.n)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t:select(0, i) end
  return out
end

---------------------------------------------------------------- ConcatDataset
local ConcatDataset = class(Dataset, "ConcatDataset")
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
  return instance(ConcatDataset, { datasets = datasets, cumulative_sizes = cum })
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
local Subset = class(Dataset, "Subset")
M.Subset = Subset
function Subset.new(dataset, indices)
  if type(indices) ~= "table" then
    error("bad argument #2 to 'Subset' (Lua array of 0-based indices expected, got " .. type(indices) .. ")", 2)
  end
  return instance(Subset, { dataset = dataset, indices = indices })
end
function Subset:len() return #self.indices end
function Subset:get(i)
  check_index("Subset", i, #self.indices)
  return self.dataset:get(self.indices[i + 1])
end

---------------------------------------------------------------- StackDataset
local StackDataset = class(Dataset, "StackDataset")
M.StackDataset = StackDataset

-- A keyword table (PyTorch's **kwargs): a plain table with string keys only.
local function is_keywords(t)
  if type(t) ~= "table" or getmetatable(t) ~= nil or next(t) == nil or t[1] ~= nil then return false end
  for k, v in pairs(t) do if type(k) ~= "string" or type(v) == "function" then return false end end
  return true
end

local function dataset_len(name, ds)
  if ds == nil or (type(ds) ~= "table" and type(ds) ~= "userdata") or ds.len == nil then
    error(("StackDataset: %s is not a dataset (got %s)"):format(name, type(ds)), 4)
  end
  return ds:len()
end

function StackDataset.new(...)
  local n, args = select("#", ...), { ... }
  local named = n >= 1 and is_keywords(args[n])
  if named and n > 1 then
    error("StackDataset: supported either tuple- (positional datasets) or dict- (a table of named datasets) "
      .. "like input/output, but both types are given", 2)
  end
  local datasets, len = named and args[1] or args, nil
  if n == 0 then error("StackDataset: at least one dataset should be passed", 2) end
  local keys = {}
  if named then
    for k in pairs(datasets) do keys[#keys + 1] = k end
    table.sort(keys)
  else
    for i = 1, n do keys[i] = i end
  end
  for _, k in ipairs(keys) do
    local l = dataset_len(named and ("dataset '" .. k .. "'") or ("argument " .. k), datasets[k])
    if len == nil then len = l
    elseif l ~= len then error("StackDataset: size mismatch between datasets", 2) end
  end
  return instance(StackDataset, { datasets = datasets, _keys = keys, _length = len })
end
function StackDataset:len() return self._length end
function StackDataset:get(i)
  check_index("StackDataset", i, self._length)
  local out = {}
  for _, k in ipairs(self._keys) do out[k] = self.datasets[k]:get(i) end
  return out
end

---------------------------------------------------------------- ChainDataset
--[[ bind(sig, ...) -> the arguments given, bound to PyTorch's signature sig (torch._pysig) by
     the constructor that calls it; a binding error blames that constructor's caller. ]]
function M.bind(sig, ...)
  local ok, a = pcall(P.bind_given, sig, ...)
  if not ok then error((tostring(a):gsub("^[^\n]-:%d+: ", "")), 3) end
  return a
end

local ChainDataset = class(IterableDataset, "ChainDataset")
M.ChainDataset = ChainDataset
ChainDataset.__signature = P.signature("ChainDataset", "datasets")
function ChainDataset.new(...)
  local datasets = M.bind(ChainDataset.__signature, ...).datasets
  if type(datasets) ~= "table" or getmetatable(datasets) ~= nil then
    error("bad argument #1 to 'ChainDataset' (array of IterableDatasets expected, got " .. type(datasets) .. ")", 2)
  end
  for k, ds in ipairs(datasets) do
    if (type(ds) ~= "table" and type(ds) ~= "userdata") or not ds.is_iterable then
      error(("ChainDataset only supports IterableDataset, but dataset %d is not one"):format(k - 1), 2)
    end
  end
  return instance(ChainDataset, { datasets = datasets })
end
-- iter(...) passes its arguments (worker_info) on to each dataset's iter.
function ChainDataset:iter(...)
  local datasets, k, it = self.datasets, 0, nil
  local args, n = { ... }, select("#", ...)
  local function pull()
    while true do
      if it == nil then
        k = k + 1
        if datasets[k] == nil then return nil end
        it = datasets[k]:iter(unpack(args, 1, n))
      end
      local v = it()
      if v ~= nil then return v end
      it = nil
    end
  end
  return pull
end
function ChainDataset:len()
  local total = 0
  for _, ds in ipairs(self.datasets) do total = total + ds:len() end
  return total
end

---------------------------------------------------------------- random_split
-- A seed drawn from torch's global generator, as PyTorch's
-- torch.empty((), dtype=torch.int64).random_().item(): torch.manual_seed makes it repeat.
function M.global_seed()
  return torch.empty({}, { dtype = torch.int64 }):random_():item()
end

function M.generator(g, default_seed)
  if type(g) == "table" and g.randperm then return g end
  if type(g) == "number" then return Generator(g) end
  if g == nil then return Generator(default_seed or M.global_seed()) end
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
