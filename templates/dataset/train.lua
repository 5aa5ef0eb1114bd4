--[[
  train.lua — train model.lua on dataset.lua's split of your CSV, keep the best and the last
  checkpoint. Settings: config.lua; flags override them:
      ltorch train.lua                       # the full run (seconds on the sample data)
      ltorch train.lua --epochs 1            # a quick check
      ltorch train.lua --device cuda --amp   # on a GPU, bfloat16 mixed precision
  Run `ltorch check.lua` first on new data. Writes <out>/metrics.jsonl (one line per epoch)
  and <out>/checkpoints/ (torch.training_state: model, optimizer, GradScaler with float16, epoch,
  config with the classes).
  The loop: model:train(); zero_grad -> forward (autocast with --amp) -> loss -> backward
  (loss scaled with --amp-dtype float16) -> clip -> step; validation under model:eval() +
  torch.inference_mode; losses averaged by sample count. Device and precision: amp.lua.
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local flags = require "flags"
local Dataset = require "dataset"
local model_mod = require "model"
local data = torch.utils.data

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
    total, n = total + loss:item() * y:size(0), n + y:size(0)
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
  local ok, train_set, val_set = pcall(Dataset.split, config)
  if not ok then flags.fail("train.lua", tostring(train_set)) end
  local k = #train_set.classes
  config.classes = train_set.classes
  local train = data.DataLoader(train_set, { batch_size = config.batch_size, shuffle = true, generator = config.seed,
    num_workers = config.num_workers })
  local val = data.DataLoader(val_set, { batch_size = config.batch_size, num_workers = config.num_workers })
  torch.manual_seed(config.seed)
  local model = model_mod.new(config, k):to(mp.device)
  local criterion = torch.nn.CrossEntropyLoss()
  local opt = torch.optim.AdamW(model:parameters(), { lr = config.lr, weight_decay = config.weight_decay })
  print(("%d train / %d val samples, %d classes (%s); %d parameters on %s"):format(train_set:len(), val_set:len(), k,
    table.concat(train_set.classes, ", "), model:num_parameters(), mp:describe()))
  local init_loss = run_epoch(model, val, criterion, mp)
  print(("loss at init %.4f (uniform guess ln(%d) = %.4f)"):format(init_loss, k, math.log(k)))
  os.execute("mkdir -p '" .. config.out:gsub("'", "'\\''") .. "'")
  local mgr = torch.training_state.Manager(config.out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  local log = assert(io.open(config.out .. "/metrics.jsonl", "wb"))
  local val_loss, val_acc
  for epoch = 1, config.epochs do
    local train_loss, train_acc = run_epoch(model, train, criterion, mp, opt, config.clip_grad_norm)
    val_loss, val_acc = run_epoch(model, val, criterion, mp)
    log:write(json.encode({ epoch = epoch, train_loss = train_loss, train_accuracy = train_acc,
      val_loss = val_loss, val_accuracy = val_acc }), "\n")
    log:flush()
    print(("epoch %d  train loss %.4f  val loss %.4f  train acc %.2f %%  val acc %.2f %%%s"):format(
      epoch, train_loss, val_loss, 100 * train_acc, 100 * val_acc, mp:scale_note()))
    mgr:save(epoch, { model = model, optimizer = opt, scaler = mp.scaler, epoch = epoch, config = config },
      { val_loss = val_loss })
  end
  log:close()
  print(("best checkpoint %s (val loss %.4f in the last epoch, accuracy %.2f %%, chance %.2f %%)"):format(
    mgr:best(), val_loss, 100 * val_acc, 100 / k))
end

main()
