--[[
  recipes/doctor_setup.lua — the doctor's adapters for the recipes: each turns a recipe's flags
  into a doctor setup (torch.doctor.setup). `classifier` is the main recipe
  (train_classifier.lua, classifier_lib.lua): the data are loaded once, and the builders make
  fresh models from the recipe's own build_model, with its optimizer choice, loss and planned
  epochs. The model is built without the recipe's output-bias init, so doctor's output_bias
  check judges the data, not the recipe's fix.

  Why here: the library (lua/torch/doctor) knows no recipe; tools/doctor.lua hands these
  adapters to torch.doctor.cli, which runs `--recipe NAME [-- recipe flags]` through them.

    local adapters = require "recipes.doctor_setup"
    local cfg = adapters.classifier.parse({"--model", "cnn"})   -- the recipe's flags; usage errors as tables
    local setup = adapters.classifier.setup(cfg)                 -- {model = fn, optimizer = fn, loss_fn, loaders, ...}
    require("torch.doctor").run(setup)

  Needs the repository root on package.path (tools/doctor.lua adds it).
]]
local torch = require "torch"
local config = require "recipes.config"
local lib = require "recipes.classifier_lib"

local M = {}

local task_names = { multiclass = "classification", binary = "binary", regression = "regression" }

local function classifier_setup(cfg_in)
  local cfg0 = cfg_in or {}
  if cfg0.device == nil then cfg0.device = "cpu" end
  local parts = lib.build(cfg0)
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

M.classifier = {
  parse = function(args) return config.parse(args or {}, lib.DEFAULTS) end,
  setup = classifier_setup,
}

return M
