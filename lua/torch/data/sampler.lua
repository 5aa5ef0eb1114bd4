--[[
  torch.data.sampler — which sample indices a DataLoader visits, and in what batches.

  A sampler has `s:len()` and `s:iter()` (a Lua iterator of 0-based indices); a batch sampler's
  iterator yields Lua arrays of indices. Random samplers own a seeded generator
  (torch.data._rng), so shuffling never touches torch's global RNG; a sampler without a seed
  draws a fresh one per epoch from its generator, so epochs differ but a seeded run repeats.

  What:
    Sampler:extend([name])                                 the base class: a subclass defines
                                                           iter() (or __iter(), returning an
                                                           iterator or an array) and len() (or __len())
    SequentialSampler(ds)                                  0, 1, ..., n-1
    RandomSampler(ds, {replacement=false, num_samples=n, generator=seed|Generator})
    WeightedRandomSampler(weights, num_samples, {replacement=true, generator=})
    SubsetRandomSampler(indices, generator)                the given indices in random order; without a
                                                           generator from torch.randperm on torch's
                                                           global generator (PyTorch's order for a
                                                           torch.manual_seed), with one from it
    BatchSampler(sampler, batch_size, drop_last)           arrays of batch_size indices
    DistributedSampler(ds, {num_replicas=, rank=, shuffle=true, seed=0, drop_last=false})
        each rank sees ceil(n / replicas) indices (padded by wrapping around), interleaved
        rank, rank + replicas, ...; shuffled with seed + epoch: call s:set_epoch(e) per epoch.

  Use:
    local s = data.BatchSampler(data.RandomSampler(ds, {generator = 1}), 32, false)
    for batch in s:iter() do ... end       -- batch = {17, 3, ...}
]]
local ffi = require "ffi"
local torch = require "torch"
local _C = require "torch._C"
local dataset = require "torch.data.dataset"
local Generator = require "torch.data._rng"
local P = require "torch._pysig"

local M = {}

local function array_iter(a)
  local i = 0
  return function() i = i + 1; return a[i] end
end

---------------------------------------------------------------- Sampler
--[[ The base of every sampler (torch.utils.data.Sampler). A subclass ports PyTorch's:
       local Evens = data.Sampler:extend("Evens")
       function Evens:__init(n) self.n = n end
       function Evens:__iter() local i = -2; return function() i = i + 2; if i < self.n then return i end end end
       function Evens:__len() return math.ceil(self.n / 2) end ]]
local Sampler = { __name = "Sampler" }
Sampler.__index = Sampler
M.Sampler = Sampler

local function class(parent, name)
  local c = setmetatable({ __name = name }, { __index = parent, __call = function(cls, ...) return cls.new(...) end })
  c.__index = c
  return c
end
setmetatable(Sampler, { __call = function(cls, ...) return cls.new(...) end })

local PYTHON_NAMES = { __init__ = "__init", __len__ = "__len", __iter__ = "__iter" }

function Sampler.__init() end

function Sampler:extend(name)
  if name ~= nil and type(name) ~= "string" then
    error("bad argument #1 to 'extend' (class name string or nil expected, got " .. type(name) .. ")", 2)
  end
  local c = class(self, name or self.__name)
  c.new = function(...)
    for py, lua in pairs(PYTHON_NAMES) do
      if c[py] ~= nil then
        error(("%s defines %s: in Lua write function %s:%s(...)"):format(c.__name, py, c.__name, lua), 2)
      end
    end
    local obj = setmetatable({}, c)
    c.__init(obj, ...)
    return obj
  end
  return c
end

function Sampler.new() return setmetatable({}, Sampler) end

-- iter()/len() fall back to the Python-named methods; a class defining neither is an error.
function Sampler:iter()
  local f = self.__iter
  if f == nil then
    local name = getmetatable(self).__name
    error(("%s:iter() is not implemented: define function %s:iter() (or :__iter())"):format(name, name), 2)
  end
  local it = f(self)
  if type(it) == "table" then return array_iter(it) end
  return it
end

function Sampler:len()
  local f = self.__len
  if f == nil then
    error(("object of type '%s' has no len(): define function %s:len() (or :__len())")
      :format(getmetatable(self).__name, getmetatable(self).__name), 2)
  end
  return f(self)
end

local SequentialSampler = class(Sampler, "SequentialSampler")
M.SequentialSampler = SequentialSampler
function SequentialSampler.new(ds) return setmetatable({ n = ds:len() }, SequentialSampler) end
function SequentialSampler:len() return self.n end
function SequentialSampler:iter()
  local i, n = -1, self.n
  return function() i = i + 1; if i < n then return i end end
end

local RandomSampler = class(Sampler, "RandomSampler")
M.RandomSampler = RandomSampler
function RandomSampler.new(ds, opts)
  opts = opts or {}
  local n = ds:len()
  local self = setmetatable({ n = n, replacement = opts.replacement or false,
    num_samples = opts.num_samples or n, generator = dataset.generator(opts.generator) }, RandomSampler)
  if not self.replacement and self.num_samples > n then
    error("RandomSampler: num_samples > dataset size requires replacement = true", 2)
  end
  return self
end
function RandomSampler:len() return self.num_samples end
function RandomSampler:iter()
  local g, n, m = self.generator, self.n, self.num_samples
  local out = {}
  if self.replacement then
    for i = 1, m do out[i] = g:random(n) end
  else
    local perm = g:randperm(n)
    for i = 1, m do out[i] = perm[i] end
  end
  return array_iter(out)
end

local WeightedRandomSampler = class(Sampler, "WeightedRandomSampler")
M.WeightedRandomSampler = WeightedRandomSampler
function WeightedRandomSampler.new(weights, num_samples, opts)
  opts = opts or {}
  if type(weights) ~= "table" then weights = weights:tolist() end
  local cum, total = {}, 0
  for i, w in ipairs(weights) do
    if w < 0 or w ~= w then error("WeightedRandomSampler: weights must be non-negative, got " .. w .. " at " .. (i - 1), 2) end
    total = total + w; cum[i] = total
  end
  if total <= 0 then error("WeightedRandomSampler: weights sum to zero", 2) end
  local replacement = opts.replacement ~= false
  if not replacement and num_samples > #weights then
    error("WeightedRandomSampler: num_samples > number of weights requires replacement = true", 2)
  end
  return setmetatable({ weights = weights, cum = cum, total = total, num_samples = num_samples,
    replacement = replacement, generator = dataset.generator(opts.generator) }, WeightedRandomSampler)
end
function WeightedRandomSampler:len() return self.num_samples end
local function pick(cum, total, u)
  local x, lo, hi = u * total, 1, #cum
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cum[mid] > x then hi = mid else lo = mid + 1 end
  end
  return lo - 1
end
function WeightedRandomSampler:iter()
  local g, out = self.generator, {}
  if self.replacement then
    for i = 1, self.num_samples do out[i] = pick(self.cum, self.total, g:uniform()) end
  else
    -- without replacement: exponential race keys (Efraimidis-Spirakis), smallest first
    local keys, order = {}, {}
    for i, w in ipairs(self.weights) do
      keys[i] = w > 0 and -math.log(1 - g:uniform()) / w or math.huge
      order[i] = i
    end
    table.sort(order, function(a, b) return keys[a] < keys[b] end)
    for i = 1, self.num_samples do out[i] = order[i] - 1 end
  end
  return array_iter(out)
end

---------------------------------------------------------------- SubsetRandomSampler
local SubsetRandomSampler = class(Sampler, "SubsetRandomSampler")
M.SubsetRandomSampler = SubsetRandomSampler

SubsetRandomSampler.__signature = P.signature("SubsetRandomSampler", "indices, generator=None")

function SubsetRandomSampler.new(...)
  local a = dataset.bind(SubsetRandomSampler.__signature, ...)
  local indices = a.indices
  if ffi.istype(_C.Ref, indices) then indices = indices:tolist() end
  if type(indices) ~= "table" then
    error("bad argument #1 to 'SubsetRandomSampler' (Lua array or 1-D Tensor of indices expected, got "
      .. type(a.indices) .. ")", 2)
  end
  local copy = {}
  for i = 1, #indices do
    local v = indices[i]
    if type(v) ~= "number" then
      error(("SubsetRandomSampler: index %d is a %s, expected a number"):format(i - 1, type(v)), 2)
    end
    copy[i] = v
  end
  local g = a.generator
  if g ~= nil then g = dataset.generator(g) end
  return setmetatable({ indices = copy, generator = g }, SubsetRandomSampler)
end
function SubsetRandomSampler:len() return #self.indices end
-- Without a generator the order is torch.randperm's on torch's global generator: PyTorch's order
-- for the same torch.manual_seed.
function SubsetRandomSampler:iter()
  local idx, n, out = self.indices, #self.indices, {}
  local perm
  if self.generator then perm = self.generator:randperm(n)
  elseif n > 0 then perm = torch.randperm(n):tolist()
  else perm = {} end
  for i = 1, #perm do out[i] = idx[perm[i] + 1] end
  return array_iter(out)
end

local BatchSampler = class(Sampler, "BatchSampler")
M.BatchSampler = BatchSampler
function BatchSampler.new(sampler, batch_size, drop_last)
  if type(batch_size) ~= "number" or batch_size < 1 then
    error("bad argument #2 to 'BatchSampler' (positive integer batch_size expected)", 2)
  end
  return setmetatable({ sampler = sampler, batch_size = batch_size, drop_last = drop_last or false }, BatchSampler)
end
function BatchSampler:len()
  local n = self.sampler:len()
  if self.drop_last then return math.floor(n / self.batch_size) end
  return math.ceil(n / self.batch_size)
end
function BatchSampler:iter()
  local it, bs, drop = self.sampler:iter(), self.batch_size, self.drop_last
  return function()
    local b = {}
    for k = 1, bs do
      local i = it()
      if i == nil then break end
      b[k] = i
    end
    if #b == bs or (#b > 0 and not drop) then return b end
  end
end

local DistributedSampler = class(Sampler, "DistributedSampler")
M.DistributedSampler = DistributedSampler
function DistributedSampler.new(ds, opts)
  opts = opts or {}
  local replicas, rank = opts.num_replicas or opts.world_size or 1, opts.rank or 0
  if rank < 0 or rank >= replicas then
    error(("DistributedSampler: invalid rank %d, rank should be in [0, %d]"):format(rank, replicas - 1), 2)
  end
  local n = ds:len()
  local drop = opts.drop_last or false
  local per = (drop and n % replicas ~= 0) and math.floor(n / replicas) or math.ceil(n / replicas)
  return setmetatable({ n = n, num_replicas = replicas, rank = rank, shuffle = opts.shuffle ~= false,
    seed = opts.seed or 0, epoch = 0, drop_last = drop, num_samples = per,
    total_size = per * replicas }, DistributedSampler)
end
function DistributedSampler:len() return self.num_samples end
function DistributedSampler:set_epoch(e) self.epoch = e end
function DistributedSampler:iter()
  local idx
  if self.shuffle then idx = Generator(self.seed + self.epoch):randperm(self.n)
  else idx = {}; for i = 1, self.n do idx[i] = i - 1 end end
  local total = self.total_size
  if not self.drop_last then
    local k, base = #idx, #idx
    while k < total do k = k + 1; idx[k] = idx[(k - base - 1) % base + 1] end
  end
  local out = {}
  for k = self.rank + 1, total, self.num_replicas do out[#out + 1] = idx[k] end
  return array_iter(out)
end

return M
