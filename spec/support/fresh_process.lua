--[[
  spec/support/fresh_process.lua — run a Lua snippet in a fresh ltorch process and get its result.

  Why: RSS and allocator-cache figures of a long loop depend on the whole process: inside the spec
  suite's one busted process they also measure everything the earlier specs left (a Lua heap of
  many megabytes that the collector lets grow before each cycle). A user's loop runs in its own
  process; so do these measurements.

  What: run(code) writes `local torch = require "torch"` + code to a temp file, runs it with
  $LTORCH_BIN (default build/ltorch, from the repository root) and decodes the ONE JSON value the
  code prints on its last line (lua-cjson). A failing script raises a Lua error with its output.

  Use:
    local fresh = require "spec.support.fresh_process"
    local r = fresh.run('print(require("cjson").encode({ n = torch.zeros(3):numel() }))')   -- r.n == 3
]]
local cjson = require "cjson"

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/support/[^/]*$") or ".")
local BIN = os.getenv("LTORCH_BIN") or (ROOT .. "/build/ltorch")

local M = {}

function M.run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write('local torch = require "torch"\n', code, "\n")
  f:close()
  local p = assert(io.popen(("'%s' '%s' 2>&1"):format(BIN, path)))
  local out = p:read("*a")
  local ok = p:close()
  os.remove(path)
  local last = out:match("([^\n]*)\n?$")
  local decoded_ok, value = pcall(cjson.decode, last or "")
  if not ok or not decoded_ok then error("fresh_process: the script failed:\n" .. out, 2) end
  return value
end

return M
