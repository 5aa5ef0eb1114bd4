--[[
  config.lua — this project's settings, as plain data. train.lua reads it and lets flags
  override any key (`ltorch train.lua --epochs 1 --per-language 200`); an unknown key or a
  value of the wrong type is an error (exit 2). Checkpoints store the whole table (with the
  vocabulary added), so predict.lua rebuilds exactly the model that was trained.
]]
return {
  seed = 0,
  device = "auto",           -- "auto" (cuda when available), "cpu", "cuda", "cuda:N"
  amp = false,               -- mixed precision: the forward under autocast on the device
  amp_dtype = "bfloat16",    -- "bfloat16" (no loss scaling needed) or "float16" (adds a GradScaler)
  languages = "en,de,es,it", -- fortunes languages (Debian packages fortunes, fortunes-de, -es, -it)
  per_language = 2000,       -- texts per language (smaller: faster; smoke tests use 200)
  max_len = 96,              -- characters per text (T); longer texts are cut
  min_freq = 3,              -- characters seen fewer times in the train split become <unk>
  d_model = 64,              -- E: embedding width
  heads = 4,
  layers = 2,
  ff = 128,                  -- feed-forward width inside each encoder layer
  dropout = 0.1,
  epochs = 4,
  batch_size = 64,
  lr = 1e-3,
  weight_decay = 0.01,
  clip_grad_norm = 1.0,
  out = "runs/model",
}
