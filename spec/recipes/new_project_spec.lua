--[[
  spec/recipes/new_project_spec.lua — tools/new.lua makes a runnable project from
  templates/classifier: the files are there, `ltorch train.lua --epochs 1` trains from inside
  the project folder, evaluate.lua reads the checkpoint, --amp --amp-dtype float16 trains with
  a GradScaler, and bad arguments (--device cuda without CUDA included) exit 2.

  Run: build/ltorch /usr/bin/busted spec/recipes/new_project_spec.lua   (~15 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local abs_bin = bin:sub(1, 1) == "/" and bin or (os.getenv("PWD") .. "/" .. bin)

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("tools/new.lua classifier", function()
  local dir = os.tmpname()
  os.remove(dir)
  dir = dir .. "-proj"

  it("creates the project files", function()
    local out, code = sh(bin .. " tools/new.lua classifier " .. dir)
    assert.are.equal(0, code, out)
    -- the hint is the template README's "First run:" command
    assert.truthy(out:find("next: cd " .. dir .. " && ltorch train.lua --epochs 1 --limit-train 2000", 1, true), out)
    for _, f in ipairs({ "config.lua", "flags.lua", "amp.lua", "model.lua", "data.lua", "train.lua", "evaluate.lua", "spec/smoke_spec.lua", "README.md" }) do
      assert.truthy(io.open(dir .. "/" .. f, "rb"), f)
    end
    local readme = io.open(dir .. "/README.md"):read("*a")
    assert.truthy(readme:find(dir:match("[^/]+$"), 1, true))
  end)

  it("trains one short epoch from the project folder and evaluates", function()
    local out, code = sh(("cd %s && %s train.lua --epochs 1 --limit-train 2000"):format(dir, abs_bin))
    assert.are.equal(0, code, out)
    local acc = tonumber(out:match("test accuracy ([%d%.]+) %%"))
    assert.is_true(acc ~= nil and acc > 55, out)
    out, code = sh(("cd %s && %s evaluate.lua"):format(dir, abs_bin))
    assert.are.equal(0, code, out)
    assert.truthy(out:find("confusion matrix", 1, true), out)
  end)

  it("trains with --amp --amp-dtype float16 (a GradScaler) from the project folder", function()
    local out, code = sh(("cd %s && %s train.lua --device cpu --epochs 1 --limit-train 500 --val-size 500 --amp "
      .. "--amp-dtype float16 --out runs/fp16"):format(dir, abs_bin))
    assert.are.equal(0, code, out)
    assert.truthy(out:find("on cpu, amp float16 + GradScaler", 1, true), out)
    assert.truthy(out:find("loss scale 65536, skipped steps 0", 1, true), out)
  end)

  it("rejects --device cuda without CUDA and float16 without --amp with exit 2", function()
    local out, code = sh(("cd %s && %s train.lua --amp-dtype float16"):format(dir, abs_bin))
    assert.are.equal(2, code, out)
    assert.truthy(out:find("train.lua: --amp-dtype float16 needs --amp", 1, true), out)
    if not require("torch").cuda.is_available() then
      out, code = sh(("cd %s && %s train.lua --device cuda"):format(dir, abs_bin))
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train.lua: --device cuda is not available", 1, true), out)
    end
  end)

  it("rejects a bad flag in the project with exit 2", function()
    local out, code = sh(("cd %s && %s train.lua --epochs x"):format(dir, abs_bin))
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)

  it("refuses an unknown template and a non-empty folder", function()
    local out, code = sh(bin .. " tools/new.lua nope /tmp/whatever-new")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("unknown template 'nope'", 1, true), out)
    out, code = sh(bin .. " tools/new.lua classifier " .. dir)
    assert.are.equal(2, code, out)
    assert.truthy(out:find("not empty", 1, true), out)
  end)
end)
