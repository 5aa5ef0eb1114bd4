--[[
  recipes/train_classifier.lua — train a classifier (or regressor) and report on the test set.

  With no arguments: an MLP on Fashion-MNIST (55k train / 5k val / 10k test), AdamW at a
  constant lr 1e-3, 10 epochs (cnn: 5), then the best checkpoint (by val loss) on the test set:
  accuracy, per-class precision/recall/F1 and the confusion matrix. `--model cnn` trains a
  small CNN. `--data csv:FILE --target COL` trains on a table instead (binary ->
  BCEWithLogits, multiclass -> CrossEntropy, regression -> MSE; see classifier_lib.lua).

  Writes under --out (default runs/classifier): metrics.jsonl (one line per epoch),
  checkpoints/ (the last and the best, full training state + config), test_report.txt.
  Checks built in (docs: /work/shared/reference/pytorch-training-checklist.txt): loss at init
  printed beside its expected value; output bias set from the label statistics; the test
  accuracy beside the majority-class baseline.

  Run:  build/ltorch recipes/train_classifier.lua [flags]      (--help lists them)
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local config = require "recipes.config"
local lib = require "recipes.classifier_lib"
local trainer = require "recipes.trainer"
local metrics = require "recipes.metrics"

local USAGE = [[
usage: ltorch recipes/train_classifier.lua [flags]
  --model mlp|cnn        model (default mlp; cnn needs image data)
  --epochs N             epochs (default: mlp 10, cnn 5)
  --batch-size N         batch size (default 128)
  --lr X                 learning rate, constant unless --schedule cosine (default 0.001)
  --optimizer adamw|sgd  (default adamw)    --weight-decay X (default 1e-4)
  --device auto|cpu|cuda|cuda:N  (default auto: cuda when available)
  --seed N               seed for the split, the init and the shuffling (default 0)
  --amp                  mixed precision: autocast on the device, bfloat16 (no loss scaling needed)
  --amp-dtype bfloat16|float16   float16 adds a GradScaler (loss scaling; needs --amp)
  --out DIR              output folder (default runs/classifier)
  --resume               continue from the latest checkpoint in DIR/checkpoints
  --config FILE          a Lua file returning a table of these keys (flags override it)
  --data fashion_mnist|csv:FILE   --target COL   --task auto|binary|multiclass|regression
  --skip-lines N --no-header      CSV layout (lines before the header; no header line)
  --limit-train N --limit-eval N  use only N samples (CI-size runs)
  --hidden N --dropout X --clip-grad-norm X --schedule constant|cosine --val-size N --log-every N
  --profile N            profile N training steps instead of training: prints torch.profiler's
                         table and writes the Chrome trace to DIR/profile_trace.json
]]

local function majority_baseline(targets, k)
  local counts = torch.bincount(targets, { minlength = k })
  return counts:max():item() / targets:size(0)
end

local function report_test(parts, model)
  local cfg, meta = parts.config, parts.meta
  local r = trainer.evaluate(model, parts.test_loader, parts.loss_fn, meta.task, parts.device, parts.amp)
  local lines = { ("test loss %.4f on %d samples"):format(r.loss, r.n) }
  if meta.task == "regression" then
    local s = cfg.stats
    local m = metrics.regression(r.outputs:view(-1) * s.y_std + s.y_mean, r.targets * s.y_std + s.y_mean)
    lines[#lines + 1] = ("test MAE %.4f  RMSE %.4f  R2 %.4f"):format(m.mae, m.rmse, m.r2)
    return table.concat(lines, "\n"), { loss = r.loss, mae = m.mae, rmse = m.rmse, r2 = m.r2 }
  end
  local pred = meta.task == "binary" and r.outputs:view(-1):gt(0):long() or r.outputs:argmax(1)
  local conf = metrics.confusion(pred, r.targets, meta.num_classes)
  local rep = metrics.classification_report(conf)
  local base = majority_baseline(r.targets, meta.num_classes)
  lines[#lines + 1] = ("test accuracy %.2f %% (majority-class baseline %.2f %%)"):format(100 * rep.accuracy, 100 * base)
  local out = { loss = r.loss, accuracy = rep.accuracy, macro_f1 = rep.macro.f1, baseline = base }
  if meta.task == "binary" then
    out.roc_auc = metrics.roc_auc(r.outputs:view(-1), r.targets)
    lines[#lines + 1] = ("test ROC-AUC %.4f"):format(out.roc_auc)
  end
  lines[#lines + 1] = metrics.format_report(rep, conf, meta.class_names)
  return table.concat(lines, "\n"), out
end

local function main()
  io.stdout:setvbuf("line")   -- progress reaches logs and pipes as it happens
  local cfg = config.parse(arg or {}, lib.DEFAULTS)
  if cfg.profile < 0 or cfg.profile ~= math.floor(cfg.profile) then
    config.usage_error("profile must be a non-negative integer (steps), got %s", cfg.profile)
  end
  local t0 = trainer.wall()
  local parts = lib.build(cfg)
  cfg = parts.config
  local meta = parts.meta
  print(("data %s: %d train / %d val / %d test, task %s; model %s (%d parameters) on %s"):format(
    cfg.data, parts.train_loader.dataset:len(), parts.val_loader.dataset:len(), parts.test_loader.dataset:len(),
    meta.task, cfg.model, parts.model:num_parameters(), parts.amp:describe()))
  if cfg.profile > 0 then
    require("recipes.profile_steps").run(parts, cfg.profile, cfg.out .. "/profile_trace.json")
    return
  end
  if not cfg.resume then
    local v = trainer.evaluate(parts.model, parts.val_loader, parts.loss_fn, meta.task, parts.device, parts.amp)
    local expected = meta.task == "multiclass" and math.log(meta.num_classes) or nil
    print(("loss at init %.4f%s"):format(v.loss, expected and (" (uniform guess ln(%d) = %.4f)"):format(meta.num_classes, expected) or ""))
  end
  local _, mgr = trainer.fit(parts)
  -- the test report uses the best checkpoint by validation loss
  local best = mgr:best()
  if best then
    torch.training_state.load_training_state(best, { model = parts.model, restore_rng = false, map_location = parts.device })
    print("best checkpoint " .. best)
  end
  local text, summary = report_test(parts, parts.model)
  print(text)
  local f = io.open(cfg.out .. "/test_report.txt", "wb")
  if f then f:write(text, "\n"); f:close() end
  summary.seconds = trainer.wall() - t0
  local line = { ("result: %s %s"):format(cfg.data, cfg.model) }
  for _, k in ipairs({ "accuracy", "macro_f1", "roc_auc", "mae", "rmse", "r2" }) do
    if summary[k] then line[#line + 1] = ("%s %.4f"):format(k, summary[k]) end
  end
  line[#line + 1] = ("in %.0f s"):format(summary.seconds)
  print(table.concat(line, "  "))
end

config.main("train_classifier", USAGE, main)
