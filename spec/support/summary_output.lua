-- spec/support/summary_output.lua — busted 2 output handler for ltorch's test suite.
--
-- Why: CI reads the last line of `bash scripts/test.sh`; it must be exactly
--   `N passed, N failed`            (N failed = failures + errors)
-- or `N passed, N failed, N skipped` when some tests are pending.
--
-- What it prints: one progress character per test (`+` pass, `-` failure, `*` error,
-- `.` pending), then every failure and error with the test's full name, where it is,
-- the message and the traceback, then the pending tests, then the summary line last.
-- When no test ran at all it says so just above the summary (scripts/test.sh treats
-- that as a failure).
--
-- Use: `busted -o spec/support/summary_output.lua spec/` (the repo's .busted already
-- selects it), or `build/ltorch /usr/bin/busted` via scripts/test.sh.

local pretty = require "pl.pretty"

local write, flush = io.write, io.flush

-- A failure's message may be a string, nil, or any Lua value (error({...})).
local function message_text(m)
  if type(m) == "string" then return m end
  if m == nil then return "nil error" end
  return pretty.write(m)
end

local function where(item)
  local t = item.element and item.element.trace or item.trace
  if t and t.short_src then
    return t.short_src .. ":" .. tostring(t.currentline)
  end
  return "?"
end

local function describe_failure(kind, item)
  local lines = {
    string.format("%s -> %s", kind, where(item)),
    item.name or "?",
  }
  if item.randomseed then
    lines[#lines + 1] = "random seed: " .. tostring(item.randomseed)
  end
  lines[#lines + 1] = message_text(item.message)
  if item.trace and item.trace.traceback then
    lines[#lines + 1] = (item.trace.traceback:gsub("%s+$", ""))
  end
  return table.concat(lines, "\n")
end

return function(_options)
  local busted = require "busted"
  local handler = require "busted.outputHandlers.base"()

  local marks = { success = "+", failure = "-", error = "*", pending = "." }

  handler.testEnd = function(_element, _parent, status)
    write(marks[status] or "?")
    flush()
    return nil, true
  end

  -- Errors outside an `it` (a spec file that fails to load, a failing
  -- before_each/describe) are counted by the base handler; show them as `*` too.
  handler.outerError = function()
    write(marks.error)
    flush()
    return nil, true
  end

  handler.suiteEnd = function()
    write("\n")
    for _, item in ipairs(handler.failures) do
      write("\n", describe_failure("FAILURE", item), "\n")
    end
    for _, item in ipairs(handler.errors) do
      write("\n", describe_failure("ERROR", item), "\n")
    end
    for _, item in ipairs(handler.pendings) do
      local msg = type(item.message) == "string" and (": " .. item.message) or ""
      write("\nPENDING -> ", where(item), "\n", item.name or "?", msg, "\n")
    end

    local passed = handler.successesCount
    local failed = handler.failuresCount + handler.errorsCount
    local skipped = handler.pendingsCount
    if passed + failed + skipped == 0 then
      write("\nno tests ran (check the spec paths and the _spec pattern)\n")
    end
    local summary = string.format("%d passed, %d failed", passed, failed)
    if skipped > 0 then
      summary = summary .. string.format(", %d skipped", skipped)
    end
    write("\n", summary, "\n")
    flush()
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  busted.subscribe({ "error", "file" }, handler.outerError)
  busted.subscribe({ "failure", "file" }, handler.outerError)
  busted.subscribe({ "error", "describe" }, handler.outerError)
  busted.subscribe({ "failure", "describe" }, handler.outerError)

  return handler
end
