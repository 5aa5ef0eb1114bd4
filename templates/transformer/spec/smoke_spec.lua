--[[
  spec/smoke_spec.lua — the project trains one short epoch, predicts with its checkpoint, and
  rejects a bad flag. Run from the project folder: ltorch /usr/bin/busted spec    (~10 s)
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

  it("rejects an unknown flag and a wrong type with exit 2", function()
    local out, code = sh(bin .. " train.lua --epoch 1")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("unknown flag --epoch", 1, true), out)
    out, code = sh(bin .. " train.lua --lr fast")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
