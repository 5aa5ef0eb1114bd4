--[[
  recipes/vision_transfer.lua — transfer learning with a ResNet-18 on any image folder.

  What it does: splits --data (one sub-folder per class) into train/val (seeded); builds
  recipes/resnet.lua's ResNet-18 (torchvision's key names), loads --weights if given (a
  torchvision resnet18 state dict as .safetensors or .pt, a state dict saved with
  torch.save(model:state_dict()), or a checkpoint written by this recipe; strict keys) and puts
  a new head nn.Linear(512, num_classes) on it. Then:
    phase 1  the backbone frozen (requires_grad false, its BatchNorms kept in eval mode), the
             head trained alone with AdamW at --lr;
    phase 2  everything unfrozen; AdamW with two parameter groups: backbone at
             lr * --finetune-lr-scale, head at --lr.
  Each epoch: train() / zero_grad -> forward (autocast with --amp) -> loss -> backward (loss
  scaled with --amp-dtype float16) -> clip_grad_norm_ -> step; eval() + inference_mode on val; losses averaged by sample count; one JSON line per epoch
  in <out>/metrics.jsonl. Checks printed: trainable parameter counts, the loss at init beside
  ln(num_classes), the final val accuracy beside the majority-class baseline. At the end
  <out>/checkpoint.pt holds model + optimizer (+ GradScaler with float16) + epoch + config
  (torch.training_state), which --weights accepts in a later run. Device and precision:
  templates/_common/amp.lua.

  Run (Fashion-MNIST PNGs; there is no download here):
    build/ltorch bench/make_image_folder.lua /tmp/fmnist_png 3000
    build/ltorch recipes/vision_transfer.lua --data /tmp/fmnist_png [flags]   (--help lists them)
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local nn = torch.nn
local json = require "torch.serialization.json"
local config = require "recipes.config"
local trainer = require "recipes.trainer"
local resnet = require "recipes.resnet"
local image_data = require "recipes.image_data"

local USAGE = [[
usage: ltorch recipes/vision_transfer.lua --data DIR [flags]
  --data DIR               image folder, one sub-folder per class (PNG/JPEG)   (required)
  --weights FILE           torchvision resnet18 state dict (.safetensors or .pt), or a
                           checkpoint of this recipe (default: random init)
  --image-size N           images resized (shorter side) and centre-cropped to N x N (default 32)
  --epochs-head N          phase 1 epochs, backbone frozen (default 1)
  --epochs-finetune N      phase 2 epochs, all unfrozen (default 2)
  --lr X                   head learning rate (default 0.001)
  --finetune-lr-scale X    backbone lr = lr * X in phase 2 (default 0.1)
  --batch-size N           (default 64)     --weight-decay X (default 0.0001)
  --clip-grad-norm X       (default 1.0; 0 turns it off)
  --val-fraction X         share of the folder held out for validation (default 0.2)
  --limit-train N          use only N training images (CI-size runs; default 0 = all)
  --seed N                 split, init and shuffling (default 0)
  --device auto|cpu|cuda|cuda:N   (default auto: cuda when available)
  --amp                    mixed precision: autocast on the device, bfloat16 (no loss scaling needed)
  --amp-dtype bfloat16|float16   float16 adds a GradScaler (loss scaling; needs --amp)
  --out DIR                output folder (default runs/vision_transfer)
]]

local DEFAULTS = {
  data = "", weights = "", image_size = 32, epochs_head = 1, epochs_finetune = 2,
  lr = 1e-3, finetune_lr_scale = 0.1, batch_size = 64, weight_decay = 1e-4, clip_grad_norm = 1.0,
  val_fraction = 0.2, limit_train = 0, seed = 0, device = "auto", amp = false, amp_dtype = "bfloat16",
  out = "runs/vision_transfer",
}

local function check_config(cfg)
  local bad = config.usage_error
  if cfg.data == "" then bad("--data DIR is required (make one: build/ltorch bench/make_image_folder.lua DIR 3000)") end
  for _, key in ipairs({ "image_size", "batch_size", "epochs_head", "epochs_finetune", "limit_train", "seed" }) do
    local v = cfg[key]
    if v < 0 or v ~= math.floor(v) then bad("--%s must be a non-negative integer, got %s", key:gsub("_", "-"), v) end
  end
  if cfg.image_size < 32 then bad("--image-size must be at least 32 (ResNet-18 divides it by 32), got %d", cfg.image_size) end
  if cfg.batch_size < 1 then bad("--batch-size must be at least 1") end
  if cfg.lr <= 0 then bad("--lr must be positive, got %s", cfg.lr) end
  if cfg.finetune_lr_scale < 0 then bad("--finetune-lr-scale must be >= 0, got %s", cfg.finetune_lr_scale) end
  if cfg.val_fraction <= 0 or cfg.val_fraction >= 1 then bad("--val-fraction must be in (0, 1), got %s", cfg.val_fraction) end
  if cfg.weights ~= "" and not io.open(cfg.weights, "rb") then bad("weights file not found: %s", cfg.weights) end
end

-- A state dict from --weights: a flat table of tensors, or the `model` of a checkpoint.
local function read_weights(path)
  local ok, st = pcall(torch.load, path, { map_location = "cpu" })
  if not ok then config.usage_error("cannot read --weights %s: %s", path, tostring(st):gsub("^load: ", ""):match("[^\n]*")) end
  if type(st) == "table" and type(st.model) == "table" then st = st.model end
  if type(st) ~= "table" or st["fc.weight"] == nil or not torch.is_tensor(st["fc.weight"]) then
    config.usage_error("--weights %s is not a resnet18 state dict (no tensor 'fc.weight')", path)
  end
  return st
end

-- One line naming what does not match (load_state_dict's own error spans several lines).
local function check_keys(model, sd, path)
  local want, problems, missing, unexpected = {}, {}, {}, {}
  local mine = model:state_dict()
  for _, k in ipairs(model:state_dict_keys()) do
    want[k] = true
    if sd[k] == nil then missing[#missing + 1] = k
    elseif not torch.is_tensor(sd[k]) or sd[k]:size() ~= mine[k]:size() then problems[#problems + 1] = k end
  end
  for k in pairs(sd) do if not want[k] then unexpected[#unexpected + 1] = tostring(k) end end
  table.sort(unexpected)
  local function some(list, what)
    if #list == 0 then return nil end
    local shown = { unpack(list, 1, math.min(3, #list)) }
    return ("%d %s (%s%s)"):format(#list, what, table.concat(shown, ", "), #list > 3 and ", ..." or "")
  end
  local parts = {}
  for _, s in ipairs({ some(missing, "missing keys"), some(unexpected, "unexpected keys"), some(problems, "shape mismatches") }) do
    parts[#parts + 1] = s
  end
  if #parts > 0 then
    config.usage_error("--weights %s does not match resnet18: %s", path, table.concat(parts, "; "))
  end
end

-- -> model with a fresh head of num_classes outputs, and a line saying where the backbone came from.
local function build_model(cfg, num_classes)
  torch.manual_seed(cfg.seed)
  if cfg.weights == "" then return resnet.resnet18({ num_classes = num_classes }), "random init" end
  local sd = read_weights(cfg.weights)
  local model = resnet.resnet18({ num_classes = sd["fc.weight"]:size(0) })
  check_keys(model, sd, cfg.weights)
  model:load_state_dict(sd)
  model.fc = nn.Linear(512, num_classes)   -- the head is replaced: new classes
  return model, ("weights %s (strict keys; head %d -> %d classes)"):format(cfg.weights, sd["fc.weight"]:size(0), num_classes)
end

local function group_params(model)
  local backbone, head = {}, {}
  for _, nv in ipairs(model:named_parameters()) do
    local list = nv[1]:match("^fc%.") and head or backbone
    list[#list + 1] = nv[2]
  end
  return backbone, head
end

local function trainable(model) return model:num_parameters(true), model:num_parameters() end

local function train_epoch(model, loader, opt, params, cfg, mp, label, set_mode)
  set_mode()
  local ce = nn.CrossEntropyLoss()
  local bar = trainer.progress(loader:len(), label)
  local total, n, correct, done = 0, 0, 0, 0
  for batch in loader:iter() do
    local x, y = batch[1]:to(mp.device), batch[2]:to(mp.device)
    opt:zero_grad()
    local out = mp:autocast(function() return model(x) end):float()
    local loss = ce(out, y)
    mp:scale(loss):backward()
    mp:step(opt, params, cfg.clip_grad_norm)
    local b = y:size(0)
    total, n, done = total + loss:item() * b, n + b, done + 1
    correct = correct + torch.no_grad(function() return out:argmax(1):eq(y):sum():item() end)
    bar(done, n, ("loss %.4f"):format(total / n))
  end
  return total / n, correct / n
end

local function run_phase(ctx, phase, epochs, opt, params, set_mode)
  local cfg, model = ctx.cfg, ctx.model
  for e = 1, epochs do
    local t0 = trainer.wall()
    local label = ("%s epoch %d/%d"):format(phase, e, epochs)
    local tl, ta = train_epoch(model, ctx.d.train_loader, opt, params, cfg, ctx.mp, label, set_mode)
    local v = trainer.evaluate(model, ctx.d.val_loader, ctx.loss_fn, "multiclass", ctx.mp.device, ctx.mp)
    ctx.epoch = ctx.epoch + 1
    local rec = { phase = phase, epoch = ctx.epoch, train_loss = tl, train_accuracy = ta, val_loss = v.loss,
      val_accuracy = v.accuracy, seconds = trainer.wall() - t0 }
    local f = assert(io.open(cfg.out .. "/metrics.jsonl", "ab"))
    f:write(json.encode(rec), "\n")
    f:close()
    print(("%s  train loss %.4f  train acc %.2f %%  val loss %.4f  val acc %.2f %%%s  (%.1f s)"):format(
      label, tl, 100 * ta, v.loss, 100 * v.accuracy, ctx.mp:scale_note(), rec.seconds))
    ctx.last = v
  end
end

local function main()
  io.stdout:setvbuf("line")
  local cfg = config.parse(arg or {}, DEFAULTS)
  check_config(cfg)
  local mp = trainer.amp(cfg)
  local device = mp.device
  local t0 = trainer.wall()
  local d = image_data.load(cfg.data, cfg)
  local k = d.num_classes
  local model, origin = build_model(cfg, k)
  model:to(device)
  os.execute("mkdir -p '" .. cfg.out:gsub("'", "'\\''") .. "'")
  os.remove(cfg.out .. "/metrics.jsonl")
  print(("data %s: %d classes, %d train / %d val images at %dx%d; resnet18 (%d parameters) from %s on %s"):format(
    cfg.data, k, d.n_train, d.n_val, cfg.image_size, cfg.image_size, model:num_parameters(), origin, mp:describe()))
  local ctx = { cfg = cfg, model = model, d = d, mp = mp, epoch = 0,
    loss_fn = (function() local ce = nn.CrossEntropyLoss(); return function(o, y) return ce(o, y) end end)() }
  ctx.last = trainer.evaluate(model, d.val_loader, ctx.loss_fn, "multiclass", device, mp)
  print(("loss at init %.4f (uniform guess ln(%d) = %.4f)"):format(ctx.last.loss, k, math.log(k)))

  local backbone, head = group_params(model)
  for _, p in ipairs(backbone) do p.requires_grad = false end
  print(("phase 1 (head only): %d of %d parameters trainable"):format(trainable(model)))
  local opt = torch.optim.AdamW(head, { lr = cfg.lr, weight_decay = cfg.weight_decay })
  -- frozen BatchNorms keep their running statistics: everything in eval mode but the head
  run_phase(ctx, "head", cfg.epochs_head, opt, head, function() model:eval(); model.fc:train() end)

  for _, p in ipairs(backbone) do p.requires_grad = true end
  print(("phase 2 (fine-tune all): %d of %d parameters trainable; backbone lr %g, head lr %g"):format(
    model:num_parameters(true), model:num_parameters(), cfg.lr * cfg.finetune_lr_scale, cfg.lr))
  if cfg.epochs_finetune > 0 then
    opt = torch.optim.AdamW({ { params = backbone, lr = cfg.lr * cfg.finetune_lr_scale }, { params = head, lr = cfg.lr } },
      { lr = cfg.lr, weight_decay = cfg.weight_decay })
    run_phase(ctx, "finetune", cfg.epochs_finetune, opt, model:parameters(), function() model:train() end)
  end

  local counts = torch.bincount(d.train_labels, { minlength = k })
  local majority = counts:argmax():item()
  local base = d.val_labels:eq(majority):sum():item() / d.n_val
  print(("final val accuracy %.2f %% (majority-class baseline %.2f %%)"):format(100 * ctx.last.accuracy, 100 * base))
  local saved = { classes = d.classes, num_classes = k, mean = image_data.MEAN, std = image_data.STD }
  for key, v in pairs(cfg) do saved[key] = v end
  local path = cfg.out .. "/checkpoint.pt"
  torch.training_state.save_training_state(path, { model = model, optimizer = opt, scaler = mp.scaler, epoch = ctx.epoch,
    config = saved })
  print("checkpoint " .. path)
  print(("result: vision_transfer accuracy %.4f  baseline %.4f  in %.0f s"):format(ctx.last.accuracy, base, trainer.wall() - t0))
end

config.main("vision_transfer", USAGE, main)
