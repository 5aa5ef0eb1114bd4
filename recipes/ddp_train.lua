--[[
  recipes/ddp_train.lua — data-parallel training of a Fashion-MNIST MLP with
  DistributedDataParallel, one process per rank.

      build/ltorch tools/run.lua --nproc-per-node 2 recipes/ddp_train.lua          # 2 ranks
      build/ltorch recipes/ddp_train.lua                                            # 1 process
      build/ltorch tools/run.lua --nproc-per-node 2 recipes/ddp_train.lua --ci      # CI size

  Model: 784 -> 256 -> ReLU -> 10 (input: uint8 28x28 images scaled to [0, 1], normalized with
  the training-set mean/std; labels int64 0..9), SGD with momentum, cross-entropy.
  --batch-size is the *global* batch: each of the W ranks takes batch_size / W samples per step
  from its DistributedSampler shard (reshuffled per epoch with set_epoch), and DDP averages the
  gradients, so W ranks take the same number of steps, with the same effective batch, as one
  process. Run alone (no RANK in the environment), the script makes a world of one.

  Only rank 0 logs and writes files: metrics.jsonl (one line per epoch, train loss/accuracy summed
  over all ranks with all_reduce, test accuracy over the whole test set: each rank scores its
  own slice), and checkpoints/last.pt (model without DDP's "module." prefix, optimizer, epoch).
  The last line is "result: ddp_train world_size W test accuracy A".

  Flags: --epochs N (3) --batch-size N (128) --lr X (0.05) --momentum X (0.9) --seed N (0)
         --limit-train N --limit-test N (first N samples) --out DIR (runs/ddp) --no-save
         --ci (2 epochs, 6000 train / 2000 test samples) --timeout S (collective timeout, 300)
]]
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
local data = require "torch.data"
local dist = require "torch.distributed"
local fmnist = require "torch.data.fashion_mnist"

---------------------------------------------------------------- flags
local cfg = { epochs = 3, batch_size = 128, lr = 0.05, momentum = 0.9, seed = 0, limit_train = nil,
              limit_test = nil, out = "runs/ddp", save = true, timeout = 300 }
do
  local a, i = arg or {}, 1
  while a[i] do
    local flag = a[i]:gsub("^%-%-", ""):gsub("%-", "_")
    if flag == "ci" then
      cfg.epochs, cfg.limit_train, cfg.limit_test = 2, 6000, 2000
    elseif flag == "no_save" then
      cfg.save = false
    elseif flag == "help" then
      print((io.open(arg[0]) and "see the header of " .. arg[0]) or "see recipes/ddp_train.lua"); os.exit(0)
    elseif cfg[flag] ~= nil or flag == "limit_train" or flag == "limit_test" then
      i = i + 1
      local v = a[i]
      if v == nil then error("ddp_train: --" .. flag .. " needs a value", 0) end
      cfg[flag] = flag == "out" and v or assert(tonumber(v), "ddp_train: --" .. flag .. " expects a number")
    else
      error("ddp_train: unknown flag " .. a[i], 0)
    end
    i = i + 1
  end
end

---------------------------------------------------------------- the process group
if os.getenv("RANK") then
  dist.init_process_group{ backend = "gloo", timeout = cfg.timeout }
else
  local base = os.tmpname(); os.remove(base)   -- a fresh path for a one-process FileStore
  dist.init_process_group{ backend = "gloo", init_method = "file://" .. base .. ".store",
                           rank = 0, world_size = 1, timeout = cfg.timeout }
end
local rank, world = dist.get_rank(), dist.get_world_size()
local function log(...) if rank == 0 then print(...) end end
if cfg.batch_size % world ~= 0 then
  error(("ddp_train: --batch-size %d is not divisible by the world size %d"):format(cfg.batch_size, world), 0)
end
local local_batch = math.floor(cfg.batch_size / world)

---------------------------------------------------------------- data
local function load(split, limit)
  local images, labels = fmnist.load(split)
  if limit and limit < images:size(0) then
    images, labels = images:narrow(0, 0, limit), labels:narrow(0, 0, limit)
  end
  return images:reshape(images:size(0), 784):float():div(255), labels
end
local train_x, train_y = load("train", cfg.limit_train)
local test_x, test_y = load("test", cfg.limit_test)
local mean, std = train_x:mean():item(), train_x:std():item()
train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
local train_set = data.TensorDataset(train_x, train_y)
log(("ddp_train: world_size %d, %d train / %d test samples, global batch %d (%d per rank), %d epochs")
  :format(world, train_x:size(0), test_x:size(0), cfg.batch_size, local_batch, cfg.epochs))

-- This rank's batches for one epoch: its DistributedSampler shard, in local_batch chunks (the
-- last partial batch dropped, so every rank takes the same number of steps).
local sampler = data.DistributedSampler(train_set, { num_replicas = world, rank = rank, shuffle = true,
                                                      seed = cfg.seed })
local function batches()
  local idx = {}
  for i in sampler:iter() do idx[#idx + 1] = i end
  local out = {}
  for s = 1, #idx - local_batch + 1, local_batch do
    out[#out + 1] = torch.tensor({ unpack(idx, s, s + local_batch - 1) })
  end
  return out
end

---------------------------------------------------------------- model
torch.manual_seed(cfg.seed)
local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
local ddp = nn.parallel.DistributedDataParallel(model)
local opt = optim.SGD(ddp:parameters(), { lr = cfg.lr, momentum = cfg.momentum })
local loss_fn = nn.CrossEntropyLoss()

-- Accuracy on the whole test set: rank r scores rows r, r + W, ...; counts are summed.
local function evaluate()
  ddp:eval()
  local counts = torch.zeros(2, { dtype = torch.float64 })
  torch.no_grad(function()
    local rows = torch.arange(rank, test_x:size(0), world):long()
    if rows:numel() > 0 then
      local pred = ddp(test_x:index_select(0, rows)):argmax(1)
      counts = torch.tensor({ pred:eq(test_y:index_select(0, rows)):sum():item(), rows:numel() },
                            { dtype = torch.float64 })
    end
  end)
  dist.all_reduce(counts)
  ddp:train()
  local c = counts:tolist()
  return c[1] / c[2]
end

local metrics_file
if rank == 0 and cfg.save then
  os.execute("mkdir -p '" .. cfg.out .. "/checkpoints'")
  metrics_file = assert(io.open(cfg.out .. "/metrics.jsonl", "w"))
end

local acc
local t0 = os.time()
for epoch = 0, cfg.epochs - 1 do
  sampler:set_epoch(epoch)
  local loss_sum, correct, seen = 0, 0, 0
  for _, rows in ipairs(batches()) do
    local x, y = train_x:index_select(0, rows), train_y:index_select(0, rows)
    opt:zero_grad()
    local logits = ddp(x)
    local loss = loss_fn(logits, y)
    ddp:backward(loss)
    opt:step()
    loss_sum = loss_sum + loss:item() * rows:numel()
    correct = correct + logits:argmax(1):eq(y):sum():item()
    seen = seen + rows:numel()
  end
  local stats = torch.tensor({ loss_sum, correct, seen }, { dtype = torch.float64 })  -- loss sum, correct, samples
  dist.all_reduce(stats)                                   -- metrics over every rank's samples
  local s = stats:tolist()
  acc = evaluate()
  log(("epoch %d  train loss %.4f  train acc %.4f  test acc %.4f"):format(epoch + 1, s[1] / s[3], s[2] / s[3], acc))
  if metrics_file then
    metrics_file:write(('{"epoch": %d, "train_loss": %.6f, "train_accuracy": %.6f, "test_accuracy": %.6f, "world_size": %d}\n')
      :format(epoch + 1, s[1] / s[3], s[2] / s[3], acc, world))
    metrics_file:flush()
    require("torch.checkpoint").save_training_state(cfg.out .. "/checkpoints/last.pt",
      { model = ddp.module, optimizer = opt, epoch = epoch + 1 })
  end
end
if metrics_file then metrics_file:close() end
log(("result: ddp_train world_size %d test accuracy %.4f (%ds)"):format(world, acc, os.time() - t0))
dist.destroy_process_group()
