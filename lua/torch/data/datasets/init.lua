--[[
  torch.data.datasets — built-in datasets over real files installed by scripts/setup.sh and
  scripts/fetch_datasets.sh. Each is loaded on first use:
    FashionMNIST(split, opts)        torch.data.datasets.fashion_mnist
    CSVDataset(path, opts)           torch.data.datasets.csv   (CSV/TSV tables)
    SklearnDataset(name, opts)       torch.data.datasets.sklearn (iris, wine, breast_cancer, digits)
    Fortunes(opts)                   torch.data.datasets.fortunes (language identification)
    ImageFolder(root, opts)          torch.data.datasets.image_folder
]]
local MODULES = { FashionMNIST = "torch.data.datasets.fashion_mnist", CSVDataset = "torch.data.datasets.csv",
  SklearnDataset = "torch.data.datasets.sklearn", Fortunes = "torch.data.datasets.fortunes",
  ImageFolder = "torch.data.datasets.image_folder" }

return setmetatable({}, { __index = function(t, k)
  local name = MODULES[k]
  if name then
    local m = require(name)
    rawset(t, k, m)
    return m
  end
end })
