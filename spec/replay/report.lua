--[[
  spec/replay/report.lua — turns replay verdicts into figures and into the exceptions check
  (issue #36).

  Why: the three replay specs and tools/replay/write_doc.lua report the same figures and apply
  the same rule: every entry that does not pass is listed in spec/replay/exceptions.lua with its
  category and reason; an unlisted failure, a listed category that no longer occurs, and any
  silent difference (a wrong value, dtype, shape or gradient returned without error) fail.

  What: replay(kind) loads the cases (spec/replay/data.lua), runs them (spec/replay/runner.lua)
  and returns {kind, title, total, passing, skipped, errors, errors_raised, silent, crashes,
  unlisted, stale, entries, seconds, no_cpu (keys of the entries of which PyTorch itself has no
  CPU sample), with_cpu (total less those)}, or nil and the reason without PyTorch. line(r) is the
  one-line figure the specs print.

  Use: local report = require "spec.replay.report"
       local r = report.replay("ops"); print(report.line(r))
]]
local data = require "spec.replay.data"
local runner = require "spec.replay.runner"

local M = {}

local EXCEPTIONS = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "exceptions.lua"
M.SILENT = { differs = true, grad = true }
M.TITLE = { ops = "op_db (OpInfo)", modules = "module_db (ModuleInfo)", optims = "optim_db (OptimizerInfo)" }

function M.exceptions() return dofile(EXCEPTIONS) end

function M.replay(kind)
  local t0 = os.time()
  local d, why = data.load(kind)
  if not d then return nil, why end
  local verdicts = runner.run(kind, d)
  local listed = M.exceptions()[kind] or {}
  local r = { kind = kind, title = M.TITLE[kind], torch = d.torch, total = #d.entries, passing = 0,
    skipped = 0, errors = 0, errors_raised = 0, silent = {}, crashes = {}, unlisted = {}, stale = {},
    entries = runner.summarize(d, verdicts), cases = #d.cases, errors_not_lua = {}, no_cpu = {} }
  for _, e in ipairs(d.entries) do   -- entries of which PyTorch itself has no CPU sample
    if e.no_cpu_sample then r.no_cpu[#r.no_cpu + 1] = e.key end
  end
  r.with_cpu = r.total - #r.no_cpu
  for _, e in ipairs(d.entries) do   -- error inputs the generator left out: no Lua spelling
    for _, reason in ipairs(e.errors_not_lua or {}) do
      r.errors_not_lua[#r.errors_not_lua + 1] = ("%s: %s"):format(e.key, reason)
    end
  end
  for _, s in ipairs(r.entries) do
    r.errors, r.errors_raised = r.errors + s.errors, r.errors_raised + s.errors_raised
    local sample_fail = false
    for cat, detail in pairs(s.cats) do
      if cat ~= "no_error" then sample_fail = true end
      local line = ("%s: %s — %s"):format(s.key, cat, detail)
      if M.SILENT[cat] then r.silent[#r.silent + 1] = line end
      if cat == "crash" then r.crashes[#r.crashes + 1] = line end
      if not (listed[s.key] and listed[s.key][cat]) and not M.SILENT[cat] then
        r.unlisted[#r.unlisted + 1] = line
      end
    end
    if s.skip then
      r.skipped = r.skipped + 1
    elseif not sample_fail and s.samples > 0 then
      r.passing = r.passing + 1
    end
    for cat in pairs(listed[s.key] or {}) do
      if not s.cats[cat] then r.stale[#r.stale + 1] = s.key .. ": " .. cat end
    end
  end
  for key, cats in pairs(listed) do
    local known = false
    for _, s in ipairs(r.entries) do known = known or s.key == key end
    if not known then r.stale[#r.stale + 1] = key .. ": not an entry of the database" end
    for cat, reason in pairs(cats) do
      if M.SILENT[cat] then r.stale[#r.stale + 1] = key .. ": " .. cat .. " may never be listed (a silent difference is a bug)" end
      if type(reason) ~= "string" or reason == "" then r.stale[#r.stale + 1] = key .. ": no reason" end
    end
  end
  table.sort(r.silent)
  table.sort(r.unlisted)
  table.sort(r.stale)
  r.seconds = os.time() - t0
  return r
end

local function pct(n, d) return d == 0 and "-" or ("%.1f %%"):format(100 * n / d) end
M.pct = pct

-- "; over the N entries with CPU samples: P/N, x %" where PyTorch itself has entries without one
function M.cpu_share(r)
  if #r.no_cpu == 0 then return "" end
  return ("; %d/%d, %s, over the %d entries with a CPU sample in PyTorch"):format(r.passing, r.with_cpu,
    pct(r.passing, r.with_cpu), r.with_cpu)
end

function M.line(r)
  return ("%s replay (PyTorch %s): %d/%d entries pass every replayed sample (%s%s; %d not replayable), "
    .. "error inputs raising where PyTorch raises %d/%d (%s), silent differences %d, crashes %d, "
    .. "%d cases in %d s"):format(r.title, r.torch, r.passing, r.total, pct(r.passing, r.total), M.cpu_share(r),
    r.skipped, r.errors_raised, r.errors, pct(r.errors_raised, r.errors), #r.silent, #r.crashes, r.cases, r.seconds)
end

-- The spec body shared by op_db_spec.lua, module_db_spec.lua and optim_db_spec.lua (busted's
-- describe / it / pending are the spec file's, passed in).
function M.spec(kind, bust)
  local r, why = M.replay(kind)
  bust.describe(M.TITLE[kind] .. " replayed through ltorch (issue #36)", function()
    if not r then
      bust.it("needs the reference PyTorch", function() bust.pending(why) end)
      return
    end
    print(M.line(r))
    bust.it("every entry that does not pass is listed in spec/replay/exceptions.lua with its category", function()
      bust.assert.is_true(#r.unlisted == 0, #r.unlisted .. " unlisted failures (add them with a reason, or fix them):\n  "
        .. table.concat(r.unlisted, "\n  "))
    end)
    bust.it("no listed exception is stale (it now passes, or is not an entry)", function()
      bust.assert.is_true(#r.stale == 0, "remove from spec/replay/exceptions.lua:\n  " .. table.concat(r.stale, "\n  "))
    end)
    bust.it("no silent difference: ltorch never returns another value, dtype, shape or gradient than PyTorch", function()
      bust.assert.is_true(#r.silent == 0, table.concat(r.silent, "\n"))
    end)
  end)
end

return M
