--[[
  config.lua — this project's settings, as plain data. check.lua and train.lua read it and
  let flags override any key (`ltorch check.lua --num-workers 0`); an unknown key or a value of
  the wrong type is an error (exit 2). Checkpoints store the whole table.
]]
return {
  seed = 0,
  device = "auto",             -- "auto" (cuda when available), "cpu", "cuda", "cuda:N"
  amp = false,                 -- mixed precision: the forward under autocast on the device
  amp_dtype = "bfloat16",      -- "bfloat16" (no loss scaling needed) or "float16" (adds a GradScaler)
  csv = "sample/labels.csv",   -- your data: a CSV with a header, one row per sample
  root = "sample",             -- file paths in the CSV are relative to this folder
  file_column = "file",
  label_column = "label",
  channels = 1,                -- images decoded as 1 (gray) or 3 (RGB) channels
  size = 16,                   -- every image must be size x size (resize yours beforehand)
  mean = 0.40,                 -- Normalize: x = (pixel / 255 - mean) / std; check.lua prints
  std = 0.34,                  -- the data's own mean/std to put here
  flip = true,                 -- RandomHorizontalFlip on the training split
  val_fraction = 0.25,
  batch_size = 8,
  num_workers = 2,             -- DataLoader worker threads (0: load in the main thread)
  hidden = 64,
  epochs = 20,
  lr = 3e-3,
  weight_decay = 1e-4,
  clip_grad_norm = 1.0,
  out = "runs/model",
}
