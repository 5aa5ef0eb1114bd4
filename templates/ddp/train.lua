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
  averaged by sample count. The loop: model:train(); zero_grad -> forward -> loss ->
  ddp:backward (all-reduce) -> clip -> step; evaluation under eval() + inference_mode.
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local flags = require "flags"
local model_mod = require "model"
local data_mod = require "data"
local dist = torch.distributed
local data = torch.utils.data

-- The process group: from the launcher's environment, or a world of one.
local function init(config)
  if os.getenv("RANK") then
    dist.init_process_group({ backend = config.backend, timeout = config.timeout })
  else
    local base = os.tmpname()
    os.remove(base)
    dist.init_process_group({ backend = config.backend, init_method = "file://" .. base .. ".store",
      rank = 0, world_size = 1, timeout = config.timeout })
  end
  return dist.get_rank(), dist.get_world_size()
end

-- Sums {loss * samples, correct, samples} over every rank.
local function reduce(total, correct, n)
  local t = torch.tensor({ total, correct, n }, { dtype = torch.float64 })
  dist.all_reduce(t)
  local s = t:tolist()
  return s[1] / s[3], s[2] / s[3], s[3]
end

local function train_epoch(ddp, loader, criterion, opt, clip)
  ddp:train()
  local total, correct, n = 0, 0, 0
  for batch in loader:iter() do
    local x, y = batch[1], batch[2]
    opt:zero_grad()
    local logits = ddp(x)
    local loss = criterion(logits, y)
    ddp:backward(loss)                       -- backward, then gradients averaged over the ranks
    torch.nn.utils.clip_grad_norm_(ddp:parameters(), clip)
    opt:step()
    total, n = total + loss:item() * y:size(0), n + y:size(0)
    correct = correct + logits:detach():argmax(1):eq(y):sum():item()
  end
  return reduce(total, correct, n)
end

-- Each rank scores its own rows of the evaluation set (rank, rank + W, ...), then the sums meet.
local function evaluate(model, loader, criterion)
  model:eval()
  local total, correct, n = 0, 0, 0
  torch.inference_mode(function()
    for batch in loader:iter() do
      local logits = model(batch[1])
      total, n = total + criterion(logits, batch[2]):item() * batch[2]:size(0), n + batch[2]:size(0)
      correct = correct + logits:argmax(1):eq(batch[2]):sum():item()
    end
  end)
  return reduce(total, correct, n)
end

local function main()
  io.stdout:setvbuf("line")
  local config = flags.parse(arg or {}, "train.lua")
  local rank, world = init(config)
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
  local model = model_mod.new(config)
  local ddp = torch.nn.parallel.DistributedDataParallel(model)   -- broadcasts rank 0's weights
  local opt = torch.optim.SGD(ddp:parameters(), { lr = config.lr, momentum = config.momentum })
  local criterion = torch.nn.CrossEntropyLoss()
  log(("world size %d: %d train / %d test images, global batch %d (%d per rank), %d parameters"):format(
    world, train_set:len(), test_set:len(), config.batch_size, math.floor(config.batch_size / world), model:num_parameters()))
  local init_loss = evaluate(model, test, criterion)
  log(("loss at init %.4f (uniform guess ln(10) = %.4f)"):format(init_loss, math.log(10)))
  local mgr, metrics
  if rank == 0 then
    os.execute("mkdir -p '" .. config.out:gsub("'", "'\\''") .. "'")
    mgr = torch.checkpoint.Manager(config.out .. "/checkpoints", { keep_last = 1, best_metric = "test_loss", mode = "min" })
    metrics = assert(io.open(config.out .. "/metrics.jsonl", "wb"))
  end
  local test_acc
  for epoch = 1, config.epochs do
    local t0 = os.time()
    sampler:set_epoch(epoch)
    local train_loss, train_acc = train_epoch(ddp, train, criterion, opt, config.clip_grad_norm)
    local test_loss
    test_loss, test_acc = evaluate(model, test, criterion)
    log(("epoch %d  train loss %.4f  test loss %.4f  train acc %.2f %%  test acc %.2f %%  (%d s)"):format(
      epoch, train_loss, test_loss, 100 * train_acc, 100 * test_acc, os.time() - t0))
    if rank == 0 then
      metrics:write(json.encode({ epoch = epoch, train_loss = train_loss, train_accuracy = train_acc,
        test_loss = test_loss, test_accuracy = test_acc, world_size = world }), "\n")
      metrics:flush()
      mgr:save(epoch, { model = model, optimizer = opt, epoch = epoch, config = config }, { test_loss = test_loss })
    end
  end
  if metrics then metrics:close() end
  log(("result: world size %d  test accuracy %.2f %% (chance 10.00 %%)"):format(world, 100 * test_acc))
  dist.destroy_process_group()
end

main()
