--[[
  recipes/classifier_lib.lua — the pieces of recipes/train_classifier.lua as a library:
  defaults, data, model, loss and optimizer, built from one plain config table.

  Protocol (used by train_classifier.lua, evaluate.lua, inference.lua and ltorch doctor):
    local lib = require "recipes.classifier_lib"
    local parts = lib.build(config)    -- config: plain table; missing keys take lib.DEFAULTS
    -- parts = {model =, loss_fn =, optimizer =, train_loader =, val_loader =, test_loader =,
    --          config =, meta =, device =, amp =}
    -- parts.amp: the device and mixed precision (config.device / amp / amp_dtype; see
    --          templates/_common/amp.lua): amp:autocast(fn), amp:scale(loss), amp:step(opt, ...).
    -- parts.loss_fn(output, target) -> scalar loss; parts.meta = {task =, num_classes =,
    --          class_names =, in_features =, ...}; parts.config is the completed plain config
    --          (data statistics included), which is what checkpoints store.
  lib.build_model(config, meta) rebuilds just the model (for loading a checkpoint).

  Data:
    data = "fashion_mnist"    Debian's Fashion-MNIST: the 60k training images split into
                              train / val (val_size, seeded), the 10k test images as test;
                              pixels scaled to [0, 1] then normalised with the train split's
                              mean/std. Model "mlp" sees (B, 784), "cnn" (B, 1, 28, 28).
    data = "csv:FILE"         a CSV/TSV table (torch.data.datasets.CSVDataset), `target` the
                              label column (default: the last); split 70/15/15 (seeded);
                              features standardised with the train split's statistics.
                              --skip-lines N drops lines before the header, --no-header
                              names the columns column1..columnN.
                              task "auto" picks binary (2 distinct targets), multiclass
                              (categorical, or integral with <= 20 values) or regression.
  Shapes: B batch, F features, K classes. Losses: multiclass CrossEntropy on logits (B, K)
  (no softmax in the model); binary BCEWithLogits on (B) logits; regression MSE on (B) with the
  target standardised (its mean/std kept in config.stats to report in the original units).
]]
local torch = require "torch"
local amp = require "templates._common.amp"
local nn = torch.nn
local data = torch.utils.data

local M = {}

M.DEFAULTS = {
  data = "fashion_mnist", target = "", task = "auto",
  model = "mlp", hidden = 256, dropout = 0.1,
  epochs = 0, batch_size = 128, lr = 1e-3, weight_decay = 1e-4, optimizer = "adamw",
  schedule = "constant", clip_grad_norm = 1.0,
  device = "auto", seed = 0, amp = false, amp_dtype = "bfloat16",
  header = true, skip_lines = 0, val_size = 5000, limit_train = 0, limit_eval = 0,
  out = "runs/classifier", resume = false, log_every = 50, profile = 0,
}

M.DEFAULT_EPOCHS = { mlp = 10, cnn = 5 }

local CHOICES = { model = { mlp = 1, cnn = 1 }, task = { auto = 1, binary = 1, multiclass = 1, regression = 1 },
  optimizer = { adamw = 1, sgd = 1 }, schedule = { constant = 1, cosine = 1 } }

-- Fills missing keys from DEFAULTS and checks choices and ranges (a usage error otherwise).
function M.complete(config)
  local cfgmod = require "recipes.config"
  local cfg = cfgmod.copy(config or {})
  for k, v in pairs(M.DEFAULTS) do if cfg[k] == nil then cfg[k] = v end end
  for key, choices in pairs(CHOICES) do
    if not choices[cfg[key]] then
      local names = {}
      for n in pairs(choices) do names[#names + 1] = n end
      table.sort(names)
      cfgmod.usage_error("%s must be one of %s, got '%s'", key, table.concat(names, "|"), tostring(cfg[key]))
    end
  end
  if cfg.epochs == 0 then cfg.epochs = M.DEFAULT_EPOCHS[cfg.model] end   -- 0: the model's default
  for _, key in ipairs({ "epochs", "batch_size", "hidden" }) do
    if cfg[key] < 1 or cfg[key] ~= math.floor(cfg[key]) then cfgmod.usage_error("%s must be a positive integer, got %s", key, cfg[key]) end
  end
  local _, err = amp.new(cfg)   -- --device, --amp, --amp-dtype
  if err then cfgmod.usage_error("%s", err) end
  if cfg.lr <= 0 then cfgmod.usage_error("lr must be positive, got %s", cfg.lr) end
  if cfg.data ~= "fashion_mnist" and not cfg.data:match("^csv:.") then
    cfgmod.usage_error("data must be 'fashion_mnist' or 'csv:FILE', got '%s'", cfg.data)
  end
  local path = cfg.data:match("^csv:(.*)$")
  if path and not io.open(path, "rb") then cfgmod.usage_error("data file not found: %s", path) end
  if path and cfg.model == "cnn" then cfgmod.usage_error("model 'cnn' needs image data; use --model mlp with csv data") end
  return cfg
end

-- "auto" -> "cuda" when available, else "cpu"; an unavailable or malformed device is a usage error.
function M.resolve_device(name)
  local mp, err = amp.new({ device = name })
  if not mp then require("recipes.config").usage_error("%s", err) end
  return mp.device
end

-- Split indices: a seeded permutation of n, cut into the given sizes.
local function split(n, sizes, seed)
  torch.manual_seed(seed)
  local perm = torch.randperm(n)
  local out, start = {}, 0
  for i, s in ipairs(sizes) do out[i] = perm:narrow(0, start, s); start = start + s end
  return out
end

local function limit(x, n) return (n > 0 and n < x:size(0)) and x:narrow(0, 0, n) or x end

local function fashion_mnist(cfg)
  local fm = require "torch.data.fashion_mnist_files"
  local images, labels = fm.load("train")
  local test_images, test_labels = fm.load("test")
  local n = images:size(0)
  local idx = split(n, { n - cfg.val_size, cfg.val_size }, cfg.seed)
  local tr_idx, va_idx = limit(idx[1], cfg.limit_train), limit(idx[2], cfg.limit_eval)
  local x = images:float():div(255)
  local xtr = x:index_select(0, tr_idx)
  cfg.stats = cfg.stats or { mean = xtr:mean():item(), std = xtr:std():item() }
  local shape = cfg.model == "cnn" and { 1, 28, 28 } or { 784 }
  local function prep(t) return t:sub(cfg.stats.mean):div(cfg.stats.std):view(t:size(0), unpack(shape)) end
  local xte = limit(test_images:float():div(255), cfg.limit_eval)
  return {
    train = { prep(xtr), labels:index_select(0, tr_idx) },
    val = { prep(x:index_select(0, va_idx)), labels:index_select(0, va_idx) },
    test = { prep(xte), limit(test_labels, cfg.limit_eval) },
    meta = { task = "multiclass", num_classes = 10, class_names = fm.classes, in_shape = shape },
  }
end

local function csv_data(cfg)
  local path = cfg.data:match("^csv:(.*)$")
  local target = cfg.target ~= "" and (tonumber(cfg.target) or cfg.target) or nil
  local ok, ds = pcall(data.datasets.CSVDataset, path,
    { target = target, header = cfg.header, skip_lines = cfg.skip_lines })
  if not ok then require("recipes.config").usage_error("%s", tostring(ds):gsub("^.-CSVDataset", "CSVDataset")) end
  local x, y = ds.features, ds.targets
  local yl, uniq, seen = y:double():tolist(), {}, {}
  for _, v in ipairs(yl) do if not seen[v] then seen[v] = true; uniq[#uniq + 1] = v end end
  table.sort(uniq)
  local integral = y.dtype == torch.int64
  local task = cfg.task
  if task == "auto" then
    task = #uniq == 2 and "binary" or ((integral and #uniq <= 20) and "multiclass" or "regression")
  end
  local meta = { task = task, in_shape = { x:size(1) }, columns = ds.columns }
  if task ~= "regression" then
    cfg.class_values = cfg.class_values or uniq
    local map = {}
    for i, v in ipairs(cfg.class_values) do map[v] = i - 1 end
    local cat = ds.categories and ds.categories[ds.target_name or ""] and ds.categories[ds.target_name].names
    local names = {}
    for i, v in ipairs(cfg.class_values) do names[i] = cat and cat[v + 1] or tostring(v) end
    local idx = {}
    for i, v in ipairs(yl) do idx[i] = map[v] or 0 end
    y = torch.tensor(idx, { dtype = torch.int64 })
    meta.num_classes, meta.class_names = #cfg.class_values, names
  else
    y = y:float()
  end
  local n = x:size(0)
  local n_val, n_test = math.floor(n * 0.15), math.floor(n * 0.15)
  local idx = split(n, { n - n_val - n_test, n_val, n_test }, cfg.seed)
  local tr = limit(idx[1], cfg.limit_train)
  local xtr, ytr = x:index_select(0, tr), y:index_select(0, tr)
  if not cfg.stats then
    local mean, std = xtr:mean(0), xtr:std(0):clamp({ min = 1e-6 })
    cfg.stats = { mean = mean:tolist(), std = std:tolist() }
    if task == "regression" then cfg.stats.y_mean, cfg.stats.y_std = ytr:mean():item(), math.max(ytr:std():item(), 1e-6) end
  end
  local mean, std = torch.tensor(cfg.stats.mean, { dtype = torch.float32 }), torch.tensor(cfg.stats.std, { dtype = torch.float32 })
  local function prep(i)
    local yy = y:index_select(0, i)
    if task == "regression" then yy = yy:sub(cfg.stats.y_mean):div(cfg.stats.y_std) end
    return { x:index_select(0, i):sub(mean):div(std), yy }
  end
  return { train = prep(tr), val = prep(limit(idx[2], cfg.limit_eval)), test = prep(limit(idx[3], cfg.limit_eval)), meta = meta }
end

function M.load_data(cfg)
  local d = cfg.data == "fashion_mnist" and fashion_mnist(cfg) or csv_data(cfg)
  d.meta.out_features = (d.meta.task == "multiclass") and d.meta.num_classes or 1
  return d
end

function M.build_model(cfg, meta)
  local out = meta.out_features
  local model
  if cfg.model == "cnn" then
    -- (B,1,28,28) -> conv 16 -> pool (B,16,14,14) -> conv 32 -> pool (B,32,7,7) -> hidden -> K
    -- bias=false before BatchNorm: BN's shift makes a conv bias dead weight.
    model = nn.Sequential(
      nn.Conv2d(1, 16, 3, { padding = 1, bias = false }), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
      nn.Conv2d(16, 32, 3, { padding = 1, bias = false }), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Dropout(cfg.dropout), nn.Linear(32 * 7 * 7, cfg.hidden), nn.ReLU(),
      nn.Dropout(cfg.dropout), nn.Linear(cfg.hidden, out))
  else
    -- (B,F) -> hidden -> hidden/2 -> K
    local f, h = meta.in_shape[1], cfg.hidden
    model = nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Dropout(cfg.dropout),
      nn.Linear(h, math.max(math.floor(h / 2), 1)), nn.ReLU(), nn.Dropout(cfg.dropout), nn.Linear(math.max(math.floor(h / 2), 1), out))
  end
  return model
end

-- Output-layer bias from the training labels (checklist: kills the "hockey stick"):
-- log class priors for multiclass, log-odds for binary, 0 for standardised regression.
local function init_head_bias(model, task, y, k)
  local head
  for _, m in ipairs(model:children()) do if m.weight and m.bias and m.weight:dim() == 2 then head = m end end
  if not head then return end
  torch.no_grad(function()
    if task == "multiclass" then
      local counts = torch.bincount(y, { minlength = k }):double():add(1)
      head.bias:copy_((counts / counts:sum()):log():float())
    elseif task == "binary" then
      local p = math.min(math.max(y:double():mean():item(), 1e-3), 1 - 1e-3)
      head.bias:fill_(math.log(p / (1 - p)))
    else
      head.bias:zero_()
    end
  end)
end

function M.loss_fn(task)
  if task == "multiclass" then
    local ce = nn.CrossEntropyLoss()
    return function(out, y) return ce(out, y) end
  elseif task == "binary" then
    local bce = nn.BCEWithLogitsLoss()
    return function(out, y) return bce(out:view(-1), y:float()) end
  end
  local mse = nn.MSELoss()
  return function(out, y) return mse(out:view(-1), y) end
end

-- Loads a checkpoint written by train_classifier: -> model (eval mode, on device), config, meta.
function M.load_checkpoint(path, device)
  local cfgmod = require "recipes.config"
  if not io.open(path, "rb") then cfgmod.usage_error("checkpoint not found: %s", path) end
  local ok, st = pcall(torch.load, path, { map_location = "cpu" })
  if not ok then cfgmod.usage_error("cannot read checkpoint %s: %s", path, tostring(st)) end
  if type(st) ~= "table" or type(st.config) ~= "table" or type(st.config.meta) ~= "table" then
    cfgmod.usage_error("%s is not a checkpoint written by recipes/train_classifier.lua", path)
  end
  local cfg = st.config
  device = M.resolve_device(device or "auto")
  local model = M.build_model(cfg, cfg.meta)
  model:load_state_dict(st.model)
  model:to(device)
  model:eval()
  return model, cfg, cfg.meta, device
end

function M.build(config)
  local cfg = M.complete(config)
  local mp = assert(amp.new(cfg))   -- complete() checked the keys
  local device = mp.device
  local d = M.load_data(cfg)
  cfg.meta = d.meta   -- plain data: lets evaluate/inference rebuild the model without the data
  torch.manual_seed(cfg.seed)
  local model = M.build_model(cfg, d.meta)
  init_head_bias(model, d.meta.task, d.train[2], d.meta.num_classes)
  model:to(device)
  local opt
  if cfg.optimizer == "sgd" then
    opt = torch.optim.SGD(model:parameters(), { lr = cfg.lr, momentum = 0.9, weight_decay = cfg.weight_decay })
  else
    opt = torch.optim.AdamW(model:parameters(), { lr = cfg.lr, weight_decay = cfg.weight_decay })
  end
  local function loader(part, shuffle)
    return data.DataLoader(data.TensorDataset(d[part][1], d[part][2]),
      { batch_size = shuffle and cfg.batch_size or math.max(cfg.batch_size, 1000), shuffle = shuffle, generator = cfg.seed,
        pin_memory = torch.device(device).type == "cuda" })   -- page-locked batches: asynchronous copies
  end
  return { model = model, loss_fn = M.loss_fn(d.meta.task), optimizer = opt, config = cfg, meta = d.meta,
    device = device, amp = mp, train_loader = loader("train", true), val_loader = loader("val", false),
    test_loader = loader("test", false) }
end

return M
