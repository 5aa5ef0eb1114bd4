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
local G = require "torch._generator"
local P = require "torch._pysig"

local M = {}

-- A seed number stands for torch.Generator():manual_seed(seed) (an ltorch shorthand).
local function seed_generator(g)
  if type(g) == "number" then return G.Generator():manual_seed(g) end
  return g
end

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

-- Pulls chunks (Lua arrays) from next_chunk() one by one, as PyTorch's generators `yield from`
-- each draw: a chunk is drawn only when the previous one is used up (and once more at the end).
local function chunked(next_chunk)
  local buf, i, done = {}, 0, false
  return function()
    while not done and i >= #buf do
      buf, i = next_chunk(), 0
      done = buf == nil
    end
    if done then return nil end
    i = i + 1
    return buf[i]
  end
end

-- A positive integer count, or PyTorch's ValueError text.
local function check_count(who, name, v)
  if type(v) ~= "number" or v % 1 ~= 0 or v <= 0 then
    error(("%s: %s should be a positive integer value, but got %s=%s"):format(who, name, name, tostring(v)), 3)
  end
end

local function check_bool(who, v)
  if type(v) ~= "boolean" then
    error(("%s: replacement should be a boolean value, but got replacement=%s"):format(who, tostring(v)), 3)
  end
end

function RandomSampler.new(ds, opts)
  opts = opts or {}
  local n = ds:len()
  local replacement = opts.replacement
  if replacement == nil then replacement = false end
  check_bool("RandomSampler", replacement)
  local self = setmetatable({ data_source = ds, n = n, replacement = replacement,
    num_samples = opts.num_samples or n, generator = G.check(seed_generator(opts.generator), "RandomSampler") },
    RandomSampler)
  check_count("RandomSampler", "num_samples", self.num_samples)
  return self
end
function RandomSampler:len() return self.num_samples end
--[[ PyTorch's RandomSampler.__iter__, step by step: at the first index, without a generator a seed
     is drawn from torch's global generator (torch.empty((), dtype=torch.int64).random_()) and
     a fresh torch.Generator seeded with it; then torch.randint(n, (32,)) chunks (with
     replacement) or torch.randperm(n) per num_samples // n, and a last chunk of num_samples % n. ]]
function RandomSampler:iter()
  local n, m, repl = self.data_source:len(), self.num_samples, self.replacement
  local g, started, step = self.generator, false, 0
  local full = repl and math.floor(m / 32) or (n > 0 and math.floor(m / n) or 0)
  return chunked(function()
    if not started then
      started = true
      if g == nil then g = G.Generator():manual_seed(G.random_seed(nil)) end
      if not repl and n == 0 then error("RandomSampler: the dataset is empty (integer division or modulo by zero)", 3) end
    end
    step = step + 1
    if step <= full then return repl and G.randint(g, n, 32) or G.randperm(g, n) end
    if step > full + 1 then return nil end
    if repl then return G.randint(g, n, m % 32) end
    local perm, out = G.randperm(g, n), {}
    for i = 1, m % n do out[i] = perm[i] end
    return out
  end)
end

local WeightedRandomSampler = class(Sampler, "WeightedRandomSampler")
M.WeightedRandomSampler = WeightedRandomSampler
function WeightedRandomSampler.new(weights, num_samples, opts)
  opts = opts or {}
  check_count("WeightedRandomSampler", "num_samples", num_samples)
  local replacement = opts.replacement
  if replacement == nil then replacement = true end
  check_bool("WeightedRandomSampler", replacement)
  local w = torch.is_tensor(weights) and weights:to(torch.float64) or torch.tensor(weights, { dtype = torch.float64 })
  if w:dim() ~= 1 then
    error(("WeightedRandomSampler: weights should be a 1d sequence but given weights have shape (%s)")
      :format(table.concat(w:size(), ", ") .. (w:dim() == 1 and "," or "")), 2)
  end
  return setmetatable({ weights = w, num_samples = num_samples, replacement = replacement,
    generator = G.check(seed_generator(opts.generator), "WeightedRandomSampler") }, WeightedRandomSampler)
end
function WeightedRandomSampler:len() return self.num_samples end
-- torch.multinomial(weights, num_samples, replacement, generator=g), drawn at the first index.
function WeightedRandomSampler:iter()
  local drawn = false
  return chunked(function()
    if drawn then return nil end
    drawn = true
    return G.multinomial(self.generator, self.weights, self.num_samples, self.replacement)
  end)
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
  local g = G.check(seed_generator(a.generator), "SubsetRandomSampler")
  return setmetatable({ indices = copy, generator = g }, SubsetRandomSampler)
end
function SubsetRandomSampler:len() return #self.indices end
-- torch.randperm(len(indices), generator=g) at the first index (g nil: torch's global generator).
function SubsetRandomSampler:iter()
  local idx, drawn = self.indices, false
  return chunked(function()
    if drawn then return nil end
    drawn = true
    local out = {}
    for i, p in ipairs(G.randperm(self.generator, #idx)) do out[i] = idx[p + 1] end
    return out
  end)
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

M.DistributedSampler = require("torch.data.distributed_sampler").class(class(Sampler, "DistributedSampler"))

return M
