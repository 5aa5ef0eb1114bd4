--[[
  torch.data.datasets.sklearn — scikit-learn's bundled tables (iris, wine, breast_cancer,
  digits) read from Debian's python3-sklearn files, unpacked (not installed) into a cache by
  scripts/fetch_datasets.sh.

  SklearnDataset(name, {root = dir}) -> a CSVDataset-like Dataset
    features float32 (N, F), targets int64 (N), get(i) -> {features (F), label}
    iris 150x4 (3 classes), wine 178x13 (3), breast_cancer 569x30 (2), digits 1797x64 (10)
  File format: first line "n_samples,n_features,classnames...", then rows with the label last.
  Files: <root>/usr/lib/python3/dist-packages/sklearn/datasets/data/<file>; root defaults to
  $LTORCH_DATA_CACHE/sklearn or ~/.cache/ltorch/datasets/sklearn. Missing → an error naming
  the package python3-sklearn and `bash scripts/fetch_datasets.sh`.

  Use:  local iris = data.datasets.SklearnDataset("iris")
]]
local CSV = require "torch.data.datasets.csv"

local FILES = { iris = "iris.csv", wine = "wine_data.csv", breast_cancer = "breast_cancer.csv",
  digits = "digits.csv.gz" }

local M = {}
M.package = "python3-sklearn"

function M.cache_dir()
  local base = os.getenv("LTORCH_DATA_CACHE")
  if not base or base == "" then base = (os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/datasets" end
  return base .. "/sklearn"
end

function M.path(name, root)
  local file = FILES[name]
  if not file then
    local names = {}
    for k in pairs(FILES) do names[#names + 1] = k end
    table.sort(names)
    error(("SklearnDataset: unknown dataset '%s' (one of %s)"):format(tostring(name), table.concat(names, ", ")), 3)
  end
  return (root or M.cache_dir()) .. "/usr/lib/python3/dist-packages/sklearn/datasets/data/" .. file
end

function M.new(name, opts)
  opts = opts or {}
  local path = M.path(name, opts.root)
  local f = io.open(path, "rb")
  if not f then
    error(("SklearnDataset: %s not found; it comes from the Debian package %s, unpacked by "
      .. "`bash scripts/fetch_datasets.sh` (apt-get download %s && dpkg-deb -x ...)"):format(path, M.package, M.package), 2)
  end
  f:close()
  if path:match("%.gz$") then
    -- digits.csv.gz: no header; 64 pixel columns then the label
    local tmp = os.tmpname()
    os.execute(("gzip -dc '%s' > '%s'"):format(path, tmp))
    local ds = CSV.new(tmp, { header = false })
    os.remove(tmp)
    ds.path = path
    ds.factory = { module = "torch.data.datasets.sklearn", args = { name, opts } }
    return ds
  end
  local ds = CSV.new(path, { header = false, skip_lines = 1 })
  local hf = io.open(path, "rb")
  local head = hf:read("*l")
  hf:close()
  local parts = CSV.split_line(head:gsub("\r$", ""), ",", path)
  ds.classes = { unpack(parts, 3) }
  ds.factory = { module = "torch.data.datasets.sklearn", args = { name, opts } }
  return ds
end

return setmetatable(M, { __call = function(_, ...) return M.new(...) end })
