--[[
  spec/smoke_spec.lua — train.lua alone (a world of one) and under the launcher with 2 ranks on
  127.0.0.1 (any free port) on tiny data; both runs must agree (same global batches), and
  only rank 0 writes the checkpoint. Run from the project folder: ltorch /usr/bin/busted spec
  (~15 s)
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

  it("rejects a bad flag with exit 2", function()
    local out, code = sh(bin .. " train.lua --batch-size big")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
