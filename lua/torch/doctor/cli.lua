--[[
  torch.doctor.cli — the doctor command line, as a function (tools/doctor.lua and any `ltorch
  doctor` subcommand call it): main(argv, prog) -> exit status, never os.exit itself.

    doctor SETUP.lua [--fix] [--quiet] [--seed N] [--only id,id] [--out-dir DIR] [--device DEV]
                     [--scan N] [--json FILE]
    doctor --recipe classifier [options] [-- recipe flags, e.g. --model cnn --limit-train 6000]
  Exit 0: no check failed (warnings allowed); 1: a check failed; 2: usage or setup error.
]]
local M = {}

function M.usage(prog)
  prog = prog or "ltorch tools/doctor.lua"
  return ([[
usage: %s SETUP.lua [--fix] [--quiet] [--seed N] [--only id,id] [--out-dir DIR]
                    [--device DEV] [--scan N] [--json FILE]
       %s --recipe classifier [options] [-- recipe flags, e.g. --model cnn]
  Runs the training checklist on the setup SETUP.lua returns (protocol: lua/torch/doctor/setup.lua):
  NaN/Inf, target format, softmax before the loss, loss at init, BatchNorm after a bias, eval
  mode, grad flow, zero_grad, output-bias init, overfit one batch, input-independent baseline,
  a look at the batch, the LR schedule, duplicates and train/val leaks.
  --only id,id   run only these checks (ids: nonfinite target_format softmax_before_loss init_loss
                 bn_after_bias eval_mode grad_flow zero_grad output_bias overfit_batch
                 input_independent batch_view lr_schedule split_leak)
  --fix          apply the suggested output bias to the models of the later checks
  --seed N       seed for every model built (default 0)
  --out-dir DIR  where the batch grid PNG goes (default runs/doctor)
  --scan N       batches scanned for duplicates / train-val leaks (default 50)
  --device DEV   move the batches and the models to DEV (cuda, cuda:1, ...)
  --json FILE    also write the findings as JSON (for CI)
  --quiet        print only the summary line
  exit 0: no check failed; 1: a check failed; 2: usage or setup error]]):format(prog, prog)
end

-- the repository root (where recipes/ lives): three levels above this file's lua/ folder
local function repo_root()
  local src = debug.getinfo(1, "S").source:gsub("^@", "")
  return src:match("^(.*)/lua/torch/doctor/cli%.lua$") or "."
end

local function write_json(path, report)
  local json = require "torch.serialization.json"
  local list = {}
  for i, f in ipairs(report.findings) do
    list[i] = { id = f.id, verdict = f.verdict, title = f.title, evidence = f.evidence or "", cause = f.cause or "" }
  end
  local fh, why = io.open(path, "w")
  if not fh then return nil, why end
  fh:write(json.encode({ task = report.task, failed = report.failed, warned = report.warned,
    skipped = report.skipped, findings = list }), "\n")
  fh:close()
  return true
end

function M.main(argv, prog)
  local err = function(msg) io.stderr:write(msg, "\n") end
  local function bad(msg) err("doctor: " .. msg); err(M.usage(prog)); return 2 end
  local opts, path, recipe, recipe_args = {}, nil, nil, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local function value()
      i = i + 1
      return argv[i]
    end
    if a == "-h" or a == "--help" then io.stdout:write(M.usage(prog), "\n"); return 0
    elseif a == "--fix" then opts.fix = true
    elseif a == "--quiet" then opts.quiet = true
    elseif a == "--recipe" then recipe = value(); if not recipe then return bad("--recipe needs a name") end
    elseif a == "--" then
      for j = i + 1, #argv do recipe_args[#recipe_args + 1] = argv[j] end
      break
    elseif a == "--seed" then opts.seed = tonumber(value()); if not opts.seed then return bad("--seed needs a number") end
    elseif a == "--scan" then opts.scan_batches = tonumber(value()); if not opts.scan_batches then return bad("--scan needs a number") end
    elseif a == "--out-dir" then opts.out_dir = value(); if not opts.out_dir then return bad("--out-dir needs a folder") end
    elseif a == "--json" then opts.json = value(); if not opts.json then return bad("--json needs a file") end
    elseif a == "--device" then opts.device = value(); if not opts.device then return bad("--device needs a device") end
    elseif a == "--only" then
      local v = value()
      if not v then return bad("--only needs check ids") end
      opts.checks = {}
      for id in v:gmatch("[^,]+") do opts.checks[#opts.checks + 1] = id end
    elseif a:sub(1, 1) == "-" then return bad("unknown option " .. a)
    elseif path then return bad("one setup script expected")
    else path = a end
    i = i + 1
  end
  -- `ltorch doctor recipes/train_classifier.lua` means the classifier recipe's own builders
  if path and not recipe and path:match("train_classifier%.lua$") then path, recipe = nil, "classifier" end
  if not path and not recipe then return bad("a setup script (or --recipe classifier) is required") end
  if path and recipe then return bad("give a setup script or --recipe, not both") end
  local doctor = require "torch.doctor"
  local setup = path
  if recipe then
    if recipe ~= "classifier" then return bad("unknown recipe " .. recipe .. " (known: classifier)") end
    package.path = repo_root() .. "/?.lua;" .. package.path
    local okc, cfg = pcall(function()
      return require("recipes.config").parse(recipe_args, require("recipes.classifier_lib").DEFAULTS)
    end)
    if not okc then
      return bad("bad recipe flags: " .. tostring(type(cfg) == "table" and (cfg.usage_error or "--help") or cfg))
    end
    local oks, s = pcall(require("torch.doctor.recipe").classifier, cfg)
    if not oks then err(tostring(type(s) == "table" and s.usage_error or s)); return 2 end
    setup = s
  end
  local ok, report = pcall(doctor.run, setup, opts)
  if not ok then err(tostring(report)); return 2 end
  if opts.quiet then print(report:summary()) end
  if opts.json then
    local okj, why = write_json(opts.json, report)
    if not okj then err("doctor: cannot write " .. tostring(why)); return 2 end
  end
  return report.failed > 0 and 1 or 0
end

return M
