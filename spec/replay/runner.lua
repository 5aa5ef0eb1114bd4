--[[
  spec/replay/runner.lua — runs replay cases in child ltorch processes and survives crashes
  (issue #36).

  Why: one case that kills the process must not hide the thousands after it. Each chunk of cases
  runs in a fresh `build/ltorch spec/replay/child.lua`; a case that never reports (the child died
  or hung past the chunk's time limit) is recorded as a crash and the chunk resumes after it.

  What: run(kind, data) with data = {entries = [...], cases = [...]} (spec/replay/data.lua) runs
  every case through spec/replay/<kind>.lua and returns verdicts[i] for cases[i]: {} for a pass,
  {cat, detail} otherwise (cat "crash" when the case killed or hung its process).
  summarize(data, verdicts) groups them by entry: {key, skip, samples, passed, errors,
  errors_raised, cats = {cat = first detail}}.

  Use: local runner = require "spec.replay.runner"
       local verdicts = runner.run("ops", data)
]]
local cjson = require "cjson"
-- the chunks go out with every number exact (spec/parity/json.lua: 17 significant digits; this
-- cjson writes at most 14, which rounded float64 inputs, and hash_tensor, which hashes the bits,
-- told)
local exact_json = require "spec.parity.json"

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/replay/[^/]*$") or ".")
local BIN = os.getenv("LTORCH_BIN") or (ROOT .. "/build/ltorch")
local CHUNK = 400
local LIMIT_S = 300

local M = {}

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function read_lines(path, verdicts)
  local f = io.open(path, "rb")
  if not f then return end
  for line in f:lines() do
    local i, js = line:match("^(%d+)\t(.*)$")
    if i then
      local ok, v = pcall(cjson.decode, js)
      if ok then verdicts[tonumber(i)] = v end
    end
  end
  f:close()
end

-- Runs cases[first..last] in one child; returns the exit status line of the shell.
local function run_child(kind, entries, cases, first, last, out)
  local list = {}
  for i = first, last do list[#list + 1] = cases[i] end
  local chunk = os.tmpname()
  local f = assert(io.open(chunk, "wb"))
  f:write(exact_json.encode({ kind = kind, entries = entries, cases = list }))
  f:close()
  local cmd = ("cd %s && timeout -s KILL %d %s spec/replay/child.lua %s %s >/dev/null 2>&1; echo $?")
    :format(quote(ROOT), LIMIT_S, quote(BIN), quote(chunk), quote(out))
  local p = assert(io.popen(cmd, "r"))
  local status = p:read("*a"):match("%d+")
  p:close()
  os.remove(chunk)
  return status
end

function M.run(kind, data)
  local entries = {}
  for _, e in ipairs(data.entries) do entries[e.key] = e end
  local cases = data.cases
  for i, c in ipairs(cases) do c.i = i end
  local verdicts = {}
  local first = 1
  while first <= #cases do
    local last = math.min(first + CHUNK - 1, #cases)
    local out = os.tmpname()
    local status = run_child(kind, entries, cases, first, last, out)
    read_lines(out, verdicts)
    os.remove(out)
    local next_first = last + 1
    for i = first, last do
      if verdicts[i] == nil then
        verdicts[i] = { cat = "crash", detail = ("the child process died or hung (exit status %s)")
          :format(tostring(status)) }
        next_first = i + 1
        break
      end
    end
    first = next_first
  end
  return verdicts
end

function M.summarize(data, verdicts)
  local by, order = {}, {}
  for _, e in ipairs(data.entries) do
    local s = { key = e.key, skip = e.skip, samples = 0, passed = 0, errors = 0, errors_raised = 0,
      cats = {} }
    by[e.key] = s
    order[#order + 1] = s
  end
  for i, c in ipairs(data.cases) do
    local s, v = by[c.entry], verdicts[i]
    if c.error then
      s.errors = s.errors + 1
      if not v.cat then s.errors_raised = s.errors_raised + 1 end
    else
      s.samples = s.samples + 1
      if not v.cat then s.passed = s.passed + 1 end
    end
    if v.cat and not s.cats[v.cat] then s.cats[v.cat] = v.detail or "" end
  end
  return order
end

return M
