--[[
  torch.data.datasets.fashion_mnist — FashionMNIST as a map-style Dataset.

  FashionMNIST(split = "train"|"test", {root = dir, transform = t, target_transform = t})
    ds:len()      60000 / 10000
    ds:get(i)     {image, label}: image uint8 (28, 28) (or transform(image)), label 0..9 (a number)
  Files come from Debian's dataset-fashion-mnist (torch.data.fashion_mnist_files reads the IDX);
  a missing file is an error naming the package and scripts/setup.sh. Built-in transforms are
  recorded in `ds.factory`, so DataLoader workers can rebuild the dataset by themselves.

  Use:
    local T = torch.utils.data.transforms
    local ds = torch.utils.data.datasets.FashionMNIST("test", {transform = T.ToTensor()})
    local loader = torch.utils.data.DataLoader(ds, {batch_size = 64, num_workers = 2})
]]
local fmnist = require "torch.data.fashion_mnist_files"
local transforms = require "torch.data.transforms"
local dataset = require "torch.data.dataset"

local FashionMNIST = setmetatable({}, { __index = dataset.Dataset })
FashionMNIST.__index = FashionMNIST
FashionMNIST.__name = "FashionMNIST"
FashionMNIST.classes = fmnist.classes

function FashionMNIST.new(split, opts)
  split = split or "train"
  opts = opts or {}
  local images, labels = fmnist.load(split, opts.root)
  local tf = type(opts.transform) == "table" and opts.transform[1] and transforms.from_spec(opts.transform) or opts.transform
  local ttf = type(opts.target_transform) == "table" and opts.target_transform[1]
    and transforms.from_spec(opts.target_transform) or opts.target_transform
  local self = dataset.instance(FashionMNIST, { images = images, labels = labels:tolist(), split = split,
    transform = tf, target_transform = ttf, n = images:size(0) })
  local ok, tspec = pcall(transforms.to_spec, tf)
  local ok2, ttspec = pcall(transforms.to_spec, ttf)
  if ok and ok2 then
    self.factory = { module = "torch.data.datasets.fashion_mnist",
      args = { split, { root = opts.root, transform = tspec, target_transform = ttspec } } }
  end
  return self
end

function FashionMNIST:len() return self.n end

function FashionMNIST:get(i)
  dataset.check_index("FashionMNIST", i, self.n)
  local x, y = self.images:select(0, i), self.labels[i + 1]
  if self.transform then x = self.transform(x) end
  if self.target_transform then y = self.target_transform(y) end
  return { x, y }
end

return setmetatable(FashionMNIST, { __index = dataset.Dataset,
  __call = function(_, ...) return FashionMNIST.new(...) end })
