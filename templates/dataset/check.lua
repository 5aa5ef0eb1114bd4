--[[
  check.lua — look at the data before training on it:
      ltorch check.lua                      # the sample data shipped with the project
      ltorch check.lua --csv my/labels.csv --root my --num-workers 4
  Prints the CSV's size and classes, the train / val split, label counts per split, one
  batch's shapes, dtypes and value range, the training images' pixel mean / std (what
  config.mean / config.std should be), and loader throughput with 0 and num_workers workers
  (a full pass: it also proves every file decodes). Exit 2 on a bad flag or unreadable data.
]]
local torch = require "torch"
local flags = require "flags"
local Dataset = require "dataset"
local data = torch.utils.data
local ffi = require "ffi"

-- Wall-clock seconds (CLOCK_MONOTONIC; whole seconds if the FFI declaration is unavailable).
pcall(ffi.cdef, "int clock_gettime(int clk_id, void *tp);")
local ts = ffi.new("long[2]")
local function wall()
  if pcall(ffi.C.clock_gettime, 1, ts) then return tonumber(ts[0]) + tonumber(ts[1]) * 1e-9 end
  return os.time()
end

local function counts(ds)
  local c = {}
  for _, y in ipairs(ds.labels) do c[y] = (c[y] or 0) + 1 end
  local out = {}
  for i, name in ipairs(ds.classes) do out[i] = ("%s %d"):format(name, c[i - 1] or 0) end
  return table.concat(out, ", ")
end

local function describe(name, t)
  return ("%-2s %-22s %-14s min %8.4f  max %8.4f  mean %8.4f"):format(name, tostring(t:size()):match("%[.*%]"),
    tostring(t.dtype), t:min():item(), t:max():item(), t:double():mean():item())
end

-- One full pass over the loader; samples per second.
local function throughput(ds, config, workers)
  local loader = data.DataLoader(ds, { batch_size = config.batch_size, shuffle = true, generator = config.seed,
    num_workers = workers })
  local t0, n = wall(), 0
  for batch in loader:iter() do n = n + batch[2]:size(0) end
  return n, wall() - t0
end

local function main()
  io.stdout:setvbuf("line")
  local config = flags.parse(arg or {}, "check.lua")
  local ok, train, val = pcall(Dataset.split, config)
  if not ok then flags.fail("check.lua", tostring(train)) end
  print(("%s: %d rows, %d classes: %s"):format(config.csv, train:len() + val:len(), #train.classes,
    table.concat(train.classes, ", ")))
  print(("split (stratified, seed %d, val_fraction %.2f): %d train / %d val"):format(config.seed, config.val_fraction,
    train:len(), val:len()))
  print("label counts  train: " .. counts(train))
  print("              val:   " .. counts(val))
  local loader = data.DataLoader(train, { batch_size = config.batch_size, shuffle = true, generator = config.seed })
  local batch
  ok, batch = pcall(function() return loader:iter()() end)   -- the first batch
  if not ok then flags.fail("check.lua", tostring(batch)) end
  print(("one batch (batch_size %d):"):format(config.batch_size))
  print("  " .. describe("x", batch[1]))
  print("  " .. describe("y", batch[2]))
  local raw = Dataset.new(Dataset.options(config, nil, false))
  local xs = {}
  for i = 0, raw:len() - 1 do xs[#xs + 1] = raw:load(raw.files[i + 1]):float():div(255) end
  local all = torch.stack(xs)
  print(("pixels / 255 over all %d images: mean %.4f  std %.4f   (config: mean %.4f  std %.4f)"):format(
    raw:len(), all:mean():item(), all:std():item(), config.mean, config.std))
  for _, w in ipairs(config.num_workers > 0 and { 0, config.num_workers } or { 0 }) do
    local n, dt
    ok, n, dt = pcall(throughput, train, config, w)
    if not ok then flags.fail("check.lua", tostring(n)) end
    print(("loader, %d worker%s: %d samples in %.3f s = %.0f samples/s%s"):format(w, w == 1 and "" or "s",
      n, dt, n / math.max(dt, 1e-6), w > 0 and " (with the workers' start-up)" or ""))
  end
  print("check ok")
end

main()
