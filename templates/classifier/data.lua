--[[
  data.lua — Fashion-MNIST (Debian's dataset-fashion-mnist) as DataLoaders.
  loaders(config) -> train, val, test loaders of {x (B, 784) float, y (B) int64}, and the
  normalisation statistics {mean, std} (computed on the training split only).
  Replace this file to train on your own data: keep the same return values.
]]
local torch = require "torch"
local fmnist = require "torch.data.fashion_mnist_files"
local data = torch.utils.data

local M = {}
M.classes = fmnist.classes

function M.loaders(config, stats)
  local images, labels = fmnist.load("train")
  local test_images, test_labels = fmnist.load("test")
  torch.manual_seed(config.seed)
  local perm = torch.randperm(images:size(0))
  local n_train = images:size(0) - config.val_size
  local tr = perm:narrow(0, 0, n_train)
  if config.limit_train > 0 and config.limit_train < n_train then tr = tr:narrow(0, 0, config.limit_train) end
  local va = perm:narrow(0, n_train, config.val_size)
  local x = images:float():div(255):view(images:size(0), 784)
  local xtr = x:index_select(0, tr)
  stats = stats or { mean = xtr:mean():item(), std = xtr:std():item() }
  local function norm(t) return t:sub(stats.mean):div(stats.std) end
  local function loader(xs, ys, shuffle)
    return data.DataLoader(data.TensorDataset(norm(xs), ys),
      { batch_size = shuffle and config.batch_size or 1000, shuffle = shuffle, generator = config.seed })
  end
  return loader(xtr, labels:index_select(0, tr), true),
    loader(x:index_select(0, va), labels:index_select(0, va), false),
    loader(test_images:float():div(255):view(-1, 784), test_labels, false),
    stats
end

return M
