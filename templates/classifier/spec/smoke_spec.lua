--[[
  spec/smoke_spec.lua — the project trains for one short epoch and evaluates its checkpoint.
  Run from the project folder: ltorch /usr/bin/busted spec    (~10 s)
]]
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"

describe("this project", function()
  it("trains one short epoch and evaluates the checkpoint", function()
    local p = io.popen(bin .. " train.lua --epochs 1 --limit-train 2000 --out runs/smoke 2>&1; echo \"exit=$?\"")
    local out = p:read("*a")
    p:close()
    assert.truthy(out:match("exit=0"), out)
    assert.truthy(out:match("test accuracy ([%d%.]+) %%"), out)
    p = io.popen(bin .. " evaluate.lua runs/smoke/checkpoints/checkpoint-00000001.pt 2>&1; echo \"exit=$?\"")
    out = p:read("*a")
    p:close()
    assert.truthy(out:match("exit=0"), out)
    assert.truthy(out:find("confusion matrix", 1, true), out)
  end)
end)
