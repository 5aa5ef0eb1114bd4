--[[
  spec/recipes/templates_spec.lua — every template besides classifier (see new_project_spec)
  makes a project whose own smoke spec passes when run from inside the project, the way a
  user runs it: `ltorch tools/new.lua T DIR`, then `cd DIR && ltorch /usr/bin/busted spec`.
  Also: `ltorch new --list` works from any folder and describes each template, and the hint
  printed after creating a project is the template's own first command.

  Run: build/ltorch /usr/bin/busted spec/recipes/templates_spec.lua   (~60 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local abs_bin = bin:sub(1, 1) == "/" and bin or (os.getenv("PWD") .. "/" .. bin)

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local base = os.tmpname()
os.remove(base)

describe("tools/new.lua templates", function()
  it("lists every template with a one-line description, from any folder", function()
    local out, code = sh("cd /tmp && " .. abs_bin .. " new --list")
    assert.are.equal(0, code, out)
    for _, t in ipairs({ "classifier", "transformer", "lora", "ddp", "dataset" }) do
      assert.truthy(out:match("\n?" .. t .. "%s+%a[^\n]+"), t .. " in:\n" .. out)
    end
  end)

  it("give every project templates/_common (flags.lua), and _common is not a template", function()
    local out, code = sh(bin .. " tools/new.lua --list")
    assert.are.equal(0, code, out)
    assert.falsy(out:find("_common", 1, true), out)
    out, code = sh(bin .. " tools/new.lua _common " .. base .. "-common")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("unknown template '_common'", 1, true), out)
  end)

  -- template -> a file its project must have beside README/config/train, the hint's command
  local cases = {
    { "transformer", "model.lua", "ltorch train.lua --epochs 1 --per-language 200" },
    { "lora", "lora.lua", "ltorch train.lua --epochs 1 --limit-steps 20" },
    { "ddp", "data.lua", "ltorch run --nproc-per-node 2 train.lua" },
    { "dataset", "sample/labels.csv", "ltorch check.lua" },
  }
  for _, case in ipairs(cases) do
    local name, file, hint = case[1], case[2], case[3]
    it(name .. ": the project's own smoke spec passes", function()
      local dir = base .. "-" .. name
      local out, code = sh(("%s tools/new.lua %s %s"):format(bin, name, dir))
      assert.are.equal(0, code, out)
      assert.truthy(out:find("next: cd " .. dir .. " && " .. hint, 1, true), out)
      for _, f in ipairs({ "README.md", "config.lua", "flags.lua", "amp.lua", "spec/smoke_spec.lua", file }) do
        assert.truthy(io.open(dir .. "/" .. f, "rb"), f)
      end
      local readme = io.open(dir .. "/README.md"):read("*a")
      assert.truthy(readme:find("# " .. dir:match("[^/]+$") .. " — ", 1, true), readme)
      out, code = sh(("cd %s && LTORCH_BIN=%s %s /usr/bin/busted spec"):format(dir, abs_bin, abs_bin))
      assert.are.equal(0, code, out)
      assert.truthy(out:match("(%d+) successes / 0 failures / 0 errors"), out)
      os.execute("rm -rf '" .. dir .. "'")
    end)
  end
end)
