--[[
  recipes/inference.lua — batched predictions from a checkpoint of recipes/train_classifier.lua.

  Input: a CSV with the training table's feature columns (found by name; extra columns such
  as the target are ignored), or `fashion_mnist:test|train` for the image data. The saved
  statistics normalise it exactly as in training; the model runs in eval mode under
  torch.inference_mode, --batch-size rows at a time.
  Output (CSV, to --output or stdout): `index,prediction,probability` for classification
  (class name, and the softmax / sigmoid probability of that class) or `index,prediction` for
  regression (in the target's units).

  Run:  build/ltorch recipes/inference.lua CHECKPOINT [--input FILE|fashion_mnist:test]
                  [--output FILE] [--batch-size N] [--device D] [--amp] [--amp-dtype float16]
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local config = require "recipes.config"
local lib = require "recipes.classifier_lib"
local trainer = require "recipes.trainer"

local USAGE = [[
usage: ltorch recipes/inference.lua CHECKPOINT [flags]
  --input FILE.csv|fashion_mnist:test   rows to predict (default: fashion_mnist:test for image models)
  --output FILE          write the predictions CSV there (default: stdout)
  --batch-size N         rows per forward pass (default 1000)
  --device auto|cpu|cuda|cuda:N (default auto: cuda when available)
  --amp                  forward under autocast (bfloat16)   --amp-dtype bfloat16|float16 (needs --amp)
]]

local DEFAULTS = { input = "", output = "", batch_size = 1000, device = "auto", amp = false, amp_dtype = "bfloat16" }

local function load_input(spec, cfg, meta)
  local split = spec:match("^fashion_mnist:(%a+)$")
  if split then
    if cfg.data ~= "fashion_mnist" then config.usage_error("this checkpoint was trained on %s, not images", cfg.data) end
    local images = require("torch.data.fashion_mnist_files").load(split == "train" and "train" or "test")
    local x = images:float():div(255):sub(cfg.stats.mean):div(cfg.stats.std)
    return x:view(x:size(0), unpack(meta.in_shape))
  end
  if cfg.data == "fashion_mnist" then config.usage_error("an image model takes --input fashion_mnist:test or fashion_mnist:train") end
  if not io.open(spec, "rb") then config.usage_error("input file not found: %s", spec) end
  local ok, ds = pcall(torch.utils.data.datasets.CSVDataset, spec, { target = false, columns = meta.columns })
  if not ok then config.usage_error("%s", tostring(ds)) end
  local mean = torch.tensor(cfg.stats.mean, { dtype = torch.float32 })
  local std = torch.tensor(cfg.stats.std, { dtype = torch.float32 })
  return ds.features:sub(mean):div(std)
end

-- predict(model, x, meta, cfg, mp, batch_size) -> Lua array of {prediction, probability}
local function predict(model, x, meta, cfg, mp, batch_size)
  local rows = {}
  torch.inference_mode(function()
    for start = 0, x:size(0) - 1, batch_size do
      local len = math.min(batch_size, x:size(0) - start)
      local xb = x:narrow(0, start, len):to(mp.device)
      local out = mp:autocast(function() return model(xb) end):float():cpu()
      if meta.task == "multiclass" then
        local p, idx = out:softmax(1):max(1)
        local pl, il = p:tolist(), idx:tolist()
        for i = 1, len do rows[#rows + 1] = { meta.class_names[il[i] + 1], pl[i] } end
      elseif meta.task == "binary" then
        local pl = out:view(-1):sigmoid():tolist()
        for i = 1, len do
          local pos = pl[i] >= 0.5
          rows[#rows + 1] = { meta.class_names[pos and 2 or 1], pos and pl[i] or 1 - pl[i] }
        end
      else
        local vl = (out:view(-1) * cfg.stats.y_std + cfg.stats.y_mean):tolist()
        for i = 1, len do rows[#rows + 1] = { vl[i] } end
      end
    end
  end)
  return rows
end

local function main()
  local path, argv = config.positional(arg or {}, DEFAULTS)
  local opts = config.parse(argv, DEFAULTS)
  if not path then config.usage_error("missing CHECKPOINT") end
  if opts.batch_size < 1 then config.usage_error("batch-size must be positive") end
  local mp = trainer.amp(opts, { inference = true })
  local model, cfg, meta = lib.load_checkpoint(path, mp.device)
  local input = opts.input ~= "" and opts.input or (cfg.data == "fashion_mnist" and "fashion_mnist:test" or "")
  if input == "" then config.usage_error("missing --input FILE.csv") end
  local x = load_input(input, cfg, meta)
  local rows = predict(model, x, meta, cfg, mp, opts.batch_size)
  local out = opts.output ~= "" and assert(io.open(opts.output, "wb")) or io.stdout
  out:write(meta.task == "regression" and "index,prediction\n" or "index,prediction,probability\n")
  for i, r in ipairs(rows) do
    if r[2] then out:write(("%d,%s,%.4f\n"):format(i - 1, r[1], r[2]))
    else out:write(("%d,%.6g\n"):format(i - 1, r[1])) end
  end
  if out ~= io.stdout then out:close(); io.stderr:write(("inference: %d predictions -> %s\n"):format(#rows, opts.output)) end
end

config.main("inference", USAGE, main)
