-- spec/hardening/api_fuzz_spec.lua — runs the API fuzzer (tools/api_fuzz.lua) as a child
-- process for a bounded time and fails if the child dies (abort, signal, hang past its limit):
-- no call of the public API, however wrong its arguments, may take the process down. The
-- child's call in flight is named from its progress file. Lua errors that leaked from inside
-- the library ("internal") are printed as findings; LTORCH_FUZZ_STRICT=1 makes them fail too.
-- The figures (calls made, distinct names, distinct error messages, internal errors) are printed
-- to stdout and stderr, so they show in CI logs whatever busted's output handler does.
--
-- Knobs: LTORCH_FUZZ_CALLS (default 500000: ~2.5 min here on a shared 2-core box, ~1 min idle;
-- the same call sequence everywhere),
-- LTORCH_FUZZ_SECONDS (a safety cap, default 240: a slower machine makes fewer calls),
-- LTORCH_FUZZ_SEED (default 20261202), LTORCH_FUZZ_CALL_LIMIT (the per-call watchdog, default 60 s:
-- one call past it kills the child with SIGALRM and fails the spec naming the call and its arguments).
-- Long mode: LTORCH_FUZZ_LONG=1 makes it 1,000,000 calls within 1,800 s (figures in
-- docs/ROBUSTNESS.md). A CI failure reproduces with
--   build/ltorch tools/api_fuzz.lua --seed N --calls C --seconds S --trace F
-- Seeds 20261202, 1 and 7 survive 800,000 calls (~4 min each) here; every libtorch 1.13 crash the
-- fuzzer found is excluded (or its arguments bounded) by name in tools/api_fuzz.lua, with the
-- reason and a PyTorch 1.13.1 reproduction; ltorch's own bugs it found are fixed and pinned in
-- spec/hardening/api_fuzz_regressions_spec.lua.
--
-- The child runs under a 4 GiB address-space limit (ulimit -v; not under the sanitizers, whose
-- shadow memory needs terabytes of address space): an op that allocates without bound (seen:
-- vsplit into 2^31 sections) then fails in the child instead of waking the machine's OOM killer.
local ltorch = arg and arg[-1] or "build/ltorch"
local seconds = tonumber(os.getenv("LTORCH_FUZZ_SECONDS") or "") or 240
local seed = tonumber(os.getenv("LTORCH_FUZZ_SEED") or "") or 20261202
-- A call budget makes a seed's run the same sequence on every machine (time only caps it).
local long = os.getenv("LTORCH_FUZZ_LONG") == "1"
local calls = tonumber(os.getenv("LTORCH_FUZZ_CALLS") or "") or (long and 1000000 or 500000)
local call_limit = tonumber(os.getenv("LTORCH_FUZZ_CALL_LIMIT") or "") or 60
if long and not os.getenv("LTORCH_FUZZ_SECONDS") then seconds = 1800 end
local strict = os.getenv("LTORCH_FUZZ_STRICT") == "1"
local sanitized = os.getenv("LTORCH_SANITIZED") == "1"

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
    local cmd = ("%stimeout -s KILL %d %s tools/api_fuzz.lua --seconds %d --calls %d --seed %d --call-limit %d --progress %s >%s 2>&1; echo $?")
      :format(sanitized and "" or "ulimit -v 4194304; ", seconds + call_limit + 90, ltorch, seconds, calls, seed,
        call_limit, progress, out)
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
    local summary = output:match("api_fuzz: (%d+ calls %(%d+ names%)[^\n]*)")
    if summary then
      -- "N calls (N names) in S s, seed N: N distinct errors, N internal (N calls), N ok"
      local figures = ("api_fuzz figures: %s calls, %s distinct names, %s distinct error messages, %s internal errors (%s calls), %s ok, %s s, seed %s")
        :format(summary:match("^(%d+) calls") or "?", summary:match("%((%d+) names%)") or "?",
          summary:match("(%d+) distinct errors") or "?", summary:match("(%d+) internal") or "?",
          summary:match("internal %((%d+) calls%)") or "?", summary:match("(%d+) ok") or "?",
          summary:match("in (%d+) s") or "?", seed)
      print(figures)
      io.stdout:flush()
      io.stderr:write(figures, "\n")
    end
    local reason = rc == 137 and "killed (hang past the time limit, or out of memory)"
      or rc == 128 + 14 and ("one call ran past the per-call watchdog's " .. call_limit .. " s")
      or rc and rc > 128 and ("signal " .. (rc - 128)) or ("exit status " .. tostring(rc))
    local sanitizer = {}
    for line in output:gmatch("[^\n]+") do
      if line:find("Sanitizer") or line:find("runtime error:") or line:find("^%s+#%d+ 0x") then
        sanitizer[#sanitizer + 1] = line
      end
    end
    assert.are.equal(0, rc, ("fuzzer child died: %s; call in flight: %s\n%s\n%s"):format(reason, inflight,
      table.concat(sanitizer, "\n", 1, math.min(#sanitizer, 40)), output:sub(-1500)))
    assert.is_truthy(summary, "no summary line from the fuzzer:\n" .. output:sub(-2000))
    local made, internal = summary:match("^(%d+) calls"), summary:match("(%d+) internal")
    assert.is_true(tonumber(made) > 0, "no calls were made")
    if strict then assert.are.equal("0", internal, "internal errors leaked from the library (see above)") end
  end)
end)
