--[[
  spec/smoke_spec.lua — train.lua alone (a world of one) and under the launcher with 2 ranks on
  127.0.0.1 (any free port) on tiny data; both runs must agree (same global batches), and
  only rank 0 writes the checkpoint. Mixed precision on the CPU: --amp (bfloat16) trains alone;
  --amp --amp-dtype float16 trains on 2 ranks with a GradScaler whose state is in the
  checkpoint; bad device / precision flags exit 2.
  Run from the project folder: ltorch /usr/bin/busted spec    (~25 s)
]]
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"
local TINY = " --epochs 1 --limit-train 1024 --limit-test 500"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("this project", function()
  local alone
  it("trains alone as a world of one", function()
    local out, code = sh(bin .. " train.lua --out runs/smoke1" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform guess"), out)
    alone = out:match("epoch 1  train loss ([%d%.]+)")
    assert.truthy(alone, out)
    assert.truthy(io.open("runs/smoke1/checkpoints/checkpoint-00000001.pt", "rb"))
  end)

  it("trains with 2 ranks under the launcher, like one process", function()
    local out, code = sh(("MASTER_ADDR=127.0.0.1 timeout 120 %s run --nproc-per-node 2 --master-port 0 "
      .. "train.lua --out runs/smoke2%s"):format(bin, TINY))
    assert.are.equal(0, code, out)
    assert.truthy(out:find("[rank 0] result: world size 2", 1, true), out)
    assert.falsy(out:find("[rank 1] epoch", 1, true), out)          -- only rank 0 logs
    local two = out:match("epoch 1  train loss ([%d%.]+)")
    assert.is_true(math.abs(tonumber(two) - tonumber(alone)) < 2e-3, out)
    assert.truthy(io.open("runs/smoke2/metrics.jsonl", "rb"))
  end)

  it("trains alone with --amp in bfloat16 on the CPU", function()
    local out, code = sh(bin .. " train.lua --device cpu --amp --out runs/amp" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local init, loss = out:match("loss at init ([%d%.]+)"), out:match("epoch 1  train loss ([%d%.]+)")
    assert.is_true(tonumber(init) ~= nil and tonumber(loss) ~= nil and tonumber(loss) < tonumber(init), out)
    assert.truthy(io.open("runs/amp/checkpoints/checkpoint-00000001.pt", "rb"))
  end)

  it("trains on 2 ranks with --amp --amp-dtype float16 and a GradScaler, its state in the checkpoint", function()
    local out, code = sh(("MASTER_ADDR=127.0.0.1 timeout 120 %s run --nproc-per-node 2 --master-port 0 "
      .. "train.lua --device cpu --amp --amp-dtype float16 --out runs/fp16%s"):format(bin, TINY))
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("loss scale %d+, skipped steps %d+"), out)
    local st = require("torch").load("runs/fp16/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(8, st.scaler._growth_tracker)   -- 1024 images, global batch 128: one update() per step
  end)

  it("rejects a bad device or precision with exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
    }
    if not require("torch").cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local out, code = sh(bin .. " train.lua " .. case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train.lua: " .. case[2], 1, true) == 1, out)
    end
  end)

  it("rejects a bad flag with exit 2", function()
    local out, code = sh(bin .. " train.lua --batch-size big")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
