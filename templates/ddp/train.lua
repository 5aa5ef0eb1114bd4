--[[
  train.lua — data-parallel training with DistributedDataParallel, one process per rank.
      ltorch train.lua --epochs 1 --limit-train 2000                    # alone: a world of one
      ltorch run --nproc-per-node 2 train.lua --epochs 1 --limit-train 2000   # 2 ranks, this machine
  (`ltorch run` is ltorch's launcher, tools/run.lua in the ltorch checkout: it sets RANK,
  WORLD_SIZE, MASTER_ADDR, MASTER_PORT for each rank and prefixes their output "[rank N]".)
  config.batch_size is the global batch: W ranks each take batch_size / W samples per step from
  their DistributedSampler shard (reshuffled each epoch by set_epoch) and DDP averages the
  gradients, so 2 ranks take the same steps as one process. Only rank 0 prints and writes
  <out>/metrics.jsonl and <out>/checkpoints/ (the bare model without DDP's "module." prefix,
  optimizer, epoch, config). Losses and accuracies are summed over all ranks (all_reduce) and
  averaged by sample count. The loop: model:train(); zero_grad -> forward (autocast with --amp)
  -> loss:backward() (DDP all-reduces during it; scaled with --amp-dtype float16) -> clip -> step;
  evaluation under eval() + inference_mode. Under `ltorch run --max-restarts N` a restarted job
  resumes from the latest checkpoint (see resume below).
  Devices (amp.lua): --device auto takes a GPU when there is one, each rank its own
  (cuda:LOCAL_RANK); --backend auto then picks NCCL (Gloo on the CPU).
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local flags = require "flags"
local model_mod = require "model"
local data_mod = require "data"
local dist = torch.distributed
local data = torch.utils.data

-- The process group: from the launcher's environment, or a world of one.
-- device_id binds the group to this rank's GPU (NCCL connects at once), as PyTorch's examples do.
local function init(config, backend, device_id)
  if os.getenv("RANK") then
    dist.init_process_group({ backend = backend, timeout = config.timeout, device_id = device_id })
  else
    local base = os.tmpname()
    os.remove(base)
    dist.init_process_group({ backend = backend, init_method = "file://" .. base .. ".store",
      rank = 0, world_size = 1, timeout = config.timeout, device_id = device_id })
  end
  return dist.get_rank(), dist.get_world_size()
end

-- Sums {loss * samples, correct, samples} over every rank (on the run's device: NCCL reduces
-- CUDA tensors only).
local function reduce(total, correct, n, device)
  local t = torch.tensor({ total, correct, n }, { dtype = torch.float64, device = device })
  dist.all_reduce(t)
  local s = t:cpu():tolist()
  return s[1] / s[3], s[2] / s[3], s[3]
end

local function train_epoch(ddp, loader, criterion, opt, clip, mp)
  ddp:train()
  local total, correct, n = 0, 0, 0
  for batch in loader:iter() do
    local x, y = batch[1]:to(mp.device), batch[2]:to(mp.device)
    opt:zero_grad()
    local logits = mp:autocast(function() return ddp(x) end):float()
    local loss = criterion(logits, y)
    mp:scale(loss):backward()                -- gradients averaged over the ranks during backward
    mp:step(opt, ddp:parameters(), clip)
    total, n = total + loss:item() * y:size(0), n + y:size(0)
    correct = correct + logits:detach():argmax(1):eq(y):sum():item()
  end
  return reduce(total, correct, n, mp.device)
end

-- Each rank scores its own rows of the evaluation set (rank, rank + W, ...), then the sums meet.
local function evaluate(model, loader, criterion, mp)
  model:eval()
  local total, correct, n = 0, 0, 0
  torch.inference_mode(function()
    for batch in loader:iter() do
      local x, y = batch[1]:to(mp.device), batch[2]:to(mp.device)
      local logits = mp:autocast(function() return model(x) end):float()
      total, n = total + criterion(logits, y):item() * y:size(0), n + y:size(0)
      correct = correct + logits:argmax(1):eq(y):sum():item()
    end
  end)
  return reduce(total, correct, n, mp.device)
end

--[[ After a restart by `ltorch run --max-restarts N` (TORCHELASTIC_RESTART_COUNT > 0) every rank
     loads the latest checkpoint (model, optimizer, scaler, RNG) and training goes on from the
     epoch after it; returns the first epoch to train. ]]
local function resume(config, into, log)
  if tonumber(os.getenv("TORCHELASTIC_RESTART_COUNT") or "0") == 0 then return 1 end
  local mgr = torch.training_state.Manager(config.out .. "/checkpoints", { keep_last = 1 })
  local st = mgr:load_latest(into)
  if not st then log("restarted with no checkpoint yet: starting from epoch 1"); return 1 end
  log(("restarted: resumed from %s (epoch %d done)"):format(mgr:latest(), st.epoch))
  return st.epoch + 1
end

local function main()
  io.stdout:setvbuf("line")
  local config = flags.parse(arg or {}, "train.lua")
  local mp = flags.amp(config, "train.lua", { local_rank = tonumber(os.getenv("LOCAL_RANK") or "") })
  if mp.device_type == "cuda" then torch.cuda.set_device(mp.device) end
  local backend = config.backend
  if backend == "auto" then backend = (mp.device_type == "cuda" and dist.is_nccl_available()) and "nccl" or "gloo" end
  local rank, world = init(config, backend, mp.device_type == "cuda" and torch.device(mp.device) or nil)
  local function log(...) if rank == 0 then print(...) end end
  if config.batch_size % world ~= 0 then
    flags.fail("train.lua", ("--batch-size %d is not divisible by the world size %d"):format(config.batch_size, world))
  end
  torch.manual_seed(config.seed)                 -- the same initial model on every rank
  local train_set, test_set = data_mod.datasets(config)
  local sampler = data.DistributedSampler(train_set,
    { num_replicas = world, rank = rank, shuffle = true, seed = config.seed })
  local train = data.DataLoader(train_set,
    { batch_size = math.floor(config.batch_size / world), sampler = sampler, drop_last = true })
  local rows = {}
  for i = rank, test_set:len() - 1, world do rows[#rows + 1] = i end
  local test = data.DataLoader(data.Subset(test_set, rows), { batch_size = 1000 })
  local model = model_mod.new(config):to(mp.device)   -- before DDP wraps it
  local opt = torch.optim.SGD(model:parameters(), { lr = config.lr, momentum = config.momentum })
  local first_epoch = resume(config, { model = model, optimizer = opt, scaler = mp.scaler,
    map_location = mp.device }, log)
  local ddp = torch.nn.parallel.DistributedDataParallel(model)   -- broadcasts rank 0's weights
  local criterion = torch.nn.CrossEntropyLoss()
  log(("world size %d (%s): %d train / %d test images, global batch %d (%d per rank), %d parameters on %s"):format(
    world, backend, train_set:len(), test_set:len(), config.batch_size, math.floor(config.batch_size / world),
    model:num_parameters(), mp:describe()))
  local init_loss = evaluate(model, test, criterion, mp)
  log(("loss at init %.4f (uniform guess ln(10) = %.4f)"):format(init_loss, math.log(10)))
  local mgr, metrics
  if rank == 0 then
    os.execute("mkdir -p '" .. config.out:gsub("'", "'\\''") .. "'")
    mgr = torch.training_state.Manager(config.out .. "/checkpoints", { keep_last = 1, best_metric = "test_loss", mode = "min" })
    metrics = assert(io.open(config.out .. "/metrics.jsonl", first_epoch > 1 and "ab" or "wb"))
  end
  local test_acc
  for epoch = first_epoch, config.epochs do
    local t0 = os.time()
    sampler:set_epoch(epoch)
    local train_loss, train_acc = train_epoch(ddp, train, criterion, opt, config.clip_grad_norm, mp)
    local test_loss
    test_loss, test_acc = evaluate(model, test, criterion, mp)
    log(("epoch %d  train loss %.4f  test loss %.4f  train acc %.2f %%  test acc %.2f %%%s  (%d s)"):format(
      epoch, train_loss, test_loss, 100 * train_acc, 100 * test_acc, mp:scale_note(), os.time() - t0))
    if rank == 0 then
      metrics:write(json.encode({ epoch = epoch, train_loss = train_loss, train_accuracy = train_acc,
        test_loss = test_loss, test_accuracy = test_acc, world_size = world }), "\n")
      metrics:flush()
      mgr:save(epoch, { model = model, optimizer = opt, scaler = mp.scaler, epoch = epoch, config = config },
        { test_loss = test_loss })
    end
  end
  if metrics then metrics:close() end
  log(("result: world size %d  test accuracy %.2f %% (chance 10.00 %%)"):format(world, 100 * test_acc))
  dist.destroy_process_group()
end

main()
