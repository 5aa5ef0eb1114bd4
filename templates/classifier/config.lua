--[[
  config.lua — this project's settings, as plain data. train.lua reads it and lets flags
  override any key (`ltorch train.lua --epochs 1 --lr 3e-4`); an unknown key or a value of
  the wrong type is an error. Checkpoints store the whole table, so evaluate.lua rebuilds
  exactly the model that was trained.
]]
return {
  seed = 0,
  device = "auto",        -- "auto" (cuda when available), "cpu", "cuda", "cuda:N"
  amp = false,            -- mixed precision: the forward under autocast on the device
  amp_dtype = "bfloat16", -- "bfloat16" (no loss scaling needed) or "float16" (adds a GradScaler)
  hidden = 256,           -- width of the MLP's hidden layer
  dropout = 0.1,
  epochs = 10,
  batch_size = 128,
  lr = 1e-3,              -- constant: tune it last (see the training checklist)
  weight_decay = 1e-4,
  clip_grad_norm = 1.0,
  val_size = 5000,        -- images held out of the 60k training set for validation
  limit_train = 0,        -- > 0: train on that many images only (smoke tests)
  out = "runs/model",
}
