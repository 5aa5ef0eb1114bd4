--[[
  recipes/trainer.lua — the canonical training loop and evaluation pass, shared by the recipes.

  What:
    trainer.amp(config [, opts]) -> the run's device and mixed precision (templates/_common/amp.lua:
        config.device, config.amp, config.amp_dtype), or a usage error naming the bad value.
    trainer.evaluate(model, loader, loss_fn, task, device [, mp])
        -> {loss, accuracy (classification), outputs (N, K) or (N), targets (N)}
        model:eval() + torch.inference_mode (+ autocast when mp has amp on); loss averaged by
        sample count.
    trainer.fit(parts, {log = fn, out = dir, quiet = bool})   -- parts from classifier_lib.build
        (quiet: no progress bar; with log = a no-op nothing is printed, e.g. for bench/)
        per epoch: model:train(); for each batch: zero_grad -> forward (autocast when amp) ->
        loss -> backward (loss scaled with float16) -> [unscale_] -> clip_grad_norm_ -> step
        [-> scaler update]; then evaluate on val; one JSON line in <out>/metrics.jsonl;
        checkpoint through torch.training_state.Manager (<out>/checkpoints: the last one and the
        best by val_loss; the GradScaler's state beside the optimizer's). With config.resume the
        latest checkpoint in <out> is loaded first (model, optimizer, scheduler, scaler, RNG) and
        training continues after its epoch.
    trainer.progress(total, label [, unit]) -> bar(done, samples, extra): a progress line with throughput and ETA: rewritten in place
        on a terminal, printed every ~25 % otherwise (logs stay readable).
]]
local torch = require "torch"
local ffi = require "ffi"
local json = require "torch.serialization.json"
local amp = require "templates._common.amp"
local config = require "recipes.config"

local M = {}

pcall(ffi.cdef, "int isatty(int fd);")
local IS_TTY = pcall(function() return ffi.C.isatty(1) == 1 end) and ffi.C.isatty(1) == 1

local function fmt_time(s)
  if s >= 3600 then return ("%dh%02dm"):format(math.floor(s / 3600), math.floor(s % 3600 / 60)) end
  return ("%d:%02d"):format(math.floor(s / 60), math.floor(s % 60))
end

function M.progress(total, label, unit)
  unit = unit or "samples"
  local next_mark, wall0 = 0.25, M.wall()
  return function(done, samples, extra)
    local el = M.wall() - wall0
    local rate = samples / math.max(el, 1e-9)
    local eta = done > 0 and el / done * (total - done) or 0
    local line = ("%s %d/%d batches  %.0f %s/s  elapsed %s  eta %s  %s"):format(label, done, total, rate, unit,
      fmt_time(el), fmt_time(eta), extra or "")
    if IS_TTY then
      io.stdout:write("\r\27[K" .. line)
      if done == total then io.stdout:write("\n") end
      io.stdout:flush()
    elseif done / total >= next_mark or done == total then
      while done / total >= next_mark do next_mark = next_mark + 0.25 end
      print(line)
    end
  end
end

-- Wall-clock seconds (os.clock counts CPU time of all threads; libtorch uses several).
-- Declared under its own name (an __asm__ alias), so a script that declared clock_gettime
-- with another signature first does not break this one.
pcall(ffi.cdef, [[typedef struct { long tv_sec; long tv_nsec; } recipes_timespec;
  int recipes_clock_gettime(int, recipes_timespec *) __asm__("clock_gettime");]])
local ts = ffi.new("recipes_timespec")
function M.wall()
  ffi.C.recipes_clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

function M.amp(cfg, opts)
  local mp, err = amp.new(cfg, opts)
  if not mp then config.usage_error("%s", err) end
  return mp
end

local function forward(model, x, mp)
  if mp == nil then return model(x) end
  return mp:autocast(function() return model(x) end)
end

function M.evaluate(model, loader, loss_fn, task, device, mp)
  model:eval()
  return torch.inference_mode(function()
    local total, n, correct = 0, 0, 0
    local outs, targets = {}, {}
    for batch in loader:iter() do
      local x, y = batch[1]:to(device), batch[2]:to(device)
      local out = forward(model, x, mp):float()
      local b = y:size(0)
      total = total + loss_fn(out, y):item() * b
      n = n + b
      if task == "multiclass" then
        correct = correct + out:argmax(1):eq(y):sum():item()
      elseif task == "binary" then
        correct = correct + out:view(-1):gt(0):long():eq(y:long()):sum():item()
      end
      outs[#outs + 1], targets[#targets + 1] = out:cpu(), y:cpu()
    end
    return { loss = total / math.max(n, 1), accuracy = task ~= "regression" and correct / math.max(n, 1) or nil,
      outputs = torch.cat(outs, { dim = 0 }), targets = torch.cat(targets, { dim = 0 }), n = n }
  end)
end

local function append_line(path, t)
  local f = assert(io.open(path, "ab"))
  f:write(json.encode(t), "\n")
  f:close()
end

-- The shuffling seed of one epoch: distinct across (seed, epoch) pairs for any seed below 2^20.
function M.epoch_seed(seed, epoch) return seed * 1048576 + epoch end

local function train_epoch(parts, epoch, quiet)
  local model, opt, cfg, device, mp = parts.model, parts.optimizer, parts.config, parts.device, parts.amp
  local loader = parts.train_loader
  -- The shuffle order is a function of (seed, epoch) alone, as with DistributedSampler's
  -- set_epoch: a run resumed at epoch k sees the same batches as one that never stopped.
  if loader.generator then loader.generator:manual_seed(M.epoch_seed(cfg.seed, epoch)) end
  local nb = loader:len()
  local bar = quiet and function() end or M.progress(nb, ("epoch %d/%d"):format(epoch, cfg.epochs))
  model:train()
  -- The sums stay on the device and are read at log time only: an :item() per step would wait
  -- for the GPU every step. MPS has no float64.
  local dev = torch.device(device)
  local total = torch.zeros({}, { dtype = dev.type == "mps" and torch.float32 or torch.float64, device = dev })
  local correct = torch.zeros({}, { dtype = torch.int64, device = dev })
  local n, done = 0, 0
  local non_blocking = { non_blocking = dev.type == "cuda" }   -- with the loader's pinned batches
  for batch in loader:iter() do
    local x, y = batch[1]:to(dev, non_blocking), batch[2]:to(dev, non_blocking)
    opt:zero_grad()
    local out = forward(model, x, mp):float()
    local loss = parts.loss_fn(out, y)
    mp:scale(loss):backward()
    mp:step(opt, model:parameters(), cfg.clip_grad_norm)
    local b = y:size(0)
    n, done = n + b, done + 1
    torch.no_grad(function()
      total:add_(loss:detach(), { alpha = b })
      if parts.meta.task == "multiclass" then
        correct:add_(out:argmax(1):eq(y):sum())
      elseif parts.meta.task == "binary" then
        correct:add_(out:view(-1):gt(0):long():eq(y:long()):sum())
      end
    end)
    if done % cfg.log_every == 0 or done == nb then bar(done, n, ("loss %.4f"):format(total:item() / n)) end
  end
  return total:item() / n, parts.meta.task ~= "regression" and correct:item() / n or nil
end

function M.fit(parts, opts)
  opts = opts or {}
  local log = opts.log or print
  local cfg, model = parts.config, parts.model
  parts.amp = parts.amp or M.amp(cfg)
  local scaler = parts.amp.scaler
  local out = cfg.out
  os.execute("mkdir -p '" .. out:gsub("'", "'\\''") .. "'")
  local mgr = torch.training_state.Manager(out .. "/checkpoints", { keep_last = 1, best_metric = "val_loss", mode = "min" })
  local sched
  if cfg.schedule == "cosine" then sched = torch.optim.lr_scheduler.CosineAnnealingLR(parts.optimizer, { T_max = cfg.epochs }) end
  local first = 1
  local metrics_path = out .. "/metrics.jsonl"
  if cfg.resume then
    local ok, st = pcall(mgr.load_latest, mgr, { model = model, optimizer = parts.optimizer, scheduler = sched,
      scaler = scaler, map_location = parts.device })
    if not ok then config.usage_error("--resume: %s", tostring(st)) end
    if not st then config.usage_error("--resume: no checkpoint in %s/checkpoints", out) end
    first = st.epoch + 1
    log(("resumed from %s (epoch %d)"):format(mgr:latest(), st.epoch))
  else
    os.remove(metrics_path)
  end
  local history = {}
  for epoch = first, cfg.epochs do
    local t0 = M.wall()
    local train_loss, train_acc = train_epoch(parts, epoch, opts.quiet)
    local v = M.evaluate(model, parts.val_loader, parts.loss_fn, parts.meta.task, parts.device, parts.amp)
    if sched then sched:step() end
    local rec = { epoch = epoch, train_loss = train_loss, train_accuracy = train_acc, val_loss = v.loss,
      val_accuracy = v.accuracy, lr = parts.optimizer.param_groups[1].lr, seconds = M.wall() - t0,
      loss_scale = scaler and scaler:get_scale() or nil, skipped_steps = scaler and parts.amp.skipped or nil }
    append_line(metrics_path, rec)
    history[#history + 1] = rec
    local acc = train_acc and ("  train acc %.2f %%  val acc %.2f %%"):format(100 * train_acc, 100 * v.accuracy) or ""
    log(("epoch %d  train loss %.4f  val loss %.4f%s%s  (%.1f s)"):format(epoch, train_loss, v.loss, acc,
      parts.amp:scale_note(), rec.seconds))
    mgr:save(epoch, { model = model, optimizer = parts.optimizer, scheduler = sched, scaler = scaler, epoch = epoch,
      config = cfg }, { val_loss = v.loss })
  end
  return history, mgr
end

return M
