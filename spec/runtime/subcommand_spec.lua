--[[
  spec/runtime/subcommand_spec.lua — `ltorch doctor|new|run|tool|inspect ...`: a bare-word script
  argument that names no file runs lua/torch/cli/<word>.lua (the implementation; tools/<word>.lua
  only requires it); a file of that name still wins; an unknown word is the usual "cannot open"
  error.

  Run: build/ltorch /usr/bin/busted spec/runtime/subcommand_spec.lua
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local root = io.popen("pwd"):read("*l")
if not bin:match("^/") then bin = root .. "/" .. bin end

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("ltorch subcommands", function()
  it("runs doctor on the main recipe cleanly", function()
    local out, code = run(bin .. " doctor recipes/train_classifier.lua")
    assert.are.equal(0, code, out)
    assert.matches("doctor: %d+ checks, 0 failed", out)
  end)

  it("prints a tool's usage and exits 2 without arguments", function()
    local out, code = run(bin .. " inspect")
    assert.are.equal(2, code, out)
    assert.matches("usage:", out)
  end)

  it("runs the launcher and the project maker from the library", function()
    local out, code = run(bin .. " run --help")
    assert.are.equal(0, code, out)
    assert.matches("%-%-nproc%-per%-node", out)
    out, code = run("cd / && " .. bin .. " new --list")
    assert.are.equal(0, code, out)
    assert.matches("classifier", out)
    out, code = run(bin .. " new nope /tmp/ltorch-subcommand-nope")
    assert.are.equal(2, code, out)
    assert.matches("unknown template 'nope'", out)
  end)

  it("lets a file of the same name win", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir)
    local f = assert(io.open(dir .. "/doctor", "w"))
    f:write("print('my own doctor script')\n")
    f:close()
    local out, code = run("cd " .. dir .. " && " .. bin .. " doctor")
    os.execute("rm -rf " .. dir)
    assert.are.equal(0, code, out)
    assert.matches("my own doctor script", out)
  end)

  it("reports an unknown word as a missing script", function()
    local out, code = run(bin .. " no-such-command")
    assert.are.equal(1, code, out)
    assert.matches("cannot open no%-such%-command", out)
  end)
end)
