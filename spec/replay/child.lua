--[[
  spec/replay/child.lua — runs one chunk of replay cases in its own ltorch process (issue #36).

  Why: a case that kills the process (a crash in libtorch, an abort) must not stop the replay:
  spec/replay/runner.lua runs the cases in chunks in child processes, and a case that never
  reports is itself the finding.

  What: reads the chunk file (JSON {kind, entries = {key = entry}, cases = [...]}, each case with
  its global index i), runs each case with spec/replay/<kind>.lua's run(entry, case) and appends
  one line per case to the output file as soon as it is done: `i <TAB> verdict as JSON`. An error
  in the harness itself is reported as the verdict {cat = "harness", detail}.

  Use: build/ltorch spec/replay/child.lua CHUNK.json OUT.txt   (runner.lua does this)
]]
local ROOT = (arg[0]:match("^(.*)/spec/replay/[^/]*$") or ".")
package.path = ROOT .. "/?.lua;" .. ROOT .. "/lua/?.lua;" .. ROOT .. "/lua/?/init.lua;" .. package.path
local cjson = require "cjson"

local f = assert(io.open(arg[1], "rb"))
local chunk = cjson.decode(f:read("*a"))
f:close()
local runner = require("spec.replay." .. chunk.kind)
local codec = require "spec.replay.codec"
local out = assert(io.open(arg[2], "a"))
for _, case in ipairs(chunk.cases) do
  codec.begin_case()
  local ok, verdict = xpcall(runner.run, debug.traceback, chunk.entries[case.entry], case)
  if not ok then verdict = { cat = "harness", detail = tostring(verdict):sub(1, 600) } end
  out:write(case.i, "\t", cjson.encode(verdict), "\n")
  out:flush()
  collectgarbage()
end
out:close()
