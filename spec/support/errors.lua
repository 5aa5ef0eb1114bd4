--[[
  spec/support/errors.lua — the message of an error a spec expects.

  Why: misuse specs check that a bad call raises, and what it says; the pcall-and-assert block
  was copied into many spec files.

  Use:
    local err = require("spec.support.errors").err
    assert.matches("kernel_size", err(nn.Conv2d, 3, 8))   -- fails the spec if the call succeeds
    errs("expected 2 dims", torch.mm, a, b)                 -- raises, and the message holds the plain text
]]
local assert = require "luassert"

local M = {}

-- Calls fn(...), asserts that it raised, and returns the error as a string.
function M.err(fn, ...)
  local ok, msg = pcall(fn, ...)
  assert.is_false(ok, "expected an error, the call succeeded")
  return tostring(msg)
end

-- Asserts that fn(...) raises an error whose message contains `text` (plain text, not a pattern).
function M.errs(text, fn, ...)
  local n, args = select("#", ...), { ... }
  assert.error_matches(function() fn(unpack(args, 1, n)) end, text, 1, true)
end

return M
