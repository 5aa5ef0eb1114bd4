--[[
  interrupt_collective_spec.lua — Ctrl-C ends a collective that waits for a rank that never comes.

  Why: a thread blocked in a C++ wait runs no Lua, so the interrupt hook alone cannot stop it: a
  DDP job whose peer hung kept its first Ctrl-C until the group's timeout (30 minutes by
  default). The collectives' wait now polls the bindings' interrupt flag (lt_interrupt.cpp).

  What: two processes rendezvous (env://, 120 s group timeout); rank 1 sleeps, rank 0 enters
  all_reduce; SIGINT to rank 0 must end it within seconds with "interrupted!" in its error and a
  failing exit status.

  How: build/ltorch /usr/bin/busted spec/distributed/interrupt_collective_spec.lua   (~5 s)
]]
local h = dofile("spec/distributed/helpers.lua")

describe("an interrupted collective", function()
  it("stops waiting for a rank that never joins at the first Ctrl-C", function()
    local dir = h.tmpname()
    os.execute("mkdir -p " .. h.q(dir))
    local env = ("WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=%d"):format(h.free_port())
    local fixture = "spec/distributed/fixtures/stuck_collective.lua"
    local script = table.concat({
      ("env %s RANK=1 %s %s > %s/r1.log 2>&1 & R1=$!"):format(env, h.BIN, fixture, dir),
      ("env %s RANK=0 %s %s > %s/r0.log 2>&1 & R0=$!"):format(env, h.BIN, fixture, dir),
      ("i=0; while ! grep -q waiting %s/r0.log; do sleep 0.1; i=$((i+1)); [ $i -gt 300 ] && break; done"):format(dir),
      "sleep 1",
      "T0=$(date +%s.%N); kill -INT $R0; wait $R0; RC=$?; T1=$(date +%s.%N)",
      "kill -9 $R1 2>/dev/null; pkill -9 -P $R1 2>/dev/null; wait $R1 2>/dev/null",
      "echo RC=$RC T0=$T0 T1=$T1",   -- the arithmetic is Lua's: a bare Debian has no bc
      ("cat %s/r0.log"):format(dir),
    }, "\n")
    local out = h.run(script, 90)
    os.execute("rm -rf " .. h.q(dir))
    local rc, t0, t1 = out:match("RC=(%d+) T0=([%d.]+) T1=([%d.]+)")
    assert.truthy(rc, out)
    local secs = tonumber(t1) - tonumber(t0)
    assert.is_true(tonumber(secs) < 10, "rank 0 took " .. tostring(secs) .. " s to stop:\n" .. out)
    assert.are_not.equal("0", rc, out)
    assert.matches("interrupted!\nstack traceback:\n[^\n]*in function 'all_reduce'", out)
    assert.is_nil(out:find("returned", 1, true), out)
  end)
end)
