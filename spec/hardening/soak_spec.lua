--[[
  soak_spec.lua — a short soak of the main recipe's training loop (bench/soak.lua): after the
  warm-up epoch, RSS and live tensor handles stay flat.

  Why: one leaked handle or a few bytes per step are invisible in a unit test and fatal in a long
  run. The long mode (100,000 steps, figures in docs/ROBUSTNESS.md) is too slow for CI; this runs
  12 epochs of 100 steps (1,200 steps on 12,800 samples), enough for a per-step leak of one
  handle to show as 1,100 handles.

  What: the soak exits 0 (RSS growth <= 64 MB, live handle growth <= 64 after warm-up) and its
  summary line reports the steps. Step time is printed by the bench, never asserted here.

  How: build/ltorch /usr/bin/busted spec/hardening/soak_spec.lua   (about 20 s)
]]
local ltorch = arg and arg[-1] or "build/ltorch"

describe("a soak of the main recipe's loop", function()
  it("keeps RSS and live tensor handles flat over 1,200 steps", function()
    local p = assert(io.popen(ltorch .. " bench/soak.lua --steps 1200 --window 1 --limit-train 12800 2>&1; echo \"__rc=$?\""))
    local out = p:read("*a")
    p:close()
    local rc = tonumber(out:match("__rc=(%d+)"))
    assert.are.equal(0, rc, out)
    local handles_from, handles_to = out:match("live handles (%d+) %-> (%d+)")
    assert.matches("soak: 1200 steps in", out)
    assert.is_truthy(handles_from, out)
    assert.is_true(tonumber(handles_to) - tonumber(handles_from) <= 64, out)
  end)
end)
