--[[
  fuzz_watchdog_spec.lua — the API fuzzer's per-call watchdog fires on a call that never returns.

  Why: a hang under fuzzing (issue #28 saw torch.chunk build 2^62 empty pieces) must be a
  failure that names the call and its arguments, not a CI run that times out with no finding.

  What: runs tools/api_fuzz.lua with one target replaced by an endless loop and --call-limit 1;
  the child must die of SIGALRM within seconds, its progress file naming that call with its
  arguments; a normal short run with the watchdog armed exits 0.

  How: build/ltorch /usr/bin/busted spec/hardening/fuzz_watchdog_spec.lua   (a few seconds)
]]
local ltorch = arg and arg[-1] or "build/ltorch"

local function run(prelude, fuzz_args)
  local progress = os.tmpname()
  local cmd = ("timeout -s KILL 60 %s -e %q tools/api_fuzz.lua %s --progress %s >/dev/null 2>&1; echo $?")
    :format(ltorch, prelude, fuzz_args, progress)
  local p = assert(io.popen(cmd))
  local rc = tonumber(p:read("*a"):match("(%d+)%s*$"))
  p:close()
  local f = io.open(progress)
  local inflight = f and f:read("*a") or ""
  if f then f:close() end
  os.remove(progress)
  return rc, inflight
end

describe("the API fuzzer's per-call watchdog", function()
  it("ends the run with SIGALRM on a call past --call-limit, naming the call and its arguments", function()
    local t0 = os.time()
    local rc, inflight = run('local torch = require "torch"; torch.logaddexp = function() local n = 0; while true do n = n + 1 end end',
      "--only logaddexp --call-limit 1 --seconds 30 --seed 3")
    assert.are.equal(128 + 14, rc)
    assert.matches("^function logaddexp%(.+%)", inflight)
    assert.is_true(os.time() - t0 < 20, "the watchdog took too long")
  end)

  it("stays quiet on calls that return", function()
    local rc, inflight = run('require "torch"', "--only logaddexp --call-limit 5 --calls 200 --seconds 30 --seed 3")
    assert.are.equal(0, rc)
    assert.are.equal("done\n", inflight)
  end)
end)
