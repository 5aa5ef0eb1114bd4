-- torch.data.fashion_mnist_files — locate and read the Fashion-MNIST files of the Debian package
-- (the raw IDX arrays, or tensors). The map-style Dataset over them, FashionMNIST, is
-- torch.data.datasets.fashion_mnist.
--
-- Why: Fashion-MNIST is the main job's default dataset; Debian's `dataset-fashion-mnist`
-- installs it (scripts/setup.sh does) as gzipped IDX files under
-- /usr/share/datasets/fashion-mnist/.
--
-- What: `paths([dir])` gives the four file paths; `load_raw(split)` reads one split with
-- torch.data.idx and checks its shapes:
--   images: dims {N, 28, 28}, dtype "uint8", pixels 0..255, row-major
--   labels: dims {N},         dtype "uint8", class index 0..9 (see `classes`)
--   N = 60000 for "train", 10000 for "test".
-- `load(split)` returns the same as tensors: uint8 images (N, 28, 28), int64 labels (N).
--
-- Use:
--   local fmnist = require "torch.data.fashion_mnist_files"
--   local images, labels = fmnist.load_raw("test")
--   print(images.dims[1], labels.data:byte(1))          --> 10000  9
-- The directory can be overridden with LTORCH_FASHION_MNIST_DIR.

local idx = require "torch.data.idx"

local M = {}

M.package = "dataset-fashion-mnist"
M.dir = "/usr/share/datasets/fashion-mnist"

-- Class index (0-based, as stored in the label files) + 1 -> name.
M.classes = {
  "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
}

local SPLITS = {
  train = { prefix = "train", count = 60000 },
  test = { prefix = "t10k", count = 10000 },
}

local function default_dir()
  local env = os.getenv("LTORCH_FASHION_MNIST_DIR")
  if env and env ~= "" then return env end
  return M.dir
end

-- paths([dir]) -> { train_images, train_labels, test_images, test_labels }
function M.paths(dir)
  dir = (dir or default_dir()):gsub("/+$", "")
  local p = {}
  for name, s in pairs(SPLITS) do
    p[name .. "_images"] = string.format("%s/%s-images-idx3-ubyte.gz", dir, s.prefix)
    p[name .. "_labels"] = string.format("%s/%s-labels-idx1-ubyte.gz", dir, s.prefix)
  end
  return p
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function check(path, t, want_dims)
  local got = table.concat(t.dims, ", ")
  if t.dtype ~= "uint8" or got ~= table.concat(want_dims, ", ") then
    error(string.format("fashion_mnist: %s: expected uint8 {%s}, got %s {%s}",
      path, table.concat(want_dims, ", "), t.dtype, got), 3)
  end
end

-- load_raw(split [, dir]) -> images, labels (idx.read tables, shapes checked)
function M.load_raw(split, dir)
  local s = SPLITS[split]
  if not s then
    error(string.format("bad argument #1 to 'load_raw' (\"train\" or \"test\" expected, got %s)",
      type(split) == "string" and ("\"" .. split .. "\"") or type(split)), 2)
  end
  local p = M.paths(dir)
  local images_path, labels_path = p[split .. "_images"], p[split .. "_labels"]
  for _, path in ipairs({ images_path, labels_path }) do
    if not exists(path) then
      error(string.format("fashion_mnist: %s not found; install the Debian package %s "
        .. "(apt-get install %s, or run scripts/setup.sh)", path, M.package, M.package), 2)
    end
  end
  local images, labels = idx.read(images_path), idx.read(labels_path)
  check(images_path, images, { s.count, 28, 28 })
  check(labels_path, labels, { s.count })
  return images, labels
end

-- load(split [, dir]) -> images uint8 tensor (N, 28, 28), labels int64 tensor (N)
function M.load(split, dir)
  local torch = require "torch"
  local images, labels = M.load_raw(split, dir)
  local x = torch.from_buffer(images.data, { dtype = torch.uint8, shape = images.dims })
  local y = torch.from_buffer(labels.data, { dtype = torch.uint8, shape = labels.dims }):long()
  return x, y
end

return M
