--[[
  torch.doctor — runs the training checklist on a training script or setup and gives a
  differential diagnosis: the single most likely cause of a silent training bug, with its
  numbers, then the other findings ranked by severity x confidence; symptoms that a stronger
  finding accounts for are marked explained and do not count as failures.

    local doctor = require "torch.doctor"
    local report = doctor.run("train.lua", {args = {"--epochs", "3"}, steps = 50})  -- a plain script
    local report = doctor.run(setup, {seed = 0, fix = false, out_dir = "runs/doctor", quiet = false})
    report.cause               -- the most likely cause (a finding), nil when nothing is wrong
    report.ranked              -- the unexplained fails and warns, most likely first
    report.findings            -- every finding: {id, verdict, title, evidence, cause, severity,
                               --   confidence, explained_by}
    report:get("init_loss")    -- one finding by id
    report.failed, report.warned   -- unexplained counts; report.ok = (failed == 0)

  A path is run by torch.doctor.script: an ordinary training script runs under instrumentation
  for `steps` optimizer steps (default 50) and is stopped; what it trained becomes the setup of
  the probes, and its trace feeds the checks on its own loop (train_mode, zero_grad, grad_reach,
  lr_applied, eval_data). A file returning a setup table, or the table itself, is the explicit
  path (protocol: torch.doctor.setup). Options: args (the script's arguments), steps, verbose
  (let the script print), seed (0), batches (cached batches, 8), scan_batches (for the duplicate
  scan, 50), overfit_steps (150), baseline_steps (60), bias_steps (20), sweep_steps (60),
  sweep_lrs ({1e-4, 1e-3, 1e-2, 1e-1}), checks (an array of ids to run; default all), fix (true:
  the suggested output bias is applied to the models of the later checks and report.fix_bias
  holds it; doctor.apply_bias(model, report.fix_bias) applies it to yours), device (or
  setup.device), out_dir (where the batch grid PNG goes; false: none), quiet (no printing).

  The checks are torch.doctor.registry's descriptors ({id, run, traced, needs, blocked_by, fix}),
  walked in order by run_checks below; M.order is their ids.

  Command line: ltorch doctor [options] train.lua [its args] (torch.doctor.cli; exit 0 when
  nothing failed, 1 when a check failed, 2 on a usage error).
]]
local torch = require "torch"
local guard = require "torch._guard"
local S = require "torch.doctor.setup"
local C = require "torch.doctor.checks"
local U = require "torch.doctor.check_util"
local MC = require "torch.doctor.model_checks"
local P = require "torch.doctor.probes"
local DC = require "torch.doctor.data_checks"
local T = require "torch.doctor.trace_checks"
local D = require "torch.doctor.diagnose"
local R = require "torch.doctor.registry"
local Script = require "torch.doctor.script"

local M = { setup = S, checks = C, model_checks = MC, data_checks = DC, probes = P, trace_checks = T, diagnose = D,
  registry = R }

M.order = R.ids()

local marks = { ok = "ok  ", warn = "WARN", fail = "FAIL", skip = "skip", inconclusive = "??  " }

local Report = {}
Report.__index = Report

function Report:get(id)
  for _, f in ipairs(self.findings) do if f.id == id then return f end end
  return nil
end

function M.format_finding(f)
  local mark = marks[f.verdict] or f.verdict
  if f.explained_by then mark = mark:lower() end
  local head = ("[%s] %-20s %s"):format(mark, f.id, f.title)
  if f.severity and f.severity ~= "none" and not f.explained_by then
    head = head .. ("  (severity %s, confidence %.2f)"):format(f.severity, f.confidence)
  end
  local lines = { head }
  if f.explained_by then lines[#lines + 1] = "       explained by " .. f.explained_by end
  if f.evidence and f.evidence ~= "" then lines[#lines + 1] = "       evidence: " .. f.evidence end
  if f.cause and f.verdict ~= "ok" and not f.explained_by then lines[#lines + 1] = "       likely cause: " .. f.cause end
  return table.concat(lines, "\n")
end

-- The diagnosis: the most likely cause with its numbers, then the other findings, ranked.
function Report:diagnosis()
  local out = {}
  if not self.cause then
    out[1] = "diagnosis: no training bug found"
    return table.concat(out, "\n")
  end
  local c = self.cause
  out[#out + 1] = ("most likely cause: %s [%s, confidence %.2f]"):format(c.title, c.id, c.confidence)
  if c.evidence and c.evidence ~= "" then out[#out + 1] = "  evidence: " .. c.evidence:gsub("\n.*", "") end
  if c.cause then out[#out + 1] = "  what to do: " .. c.cause end
  if #self.ranked > 1 then
    out[#out + 1] = "then, ranked:"
    for i = 2, #self.ranked do
      local f = self.ranked[i]
      out[#out + 1] = ("  %d. [%s] %s: %s (confidence %.2f)"):format(i - 1, marks[f.verdict], f.id, f.title, f.confidence)
    end
  end
  local explained = {}
  for _, f in ipairs(self.findings) do
    if f.explained_by then explained[#explained + 1] = f.id .. " (by " .. f.explained_by .. ")" end
  end
  if #explained > 0 then out[#out + 1] = "explained by the above: " .. table.concat(explained, ", ") end
  return table.concat(out, "\n")
end

function Report:__tostring()
  local out = { self:diagnosis(), "checks:" }
  for _, f in ipairs(self.findings) do out[#out + 1] = M.format_finding(f) end
  out[#out + 1] = self:summary()
  return table.concat(out, "\n")
end

function Report:summary()
  return ("doctor: %d checks, %d failed, %d warnings, %d inconclusive, %d skipped, %d explained (%.1f s CPU)"):format(
    #self.findings, self.failed, self.warned, self.inconclusive, self.skipped, self.explained or 0, self.seconds or 0)
end

local run

-- The global RNG is reseeded by every check (paired runs); the caller's state is restored after.
function M.run(setup, opts)
  return (guard.rng(torch.get_rng_state(), nil, run, setup, opts))   -- restored whatever raised
end

-- opts.checks -> the set of ids to run (nil: all); an unknown id is an error.
local function wanted(opts)
  if not opts.checks then return nil end
  local want = {}
  for _, id in ipairs(opts.checks) do
    if not R.by_id[id] then
      error(("doctor: unknown check '%s' (known: %s)"):format(tostring(id), table.concat(M.order, ", ")), 0)
    end
    want[id] = true
  end
  return want
end

-- The setup, its models moved to opts.device (or setup.device) when one is given.
local function on_device(s, device)
  if not device then return s end
  local model_fn = s.model
  return setmetatable({ model = function() return model_fn():to(device) end }, { __index = s })
end

-- ctx.batches (the cached batches, on the device) and ctx.scan_batches.
local function cache_batches(ctx, s, opts, device)
  ctx.batches = S.take(s, s.train_loader, opts.batches or 8)
  if #ctx.batches == 0 then error("doctor: train_loader yielded no batches", 0) end
  ctx.scan_batches = S.take(s, s.scan_loader or s.train_loader, opts.scan_batches or 50)
  for i, b in ipairs(ctx.batches) do
    if not torch.is_tensor(b.x) or not torch.is_tensor(b.y) then
      error(("doctor: batch %d is not {x, y} tensors (got %s, %s); pass setup.batch"):format(i - 1, type(b.x), type(b.y)), 0)
    end
  end
  if device then
    for _, b in ipairs(ctx.batches) do b.x, b.y = b.x:to(device), b.y:to(device) end
  end
end

-- ctx.out0 (a fresh model's output on the first batch), ctx.task, ctx.num_classes.
local function first_output(ctx, s)
  local probe = S.new_model(s, ctx.seed)
  local ok, out0 = pcall(function() return torch.no_grad(function() return probe(ctx.batches[1].x) end) end)
  if not ok then error("doctor: the model's forward failed on the first batch: " .. tostring(out0), 0) end
  if not torch.is_tensor(out0) then
    error(("doctor: model(x) must return a tensor of outputs, got a %s (wrap the model so it returns the "
      .. "logits/predictions the loss takes)"):format(type(out0)), 0)
  end
  ctx.out0 = out0
  ctx.task = S.task(s, ctx.batches[1].y)
  ctx.num_classes = s.num_classes or (ctx.task == "classification" and out0:dim() >= 2 and out0:size(1)) or nil
end

-- One descriptor's finding (nil when it does not apply to this kind of run). `failed` holds the
-- ids of the checks that failed so far (for blocked_by).
local function run_check(ctx, d, failed)
  if d.needs == "stats" and not ctx.stats then
    local okst, st = pcall(U.target_stats, ctx)
    ctx.stats = okst and st or nil
  end
  local fn = R.resolve(d, ctx.trace)
  if not fn then return nil end
  local blocker = d.blocked_by and failed[d.blocked_by] and R.by_id[d.blocked_by]
  if blocker then
    return { id = d.id, verdict = "skip", title = ("skipped: %s (see %s)"):format(blocker.blocks, blocker.id) }
  elseif d.needs == "stats" and not ctx.stats then
    return { id = d.id, verdict = "skip", title = "skipped: no target statistics (see target_format)" }
  end
  local c0 = os.clock()
  local okc, f = pcall(fn, ctx)
  if not okc then
    f = { id = d.id, verdict = "fail", title = "the check raised an error", evidence = tostring(f) }
  end
  if f then f.seconds = os.clock() - c0 end
  return f
end

-- Runs the wanted checks in order into report.findings; applies a check's fix when opts.fix.
local function run_checks(report, ctx, want, say)
  local failed = {}
  for _, d in ipairs(R.checks) do
    if not want or want[d.id] then
      local f = run_check(ctx, d, failed)
      if f then report.findings[#report.findings + 1] = f end
      if f and f.verdict == "fail" and d.blocks then failed[d.id] = true end
      if d.fix and ctx.opts.fix and ctx.fix_bias then
        report.fix_bias = ctx.fix_bias
        ctx.setup = d.fix(ctx, ctx.setup)
        say("       fix: the suggested bias is applied to the models of the remaining checks")
      end
    end
  end
end

-- The diagnosis and the counts.
local function conclude(report)
  report.ranked, report.cause = D.rank(report.findings)
  report.explained = 0
  for _, f in ipairs(report.findings) do
    if f.explained_by then report.explained = report.explained + 1
    elseif f.verdict == "fail" then report.failed = report.failed + 1
    elseif f.verdict == "warn" then report.warned = report.warned + 1 end
    if f.verdict == "skip" then report.skipped = report.skipped + 1 end
    if f.verdict == "inconclusive" then report.inconclusive = report.inconclusive + 1 end
  end
  report.ok = report.failed == 0
end

local function size_str(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

run = function(setup, opts)
  opts = opts or {}
  local t0 = os.clock()
  local s = setup
  local script_seconds
  if type(s) == "string" then
    s = Script.load(s, opts.args, { budget = opts.steps, verbose = opts.verbose })
    script_seconds = os.clock() - t0
  end
  s = S.load(s)
  S.validate(s)
  local say = opts.quiet and function() end or function(str) io.write(str, "\n"); io.flush() end
  local ctx = { setup = s, opts = opts, seed = opts.seed or 0, trace = s.trace }
  local want = wanted(opts)
  local device = opts.device or s.device
  s = on_device(s, device)
  ctx.setup = s
  torch.manual_seed(ctx.seed)
  cache_batches(ctx, s, opts, device)
  first_output(ctx, s)

  local report = setmetatable({ findings = {}, failed = 0, warned = 0, skipped = 0, inconclusive = 0, task = ctx.task }, Report)
  say(("doctor: task %s%s, first batch x %s, y %s"):format(ctx.task,
    ctx.num_classes and (" (" .. ctx.num_classes .. " classes)") or "",
    size_str(ctx.batches[1].x), size_str(ctx.batches[1].y)))
  run_checks(report, ctx, want, say)
  conclude(report)
  report.seconds = os.clock() - t0
  report.script_seconds = script_seconds
  report.batch_png = ctx.batch_png
  say(tostring(report))
  return report
end

-- Helper for users: apply the suggested bias to a model (the output of report.fix_bias).
M.apply_bias = MC.apply_bias

return M
