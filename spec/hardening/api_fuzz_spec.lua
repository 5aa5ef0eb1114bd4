-- spec/hardening/api_fuzz_spec.lua — runs the API fuzzer (tools/api_fuzz.lua) as a child
-- process for a bounded time and fails if the child dies (abort, signal, hang past its limit):
-- no call of the public API, however wrong its arguments, may take the process down. The
-- child's call in flight is named from its progress file. Lua errors that leaked from inside
-- the library ("internal") are printed as findings; LTORCH_FUZZ_STRICT=1 makes them fail too.
--
-- Knobs: LTORCH_FUZZ_CALLS (default 60000, ~16 s here: the same call sequence everywhere), LTORCH_FUZZ_SECONDS
-- (a cap, default 60), LTORCH_FUZZ_SEED (default 20261202). A CI failure reproduces with
--   build/ltorch tools/api_fuzz.lua --seed N --calls C --seconds S --trace F
-- Longer runs (e.g. --calls 100000, other seeds) still find crashes inside libtorch 1.13's own
-- kernels; each one found is excluded by name in tools/api_fuzz.lua with the reason.
local ltorch = arg and arg[-1] or "build/ltorch"
local seconds = tonumber(os.getenv("LTORCH_FUZZ_SECONDS") or "") or 60
local seed = tonumber(os.getenv("LTORCH_FUZZ_SEED") or "") or 20261202
-- A call budget makes a seed's run the same sequence on every machine (time only caps it).
local calls = tonumber(os.getenv("LTORCH_FUZZ_CALLS") or "") or 60000
local strict = os.getenv("LTORCH_FUZZ_STRICT") == "1"

local function read(path)
  local f = io.open(path)
  if not f then return "" end
  local s = f:read("*a")
  f:close()
  return s
end

describe("API fuzzer", function()
  it(("survives %d random and adversarial calls (seed %d, at most %d s)"):format(calls, seed, seconds), function()
    local base = os.tmpname()
    local progress, out = base .. ".progress", base .. ".out"
    -- A hard wall-clock limit well past the fuzzer's own budget: a hang is a failure too.
    local cmd = ("timeout -s KILL %d %s tools/api_fuzz.lua --seconds %d --calls %d --seed %d --progress %s >%s 2>&1; echo $?")
      :format(seconds + 90, ltorch, seconds, calls, seed, progress, out)
    local p = assert(io.popen(cmd))
    local rc = tonumber(p:read("*a"):match("(%d+)%s*$"))
    p:close()
    local output, inflight = read(out), read(progress)
    os.remove(base); os.remove(progress); os.remove(out)
    local report = {}
    for line in output:gmatch("[^\n]+") do
      if line:find("^api_fuzz:") or line:find("^  %[x") or line:find("^        ") or line:find("^  [%w_]+: ") then
        report[#report + 1] = line
      end
    end
    print("\n" .. table.concat(report, "\n"))
    local reason = rc == 137 and "killed (hang past the time limit, or out of memory)"
      or rc and rc > 128 and ("signal " .. (rc - 128)) or ("exit status " .. tostring(rc))
    local sanitizer = {}
    for line in output:gmatch("[^\n]+") do
      if line:find("Sanitizer") or line:find("runtime error:") or line:find("^%s+#%d+ 0x") then
        sanitizer[#sanitizer + 1] = line
      end
    end
    assert.are.equal(0, rc, ("fuzzer child died: %s; call in flight: %s\n%s\n%s"):format(reason, inflight,
      table.concat(sanitizer, "\n", 1, math.min(#sanitizer, 40)), output:sub(-1500)))
    local summary = output:match("api_fuzz: (%d+ calls[^\n]*)")
    assert.is_truthy(summary, "no summary line from the fuzzer:\n" .. output:sub(-2000))
    local calls, internal = summary:match("^(%d+) calls"), summary:match("(%d+) internal")
    assert.is_true(tonumber(calls) > 0, "no calls were made")
    if strict then assert.are.equal("0", internal, "internal errors leaked from the library (see above)") end
  end)
end)
