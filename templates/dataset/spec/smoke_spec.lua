--[[
  spec/smoke_spec.lua — the dataset follows torch.data's protocol, loads the same with and
  without workers, check.lua reports on the sample data, and train.lua runs one epoch; mixed
  precision on the CPU: --amp (bfloat16) trains, --amp --amp-dtype float16 trains with a
  GradScaler whose state is in the checkpoint; bad device / precision flags exit 2.
  Run from the project folder: ltorch /usr/bin/busted spec    (~15 s)
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

  it("train.lua trains with --amp in bfloat16 on the CPU", function()
    local out, code = sh(bin .. " train.lua --device cpu --epochs 2 --num-workers 0 --amp --out runs/amp")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local l1, l2 = out:match("epoch 1  train loss ([%d%.]+)"), out:match("epoch 2  train loss ([%d%.]+)")
    assert.is_true(tonumber(l1) ~= nil and tonumber(l2) ~= nil and tonumber(l2) < tonumber(l1), out)
    assert.truthy(io.open("runs/amp/checkpoints/checkpoint-00000002.pt", "rb"))
  end)

  it("train.lua trains with --amp --amp-dtype float16 and a GradScaler, its state in the checkpoint", function()
    local out, code = sh(bin .. " train.lua --device cpu --epochs 1 --num-workers 0 --amp --amp-dtype float16 --out runs/fp16")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("loss scale %d+, skipped steps %d+"), out)
    local st = torch.load("runs/fp16/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(5, st.scaler._growth_tracker)   -- 36 training images, batch 8: one update() per step
  end)

  it("train.lua rejects a bad device or precision with exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
    }
    if not torch.cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local out, code = sh(bin .. " train.lua " .. case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train.lua: " .. case[2], 1, true) == 1, out)
    end
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
