--[[
  recipes/train_transformer.lua — language identification with a small Transformer encoder
  over characters: Debian's fortunes in 6 languages (en de es it pl pt).

  Data: torch.data.datasets.Fortunes, at most --per-language entries per language, each cut to
  its first --max-len characters; split 80/10/10 (seeded); a char tokenizer built on the train
  split (characters seen fewer than 3 times -> <unk>).
  Model (B batch, T max_len, E d_model, K 6 languages):
    ids (B, T) -> Embedding(V, E, padding_idx 0) + learned positions (T, E)
      -> TransformerEncoder(layers x [self-attention with the padding mask, FF], batch_first)
      -> LayerNorm -> mean over real characters (B, E) -> Linear(E, K) logits
  Loop: AdamW, constant lr, zero_grad -> forward (autocast with --amp) -> backward (loss scaled
  with --amp-dtype float16) -> clip_grad_norm_ -> step; validation under eval() +
  inference_mode each epoch; checkpoints (last + best by val loss, the GradScaler's state
  beside the optimizer's) in --out. Device and precision: templates/_common/amp.lua.
  Report: test accuracy beside the majority-class baseline, per-language precision / recall /
  F1 (recall = the accuracy on that language) and the confusion matrix.

  Run:  build/ltorch recipes/train_transformer.lua [--epochs N] [--per-language N] [--max-len T]
        [--d-model E] [--layers L] [--heads H] [--lr X] [--batch-size B] [--seed S] [--out DIR]
        [--device D] [--amp] [--amp-dtype float16]
  Needs the Debian packages fortunes fortunes-de fortunes-es fortunes-it fortunes-pl fortunes-br.
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local nn = torch.nn
local data = torch.utils.data
local config = require "recipes.config"
local trainer = require "recipes.trainer"
local metrics = require "recipes.metrics"
local json = require "torch.serialization.json"

local USAGE = [[
usage: ltorch recipes/train_transformer.lua [flags]
  --epochs N (4)  --per-language N (2000)  --max-len T (96)  --batch-size B (64)  --lr X (1e-3)
  --d-model E (64)  --heads H (4)  --layers L (2)  --ff N (128)  --dropout X (0.1)
  --seed S (0)  --out DIR (runs/langid)  --config FILE  --languages en,de,es,it,pl,pt
  --device auto|cpu|cuda|cuda:N (default auto: cuda when available)
  --amp  mixed precision: autocast on the device, bfloat16 (no loss scaling needed)
  --amp-dtype bfloat16|float16   float16 adds a GradScaler (loss scaling; needs --amp)
]]

local DEFAULTS = { epochs = 4, per_language = 2000, max_len = 96, batch_size = 64, lr = 1e-3,
  d_model = 64, heads = 4, layers = 2, ff = 128, dropout = 0.1, weight_decay = 0.01,
  clip_grad_norm = 1.0, seed = 0, out = "runs/langid", languages = "en,de,es,it,pl,pt",
  device = "auto", amp = false, amp_dtype = "bfloat16" }

local LangID = nn.Module:extend("LangID")

function LangID:__init(vocab, c, k)
  self.embed = nn.Embedding(vocab, c.d_model, { padding_idx = 0 })
  self.pos = nn.Embedding(c.max_len, c.d_model)
  local layer = nn.TransformerEncoderLayer(c.d_model, c.heads,
    { dim_feedforward = c.ff, dropout = c.dropout, batch_first = true })
  self.encoder = nn.TransformerEncoder(layer, c.layers)
  self.norm = nn.LayerNorm(c.d_model)
  self.head = nn.Linear(c.d_model, k)
end

-- ids (B, T) int64, mask (B, T) bool (true on real characters) -> logits (B, K)
function LangID:forward(ids, mask)
  local T = ids:size(1)
  local pos = torch.arange(T, { device = ids.device })
  local h = self.embed(ids) + self.pos(pos)                       -- (B, T, E)
  h = self.encoder(h, { src_key_padding_mask = mask:logical_not() })
  h = self.norm(h)
  local m = mask:unsqueeze(2):to(h.dtype)                          -- (B, T, 1)
  local pooled = (h * m):sum(1) / m:sum(1):clamp({ min = 1 })      -- (B, E)
  return self.head(pooled)
end

local function load(c)
  local langs = {}
  for l in c.languages:gmatch("[^,%s]+") do langs[#langs + 1] = l end
  local ok, ds = pcall(data.datasets.Fortunes, { languages = langs, max_per_language = c.per_language, min_chars = 20 })
  if not ok then config.usage_error("%s", tostring(ds)) end
  torch.manual_seed(c.seed)
  local n = #ds.texts
  local perm = torch.randperm(n):tolist()
  local n_val, n_test = math.floor(n * 0.1), math.floor(n * 0.1)
  local splits, bounds = {}, { train = { 1, n - n_val - n_test }, val = { n - n_val - n_test + 1, n - n_test }, test = { n - n_test + 1, n } }
  for name, b in pairs(bounds) do
    local texts, labels = {}, {}
    for i = b[1], b[2] do
      local t = ds.texts[perm[i] + 1]
      texts[#texts + 1] = t:sub(1, c.max_len * 2)   -- bytes; the tokenizer cuts to max_len chars
      labels[#labels + 1] = ds.labels[perm[i] + 1]
    end
    splits[name] = { texts = texts, labels = labels }
  end
  local tok = data.tokenizer.Tokenizer({ level = "char", min_freq = 3 }):build(splits.train.texts)
  for _, s in pairs(splits) do
    s.ids, s.mask = tok:batch(s.texts, { max_len = c.max_len })
    s.y = torch.tensor(s.labels, { dtype = torch.int64 })
  end
  return splits, tok, ds.languages or langs
end

local function run_epoch(model, loader, criterion, opt, c, mp, label)
  local training = opt ~= nil
  model:train(training)
  local total, correct, n, done = 0, 0, 0, 0
  local bar = training and trainer.progress(loader:len(), label)
  local outs = {}
  local function step(b)
    local ids, mask, y = b[1]:to(mp.device), b[2]:to(mp.device), b[3]:to(mp.device)
    if training then opt:zero_grad() end
    local logits = mp:autocast(function() return model(ids, mask) end):float()
    local loss = criterion(logits, y)
    if training then
      mp:scale(loss):backward()
      mp:step(opt, model:parameters(), c.clip_grad_norm)
    else
      outs[#outs + 1] = logits:argmax(1)
    end
    local bs = y:size(0)
    total, n, done = total + loss:item() * bs, n + bs, done + 1
    correct = correct + logits:detach():argmax(1):eq(y):sum():item()
    if bar and (done % 20 == 0 or done == loader:len()) then bar(done, n, ("loss %.4f"):format(total / n)) end
  end
  for b in loader:iter() do
    if training then step(b) else torch.inference_mode(function() step(b) end) end
  end
  return total / n, correct / n, (not training) and torch.cat(outs, { dim = 0 }):cpu() or nil
end

local function main()
  io.stdout:setvbuf("line")
  local c = config.parse(arg or {}, DEFAULTS)
  local mp = trainer.amp(c)
  local t0 = trainer.wall()
  local s, tok, langs = load(c)
  local k = #langs
  local function loader(name, shuffle)
    return data.DataLoader(data.TensorDataset(s[name].ids, s[name].mask, s[name].y),
      { batch_size = c.batch_size, shuffle = shuffle, generator = c.seed })
  end
  local train, val, test = loader("train", true), loader("val", false), loader("test", false)
  torch.manual_seed(c.seed)
  local model = LangID(#tok.itos, c, k):to(mp.device)
  local criterion = nn.CrossEntropyLoss()
  local opt = torch.optim.AdamW(model:parameters(), { lr = c.lr, weight_decay = c.weight_decay })
  print(("languages %s: %d train / %d val / %d test texts, %d characters in the vocabulary; %d parameters on %s")
    :format(table.concat(langs, " "), s.train.y:size(0), s.val.y:size(0), s.test.y:size(0), #tok.itos, model:num_parameters(),
      mp:describe()))
  local init_loss = run_epoch(model, val, criterion, nil, c, mp)
  print(("loss at init %.4f (uniform guess ln(%d) = %.4f)"):format(init_loss, k, math.log(k)))
  os.execute("mkdir -p '" .. c.out:gsub("'", "'\\''") .. "'")
  local mgr = torch.training_state.Manager(c.out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  local log = assert(io.open(c.out .. "/metrics.jsonl", "wb"))
  for epoch = 1, c.epochs do
    local e0 = trainer.wall()
    local tl, ta = run_epoch(model, train, criterion, opt, c, mp, ("epoch %d/%d"):format(epoch, c.epochs))
    local vl, va = run_epoch(model, val, criterion, nil, c, mp)
    log:write(json.encode({ epoch = epoch, train_loss = tl, train_accuracy = ta, val_loss = vl, val_accuracy = va }), "\n")
    log:flush()
    print(("epoch %d  train loss %.4f  val loss %.4f  train acc %.2f %%  val acc %.2f %%%s  (%.1f s)")
      :format(epoch, tl, vl, 100 * ta, 100 * va, mp:scale_note(), trainer.wall() - e0))
    mgr:save(epoch, { model = model, optimizer = opt, scaler = mp.scaler, epoch = epoch, config = c }, { val_loss = vl })
  end
  log:close()
  torch.training_state.load_training_state(mgr:best(), { model = model, restore_rng = false, map_location = mp.device })
  local _, acc, pred = run_epoch(model, test, criterion, nil, c, mp)
  local conf = metrics.confusion(pred, s.test.y, k)
  local rep = metrics.classification_report(conf)
  local base = torch.bincount(s.test.y, { minlength = k }):max():item() / s.test.y:size(0)
  print(("test accuracy %.2f %% (majority-class baseline %.2f %%)"):format(100 * acc, 100 * base))
  print("per language: recall = accuracy on that language's texts (the majority baseline scores 100 % on one language, 0 % on the rest)")
  print(metrics.format_report(rep, conf, langs))
  print(("result: langid transformer  accuracy %.4f  macro_f1 %.4f  baseline %.4f  in %.0f s")
    :format(acc, rep.macro.f1, base, trainer.wall() - t0))
end

config.main("train_transformer", USAGE, main)
