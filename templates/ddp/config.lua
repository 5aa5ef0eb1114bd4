--[[
  config.lua — this project's settings, as plain data. train.lua reads it and lets flags
  override any key (`ltorch train.lua --epochs 1 --limit-train 2000`); an unknown key or a
  value of the wrong type is an error (exit 2). Checkpoints store the whole table.
]]
return {
  seed = 0,
  device = "auto",        -- "auto" (cuda when available), "cpu", "cuda", "cuda:N"
  amp = false,            -- mixed precision: the forward under autocast on the device
  amp_dtype = "bfloat16", -- "bfloat16" (no loss scaling needed) or "float16" (adds a GradScaler)
  backend = "auto",       -- "auto": "nccl" on CUDA (one GPU per rank), "gloo" on the CPU
  timeout = 300,          -- seconds: rendezvous and every collective (a dead peer is an error, not a hang)
  hidden = 256,
  epochs = 3,
  batch_size = 128,       -- the GLOBAL batch: each of W ranks takes batch_size / W per step
  lr = 0.05,
  momentum = 0.9,
  clip_grad_norm = 1.0,
  limit_train = 0,        -- > 0: the first N training images only (smoke tests)
  limit_test = 0,         -- > 0: the first N test images only
  out = "runs/ddp",
}
