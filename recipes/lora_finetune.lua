--[[
  recipes/lora_finetune.lua — pretrain a byte-level language model on the King James Bible, then
  adapt it to Hamlet (act I) with LoRA: the pretrained weights stay frozen, only low-rank
  updates train.

  Data (fetched by recipes/fetch_lm_data.sh into $LTORCH_DATA_CACHE, default
  ~/.cache/ltorch/datasets, or --bible / --hamlet): bible-kjv/kjv.txt, the King James Bible
  one verse a line (4.1 MB, from Debian's bible-kjv-text 4.38) and hamlet/hamlet-act-1.txt
  from Debian's golang-github-golang-leveldb-dev (38 KB). Bytes are the tokens (V = 256);
  each text is split 90/10 into train / val by position. Training draws random windows, so
  the steps, not the size of the text, set the run time.
  Model (B batch, T context, E d_model): ids (B, T) -> Embedding(256, E) + positions ->
    TransformerEncoder with a causal mask (layers, heads, batch_first) -> LayerNorm ->
    Linear(E, 256) next-byte logits (B, T, 256); loss: CrossEntropy over B*T positions.
  LoRA (Hu et al. 2021, https://arxiv.org/abs/2106.09685): every feed-forward Linear and the
    output head become  y = W x + b + (alpha / r) * B (A x),  W, b frozen, A (r, in) drawn
    from N(0, 1/r), B (out, r) zero, so training starts exactly at the pretrained model.
  Report: val loss and bits per byte on Hamlet before and after fine-tuning, on the Bible
  after (forgetting), trainable vs total parameters, and a sample from the fine-tuned model.

  Run:  build/ltorch recipes/lora_finetune.lua [--pretrain-steps N] [--finetune-steps N]
        [--rank R] [--alpha A] [--context T] [--batch-size B] [--lr X] [--ft-lr X] [--seed S]
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local nn = torch.nn
local config = require "recipes.config"
local trainer = require "recipes.trainer"

local CACHE = (os.getenv("LTORCH_DATA_CACHE") or ((os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/datasets"))

local USAGE = [[
usage: ltorch recipes/lora_finetune.lua [flags]
  --pretrain-steps N (600)  --finetune-steps N (200)  --rank R (8)  --alpha A (16)
  --context T (64)  --batch-size B (32)  --d-model E (96)  --layers L (2)  --heads H (4)
  --lr X (2e-3, pretraining)  --ft-lr X (2e-3, LoRA)  --eval-batches N (20)  --seed S (0)
  --bible FILE  --hamlet FILE  --out DIR (runs/lora)  --config FILE
]]

local DEFAULTS = { pretrain_steps = 600, finetune_steps = 200, rank = 8, alpha = 16, context = 64,
  batch_size = 32, d_model = 96, layers = 2, heads = 4, lr = 2e-3, ft_lr = 2e-3, eval_batches = 20,
  seed = 0, bible = CACHE .. "/bible-kjv/kjv.txt", hamlet = CACHE .. "/hamlet/hamlet-act-1.txt",
  out = "runs/lora", clip_grad_norm = 1.0 }

---------------------------------------------------------------- model
local CharLM = nn.Module:extend("CharLM")
function CharLM:__init(c)
  self.embed = nn.Embedding(256, c.d_model)
  self.pos = nn.Embedding(c.context, c.d_model)
  self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(c.d_model, c.heads,
    { dim_feedforward = 4 * c.d_model, dropout = 0.0, batch_first = true, norm_first = true }), c.layers)
  self.norm = nn.LayerNorm(c.d_model)
  self.head = nn.Linear(c.d_model, 256)
end
function CharLM:forward(ids)                       -- ids (B, T) -> logits (B, T, 256)
  local T = ids:size(1)
  local causal = torch.ones(T, T, { dtype = torch.bool }):triu(1)   -- true: may not attend
  local h = self.embed(ids) + self.pos(torch.arange(T))
  return self.head(self.norm(self.encoder(h, { mask = causal })))
end

local LoRALinear = nn.Module:extend("LoRALinear")
function LoRALinear:__init(base, r, alpha)
  self.base = base
  base:requires_grad_(false)
  self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(r))
  self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
  self.scaling = alpha / r
end
function LoRALinear:forward(x)
  return self.base(x) + x:matmul(self.lora_A:t()):matmul(self.lora_B:t()) * self.scaling
end

-- Freezes everything, then wraps the feed-forward layers and the head in LoRA adapters.
local function add_lora(model, c)
  model:requires_grad_(false)
  for _, layer in ipairs(model.encoder.layers:children()) do
    layer.linear1 = LoRALinear(layer.linear1, c.rank, c.alpha)
    layer.linear2 = LoRALinear(layer.linear2, c.rank, c.alpha)
  end
  model.head = LoRALinear(model.head, c.rank, c.alpha)
  local params = {}
  for _, p in ipairs(model:parameters()) do if p.requires_grad then params[#params + 1] = p end end
  return params
end

---------------------------------------------------------------- data
-- A corpus file's bytes; `what` names it, `source` says which Debian package it comes from.
local function read(path, what, source)
  local f = io.open(path, "rb")
  if not f then
    config.usage_error("%s not found: %s (Debian %s; run bash recipes/fetch_lm_data.sh)", what, path, source)
  end
  local s = f:read("*a")
  f:close()
  return s
end

local function bytes(s) return torch.from_buffer(s, { dtype = torch.uint8, shape = { #s } }):long() end

local function split(s)
  local t = bytes(s)
  local n = math.floor(t:size(0) * 0.9)
  return { train = t:narrow(0, 0, n), val = t:narrow(0, n, t:size(0) - n) }
end

-- Random windows: x (B, T), y (B, T) = the next bytes.
local function batch(data, B, T)
  local starts = torch.randint(data:size(0) - T - 1, { B })
  local idx = starts:unsqueeze(1) + torch.arange(T + 1)
  local w = data:index_select(0, idx:view(-1)):view(B, T + 1)
  return w:narrow(1, 0, T), w:narrow(1, 1, T)
end

local function lm_loss(model, x, y) return nn.functional.cross_entropy(model(x):reshape(-1, 256), y:reshape(-1)) end

-- Mean loss over the first n consecutive windows of `data` (deterministic), in nats per byte.
local function evaluate(model, data, c)
  model:eval()
  return torch.inference_mode(function()
    local T, total, count = c.context, 0, 0
    local nwin = math.min(c.eval_batches * c.batch_size, math.floor((data:size(0) - 1) / T))
    for s = 0, nwin - 1, c.batch_size do
      local b = math.min(c.batch_size, nwin - s)
      local w = data:narrow(0, s * T, b * T + 1)
      local x = w:narrow(0, 0, b * T):view(b, T)
      local y = w:narrow(0, 1, b * T):view(b, T)
      total, count = total + lm_loss(model, x, y):item() * b, count + b
    end
    return total / count
  end)
end

local function train(model, params, data, steps, lr, c, label)
  local opt = torch.optim.AdamW(params, { lr = lr, weight_decay = 0.01 })
  local bar = trainer.progress(steps, label, "bytes")
  local total = 0
  model:train()
  for step = 1, steps do
    local x, y = batch(data, c.batch_size, c.context)
    opt:zero_grad()
    local loss = lm_loss(model, x, y)
    loss:backward()
    nn.utils.clip_grad_norm_(params, c.clip_grad_norm)
    opt:step()
    total = total + loss:item()
    if step % 25 == 0 or step == steps then
      bar(step, step * c.batch_size * c.context, ("loss %.4f"):format(total / 25))
      total = 0
    end
  end
end

local function sample(model, prompt, n, T)
  model:eval()
  return torch.inference_mode(function()
    local ids = bytes(prompt)
    for _ = 1, n do
      local ctx = ids:narrow(0, math.max(0, ids:size(0) - T), math.min(T, ids:size(0)))
      local logits = model(ctx:unsqueeze(0)):select(1, -1):view(-1)
      local nxt = torch.multinomial((logits / 0.8):softmax(0), 1)
      ids = torch.cat({ ids, nxt }, { dim = 0 })
    end
    local chars = {}
    for i, v in ipairs(ids:tolist()) do chars[i] = string.char(v) end
    return table.concat(chars)
  end)
end

local function main()
  io.stdout:setvbuf("line")
  local c = config.parse(arg or {}, DEFAULTS)
  local t0 = trainer.wall()
  local bible = split(read(c.bible, "King James Bible", "bible-kjv-text"))
  local hamlet = split(read(c.hamlet, "Hamlet act I", "golang-github-golang-leveldb-dev"))
  torch.manual_seed(c.seed)
  local model = CharLM(c)
  local bpb = 1 / math.log(2)
  print(("Bible %d / %d bytes, Hamlet act I %d / %d bytes (train / val); model %d parameters")
    :format(bible.train:size(0), bible.val:size(0), hamlet.train:size(0), hamlet.val:size(0), model:num_parameters()))
  print(("loss at init %.4f (uniform over 256 bytes: ln(256) = %.4f)"):format(evaluate(model, bible.val, c), math.log(256)))
  train(model, model:parameters(), bible.train, c.pretrain_steps, c.lr, c, "pretrain")
  local bible_pre, hamlet_pre = evaluate(model, bible.val, c), evaluate(model, hamlet.val, c)
  print(("pretrained: Bible val %.4f (%.3f bits/byte)  Hamlet val %.4f (%.3f bits/byte)")
    :format(bible_pre, bible_pre * bpb, hamlet_pre, hamlet_pre * bpb))
  os.execute("mkdir -p '" .. c.out:gsub("'", "'\\''") .. "'")
  torch.save(model:state_dict(), c.out .. "/pretrained.pt")
  local params = add_lora(model, c)
  local total = model:num_parameters()
  local trainable = 0
  for _, p in ipairs(params) do trainable = trainable + p:numel() end
  print(("LoRA rank %d alpha %g: %d trainable of %d parameters (%.1f %%)")
    :format(c.rank, c.alpha, trainable, total, 100 * trainable / total))
  local hamlet_start = evaluate(model, hamlet.val, c)
  train(model, params, hamlet.train, c.finetune_steps, c.ft_lr, c, "lora")
  local hamlet_ft, bible_ft = evaluate(model, hamlet.val, c), evaluate(model, bible.val, c)
  torch.save(model:state_dict(), c.out .. "/lora.pt")
  print(("LoRA start check: Hamlet val %.4f (equal to the pretrained %.4f: B starts at zero)"):format(hamlet_start, hamlet_pre))
  print(("fine-tuned: Hamlet val %.4f (%.3f bits/byte, was %.3f)  Bible val %.4f (%.3f bits/byte, was %.3f)")
    :format(hamlet_ft, hamlet_ft * bpb, hamlet_pre * bpb, bible_ft, bible_ft * bpb, bible_pre * bpb))
  print("sample: " .. sample(model, "HAMLET.\n", 120, c.context):gsub("\n", "\n        "))
  print(("result: lora  hamlet_val_before %.4f  hamlet_val_after %.4f  trainable %d/%d  in %.0f s")
    :format(hamlet_pre, hamlet_ft, trainable, total, trainer.wall() - t0))
end

config.main("lora_finetune", USAGE, main)
