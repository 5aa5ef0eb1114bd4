--[[
  train.lua — train the Transformer classifier, keep the best and the last checkpoint, then
  report the test accuracy beside the majority-class baseline. Settings: config.lua; flags
  override them:
      ltorch train.lua                                   # the full run (~4 epochs)
      ltorch train.lua --epochs 1 --per-language 200     # a quick check
      ltorch train.lua --device cuda --amp               # on a GPU, bfloat16 mixed precision
  Writes <out>/metrics.jsonl (one line per epoch) and <out>/checkpoints/ (torch.training_state:
  model, optimizer, GradScaler with float16, epoch, config with the vocabulary and class names).
  The loop: model:train(); zero_grad -> forward (autocast with --amp) -> loss -> backward
  (loss scaled with --amp-dtype float16) -> clip -> step; validation under model:eval() +
  torch.inference_mode; losses averaged by sample count. Device and precision: amp.lua.
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local flags = require "flags"
local model_mod = require "model"
local data = require "data"

local function run_epoch(model, loader, criterion, mp, opt, clip)
  local training = opt ~= nil
  model:train(training)
  local total, correct, n = 0, 0, 0
  local function step(batch)
    local ids, mask, y = batch[1]:to(mp.device), batch[2]:to(mp.device), batch[3]:to(mp.device)
    if training then opt:zero_grad() end
    local logits = mp:autocast(function() return model(ids, mask) end):float()
    local loss = criterion(logits, y)
    if training then
      mp:scale(loss):backward()
      mp:step(opt, model:parameters(), clip)
    end
    local b = y:size(0)
    total, n = total + loss:item() * b, n + b
    correct = correct + logits:detach():argmax(1):eq(y):sum():item()
  end
  for batch in loader:iter() do
    if training then step(batch) else torch.inference_mode(function() step(batch) end) end
  end
  return total / n, correct / n
end

local function main()
  io.stdout:setvbuf("line")
  local config = flags.parse(arg or {}, "train.lua")
  local mp = flags.amp(config, "train.lua")
  local ok, train, val, test, tok, classes = pcall(data.loaders, config)
  if not ok then flags.fail("train.lua", (tostring(train):gsub("^[^:]*:%d+: ", ""))) end
  config.vocab, config.classes = tok.itos, classes
  torch.manual_seed(config.seed)
  local model = model_mod.new(config, #tok.itos, #classes):to(mp.device)
  local criterion = torch.nn.CrossEntropyLoss()
  local opt = torch.optim.AdamW(model:parameters(), { lr = config.lr, weight_decay = config.weight_decay })
  print(("classes %s; %d train / %d val / %d test texts; vocabulary %d; %d parameters on %s"):format(
    table.concat(classes, " "), train.dataset:len(), val.dataset:len(), test.dataset:len(), #tok.itos,
    model:num_parameters(), mp:describe()))
  local init_loss = run_epoch(model, val, criterion, mp)
  print(("loss at init %.4f (uniform guess ln(%d) = %.4f)"):format(init_loss, #classes, math.log(#classes)))
  os.execute("mkdir -p '" .. config.out:gsub("'", "'\\''") .. "'")
  local mgr = torch.training_state.Manager(config.out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  local log = assert(io.open(config.out .. "/metrics.jsonl", "wb"))
  for epoch = 1, config.epochs do
    local t0 = os.time()
    local train_loss, train_acc = run_epoch(model, train, criterion, mp, opt, config.clip_grad_norm)
    local val_loss, val_acc = run_epoch(model, val, criterion, mp)
    log:write(json.encode({ epoch = epoch, train_loss = train_loss, train_accuracy = train_acc,
      val_loss = val_loss, val_accuracy = val_acc }), "\n")
    log:flush()
    print(("epoch %d  train loss %.4f  val loss %.4f  train acc %.2f %%  val acc %.2f %%%s  (%d s)"):format(
      epoch, train_loss, val_loss, 100 * train_acc, 100 * val_acc, mp:scale_note(), os.time() - t0))
    mgr:save(epoch, { model = model, optimizer = opt, scaler = mp.scaler, epoch = epoch, config = config },
      { val_loss = val_loss })
  end
  log:close()
  torch.training_state.load_training_state(mgr:best(), { model = model, restore_rng = false, map_location = mp.device })
  local test_loss, test_acc = run_epoch(model, test, criterion, mp)
  local counts = torch.bincount(test.dataset.tensors[3])   -- test labels per class
  print(("test loss %.4f  test accuracy %.2f %% (majority class %.2f %%)  best checkpoint %s"):format(
    test_loss, 100 * test_acc, 100 * counts:max():item() / test.dataset:len(), mgr:best()))
end

main()
