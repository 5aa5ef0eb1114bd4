-- spec/data/fashion_mnist_files_spec.lua — checks torch.data.fashion_mnist_files against the real
-- Debian files (`dataset-fashion-mnist`, installed by scripts/setup.sh) and against
-- Python reading the same .gz files with its gzip module.
--
-- Run: `bash scripts/test.sh spec/data/fashion_mnist_files_spec.lua`.

local fmnist = require "torch.data.fashion_mnist_files"

-- First label and the sum of all labels, as Python sees them (plain /usr/bin/python3,
-- no torch needed): skip the 8-byte header of the labels file.
local function python_labels(path)
  local code = string.format([[
import gzip
b = gzip.open(%q).read()[8:]
print(b[0], sum(b), len(b))
]], path)
  local p = assert(io.popen("/usr/bin/python3 -c '" .. code:gsub("'", "'\\''") .. "'"))
  local out = p:read("*a")
  p:close()
  local first, total, n = out:match("(%d+) (%d+) (%d+)")
  assert(first, "python3 failed to read " .. path .. ": " .. out)
  return tonumber(first), tonumber(total), tonumber(n)
end

local function check_labels(labels)
  local counts = {}
  for i = 1, #labels.data do
    local c = labels.data:byte(i)
    assert(c <= 9, "label out of range at " .. i .. ": " .. c)
    counts[c] = (counts[c] or 0) + 1
  end
  return counts
end

describe("torch.data.fashion_mnist_files", function()
  it("knows the four Debian paths", function()
    local p = fmnist.paths()
    assert.are.equal("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", p.train_images)
    assert.are.equal("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz", p.train_labels)
    assert.are.equal("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz", p.test_images)
    assert.are.equal("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz", p.test_labels)
    assert.are.equal("/d/t10k-labels-idx1-ubyte.gz", fmnist.paths("/d/").test_labels)
  end)

  it("loads the train split: 60000 x 28 x 28 images, labels 0..9", function()
    local images, labels = fmnist.load_raw("train")
    assert.are.same({ 60000, 28, 28 }, images.dims)
    assert.are.equal("uint8", images.dtype)
    assert.are.equal(60000 * 28 * 28, #images.data)
    assert.are.same({ 60000 }, labels.dims)
    local counts = check_labels(labels)
    for c = 0, 9 do assert.are.equal(6000, counts[c]) end -- balanced classes
  end)

  it("loads the test split: 10000 x 28 x 28 images, labels 0..9", function()
    local images, labels = fmnist.load_raw("test")
    assert.are.same({ 10000, 28, 28 }, images.dims)
    assert.are.equal(10000 * 28 * 28, #images.data)
    assert.are.same({ 10000 }, labels.dims)
    check_labels(labels)
  end)

  it("agrees with Python's gzip module on the labels", function()
    for _, split in ipairs({ "train", "test" }) do
      local _, labels = fmnist.load_raw(split)
      local first, total, n = python_labels(fmnist.paths()[split .. "_labels"])
      assert.are.equal(n, #labels.data)
      assert.are.equal(first, labels.data:byte(1))
      local sum = 0
      for i = 1, #labels.data do sum = sum + labels.data:byte(i) end
      assert.are.equal(total, sum)
    end
  end)

  it("rejects an unknown split", function()
    assert.has_error(function() fmnist.load_raw("val") end,
      "bad argument #1 to 'load_raw' (\"train\" or \"test\" expected, got \"val\")")
  end)

  it("names the Debian package when the files are missing", function()
    local ok, err = pcall(fmnist.load_raw, "test", "/nonexistent/fashion-mnist")
    assert.is_false(ok)
    assert.matches("/nonexistent/fashion-mnist/t10k-images-idx3-ubyte.gz not found", err, 1, true)
    assert.matches("install the Debian package dataset-fashion-mnist", err, 1, true)
  end)
end)
