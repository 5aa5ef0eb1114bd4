--[[
  torch.doctor — runs the training checklist against a training setup and reports, per check,
  a verdict, the numbers behind it and the likely cause. It finds silent training bugs before a
  full run: loss at init vs theory, a softmax before cross_entropy, wrong target dtype/shape,
  a model that cannot overfit one batch, one that ignores its inputs, a missing output-bias
  init, NaN/Inf, dropout/BatchNorm active in eval, missing zero_grad, BatchNorm after a biased
  layer, gradient flow, an LR schedule that does not fit the run, duplicated or leaking samples.

    local doctor = require "torch.doctor"
    local report = doctor.run(setup, {seed = 0, fix = false, out_dir = "runs/doctor", quiet = false})
    report.findings            -- array of {id, verdict, title, evidence, cause}
    report:get("init_loss")    -- one finding by id
    report.failed, report.warned   -- counts; report.ok = (failed == 0)

  `setup` is a table or a script returning one; the protocol is documented in
  torch.doctor.setup. Options: seed (0), batches (cached batches, 8), scan_batches (for the
  duplicate scan, 50), overfit_steps (150), baseline_steps (60), bias_steps (20),
  checks (an array of ids to run; default all), fix (true: the suggested output bias is
  applied to the models of the later checks — overfit_batch, input_independent — and
  report.fix_bias holds it; doctor.apply_bias(model, report.fix_bias) applies it to yours),
  device (or setup.device: batches and models are moved there), out_dir (where the
  batch grid PNG goes; false: none), quiet (no printing).

  Command line: build/ltorch tools/doctor.lua SETUP.lua [--fix] [--quiet] [--only id,id]
  (exit 0 when nothing failed, 1 when a check failed, 2 on a usage error).
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local C = require "torch.doctor.checks"

local M = { setup = S, checks = C }

M.order = {
  "nonfinite", "target_format", "softmax_before_loss", "init_loss", "bn_after_bias", "eval_mode",
  "grad_flow", "zero_grad", "output_bias", "overfit_batch", "input_independent", "batch_view",
  "lr_schedule", "split_leak",
}

local marks = { ok = "ok  ", warn = "WARN", fail = "FAIL", skip = "skip" }

local Report = {}
Report.__index = Report

function Report:get(id)
  for _, f in ipairs(self.findings) do if f.id == id then return f end end
  return nil
end

function M.format_finding(f)
  local lines = { ("[%s] %-20s %s"):format(marks[f.verdict] or f.verdict, f.id, f.title) }
  if f.evidence and f.evidence ~= "" then lines[#lines + 1] = "       evidence: " .. f.evidence end
  if f.cause and f.verdict ~= "ok" then lines[#lines + 1] = "       likely cause: " .. f.cause end
  return table.concat(lines, "\n")
end

function Report:__tostring()
  local out = {}
  for _, f in ipairs(self.findings) do out[#out + 1] = M.format_finding(f) end
  out[#out + 1] = self:summary()
  return table.concat(out, "\n")
end

function Report:summary()
  return ("doctor: %d checks, %d failed, %d warnings, %d skipped (%.1f s CPU)"):format(
    #self.findings, self.failed, self.warned, self.skipped, self.seconds or 0)
end

local run

-- The global RNG is reseeded by every check (paired runs); the caller's state is restored after.
function M.run(setup, opts)
  local state = torch.get_rng_state and torch.get_rng_state()
  local ok, report = pcall(run, setup, opts)
  if state then torch.set_rng_state(state) end
  if not ok then error(report, 0) end
  return report
end

run = function(setup, opts)
  opts = opts or {}
  local t0 = os.clock()
  local s = S.load(setup)
  S.validate(s)
  local say = opts.quiet and function() end or function(str) io.write(str, "\n"); io.flush() end
  local ctx = { setup = s, opts = opts, seed = opts.seed or 0 }
  local want
  if opts.checks then
    want = {}
    local known = {}
    for _, id in ipairs(M.order) do known[id] = true end
    for _, id in ipairs(opts.checks) do
      if not known[id] then
        error(("doctor: unknown check '%s' (known: %s)"):format(tostring(id), table.concat(M.order, ", ")), 0)
      end
      want[id] = true
    end
  end

  local device = opts.device or s.device
  if device then
    local model_fn = s.model
    s = setmetatable({ model = function() return model_fn():to(device) end }, { __index = s })
    ctx.setup = s
  end
  torch.manual_seed(ctx.seed)
  ctx.batches = S.take(s, s.train_loader, opts.batches or 8)
  if #ctx.batches == 0 then error("doctor: train_loader yielded no batches", 0) end
  ctx.scan_batches = S.take(s, s.train_loader, opts.scan_batches or 50)
  for i, b in ipairs(ctx.batches) do
    if not torch.is_tensor(b.x) or not torch.is_tensor(b.y) then
      error(("doctor: batch %d is not {x, y} tensors (got %s, %s); pass setup.batch"):format(i - 1, type(b.x), type(b.y)), 0)
    end
  end
  if device then
    for _, b in ipairs(ctx.batches) do b.x, b.y = b.x:to(device), b.y:to(device) end
  end
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

  local report = setmetatable({ findings = {}, failed = 0, warned = 0, skipped = 0, task = ctx.task }, Report)
  say(("doctor: task %s%s, first batch x %s, y %s"):format(ctx.task,
    ctx.num_classes and (" (" .. ctx.num_classes .. " classes)") or "",
    "[" .. table.concat(ctx.batches[1].x:size(), ", ") .. "]", "[" .. table.concat(ctx.batches[1].y:size(), ", ") .. "]"))

  local blocking = false
  local function add(f)
    if not f then return end
    report.findings[#report.findings + 1] = f
    if f.verdict == "fail" then report.failed = report.failed + 1
    elseif f.verdict == "warn" then report.warned = report.warned + 1
    elseif f.verdict == "skip" then report.skipped = report.skipped + 1 end
    say(M.format_finding(f))
  end

  local needs_stats = { init_loss = true, overfit_batch = true, output_bias = true, input_independent = true }
  for _, id in ipairs(M.order) do
    if not want or want[id] then
      if needs_stats[id] and not ctx.stats then
        local okst, st = pcall(C.target_stats, ctx)
        ctx.stats = okst and st or nil
      end
      if blocking and (id == "init_loss" or id == "overfit_batch" or id == "input_independent" or id == "output_bias") then
        add({ id = id, verdict = "skip", title = "skipped: the targets do not fit the loss (see target_format)" })
      elseif needs_stats[id] and not ctx.stats then
        add({ id = id, verdict = "skip", title = "skipped: no target statistics (see target_format)" })
      else
        local okc, f = pcall(C[id], ctx)
        if not okc then
          f = { id = id, verdict = "fail", title = "the check raised an error", evidence = tostring(f) }
        end
        add(f)
        if id == "target_format" and f and f.verdict == "fail" then blocking = true end
        if id == "output_bias" and opts.fix and ctx.fix_bias then
          report.fix_bias = ctx.fix_bias
          local model_fn = s.model
          s = setmetatable({ model = function()
            local m = model_fn(); C.apply_bias(m, ctx.fix_bias); return m
          end }, { __index = s })
          ctx.setup = s
          say("       fix: the suggested bias is applied to the models of the remaining checks")
        end
      end
    end
  end
  report.seconds = os.clock() - t0
  report.ok = report.failed == 0
  report.batch_png = ctx.batch_png
  say(report:summary())
  return report
end

-- Helper for users: apply the suggested bias to a model (the output of report.fix_bias).
M.apply_bias = C.apply_bias

return M
