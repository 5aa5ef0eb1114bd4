--[[
  train.lua — pretrain a small byte-level LM on one text, then fine-tune LoRA adapters only on
  another, and compare. Settings: config.lua; flags override them:
      ltorch train.lua                                  # the full run (a few minutes on CPU)
      ltorch train.lua --epochs 1 --limit-steps 20      # a quick check
      ltorch train.lua --device cuda --amp              # on a GPU, bfloat16 mixed precision
  Prints: loss at init beside ln(256), trainable vs total parameters, the fine-tune text's val
  loss before / after (and the pretrain text's after: forgetting), that merging the adapters
  into the weights gives the same loss, and a sample. Writes <out>/pretrained.pt (the base
  model), <out>/checkpoints/ (adapters + optimizer (+ GradScaler with float16) + epoch + config,
  best by val loss) and <out>/adapters.pt (the adapters alone: apply them to pretrained.pt with
  lora.lua). The loop: model:train(); zero_grad -> forward (autocast with --amp) -> loss ->
  backward (loss scaled with --amp-dtype float16) -> clip -> step; validation under
  model:eval() + torch.inference_mode; losses averaged over positions, then by sample.
  Device and precision: amp.lua.
]]
local torch = require "torch"
local nn = torch.nn
local flags = require "flags"
local data = require "data"
local model_mod = require "model"
local lora = require "lora"

-- x, y (B, T) int64 on any device -> the mean next-byte cross-entropy (float32).
local function lm_loss(model, x, y, mp)
  x, y = x:to(mp.device), y:to(mp.device)
  local logits = mp:autocast(function() return model(x) end):float()
  return nn.functional.cross_entropy(logits:reshape(-1, model_mod.VOCAB), y:reshape(-1))
end

local function evaluate(model, batches, mp)
  model:eval()
  return torch.inference_mode(function()
    local total, n = 0, 0
    for _, b in ipairs(batches) do total, n = total + lm_loss(model, b[1], b[2], mp):item() * b[1]:size(0), n + b[1]:size(0) end
    return total / n
  end)
end

local function train(model, opt, params, text, steps, c, mp)
  model:train()
  local total = 0
  for _ = 1, steps do
    local x, y = data.batch(text, c.batch_size, c.context)
    opt:zero_grad()
    local loss = lm_loss(model, x, y, mp)
    mp:scale(loss):backward()
    mp:step(opt, params, c.clip_grad_norm)
    total = total + loss:item()
  end
  return total / steps
end

-- `n` bytes drawn after `prompt` (temperature 0.8), as a string.
local function sample(model, prompt, n, T, mp)
  model:eval()
  return torch.inference_mode(function()
    local ids = data.bytes(prompt):to(mp.device)
    for _ = 1, n do
      local ctx = ids:narrow(0, math.max(0, ids:size(0) - T), math.min(T, ids:size(0)))
      local logits = mp:autocast(function() return model(ctx:unsqueeze(0)) end):float():select(1, -1):view(-1)
      ids = torch.cat({ ids, torch.multinomial((logits / 0.8):softmax(0), 1) }, { dim = 0 })
    end
    local chars = {}
    for i, v in ipairs(ids:cpu():tolist()) do chars[i] = string.char(v) end
    return table.concat(chars)
  end)
end

local function main()
  io.stdout:setvbuf("line")
  local c = flags.parse(arg or {}, "train.lua")
  local mp = flags.amp(c, "train.lua")
  local function steps(n) return c.limit_steps > 0 and math.min(n, c.limit_steps) or n end
  local ok, pre, ft = pcall(data.texts, c)
  if not ok then flags.fail("train.lua", tostring(pre)) end
  torch.manual_seed(c.seed)
  local pre_val = data.val_batches(pre.val, c.batch_size, c.context, c.eval_batches)
  local ft_val = data.val_batches(ft.val, c.batch_size, c.context, c.eval_batches)
  local model = model_mod.new(c):to(mp.device)
  model_mod.init_head_bias(model, pre.train)      -- the byte prior: see model.lua
  print(("pretrain: %s (%d / %d bytes)  fine-tune: %s (%d / %d bytes)  model %d parameters on %s"):format(
    pre.name, pre.train:size(0), pre.val:size(0), ft.name, ft.train:size(0), ft.val:size(0), model:num_parameters(),
    mp:describe()))
  print(("loss at init %.4f (uniform over 256 bytes: ln(256) = %.4f; the head's bias starts at the byte prior)")
    :format(evaluate(model, pre_val, mp), math.log(256)))
  os.execute("mkdir -p '" .. c.out:gsub("'", "'\\''") .. "'")

  -- 1. pretraining: every parameter trains
  local opt = torch.optim.AdamW(model:parameters(), { lr = c.lr, weight_decay = 0.01 })
  local t0 = os.time()
  local tl = train(model, opt, model:parameters(), pre.train, steps(c.pretrain_steps), c, mp)
  local pre_loss, ft_before = evaluate(model, pre_val, mp), evaluate(model, ft_val, mp)
  print(("pretrained %d steps: train loss %.4f  %s val %.4f  %s val %.4f  (%d s)"):format(
    steps(c.pretrain_steps), tl, pre.name, pre_loss, ft.name, ft_before, os.time() - t0))
  torch.save(model:state_dict(), c.out .. "/pretrained.pt")

  -- 2. LoRA: freeze the model, train the adapters only
  local targets = {}
  for t in c.targets:gmatch("[^,%s]+") do targets[#targets + 1] = t end
  local params = lora.apply(model, { rank = c.rank, alpha = c.alpha, targets = targets })
  local trainable, total = model:num_parameters(true), model:num_parameters()
  print(("LoRA rank %d alpha %g on %s: %d trainable of %d parameters (%.2f %%)"):format(
    c.rank, c.alpha, c.targets, trainable, total, 100 * trainable / total))
  local start = evaluate(model, ft_val, mp)
  print(("%s val loss before fine-tuning %.4f (pretrained %.4f: B starts at zero)"):format(ft.name, start, ft_before))
  opt = torch.optim.AdamW(params, { lr = c.ft_lr, weight_decay = 0.0 })
  local adapters = lora.adapters(model)
  local mgr = torch.training_state.Manager(c.out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  for epoch = 1, c.epochs do
    t0 = os.time()
    tl = train(model, opt, params, ft.train, steps(c.steps_per_epoch), c, mp)
    local vl = evaluate(model, ft_val, mp)
    print(("epoch %d  train loss %.4f  %s val loss %.4f%s  (%d s)"):format(epoch, tl, ft.name, vl, mp:scale_note(),
      os.time() - t0))
    mgr:save(epoch, { model = adapters, optimizer = opt, scaler = mp.scaler, epoch = epoch, config = c },
      { val_loss = vl })
  end
  torch.training_state.load_training_state(mgr:best(), { model = adapters, restore_rng = false, map_location = mp.device })
  local after, forgot = evaluate(model, ft_val, mp), evaluate(model, pre_val, mp)
  print(("%s val loss %.4f -> %.4f after LoRA"):format(ft.name, ft_before, after))
  print(("%s val loss %.4f -> %.4f (the pretraining text: what the adapters changed there)"):format(
    pre.name, pre_loss, forgot))
  torch.save(adapters:state_dict(), c.out .. "/adapters.pt")
  lora.merge(model)
  print(("merged into the weights: val loss %.4f (same as with adapters)"):format(evaluate(model, ft_val, mp)))
  lora.unmerge(model)
  local n, bytes = 0, 0
  for _, t in pairs(adapters:state_dict()) do n, bytes = n + 1, bytes + t:numel() * 4 end
  print(("adapters alone: %s (%d tensors, %.1f KB); base model: %s"):format(c.out .. "/adapters.pt", n, bytes / 1024,
    c.out .. "/pretrained.pt"))
  print("sample: " .. sample(model, "\n", 100, c.context, mp):gsub("\n", "\n        "))
end

main()
