--[[
  config.lua — this project's settings, as plain data. train.lua reads it and lets flags
  override any key (`ltorch train.lua --epochs 1 --limit-steps 20`); an unknown key or a value
  of the wrong type is an error (exit 2). Checkpoints store the whole table.
]]
return {
  seed = 0,
  device = "auto",        -- "auto" (cuda when available), "cpu", "cuda", "cuda:N"
  amp = false,            -- mixed precision: the forward under autocast on the device
  amp_dtype = "bfloat16", -- "bfloat16" (no loss scaling needed) or "float16" (adds a GradScaler)
  -- texts: "auto" = the King James Bible (pretrain) and Hamlet act I (fine-tune) from
  -- ~/.cache/ltorch/datasets (bash recipes/fetch_lm_data.sh in the ltorch checkout), falling
  -- back to texts every Debian system has; or a file / a folder of chapter_N.txt files.
  pretrain_text = "auto",
  finetune_text = "auto",
  context = 64,           -- T: bytes the model sees at once
  d_model = 64,           -- E
  heads = 4,
  layers = 2,
  batch_size = 32,
  pretrain_steps = 300,   -- full-model training on the pretrain text (keep it brief)
  lr = 2e-3,              -- pretraining learning rate
  -- LoRA (y = W x + b + alpha / rank * B A x; W, b frozen)
  rank = 8,
  alpha = 16,
  targets = "linear1,linear2,head",   -- Linear modules to adapt (last component of their names)
  epochs = 2,             -- fine-tuning: epochs of steps_per_epoch steps, val loss + checkpoint each
  steps_per_epoch = 100,
  ft_lr = 2e-3,
  limit_steps = 0,        -- > 0: at most that many steps per phase (smoke tests)
  eval_batches = 10,      -- validation: this many batches of consecutive windows
  clip_grad_norm = 1.0,
  out = "runs/lora",
}
