--[[
  torch.data.distributed_sampler — DistributedSampler (torch.utils.data.DistributedSampler):
  the share of a dataset one rank of a data-parallel job iterates, as PyTorch 2.11's.

    DistributedSampler(ds, {num_replicas =, rank =, shuffle = true, seed = 0, drop_last = false})
    s:set_epoch(e)    -- call at the start of each epoch, before iterating, so shuffles differ

  num_replicas and rank default to the default process group's world size and rank
  (torch.distributed.init_process_group); without one, leaving them out is PyTorch's error
  "Default process group has not been initialized, please make sure to call init_process_group.".
  Each rank sees num_samples = ceil(n / num_replicas) indices (drop_last: floor), the list padded
  by repeating its head (or cut) to num_samples * num_replicas, then every num_replicas-th from
  rank. shuffle: torch.randperm(n, generator=torch.Generator() seeded with seed + epoch), so the
  order is PyTorch's and every rank agrees on it without communicating.

  Use: sampler.lua builds the class: require("torch.data.distributed_sampler").class(c).
]]
local torch = require "torch"
local G = require "torch._generator"

local M = {}

local NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."

local function int_opt(name, v)
  if type(v) ~= "number" or v % 1 ~= 0 then
    error(("DistributedSampler: %s must be an integer, got %s"):format(name, tostring(v)), 4)
  end
  return v
end

-- The default process group's (world size, rank), or PyTorch's error when there is none.
local function group_default(which)
  local dist = torch.distributed   -- the subsystem, loaded on first access (torch._lazy_modules)
  if not dist.is_initialized() then error("DistributedSampler: " .. NO_GROUP, 4) end
  if which == "num_replicas" then return dist.get_world_size() end
  return dist.get_rank()
end

function M.class(DistributedSampler)
  function DistributedSampler.new(ds, opts)
    opts = opts or {}
    local replicas = opts.num_replicas or opts.world_size
    replicas = int_opt("num_replicas", replicas == nil and group_default("num_replicas") or replicas)
    local rank = int_opt("rank", opts.rank == nil and group_default("rank") or opts.rank)
    if rank < 0 or rank >= replicas then
      error(("DistributedSampler: Invalid rank %d, rank should be in the interval [0, %d]"):format(rank, replicas - 1), 2)
    end
    local n = ds:len()
    local drop = opts.drop_last or false
    local per = (drop and n % replicas ~= 0) and math.ceil((n - replicas) / replicas) or math.ceil(n / replicas)
    return setmetatable({ dataset = ds, num_replicas = replicas, rank = rank, shuffle = opts.shuffle ~= false,
      seed = opts.seed or 0, epoch = 0, drop_last = drop, num_samples = per, total_size = per * replicas },
      DistributedSampler)
  end

  function DistributedSampler:len() return self.num_samples end
  function DistributedSampler:set_epoch(e) self.epoch = e end

  function DistributedSampler:iter()
    local n = self.dataset:len()
    local idx = self.shuffle and G.randperm(G.Generator():manual_seed(self.seed + self.epoch), n) or {}
    if not self.shuffle then
      for i = 1, n do idx[i] = i - 1 end
    end
    local total = self.total_size
    if not self.drop_last then   -- indices += (indices * ceil(pad / n))[:pad]
      for k = n + 1, total do idx[k] = idx[(k - n - 1) % n + 1] end
    end
    local out = {}
    for k = self.rank + 1, total, self.num_replicas do out[#out + 1] = idx[k] end
    local i = 0
    return function() i = i + 1; return out[i] end
  end

  return DistributedSampler
end

return M
