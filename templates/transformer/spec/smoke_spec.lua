--[[
  spec/smoke_spec.lua — the project trains one short epoch, predicts with its checkpoint, and
  rejects a bad flag; mixed precision on the CPU with a tiny model: --amp (bfloat16) trains,
  --amp --amp-dtype float16 trains with a GradScaler whose state is in the checkpoint; bad
  device / precision flags exit 2. Run from the project folder: ltorch /usr/bin/busted spec
  (~20 s)
]]
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("this project", function()
  it("trains one short epoch and predicts with the checkpoint", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --per-language 200 --out runs/smoke")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform guess"), out)
    assert.truthy(out:match("test accuracy ([%d%.]+) %%"), out)
    out, code = sh(bin .. " predict.lua --checkpoint runs/smoke/checkpoints/checkpoint-00000001.pt 'Der Hund schläft.'")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("^%a%a%s+[%d%.]+%s+Der Hund"), out)
  end)

  local TINY = " --device cpu --languages en,de --per-language 40 --max-len 32 --d-model 16 --heads 2 --layers 1"
    .. " --ff 32 --batch-size 16"

  it("trains with --amp in bfloat16 on the CPU", function()
    local out, code = sh(bin .. " train.lua --epochs 2 --amp --out runs/amp" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local l1, l2 = out:match("epoch 1  train loss ([%d%.]+)"), out:match("epoch 2  train loss ([%d%.]+)")
    assert.is_true(tonumber(l1) ~= nil and tonumber(l2) ~= nil and tonumber(l2) < tonumber(l1), out)
    assert.truthy(io.open("runs/amp/checkpoints/checkpoint-00000002.pt", "rb"))
  end)

  it("trains with --amp --amp-dtype float16 and a GradScaler, its state in the checkpoint", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --amp --amp-dtype float16 --out runs/fp16" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("loss scale %d+, skipped steps %d+"), out)
    local st = require("torch").load("runs/fp16/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(4, st.scaler._growth_tracker)   -- 64 training texts, batch 16: one update() per step
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

  it("rejects an unknown flag and a wrong type with exit 2", function()
    local out, code = sh(bin .. " train.lua --epoch 1")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("unknown flag --epoch", 1, true), out)
    out, code = sh(bin .. " train.lua --lr fast")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
