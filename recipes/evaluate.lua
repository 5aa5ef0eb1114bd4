--[[
  recipes/evaluate.lua — evaluate a checkpoint written by recipes/train_classifier.lua.

  Loads the checkpoint (weights + the plain config it was trained with, data statistics
  included), rebuilds the same data split, and runs the model under torch.inference_mode in
  batches. Classification: accuracy beside the majority baseline, per-class precision /
  recall / F1, macro and weighted averages, the confusion matrix, and ROC-AUC when binary.
  Regression: MAE, RMSE and R² in the target's own units.

  Run:  build/ltorch recipes/evaluate.lua CHECKPOINT [--split test|val|train] [--device D]
                                    [--amp] [--amp-dtype float16] [--batch-size N] [--json FILE]
  CHECKPOINT: a .pt from <out>/checkpoints (or the folder: its best checkpoint).
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local config = require "recipes.config"
local lib = require "recipes.classifier_lib"
local trainer = require "recipes.trainer"
local metrics = require "recipes.metrics"
local json = require "torch.serialization.json"

local USAGE = [[
usage: ltorch recipes/evaluate.lua CHECKPOINT [flags]
  CHECKPOINT             a .pt written by train_classifier.lua, or its checkpoints/ folder (best)
  --split test|val|train which split of the training run's data (default test)
  --device auto|cpu|cuda|cuda:N (default auto: cuda when available)   --batch-size N (default 1000)
  --amp                  forward under autocast (bfloat16)   --amp-dtype bfloat16|float16 (needs --amp)
  --json FILE            also write the metrics as JSON
]]

local DEFAULTS = { split = "test", device = "auto", amp = false, amp_dtype = "bfloat16", batch_size = 1000, json = "" }

local function resolve(path)
  local f = io.open(path .. "/checkpoints.json", "rb")
  if not f then return path end
  f:close()
  local best = torch.training_state.Manager(path):best()
  if not best then config.usage_error("no best checkpoint recorded in %s", path) end
  return best
end

-- Evaluates `model` on the tensors (x, y) of one split; returns a summary table and its text.
local function evaluate(model, cfg, meta, x, y, mp, batch_size)
  local data = torch.utils.data
  local loader = data.DataLoader(data.TensorDataset(x, y), { batch_size = batch_size })
  local r = trainer.evaluate(model, loader, lib.loss_fn(meta.task), meta.task, mp.device, mp)
  local lines = { ("loss %.4f on %d samples"):format(r.loss, r.n) }
  if meta.task == "regression" then
    local s = cfg.stats
    local m = metrics.regression(r.outputs:view(-1) * s.y_std + s.y_mean, r.targets * s.y_std + s.y_mean)
    lines[#lines + 1] = ("MAE %.4f  RMSE %.4f  R2 %.4f"):format(m.mae, m.rmse, m.r2)
    m.loss, m.n = r.loss, r.n
    return m, table.concat(lines, "\n")
  end
  local pred = meta.task == "binary" and r.outputs:view(-1):gt(0):long() or r.outputs:argmax(1)
  local conf = metrics.confusion(pred, r.targets, meta.num_classes)
  local rep = metrics.classification_report(conf)
  local base = torch.bincount(r.targets, { minlength = meta.num_classes }):max():item() / r.n
  lines[#lines + 1] = ("accuracy %.2f %% (majority-class baseline %.2f %%)"):format(100 * rep.accuracy, 100 * base)
  local out = { loss = r.loss, n = r.n, accuracy = rep.accuracy, baseline = base, macro = rep.macro,
    weighted = rep.weighted, per_class = rep.per_class, confusion = conf }
  if meta.task == "binary" then
    out.roc_auc = metrics.roc_auc(r.outputs:view(-1), r.targets)
    lines[#lines + 1] = ("ROC-AUC %.4f"):format(out.roc_auc)
  end
  lines[#lines + 1] = metrics.format_report(rep, conf, meta.class_names)
  return out, table.concat(lines, "\n")
end

local function main()
  io.stdout:setvbuf("line")
  local path, argv = config.positional(arg or {}, DEFAULTS)
  local opts = config.parse(argv, DEFAULTS)
  if not path then config.usage_error("missing CHECKPOINT") end
  if opts.split ~= "test" and opts.split ~= "val" and opts.split ~= "train" then
    config.usage_error("split must be test, val or train, got '%s'", opts.split)
  end
  local mp = trainer.amp(opts, { inference = true })
  path = resolve(path)
  local model, cfg, meta = lib.load_checkpoint(path, mp.device)
  local d = lib.load_data(cfg)   -- cfg carries the saved statistics, so the split is the same
  local summary, text = evaluate(model, cfg, meta, d[opts.split][1], d[opts.split][2], mp, opts.batch_size)
  print(("checkpoint %s  (%s, %s, split %s, on %s)"):format(path, cfg.data, cfg.model, opts.split, mp:describe()))
  print(text)
  if opts.json ~= "" then
    local f = assert(io.open(opts.json, "wb"))
    f:write(json.encode(summary), "\n")
    f:close()
  end
end

config.main("evaluate", USAGE, main)
