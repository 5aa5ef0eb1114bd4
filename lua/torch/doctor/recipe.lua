--[[
  torch.doctor.recipe — turns recipes/classifier_lib.lua (the main recipe, train_classifier.lua)
  into a doctor setup: the data are loaded once, and the builders make fresh models from the
  recipe's own build_model, with its optimizer choice, loss and planned epochs.

    local setup = require("torch.doctor.recipe").classifier({limit_train = 6000})  -- recipe config
    require("torch.doctor").run(setup)

  Needs the repository root on package.path (tools/doctor.lua adds it), since the recipe is
  required as "recipes.classifier_lib". The model is built without the recipe's output-bias
  init, so doctor's output_bias check judges the data, not the recipe's fix.
]]
local torch = require "torch"

local M = {}

local task_names = { multiclass = "classification", binary = "binary", regression = "regression" }

function M.classifier(config)
  local ok, lib = pcall(require, "recipes.classifier_lib")
  if not ok then error("doctor: the classifier recipe is not available (" .. tostring(lib) .. ")", 2) end
  config = config or {}
  if config.device == nil then config.device = "cpu" end
  local parts = lib.build(config)
  local cfg, meta = parts.config, parts.meta
  local epochs = (cfg.epochs and cfg.epochs > 0) and cfg.epochs
    or (lib.DEFAULT_EPOCHS and lib.DEFAULT_EPOCHS[cfg.model]) or 10
  return {
    model = function() return lib.build_model(cfg, meta) end,
    loss_fn = parts.loss_fn,
    optimizer = function(params)
      if cfg.optimizer == "sgd" then
        return torch.optim.SGD(params, { lr = cfg.lr, momentum = 0.9, weight_decay = cfg.weight_decay })
      end
      return torch.optim.AdamW(params, { lr = cfg.lr, weight_decay = cfg.weight_decay })
    end,
    scheduler = cfg.schedule == "cosine" and function(opt)
      return torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    end or nil,
    train_loader = parts.train_loader,
    val_loader = parts.val_loader,
    task = task_names[meta.task] or meta.task,
    num_classes = meta.task == "multiclass" and meta.num_classes or nil,
    epochs = epochs,
    class_names = meta.class_names,
  }
end

return M
