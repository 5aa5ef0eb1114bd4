-- spec/support/repl_run.lua — run the ltorch REPL or debugger from a spec, with stdin from a
-- string, and get its output back (shared by spec/repl/{repl,debugger,graph}_spec.lua).
--
-- Use:
--   local R = require "spec.support.repl_run"
--   local out, err, rc = R.run("-i", "print(1)\n")        -- stdout, stderr, exit status
--   local script = R.tmpfile("error('x')\n")               -- a temp file, removed by R.cleanup()
--   R.run("--debug " .. R.q(script), ":bt\n:c\n")
--   teardown(R.cleanup)
-- The binary is $LTORCH_BIN, default build/ltorch; NO_COLOR is set and LUA_INIT unset.
local M = {}

local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"
local temps = {}

function M.q(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

function M.tmpfile(content)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(content)
  f:close()
  temps[#temps + 1] = name
  return name
end

-- Runs ltorch with args and stdin; returns stdout, stderr, exit status.
function M.run(args, stdin)
  local input, err = M.tmpfile(stdin or ""), os.tmpname()
  temps[#temps + 1] = err
  local p = io.popen(("env -u LUA_INIT NO_COLOR=1 %s %s < %s 2> %s; echo \"rc=$?\""):format(BIN, args, M.q(input),
    M.q(err)))
  local out = p:read("*a")
  p:close()
  local f = io.open(err)
  local errtext = f:read("*a")
  f:close()
  local rc = tonumber(out:match("rc=(%d+)\n$"))
  return out:gsub("rc=%d+\n$", ""), errtext, rc
end

function M.cleanup()
  for _, f in ipairs(temps) do os.remove(f) end
  temps = {}
end

return M
