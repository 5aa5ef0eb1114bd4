--[[
  torch.doctor.cli — the doctor command line, as a function (tools/doctor.lua and `ltorch doctor`
  call it): main(argv, prog, recipes) -> exit status, never os.exit itself.

    doctor [options] SCRIPT.lua [the script's own args ...]
    doctor [options] --recipe classifier [-- recipe flags, e.g. --model cnn --limit-train 6000]
  SCRIPT.lua is an ordinary training script (run under instrumentation for --steps optimizer
  steps, then stopped and examined) or a file returning a setup table (torch.doctor.setup).
  Doctor's options come before the script; everything after it is the script's.
  `recipes` (optional) maps a recipe name to its adapter {parse = fn(flags) -> config,
  setup = fn(config) -> setup}; the library knows no recipe itself: tools/doctor.lua passes
  recipes/doctor_setup.lua's, `ltorch doctor` none (--recipe then says where it works).
  Exit 0: no check failed (warnings allowed); 1: a check failed; 2: usage or setup error.
]]
local M = {}

local function names_of(recipes)
  local out = {}
  for k in pairs(recipes or {}) do out[#out + 1] = k end
  table.sort(out)
  return out
end

function M.usage(prog, recipes)
  prog = prog or "ltorch doctor"
  local names = names_of(recipes)
  local recipe_line = #names == 0 and "" or ("       %s [options] --recipe %s [-- recipe flags, e.g. --model cnn]\n")
    :format(prog, table.concat(names, "|"))
  return ([[
usage: %s [options] SCRIPT.lua [script args...]
%s  Runs SCRIPT.lua, an ordinary training script, for a few optimizer steps under instrumentation
  (module forwards and their train/eval mode, loss calls, zero_grad/backward/step, the LR,
  DataLoader batches, validation passes), stops it, and runs the training checklist on what it
  saw plus probes on its model, loss, optimizer and batches (overfit one batch, zeroed-input and
  shuffled-label baselines, an LR sweep, loss at init). The report opens with the most likely
  cause. SCRIPT.lua may instead return a setup table (protocol: lua/torch/doctor/setup.lua).
  --steps N      optimizer steps to observe before stopping the script (default 50)
  --only id,id   run only these checks (ids: nonfinite target_format input_pipeline
                 softmax_before_loss init_loss bn_after_bias eval_mode train_mode grad_flow
                 grad_reach zero_grad output_bias overfit_batch learning_rate input_independent
                 label_alignment loss_coverage batch_view lr_schedule lr_applied eval_data split_leak)
  --fix          apply the suggested output bias to the models of the later checks
  --seed N       seed for every model built (default 0)
  --out-dir DIR  where the batch grid PNG goes (default runs/doctor)
  --scan N       batches scanned for duplicates / train-val leaks (default 50)
  --device DEV   move the batches and the models to DEV (cuda, cuda:1, ...)
  --json FILE    also write the findings as JSON (for CI)
  --verbose      let the script print while it runs
  --quiet        print only the most likely cause and the summary line
  exit 0: no check failed; 1: a check failed; 2: usage or setup error]]):format(prog, recipe_line)
end

local function write_json(path, report)
  local json = require "torch.serialization.json"
  local list = {}
  for i, f in ipairs(report.findings) do
    list[i] = { id = f.id, verdict = f.verdict, title = f.title, evidence = f.evidence or "", cause = f.cause or "",
      severity = f.severity, confidence = f.confidence, explained_by = f.explained_by or "" }
  end
  local fh, why = io.open(path, "w")
  if not fh then return nil, why end
  fh:write(json.encode({ task = report.task, failed = report.failed, warned = report.warned,
    skipped = report.skipped, explained = report.explained, cause = report.cause and report.cause.id or "",
    findings = list }), "\n")
  fh:close()
  return true
end

-- The setup a recipe adapter builds from the recipe's flags; nil, exit status on failure.
local function recipe_setup(recipes, name, args, bad, err)
  local adapter = recipes and recipes[name]
  if not adapter then
    local known = names_of(recipes)
    if #known == 0 then
      return nil, bad("this command knows no recipe (from a source tree: build/ltorch tools/doctor.lua --recipe "
        .. name .. ")")
    end
    return nil, bad("unknown recipe " .. name .. " (known: " .. table.concat(known, ", ") .. ")")
  end
  local okc, cfg = pcall(adapter.parse, args)
  if not okc then
    return nil, bad("bad recipe flags: " .. tostring(type(cfg) == "table" and (cfg.usage_error or "--help") or cfg))
  end
  local oks, s = pcall(adapter.setup, cfg)
  if not oks then err(tostring(type(s) == "table" and s.usage_error or s)); return nil, 2 end
  return s
end

function M.main(argv, prog, recipes)
  local err = function(msg) io.stderr:write(msg, "\n") end
  local function bad(msg) err("doctor: " .. msg); err(M.usage(prog, recipes)); return 2 end
  local opts, path, recipe, recipe_args = { args = {} }, nil, nil, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local function value()
      i = i + 1
      return argv[i]
    end
    if a == "-h" or a == "--help" then io.stdout:write(M.usage(prog, recipes), "\n"); return 0
    elseif a == "--fix" then opts.fix = true
    elseif a == "--quiet" then opts.quiet = true
    elseif a == "--recipe" then recipe = value(); if not recipe then return bad("--recipe needs a name") end
    elseif a == "--" then
      for j = i + 1, #argv do recipe_args[#recipe_args + 1] = argv[j] end
      break
    elseif a == "--verbose" then opts.verbose = true
    elseif a == "--steps" then
      opts.steps = tonumber(value())
      if not opts.steps or opts.steps < 1 then return bad("--steps needs a positive number") end
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
    else
      path = a
      for j = i + 1, #argv do opts.args[#opts.args + 1] = argv[j] end
      break
    end
    i = i + 1
  end
  if not path and not recipe then return bad("a training script (or --recipe classifier) is required") end
  if path and recipe then return bad("give a setup script or --recipe, not both") end
  local doctor = require "torch.doctor"
  local setup = path
  if recipe then
    local s, status = recipe_setup(recipes, recipe, recipe_args, bad, err)
    if not s then return status end
    setup = s
  end
  local ok, report = pcall(doctor.run, setup, opts)
  if not ok then err(tostring(report)); return 2 end
  if opts.quiet then print(report:diagnosis()); print(report:summary()) end
  if opts.json then
    local okj, why = write_json(opts.json, report)
    if not okj then err("doctor: cannot write " .. tostring(why)); return 2 end
  end
  return report.failed > 0 and 1 or 0
end

return M
