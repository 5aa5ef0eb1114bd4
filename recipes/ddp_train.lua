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

  Restarts: under `tools/run.lua --max-restarts N`, a rank that dies makes the launcher restart
  every rank; they resume from checkpoints/last.pt (model, optimizer, scaler, RNG) at the epoch
  after it, and finish with the same weights as an uninterrupted run (spec/recipes/
  ddp_restart_spec.lua). --resume does the same by hand.

  Device and precision (templates/_common/amp.lua): --device auto picks CUDA when available;
  under the launcher each rank then takes cuda:(LOCAL_RANK % GPUs) and the process group uses
  NCCL (Gloo on the CPU). --amp runs the forward under bfloat16 autocast; --amp-dtype float16
  adds a GradScaler (scaled loss:backward(), unscale_, step, update; its state goes into
  the checkpoint).

  Run with --help for the flags. Bad flags: one line + the usage, exit 2.
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
local data = require "torch.data"
local dist = require "torch.distributed"
local fmnist = require "torch.data.fashion_mnist_files"
local config = require "recipes.config"
local trainer = require "recipes.trainer"

local USAGE = [[
usage: ltorch [tools/run.lua --nproc-per-node N] recipes/ddp_train.lua [flags]
  --epochs N (3)  --batch-size N (128, the global batch)  --lr X (0.05)  --momentum X (0.9)
  --seed N (0)  --limit-train N --limit-test N (first N samples; 0 = all)  --out DIR (runs/ddp)
  --no-save (no metrics / checkpoint)  --timeout S (collective timeout, 300)
  --resume (go on from <out>/checkpoints/last.pt; implied after a tools/run.lua --max-restarts restart)
  --ci (2 epochs, 6000 train / 2000 test samples)
  --device auto|cpu|cuda|cuda:N (default auto: cuda when available; one GPU per rank)
  --amp  mixed precision: autocast on the device, bfloat16 (no loss scaling needed)
  --amp-dtype bfloat16|float16   float16 adds a GradScaler (loss scaling; needs --amp)
]]

local DEFAULTS = { epochs = 3, batch_size = 128, lr = 0.05, momentum = 0.9, seed = 0, limit_train = 0,
  limit_test = 0, out = "runs/ddp", save = true, timeout = 300, ci = false, resume = false,
  device = "auto", amp = false, amp_dtype = "bfloat16" }

-- The process group: from the launcher's environment (RANK, WORLD_SIZE, ...), or a world of one.
-- device_id binds the group to this rank's GPU (NCCL connects at once), as PyTorch's examples do.
local function init(cfg, backend, device_id)
  if os.getenv("RANK") then
    dist.init_process_group{ backend = backend, timeout = cfg.timeout, device_id = device_id }
  else
    local base = os.tmpname(); os.remove(base)   -- a fresh path for a one-process FileStore
    dist.init_process_group{ backend = backend, init_method = "file://" .. base .. ".store",
                             rank = 0, world_size = 1, timeout = cfg.timeout, device_id = device_id }
  end
  return dist.get_rank(), dist.get_world_size()
end

--[[ After an elastic restart (tools/run.lua --max-restarts: TORCHELASTIC_RESTART_COUNT > 0) or with
     --resume: every rank loads <out>/checkpoints/last.pt (model, optimizer, scaler, RNG) and the
     run goes on from the epoch after it. Returns the first epoch to train (0 for a fresh run). ]]
local function resume(cfg, into, log)
  local restarted = tonumber(os.getenv("TORCHELASTIC_RESTART_COUNT") or "0") > 0
  local path = cfg.out .. "/checkpoints/last.pt"
  local f = io.open(path, "rb")
  if f then f:close() end
  if not (cfg.resume or restarted) or not f then
    if cfg.resume then log("ddp_train: --resume: no " .. path .. "; starting from epoch 1") end
    return 0
  end
  into.map_location = into.model:parameters()[1].device
  local st = torch.training_state.load_training_state(path, into)
  log(("ddp_train: resumed from %s (epoch %d done)%s"):format(path, st.epoch,
    restarted and (" after restart " .. os.getenv("TORCHELASTIC_RESTART_COUNT")) or ""))
  return st.epoch
end

-- (N, 784) float images normalised with the training mean/std, (N) int64 labels, on device.
local function load(cfg, device)
  local function split(name, limit)
    local images, labels = fmnist.load(name)
    if limit > 0 and limit < images:size(0) then
      images, labels = images:narrow(0, 0, limit), labels:narrow(0, 0, limit)
    end
    return images:reshape(images:size(0), 784):float():div(255):to(device), labels:to(device)
  end
  local train_x, train_y = split("train", cfg.limit_train)
  local test_x, test_y = split("test", cfg.limit_test)
  local mean, std = train_x:mean():item(), train_x:std():item()
  return (train_x - mean) / std, train_y, (test_x - mean) / std, test_y
end

-- This rank's batches for one epoch: its DistributedSampler shard, in local_batch chunks (the
-- last partial batch dropped, so every rank takes the same number of steps).
local function batches(sampler, local_batch, device)
  local idx = {}
  for i in sampler:iter() do idx[#idx + 1] = i end
  local out = {}
  for s = 1, #idx - local_batch + 1, local_batch do
    out[#out + 1] = torch.tensor({ unpack(idx, s, s + local_batch - 1) }):to(device)
  end
  return out
end

-- Sums a list of numbers over every rank (float64 on the run's device: NCCL reduces CUDA tensors).
local function sum_over_ranks(values, device)
  local t = torch.tensor(values, { dtype = torch.float64, device = device })
  dist.all_reduce(t)
  return t:cpu():tolist()
end

-- Accuracy on the whole test set: rank r scores rows r, r + W, ...; counts are summed.
local function evaluate(run)
  run.ddp:eval()
  local correct, n = 0, 0
  torch.no_grad(function()
    local rows = torch.arange(run.rank, run.test_x:size(0), run.world, { device = run.mp.device }):long()
    if rows:numel() > 0 then
      local pred = run.mp:autocast(function() return run.ddp(run.test_x:index_select(0, rows)) end):argmax(1)
      correct, n = pred:eq(run.test_y:index_select(0, rows)):sum():item(), rows:numel()
    end
  end)
  run.ddp:train()
  local c = sum_over_ranks({ correct, n }, run.mp.device)
  return c[1] / c[2]
end

-- One epoch over this rank's shard -> train loss, train accuracy (over all ranks).
local function train_epoch(run)
  local mp, ddp, opt = run.mp, run.ddp, run.opt
  local loss_sum, correct, seen = 0, 0, 0
  for _, rows in ipairs(batches(run.sampler, run.local_batch, mp.device)) do
    local x, y = run.train_x:index_select(0, rows), run.train_y:index_select(0, rows)
    opt:zero_grad()
    local logits = mp:autocast(function() return ddp(x) end):float()
    local loss = run.loss_fn(logits, y)
    mp:scale(loss):backward()        -- the gradients are averaged over the ranks during backward
    mp:step(opt)
    loss_sum = loss_sum + loss:item() * rows:numel()
    correct = correct + logits:argmax(1):eq(y):sum():item()
    seen = seen + rows:numel()
  end
  local s = sum_over_ranks({ loss_sum, correct, seen }, mp.device)
  return s[1] / s[3], s[2] / s[3]
end

local function main()
  io.stdout:setvbuf("line")
  local cfg = config.parse(arg or {}, DEFAULTS)
  if cfg.ci then cfg.epochs, cfg.limit_train, cfg.limit_test = 2, 6000, 2000 end
  local mp = trainer.amp(cfg, { local_rank = tonumber(os.getenv("LOCAL_RANK") or "") })
  if mp.device_type == "cuda" then torch.cuda.set_device(mp.device) end
  local backend = (mp.device_type == "cuda" and dist.is_nccl_available()) and "nccl" or "gloo"
  local rank, world = init(cfg, backend, mp.device_type == "cuda" and torch.device(mp.device) or nil)
  local function log(...) if rank == 0 then print(...) end end
  if cfg.batch_size % world ~= 0 then
    config.usage_error("--batch-size %d is not divisible by the world size %d", cfg.batch_size, world)
  end
  local run = { mp = mp, rank = rank, world = world, local_batch = math.floor(cfg.batch_size / world),
    loss_fn = nn.CrossEntropyLoss() }
  run.train_x, run.train_y, run.test_x, run.test_y = load(cfg, mp.device)
  local train_set = data.TensorDataset(run.train_x, run.train_y)
  log(("ddp_train: world_size %d (%s), %d train / %d test samples, global batch %d (%d per rank), %d epochs on %s")
    :format(world, backend, run.train_x:size(0), run.test_x:size(0), cfg.batch_size, run.local_batch, cfg.epochs,
      mp:describe()))
  run.sampler = data.DistributedSampler(train_set, { num_replicas = world, rank = rank, shuffle = true, seed = cfg.seed })
  torch.manual_seed(cfg.seed)
  local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)):to(mp.device)
  run.opt = optim.SGD(model:parameters(), { lr = cfg.lr, momentum = cfg.momentum })
  local start_epoch = resume(cfg, { model = model, optimizer = run.opt, scaler = mp.scaler }, log)
  run.ddp = nn.parallel.DistributedDataParallel(model)   -- after resuming: it broadcasts rank 0's

  local metrics_file
  if rank == 0 and cfg.save then
    os.execute("mkdir -p '" .. cfg.out:gsub("'", "'\\''") .. "/checkpoints'")
    metrics_file = assert(io.open(cfg.out .. "/metrics.jsonl", start_epoch > 0 and "a" or "w"))
  end
  local acc
  local t0 = os.time()
  for epoch = start_epoch, cfg.epochs - 1 do
    run.sampler:set_epoch(epoch)
    local loss, train_acc = train_epoch(run)
    acc = evaluate(run)
    log(("epoch %d  train loss %.4f  train acc %.4f  test acc %.4f%s"):format(epoch + 1, loss, train_acc, acc,
      mp:scale_note()))
    if metrics_file then
      metrics_file:write(('{"epoch": %d, "train_loss": %.6f, "train_accuracy": %.6f, "test_accuracy": %.6f, "world_size": %d}\n')
        :format(epoch + 1, loss, train_acc, acc, world))
      metrics_file:flush()
      torch.training_state.save_training_state(cfg.out .. "/checkpoints/last.pt",
        { model = model, optimizer = run.opt, scaler = mp.scaler, epoch = epoch + 1 })
    end
  end
  if metrics_file then metrics_file:close() end
  log(("result: ddp_train world_size %d test accuracy %.4f (%ds)"):format(world, acc, os.time() - t0))
  dist.destroy_process_group()
end

config.main("ddp_train", USAGE, main)
