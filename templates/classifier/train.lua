--[[
  train.lua — train the model on the data, keep the best and the last checkpoint, then report
  the test accuracy. Settings come from config.lua; flags override them:
      ltorch train.lua                       # the full run
      ltorch train.lua --epochs 1 --limit-train 2000
      ltorch train.lua --device cuda --amp   # on a GPU, bfloat16 mixed precision
  Writes <out>/metrics.jsonl (one line per epoch) and <out>/checkpoints/ (torch.training_state).
  The loop: model:train(); zero_grad -> forward (autocast with --amp) -> loss -> backward
  (loss scaled with --amp-dtype float16) -> clip -> step; validation under model:eval() +
  torch.inference_mode; losses averaged by sample count. Device and precision: amp.lua.
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local model_mod = require "model"
local data = require "data"
local flags = require "flags"

local function run_epoch(model, loader, criterion, mp, opt, clip)
  local training = opt ~= nil
  model:train(training)
  local total, correct, n = 0, 0, 0
  local function step(batch)
    local x, y = batch[1]:to(mp.device), batch[2]:to(mp.device)
    if training then opt:zero_grad() end
    local logits = mp:autocast(function() return model(x) end):float()
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
  torch.manual_seed(config.seed)
  local train, val, test, stats = data.loaders(config)
  config.stats = stats
  local model = model_mod.new(config):to(mp.device)
  local criterion = torch.nn.CrossEntropyLoss()
  local opt = torch.optim.AdamW(model:parameters(), { lr = config.lr, weight_decay = config.weight_decay })
  local mgr = torch.training_state.Manager(config.out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  print(("%d parameters on %s"):format(model:num_parameters(), mp:describe()))
  local init_loss = run_epoch(model, val, criterion, mp)
  print(("loss at init %.4f (uniform guess ln(10) = %.4f)"):format(init_loss, math.log(10)))
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
  print(("test loss %.4f  test accuracy %.2f %% (chance 10.00 %%)  best checkpoint %s"):format(
    test_loss, 100 * test_acc, mgr:best()))
end

main()
