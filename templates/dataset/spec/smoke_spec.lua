--[[
  spec/smoke_spec.lua — the dataset follows torch.data's protocol, loads the same with and
  without workers, check.lua reports on the sample data, and train.lua runs one epoch.
  Run from the project folder: ltorch /usr/bin/busted spec    (~10 s)
]]
local torch = require "torch"
local Dataset = require "dataset"
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("dataset.lua", function()
  local config = dofile("config.lua")

  it("has len() and a 0-based get(i) -> {x (C, H, W) float, y int64}", function()
    local train, val = Dataset.split(config)
    assert.is_true(train:len() > 0 and val:len() > 0)
    local x, y = unpack(val:get(0))
    assert.are.same({ config.channels, config.size, config.size }, { x:size(0), x:size(1), x:size(2) })
    assert.are.equal(torch.float32, x.dtype)
    assert.are.equal(torch.int64, y.dtype)
    assert.has_error(function() val:get(val:len()) end)
  end)

  it("gives the same batches with 0 and 2 workers", function()
    local _, val = Dataset.split(config)
    local function first(workers)
      return torch.utils.data.DataLoader(val, { batch_size = 4, num_workers = workers }):iter()()
    end
    local a, b = first(0), first(2)
    assert.is_true(torch.equal(a[1], b[1]) and torch.equal(a[2], b[2]))
  end)
end)

describe("check.lua and train.lua", function()
  it("check.lua reports on the sample data", function()
    local out, code = sh(bin .. " check.lua")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("label counts", 1, true), out)
    assert.truthy(out:match("x%s+%[%d+, 1, 16, 16%]%s+torch.float32"), out)
    assert.truthy(out:match("samples/s"), out)
    assert.truthy(out:find("check ok", 1, true), out)
  end)

  it("train.lua runs one epoch and checkpoints", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --out runs/smoke")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform guess ln%(3%)"), out)
    assert.truthy(io.open("runs/smoke/checkpoints/checkpoint-00000001.pt", "rb"))
  end)

  it("rejects a bad flag and a missing CSV with exit 2", function()
    local out, code = sh(bin .. " check.lua --num-workers many")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
    out, code = sh(bin .. " check.lua --csv missing.csv")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("no such CSV file: missing.csv", 1, true), out)
  end)
end)
