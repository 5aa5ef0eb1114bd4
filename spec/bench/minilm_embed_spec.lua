--[[
  spec/bench/minilm_embed_spec.lua — bench/minilm_embed.lua (with bench/minilm_embed.py) runs at a
  tiny size and prints its workload line and one sentences/s row per side; no timing is asserted.
  Pending without the model files.

  Run: build/ltorch /usr/bin/busted spec/bench/minilm_embed_spec.lua   (~15 s on 2 cores)
]]
local minilm = require "recipes.models.minilm"

local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"

describe("bench/minilm_embed.lua", function()
  it("prints sentences/s for ltorch and transformers at a tiny size", function()
    local missing = minilm.missing()
    if missing then return pending(missing) end
    local p = assert(io.popen(BIN .. " bench/minilm_embed.lua 8 4 1 2>&1; echo \"exit=$?\""))
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("exit=0", 1, true), out)
    assert.truthy(out:match("minilm_embed: 8 sentences %(%d+ tokens after truncation at 256%), batch 4, 1 thread\n"), out)
    assert.truthy(out:match("\nltorch%s+[%d%.]+ sentences/s%s+[%d%.]+ s CPU"), out)
    assert.truthy(out:match("\ntransformers%s+[%d%.]+ sentences/s%s+[%d%.]+ s CPU"), out)
  end)
end)
