--[[
  recipes/image_data.lua — an image folder as train/val DataLoaders for ImageNet-style models.

  What:
    local image_data = require "recipes.image_data"
    local d = image_data.load(dir, {image_size =, val_fraction =, limit_train =, seed =,
                                    batch_size =})
    -- d = {train_loader =, val_loader =, classes = {names}, num_classes =, n_train =, n_val =,
    --      train_labels = int64 (N), val_labels = int64 (N)}
  dir holds one sub-folder per class (torch.data.datasets.ImageFolder: PNG/JPEG). The split is
  a seeded permutation of all images: the first val_fraction go to val, the rest to train
  (then cut to limit_train when > 0). Each image is decoded once as RGB (grayscale is repeated
  to 3 channels), its shorter side resized to image_size (bilinear, antialiased when
  shrinking), centre-cropped to image_size x image_size and kept as uint8 in memory
  (N x 3 x S x S bytes). Batches come out as float (B, 3, S, S) normalised with ImageNet's
  mean/std — what torchvision's pretrained weights expect — and int64 labels (B).
  A folder that is missing or has no images is a usage error (config.usage_error).

  Run: this file is a library; recipes/vision_transfer.lua uses it.
]]
local torch = require "torch"
local config = require "recipes.config"
local data = torch.utils.data
local collate = require "torch.data.collate"

local M = {}

M.MEAN = { 0.485, 0.456, 0.406 }   -- ImageNet statistics (torchvision's pretrained models)
M.STD = { 0.229, 0.224, 0.225 }

local function is_dir(path)
  local r = os.execute("test -d '" .. path:gsub("'", "'\\''") .. "'")
  return r == 0 or r == true
end

-- uint8 (H, W, 3) -> uint8 (3, S, S): shorter side to S, then the centre S x S.
function M.resize_crop(img, s)
  local h, w = img:size(0), img:size(1)
  local x = img:permute(2, 0, 1)
  if h == s and w == s then return x:contiguous() end
  local scale = s / math.min(h, w)
  local nh, nw = math.max(s, math.floor(h * scale + 0.5)), math.max(s, math.floor(w * scale + 0.5))
  local f = x:unsqueeze(0):float()
  if nh < h or nw < w then
    f = torch._upsample_bilinear2d_aa(f, { nh, nw }, false)
  else
    f = torch.upsample_bilinear2d(f, { nh, nw }, false)
  end
  local top, left = math.floor((nh - s) / 2), math.floor((nw - s) / 2)
  f = f:squeeze(0):narrow(1, top, s):narrow(2, left, s)
  return f:round():clamp(0, 255):to(torch.uint8)
end

-- Decodes the images at 0-based dataset indices idx -> uint8 (N, 3, S, S), int64 labels (N).
local function preload(ds, idx, s)
  local list = idx:tolist()
  local x = torch.empty({ #list, 3, s, s }, { dtype = torch.uint8 })
  local labels = {}
  for i, j in ipairs(list) do
    local ok, sample = pcall(ds.get, ds, j)
    if not ok then config.usage_error("%s", tostring(sample):gsub("^.-ImageFolder: ", "")) end
    x:select(0, i - 1):copy_(M.resize_crop(sample[1], s))
    labels[i] = sample[2]
  end
  return x, torch.tensor(labels, { dtype = torch.int64 })
end

-- Lua collate: stack, then uint8 -> float in [0, 1] -> (x - mean) / std per channel.
local function normalizing_collate()
  local mean = torch.tensor(M.MEAN, { dtype = torch.float32 }):view(1, 3, 1, 1)
  local std = torch.tensor(M.STD, { dtype = torch.float32 }):view(1, 3, 1, 1)
  return function(samples)
    local b = collate.default_collate(samples)
    b[1] = b[1]:float():div(255):sub(mean):div(std)
    return b
  end
end

function M.load(dir, opts)
  if not is_dir(dir) then config.usage_error("data folder not found: %s", dir) end
  local ok, ds = pcall(data.datasets.ImageFolder, dir, { channels = 3 })
  if not ok then config.usage_error("%s", tostring(ds):gsub("^.-ImageFolder: ", "")) end
  local n, k = ds:len(), #ds.classes
  if k < 2 then config.usage_error("%s: need at least 2 class sub-folders, found %d", dir, k) end
  local n_val = math.floor(n * opts.val_fraction)
  if n_val < 1 or n - n_val < 1 then
    config.usage_error("%s: %d images cannot be split into train and val (val fraction %g)", dir, n, opts.val_fraction)
  end
  torch.manual_seed(opts.seed)
  local perm = torch.randperm(n)
  local val_idx, train_idx = perm:narrow(0, 0, n_val), perm:narrow(0, n_val, n - n_val)
  if opts.limit_train > 0 and opts.limit_train < train_idx:size(0) then train_idx = train_idx:narrow(0, 0, opts.limit_train) end
  local xtr, ytr = preload(ds, train_idx, opts.image_size)
  local xva, yva = preload(ds, val_idx, opts.image_size)
  local function loader(x, y, shuffle)
    return data.DataLoader(data.TensorDataset(x, y), { batch_size = opts.batch_size, shuffle = shuffle,
      generator = opts.seed, collate_fn = normalizing_collate() })
  end
  return { train_loader = loader(xtr, ytr, true), val_loader = loader(xva, yva, false), classes = ds.classes,
    num_classes = k, n_train = xtr:size(0), n_val = xva:size(0), train_labels = ytr, val_labels = yva }
end

return M
