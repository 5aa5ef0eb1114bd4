--[[
  dataset.lua — a map-style Dataset over your own files, listed in a CSV (torch.data's
  protocol: ds:len() samples, ds:get(i) with a 0-based i returns one sample).
      local ds = require("dataset").new({csv = "sample/labels.csv", root = "sample",
        file_column = "file", label_column = "label", channels = 1, size = 16,
        mean = 0.5, std = 0.25, train = true, flip = true, rows = nil})
      ds:len(); ds:get(0) -> {x float32 (C, H, W) normalised, y int64 scalar}
      ds.classes (label names, sorted; y indexes them), ds.labels (every row's y, a Lua array)
  The CSV has a header; fields are split on commas (no quoting). `rows` (0-based indices into
  the CSV) selects a subset, e.g. a split. Transforms: ToTensor, Normalize, and for train = true
  RandomHorizontalFlip (it draws from torch.utils.data.rng(), seeded per DataLoader worker).
  The options are plain data and recorded in ds.factory, so DataLoader workers rebuild the
  dataset in their own Lua states (num_workers > 0). Edit load() for files that are not images.
]]
local torch = require "torch"
local data = torch.utils.data
local T = data.transforms
local image = require "torch.data.image"

local CSVFiles = data.Dataset:extend()

local function read_csv(path, file_col, label_col)
  local f = io.open(path, "rb")
  if not f then error("dataset: no such CSV file: " .. path, 0) end
  local header, rows, n = nil, {}, 0
  for line in f:lines() do
    n = n + 1
    line = line:gsub("\r$", "")
    if line ~= "" then
      local fields = {}
      for v in (line .. ","):gmatch("([^,]*),") do fields[#fields + 1] = v end
      if not header then
        header = {}
        for i, name in ipairs(fields) do header[name] = i end
        for _, c in ipairs({ file_col, label_col }) do
          if not header[c] then error(("dataset: %s: no column '%s' in the header"):format(path, c), 0) end
        end
      else
        local file, label = fields[header[file_col]], fields[header[label_col]]
        if not file or not label or file == "" or label == "" then
          error(("dataset: %s:%d: empty %s or %s"):format(path, n, file_col, label_col), 0)
        end
        rows[#rows + 1] = { file, label }
      end
    end
  end
  f:close()
  if #rows == 0 then error("dataset: " .. path .. " has no rows", 0) end
  return rows
end

function CSVFiles:init(opts)
  self.opts = opts
  local all = read_csv(opts.csv, opts.file_column, opts.label_column)
  local seen = {}
  self.classes = {}
  for _, r in ipairs(all) do
    if not seen[r[2]] then seen[r[2]] = true; self.classes[#self.classes + 1] = r[2] end
  end
  table.sort(self.classes)
  local index = {}
  for i, c in ipairs(self.classes) do index[c] = i - 1 end
  self.files, self.labels = {}, {}
  for _, i in ipairs(opts.rows or {}) do
    if not all[i + 1] then error(("dataset: row %d out of range (%d rows)"):format(i, #all), 0) end
  end
  for k = 1, opts.rows and #opts.rows or #all do
    local r = all[opts.rows and opts.rows[k] + 1 or k]
    self.files[k], self.labels[k] = opts.root .. "/" .. r[1], index[r[2]]
  end
  local tf = { T.ToTensor(), T.Normalize({ opts.mean }, { opts.std }) }
  if opts.train and opts.flip then table.insert(tf, 1, T.RandomHorizontalFlip()) end
  self.transform = T.Compose(tf)
  self.factory = { module = "dataset", args = { opts } }
  return self
end

function CSVFiles:len() return #self.files end

-- One file -> uint8 (H, W, C). Replace for other kinds of files (audio, text, .npy, ...).
function CSVFiles:load(path)
  local x = image.read(path, { channels = self.opts.channels })
  if x:size(0) ~= self.opts.size or x:size(1) ~= self.opts.size then
    error(("%s: image is %dx%d, config.size is %d"):format(path, x:size(0), x:size(1), self.opts.size), 0)
  end
  return x
end

function CSVFiles:get(i)
  if type(i) ~= "number" or i < 0 or i >= #self.files or i ~= math.floor(i) then
    error(("dataset.get: index %s out of range for %d samples (0-based)"):format(tostring(i), #self.files), 2)
  end
  return { self.transform(self:load(self.files[i + 1])), torch.tensor(self.labels[i + 1], { dtype = torch.int64 }) }
end

-- The dataset options from config, for `rows` of the CSV.
function CSVFiles.options(config, rows, train)
  return { csv = config.csv, root = config.root, file_column = config.file_column, label_column = config.label_column,
    channels = config.channels, size = config.size, mean = config.mean, std = config.std, flip = config.flip,
    train = train, rows = rows }
end

-- train, val datasets: a seeded split of the CSV's rows, stratified: val_fraction of each
-- class's rows (at least one when the class has two or more) are held out.
function CSVFiles.split(config)
  local all = CSVFiles.new(CSVFiles.options(config))
  torch.manual_seed(config.seed)
  local perm = torch.randperm(all:len()):tolist()
  local per_class, taken, val, train = {}, {}, {}, {}
  for _, y in ipairs(all.labels) do per_class[y] = (per_class[y] or 0) + 1 end
  for _, i in ipairs(perm) do
    local y = all.labels[i + 1]
    local want = per_class[y] > 1 and math.max(1, math.floor(per_class[y] * config.val_fraction + 0.5)) or 0
    taken[y] = taken[y] or 0
    if taken[y] < want then val[#val + 1], taken[y] = i, taken[y] + 1 else train[#train + 1] = i end
  end
  table.sort(val)
  return CSVFiles.new(CSVFiles.options(config, train, true)), CSVFiles.new(CSVFiles.options(config, val, false))
end

return CSVFiles
