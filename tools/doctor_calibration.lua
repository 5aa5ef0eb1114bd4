--[[
  tools/doctor_calibration.lua — how often `ltorch doctor` is right: runs the planted-bug suite and
  the corpus of correct scripts in both forms and prints two markdown tables (docs/DOCTOR.md
  carries their output):

  1. outcomes, per form and kind: planted bugs caught (the planted bug's own check fails or warns),
     missed, inconclusive (its check said inconclusive); correct scripts clean or with a false
     alarm (any unexplained FAIL/WARN); plus the inconclusive findings on correct scripts.
  2. calibration: every unexplained FAIL/WARN, binned by its stated confidence; right = the
     planted bug's own check, or a check the case lists as a true symptom of it (`also`); wrong =
     anything on a correct script, or another check on a planted one. The bin holds when its right
     rate is at least its lower edge.

  Plain-script form: spec/doctor/plain/*.lua (the planted bugs and the clean scripts) and
  spec/doctor/corpus/*.lua. Setup-table form: spec/doctor/planted_setups.lua (planted bugs and
  correct setups) and each corpus script's setup as a table (the model, loss, optimizer and
  batches its run shows, without the run's trace: what a setup file of that script gives).
  Each doctor run is its own ltorch process (memory back after each).

    build/ltorch tools/doctor_calibration.lua             -- everything (about 15 minutes on 2 cores)
    build/ltorch tools/doctor_calibration.lua corpus      -- the correct corpus only, both forms
    build/ltorch tools/doctor_calibration.lua planted     -- the planted suites and their clean twins only
]]
local cjson = require "cjson"

local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"

-- the planted plain scripts and the check that must name each bug
local planted_plain = {
  softmax_ce = "softmax_before_loss", no_zero_grad = "zero_grad", mse_shape = "target_format",
  eval_mode = "train_mode", shuffled_labels = "label_alignment", zero_inputs = "input_pipeline",
  tiny_lr = "learning_rate", lr_overwritten = "lr_applied", detached = "grad_reach",
  ignored_class = "loss_coverage", eval_augment = "eval_data",
}

local function ls(glob)
  local out, p = {}, io.popen("ls " .. glob)
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- The child's code: doctor on `target` (a Lua expression giving a path or a setup), the findings
-- as JSON on the last line.
local CHILD = [[
local d = require "torch.doctor"
local r = d.run(%s, { quiet = true, out_dir = false })
local out = {}
for _, f in ipairs(r.findings) do
  out[#out + 1] = { id = f.id, verdict = f.verdict, confidence = f.confidence or false, explained = f.explained_by ~= nil }
end
print(require("cjson").encode(out))
]]

local function doctor_child(target)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(CHILD:format(target))
  f:close()
  local p = assert(io.popen(("'%s' '%s' 2>&1"):format(BIN, path)))
  local text = p:read("*a")
  p:close()
  os.remove(path)
  local ok, v = pcall(cjson.decode, text:match("([^\n]*)\n?$") or "")
  if not ok or type(v) ~= "table" then return nil, text end
  return v
end

local setup_of_script = [[(function()
  local s = require("torch.doctor.script").load(%q, nil, {})
  s.trace, s.script = nil, nil
  return s
end)()]]

local rows, bins, counts = {}, {}, {}

local function bin_of(c) return math.min(0.9, math.floor(c * 10 + 1e-9) / 10) end

local function judge(form, name, target, expect, also)
  local findings, err = doctor_child(target)
  local kind = expect and "planted" or "correct"
  local key = form .. "|" .. kind
  counts[key] = counts[key] or { n = 0, caught = 0, missed = 0, inconclusive = 0, clean = 0, alarm = 0, errors = 0, incl = 0 }
  local c = counts[key]
  c.n = c.n + 1
  if not findings then
    c.errors = c.errors + 1
    rows[#rows + 1] = ("| %s | %s | %s | doctor error | %s |"):format(form, name, expect or "(correct)", (err or ""):gsub("\n.*", ""))
    io.stderr:write(rows[#rows], "\n")
    return
  end
  local outcome, alarms, incl = expect and "missed" or "clean", {}, {}
  for _, f in ipairs(findings) do
    if f.verdict == "inconclusive" then incl[#incl + 1] = f.id end
    if (f.verdict == "fail" or f.verdict == "warn") and not f.explained then
      local right = expect ~= nil and (f.id == expect or (also or {})[f.id])
      local b = bin_of(f.confidence or 0)
      bins[b] = bins[b] or { right = 0, wrong = 0 }
      if right then bins[b].right = bins[b].right + 1 else bins[b].wrong = bins[b].wrong + 1 end
      if f.id == expect then outcome = "caught" else alarms[#alarms + 1] = f.id .. (right and " (true)" or "") end
    end
    if expect and f.id == expect and f.verdict == "inconclusive" and outcome == "missed" then outcome = "inconclusive" end
  end
  if not expect and #alarms > 0 then outcome = "false alarm" end
  if outcome == "caught" then c.caught = c.caught + 1 elseif outcome == "missed" then c.missed = c.missed + 1
  elseif outcome == "inconclusive" then c.inconclusive = c.inconclusive + 1 elseif outcome == "clean" then c.clean = c.clean + 1
  else c.alarm = c.alarm + 1 end
  if not expect and #incl > 0 then c.incl = c.incl + 1 end
  rows[#rows + 1] = ("| %s | %s | %s | %s | %s | %s |"):format(form, name, expect or "(correct)", outcome,
    #alarms > 0 and table.concat(alarms, ", ") or "-", #incl > 0 and table.concat(incl, ", ") or "-")
  io.stderr:write(rows[#rows], "\n")
end

local corpus_only = arg and arg[1] == "corpus"
if not corpus_only then
  local names = {}
  for n in pairs(planted_plain) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do judge("plain", n, ("%q"):format("spec/doctor/plain/" .. n .. ".lua"), planted_plain[n]) end
  for _, n in ipairs({ "clean_mlp", "clean_cnn", "clean_regression" }) do
    judge("plain", n, ("%q"):format("spec/doctor/plain/" .. n .. ".lua"))
  end
  local cases = dofile("spec/doctor/planted_setups.lua")
  for i, c in ipairs(cases) do
    local also = {}
    for _, id in ipairs(c.also or {}) do also[id] = true end
    judge("setup", c.name, ("dofile('spec/doctor/planted_setups.lua')[%d].build()"):format(i), c.expect, also)
  end
end
for _, path in ipairs(arg and arg[1] == "planted" and {} or ls("spec/doctor/corpus/*.lua")) do
  local n = path:match("([%w_]+)%.lua$")
  judge("plain", "corpus/" .. n, ("%q"):format(path))
  judge("setup", "corpus/" .. n, setup_of_script:format(path))
end

print("| form | script | planted bug (check) | outcome | other FAIL/WARN | inconclusive |")
print("|---|---|---|---|---|---|")
for _, l in ipairs(rows) do print(l) end

print("\n| form | kind | runs | caught | missed | inconclusive | clean | false alarm | with an inconclusive finding | doctor error |")
print("|---|---|---|---|---|---|---|---|---|---|")
for _, key in ipairs({ "plain|planted", "setup|planted", "plain|correct", "setup|correct" }) do
  local c = counts[key]
  if c then
    local form, kind = key:match("(%w+)|(%w+)")
    local p = kind == "planted"
    print(("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d |"):format(form, kind, c.n, p and c.caught or "-",
      p and c.missed or "-", p and c.inconclusive or "-", p and "-" or c.clean, p and "-" or c.alarm,
      p and "-" or c.incl, c.errors))
  end
end

print("\n| stated confidence | FAIL/WARN right | wrong | right rate | holds (rate ≥ bin's lower edge) |")
print("|---|---|---|---|---|")
local ks = {}
for k in pairs(bins) do ks[#ks + 1] = k end
table.sort(ks)
for _, k in ipairs(ks) do
  local b = bins[k]
  local rate = b.right / (b.right + b.wrong)
  print(("| %.1f-%.1f | %d | %d | %.2f | %s |"):format(k, k + 0.1, b.right, b.wrong, rate, rate >= k and "yes" or "NO"))
end
