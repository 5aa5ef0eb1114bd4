--[[
  spec/smoke_spec.lua — the project trains for one short epoch and evaluates its checkpoint;
  mixed precision on the CPU: --amp (bfloat16) trains, --amp --amp-dtype float16 trains with a
  GradScaler whose state is in the checkpoint; bad device / precision flags exit 2.
  Run from the project folder: ltorch /usr/bin/busted spec    (~20 s)
]]
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"
local SMALL = " --device cpu --limit-train 500 --val-size 500"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("this project", function()
  it("trains one short epoch and evaluates the checkpoint", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --limit-train 2000 --out runs/smoke")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("test accuracy ([%d%.]+) %%"), out)
    out, code = sh(bin .. " evaluate.lua runs/smoke/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("confusion matrix", 1, true), out)
  end)

  it("trains with --amp in bfloat16 on the CPU", function()
    local out, code = sh(bin .. " train.lua --epochs 2 --amp --out runs/amp" .. SMALL)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local l1, l2 = out:match("epoch 1  train loss ([%d%.]+)"), out:match("epoch 2  train loss ([%d%.]+)")
    assert.is_true(tonumber(l1) ~= nil and tonumber(l2) ~= nil and tonumber(l2) < tonumber(l1), out)
    assert.truthy(io.open("runs/amp/checkpoints/checkpoint-00000002.pt", "rb"))
  end)

  it("trains with --amp --amp-dtype float16 and a GradScaler, its state in the checkpoint", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --amp --amp-dtype float16 --out runs/fp16" .. SMALL)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:find("loss scale 65536, skipped steps 0", 1, true), out)
    local st = require("torch").load("runs/fp16/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(4, st.scaler._growth_tracker)   -- 500 images, batch 128: one update() per step
  end)

  it("rejects a bad device or precision with exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
      { "--device gpu", "--device must be auto, cpu, cuda or cuda:N, got 'gpu'" },
    }
    if not require("torch").cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local out, code = sh(bin .. " train.lua " .. case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train.lua: " .. case[2], 1, true) == 1, out)
      assert.truthy(out:find("usage: ltorch train.lua", 1, true), out)
    end
  end)
end)
