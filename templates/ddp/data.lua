--[[
  data.lua — Fashion-MNIST (Debian's dataset-fashion-mnist) as tensor datasets.
  datasets(config) -> train, test: TensorDatasets of {x (784) float normalised, y int64}
  Every rank loads the same data; train.lua's DistributedSampler gives each rank its shard.
  The normalisation statistics come from the training images only.
  Replace this file to train on your own data: keep the same return values.
]]
local torch = require "torch"
local fmnist = require "torch.data.fashion_mnist_files"
local data = torch.utils.data

local M = {}

local function load(split, limit)
  local images, labels = fmnist.load(split)
  if limit > 0 and limit < images:size(0) then images, labels = images:narrow(0, 0, limit), labels:narrow(0, 0, limit) end
  return images:reshape(images:size(0), 784):float():div(255), labels
end

function M.datasets(config)
  local xtr, ytr = load("train", config.limit_train)
  local xte, yte = load("test", config.limit_test)
  local mean, std = xtr:mean():item(), xtr:std():item()
  return data.TensorDataset((xtr - mean) / std, ytr), data.TensorDataset((xte - mean) / std, yte)
end

return M
