--[[
  torch.data — data pipelines, exposed as torch.utils.data (PyTorch's torch.utils.data).

  What: the Dataset protocol (`ds:len()`, `ds:get(i)` with 0-based i) and its combinators
  (torch.data.dataset), samplers (torch.data.sampler), default_collate (torch.data.collate),
  DataLoader with optional worker threads (torch.data.dataloader), a seeded Generator, and,
  loaded on first use, `datasets` (FashionMNIST, CSV, sklearn tables, fortunes, ImageFolder),
  `transforms` and `tokenizer`.

  Use:
    local data = require("torch").utils.data
    local loader = data.DataLoader(data.TensorDataset(x, y), {batch_size = 32, shuffle = true, generator = 0})
    for batch in loader:iter() do local xb, yb = batch[1], batch[2] end
    for xb, yb in loader:unpacked() do ... end            -- the same, without indexing the batch
    print(#loader, #loader.dataset)                      -- batches, samples (Python's len())
]]
local dataset = require "torch.data.dataset"
local sampler = require "torch.data.sampler"
local collate = require "torch.data.collate"

local M = {
  Dataset = dataset.Dataset, IterableDataset = dataset.IterableDataset,
  TensorDataset = dataset.TensorDataset, ConcatDataset = dataset.ConcatDataset,
  Subset = dataset.Subset, random_split = dataset.random_split,
  StackDataset = dataset.StackDataset, ChainDataset = dataset.ChainDataset,
  Sampler = sampler.Sampler, SubsetRandomSampler = sampler.SubsetRandomSampler,
  SequentialSampler = sampler.SequentialSampler, RandomSampler = sampler.RandomSampler,
  WeightedRandomSampler = sampler.WeightedRandomSampler, BatchSampler = sampler.BatchSampler,
  DistributedSampler = sampler.DistributedSampler,
  default_collate = collate.default_collate, default_convert = collate.default_convert,
  Generator = require "torch.data._rng",
  DataLoader = require "torch.data.dataloader",
}

-- Set in worker states by torch.data._worker; nil in the main state (as PyTorch).
local worker_info
function M.get_worker_info() return worker_info end
function M._set_worker_info(info) worker_info = info end

-- The generator random transforms draw from: per worker state, seeded base_seed + worker id
-- (libtorch's own default generator is shared by all threads of the process).
local rng = M.Generator(0)
function M.rng() return rng end
function M.manual_seed(seed) rng = M.Generator(seed); return rng end

local LAZY = { datasets = "torch.data.datasets", transforms = "torch.data.transforms",
  tokenizer = "torch.data.tokenizer", image = "torch.data.image" }

return setmetatable(M, { __index = function(t, k)
  local name = LAZY[k]
  if name then
    local m = require(name)
    rawset(t, k, m)
    return m
  end
end })
