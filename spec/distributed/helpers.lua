-- helpers.lua — shared by the spec/distributed specs: run a command with a bounded wall time and
-- capture its output and exit status; pick free loopback ports; temp paths.
-- Usage: local h = dofile("spec/distributed/helpers.lua"); local out, rc, secs = h.run(cmd, 60)
local M = {}

M.BIN = os.getenv("LTORCH_BIN") or "build/ltorch"
M.free_port = dofile("spec/distributed/fixtures/free_port.lua")

function M.q(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local ffi = require "ffi"
pcall(ffi.cdef, "struct lt_spec_ts { long s; long ns; }; int lt_spec_clock_gettime(int, struct lt_spec_ts *) __asm__(\"clock_gettime\");")
function M.now()
  local ts = ffi.new("struct lt_spec_ts")
  ffi.C.lt_spec_clock_gettime(1, ts)
  return tonumber(ts.s) + tonumber(ts.ns) * 1e-9
end

-- Runs `cmd` under coreutils timeout (every wait is bounded); returns output (stdout+stderr),
-- exit status and elapsed seconds.
function M.run(cmd, limit)
  local t0 = M.now()
  local p = io.popen(("timeout -k 5 %d sh -c %s 2>&1; echo \"__EXIT:$?\""):format(limit or 120, M.q(cmd)))
  local out = p:read("*a")
  p:close()
  local rc = tonumber(out:match("__EXIT:(%d+)%s*$"))
  return out:gsub("__EXIT:%d+%s*$", ""), rc, M.now() - t0
end

-- tools/run.lua with a fresh port and a whole-run bound.
function M.launch(nproc, script_and_args, limit, extra)
  local cmd = ("%s tools/run.lua --nproc-per-node %d --master-port %d --timeout %d %s %s")
    :format(M.BIN, nproc, M.free_port(), limit or 90, extra or "", script_and_args)
  return M.run(cmd, (limit or 90) + 30)
end

function M.tmpname()
  local n = os.tmpname(); os.remove(n); return n
end

return M
