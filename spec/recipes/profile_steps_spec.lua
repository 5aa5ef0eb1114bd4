--[[
  spec/recipes/profile_steps_spec.lua — `recipes/train_classifier.lua --profile N`
  (recipes/profile_steps.lua): profiles N training steps instead of training, prints
  torch.profiler's table with one ProfilerStep row per step and the step's ranges (data,
  forward, backward, optimizer), and writes a Chrome trace that parses as JSON with op and range
  events; a negative N is a usage error.

  Run: bash scripts/test.sh spec/recipes/profile_steps_spec.lua   (~10 s on 2 cores)
]]
local json = require "torch.serialization.json"

local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local tmp = os.tmpname()
os.remove(tmp)

local function run(args)
  local p = io.popen(bin .. " recipes/train_classifier.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("train_classifier --profile", function()
  teardown(function() os.execute("rm -rf '" .. tmp .. "'") end)

  it("prints the table of N steps and writes a Chrome trace", function()
    local out, code = run("--profile 2 --limit-train 1000 --limit-eval 200 --out " .. tmp)
    assert.equal(0, code, out)
    assert.truthy(out:find("Self CPU %", 1, true), out)
    assert.truthy(out:match("ProfilerStep%*[^\n]-%s2%s*\n"), out)           -- 2 steps, one row
    for _, range in ipairs({ "forward", "backward", "optimizer" }) do
      assert.truthy(out:find("%s" .. range .. "%s"), range)
    end
    assert.falsy(out:find("epoch 1", 1, true))                              -- profiling, not training
    local f = assert(io.open(tmp .. "/profile_trace.json", "rb"))
    local doc = json.decode(f:read("*a"))
    f:close()
    local cats, names = {}, {}
    for _, e in ipairs(doc.traceEvents) do
      if e.ph == "X" and e.dur then cats[e.cat] = (cats[e.cat] or 0) + 1; names[e.name] = (names[e.name] or 0) + 1 end
    end
    assert.is_true((cats.cpu_op or 0) > 0 and (cats.user_annotation or 0) >= 10)
    assert.equal(2, names.data)
    assert.equal(2, names["aten::addmm"] and names.forward)
  end)

  it("a negative step count is a usage error", function()
    local out, code = run("--profile -1 --out " .. tmp)
    assert.equal(2, code, out)
    assert.truthy(out:find("profile must be a non-negative integer", 1, true), out)
  end)
end)
