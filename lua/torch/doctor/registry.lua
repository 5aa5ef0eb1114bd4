--[[
  torch.doctor.registry — every check the doctor runs, in the order it runs them, as one
  descriptor each:

    { id = "init_loss",            -- the finding's id (stable: specs and users match on it)
      run = C.init_loss,           -- fn(ctx) -> finding or nil, on a setup (nil: a traced script only)
      traced = T.zero_grad,        -- fn(ctx) on a traced script; nil: `run` there too; false: not there
      needs = "stats",             -- "stats": ctx.stats (target statistics) first; skipped without them
      blocked_by = "target_format",-- skipped when that check failed
      blocks = "...",              -- on a blocker: why the checks it blocks are skipped
      fix = fn(ctx, setup) -> setup } -- with {fix = true}: the setup the later checks run on

  torch.doctor.run walks this list (its `order` is the ids); the check functions live in files by
  theme: torch.doctor.checks (data and loss at init), model_checks (model and training
  mechanics), probes (short training runs), data_checks (the data without training),
  trace_checks (a traced script's own loop).

  Usage:  local registry = require "torch.doctor.registry"
          for _, d in ipairs(registry.checks) do ... end;  registry.ids()
]]
local C = require "torch.doctor.checks"
local MC = require "torch.doctor.model_checks"
local P = require "torch.doctor.probes"
local SC = require "torch.doctor.setup_checks"
local DC = require "torch.doctor.data_checks"
local T = require "torch.doctor.trace_checks"

local M = {}

-- With {fix = true}: the models of the later checks start from the suggested output bias.
local function fix_output_bias(ctx, setup)
  local model_fn = setup.model
  return setmetatable({ model = function()
    local m = model_fn(); MC.apply_bias(m, ctx.fix_bias); return m
  end }, { __index = setup })
end

-- Checks that train or need label statistics: skipped when the targets do not fit the loss.
local function stats_check(id, run)
  return { id = id, run = run, needs = "stats", blocked_by = "target_format" }
end

M.checks = {
  { id = "nonfinite", run = C.nonfinite },
  { id = "target_format", run = C.target_format, blocks = "the targets do not fit the loss" },
  { id = "input_pipeline", run = P.input_pipeline },
  { id = "softmax_before_loss", run = C.softmax_before_loss },
  stats_check("init_loss", C.init_loss),
  { id = "bn_after_bias", run = MC.bn_after_bias },
  { id = "eval_mode", run = MC.eval_mode },
  { id = "train_mode", run = SC.train_mode, traced = T.train_mode },
  { id = "grad_flow", run = MC.grad_flow },
  { id = "grad_reach", traced = T.grad_reach },
  { id = "zero_grad", run = MC.zero_grad, traced = T.zero_grad },
  { id = "output_bias", run = MC.output_bias, needs = "stats", blocked_by = "target_format", fix = fix_output_bias },
  stats_check("overfit_batch", P.overfit_batch),
  stats_check("learning_rate", P.learning_rate),
  stats_check("input_independent", P.input_independent),
  stats_check("label_alignment", P.label_alignment),
  { id = "loss_coverage", run = P.loss_coverage },
  { id = "batch_view", run = DC.batch_view },
  { id = "lr_schedule", run = DC.lr_schedule, traced = false },   -- lr_applied judges the observed LR
  { id = "lr_applied", traced = T.lr_applied },
  { id = "eval_data", traced = T.eval_data },
  { id = "split_leak", run = DC.split_leak },
}

M.by_id = {}
for _, d in ipairs(M.checks) do M.by_id[d.id] = d end

-- The ids, in order.
function M.ids()
  local ids = {}
  for i, d in ipairs(M.checks) do ids[i] = d.id end
  return ids
end

-- The function that runs descriptor d in this kind of run (traced script or setup), or nil.
function M.resolve(d, traced)
  if traced and d.traced ~= nil then return d.traced or nil end
  return d.run
end

return M
