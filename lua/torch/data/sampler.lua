--[[
  torch.data.sampler — which sample indices a DataLoader visits, and in what batches.

  A sampler has `s:len()` and `s:iter()` (a Lua iterator of 0-based indices); a batch sampler's
  iterator yields Lua arrays of indices. Random samplers own a seeded generator
  (torch.data._rng), so shuffling never touches torch's global RNG; a sampler without a seed
  draws a fresh one per epoch from its generator, so epochs differ but a seeded run repeats.

  What:
    SequentialSampler(ds)                                  0, 1, ..., n-1
    RandomSampler(ds, {replacement=false, num_samples=n, generator=seed|Generator})
    WeightedRandomSampler(weights, num_samples, {replacement=true, generator=})
    BatchSampler(sampler, batch_size, drop_last)           arrays of batch_size indices
    DistributedSampler(ds, {num_replicas=, rank=, shuffle=true, seed=0, drop_last=false})
        each rank sees ceil(n / replicas) indices (padded by wrapping around), interleaved
        rank, rank + replicas, ...; shuffled with seed + epoch: call s:set_epoch(e) per epoch.

  Use:
    local s = data.BatchSampler(data.RandomSampler(ds, {generator = 1}), 32, false)
    for batch in s:iter() do ... end       -- batch = {17, 3, ...}
]]
local dataset = require "torch.data.dataset"
local Generator = require "torch.data._rng"

local M = {}

local function class()
  local c = {}
  c.__index = c
  return setmetatable(c, { __call = function(cls, ...) return cls.new(...) end })
end

local function array_iter(a)
  local i = 0
  return function() i = i + 1; return a[i] end
end

local SequentialSampler = class()
M.SequentialSampler = SequentialSampler
function SequentialSampler.new(ds) return setmetatable({ n = ds:len() }, SequentialSampler) end
function SequentialSampler:len() return self.n end
function SequentialSampler:iter()
  local i, n = -1, self.n
  return function() i = i + 1; if i < n then return i end end
end

local RandomSampler = class()
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

local WeightedRandomSampler = class()
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

local BatchSampler = class()
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

local DistributedSampler = class()
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
