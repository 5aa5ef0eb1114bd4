--[[
  spec/doctor/outcome_table.lua — the doctor's outcome and calibration table: runs torch.doctor
  on the planted-bug scripts (spec/doctor/plain/, each with the check that must name its bug)
  and on the correct corpus (spec/doctor/corpus/ plus the clean plain scripts), and prints one
  row per script (caught / missed / false alarm / inconclusive) and, per stated confidence, how
  often an unexplained FAIL/WARN at that confidence was right (the planted bug's own check) or
  wrong (anything on a correct script, or another check on a planted one).

    build/ltorch spec/doctor/outcome_table.lua            -- every script (minutes)
    build/ltorch spec/doctor/outcome_table.lua corpus     -- the correct corpus only
]]
local doctor = require "torch.doctor"

local planted = {
  softmax_ce = "softmax_before_loss", no_zero_grad = "zero_grad", mse_shape = "target_format",
  eval_mode = "train_mode", shuffled_labels = "label_alignment", zero_inputs = "input_pipeline",
  tiny_lr = "learning_rate", lr_overwritten = "lr_applied", detached = "grad_reach",
  ignored_class = "loss_coverage", eval_augment = "eval_data",
}
local corpus = { "tabular_regression", "imbalanced_classes", "noisy_small_classification", "cnn_bars", "autoencoder",
  "multi_output_regression", "sequence_targets", "tiny_language_model", "slow_start" }

local rows, buckets = {}, {}
local function bucket(conf, right)
  local k = ("%.2f"):format(conf)
  buckets[k] = buckets[k] or { right = 0, wrong = 0 }
  local b = buckets[k]
  if right then b.right = b.right + 1 else b.wrong = b.wrong + 1 end
end

local function judge(path, want)
  local r = doctor.run(path, { quiet = true, out_dir = false })
  local outcome, inconclusive = want and "missed" or "clean", {}
  local alarms = 0
  for _, f in ipairs(r.findings) do
    if f.verdict == "inconclusive" then inconclusive[#inconclusive + 1] = f.id end
    if (f.verdict == "fail" or f.verdict == "warn") and not f.explained_by then
      local right = want ~= nil and f.id == want
      bucket(f.confidence, right)
      if right then outcome = "caught" else alarms = alarms + 1 end
    end
  end
  if want and outcome == "missed" then
    local f = r:get(want)
    if f and f.verdict == "inconclusive" then outcome = "inconclusive" end
  end
  if alarms > 0 then outcome = outcome .. " + false alarm x" .. alarms end
  rows[#rows + 1] = ("| %s | %s | %s | %s | %s |"):format(path:match("([%w_]+)%.lua$"), want or "(correct)",
    outcome, r.cause and ("%s %.2f"):format(r.cause.id, r.cause.confidence) or "-",
    #inconclusive > 0 and table.concat(inconclusive, ", ") or "-")
  io.stderr:write(rows[#rows], "\n")
end

if arg[1] ~= "corpus" then
  local names = {}
  for n in pairs(planted) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do judge("spec/doctor/plain/" .. n .. ".lua", planted[n]) end
end
for _, n in ipairs({ "clean_mlp", "clean_cnn", "clean_regression" }) do judge("spec/doctor/plain/" .. n .. ".lua") end
for _, n in ipairs(corpus) do judge("spec/doctor/corpus/" .. n .. ".lua") end

print("| script | planted bug (check) | outcome | most likely cause | inconclusive |")
print("|---|---|---|---|---|")
for _, l in ipairs(rows) do print(l) end
print("\n| stated confidence | FAIL/WARN right | wrong | right rate |")
print("|---|---|---|---|")
local ks = {}
for k in pairs(buckets) do ks[#ks + 1] = k end
table.sort(ks)
for _, k in ipairs(ks) do
  local b = buckets[k]
  print(("| %s | %d | %d | %.2f |"):format(k, b.right, b.wrong, b.right / (b.right + b.wrong)))
end
