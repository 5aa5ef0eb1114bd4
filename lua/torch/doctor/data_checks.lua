--[[
  torch.doctor.data_checks — the checks that look at the data and the plan without training:
    batch_view   the batch the model sees (an image grid PNG with its labels, decoded text,
                 token ids or feature statistics)
    lr_schedule  the setup's scheduler stepped over the planned run (decay to ~0 early,
                 milestones never reached, a cosine T_max shorter than the run)
    split_leak   exact duplicates within train and validation samples copied from train
  fingerprints(batches) gives one key per sample (torch.doctor.script uses it to find where a
  script's second epoch starts).
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local C = require "torch.doctor.checks"

local M = {}
local finding, num = C.finding, C.num

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

---------------------------------------------------------------- look at the data
local function write_grid(path, x, nshow)
  local img = require "torch.data.image"
  -- x: (N, C, H, W) or (N, H, W) float/uint8 -> uint8 grid, min-max scaled over the shown images
  if x:dim() == 3 then x = x:unsqueeze(1) end
  local n = math.min(nshow, x:size(0))
  local xs = x:narrow(0, 0, n):double()
  local channels, H, W = xs:size(1), xs:size(2), xs:size(3)
  if channels ~= 1 and channels ~= 3 then xs = xs:narrow(1, 0, 1); channels = 1 end
  local lo, hi = num(xs:min()), num(xs:max())
  xs = (xs - lo) / math.max(hi - lo, 1e-12) * 255
  local cols = math.min(8, n)
  local rows = math.ceil(n / cols)
  local grid = torch.zeros(rows * (H + 2), cols * (W + 2), channels, { dtype = torch.float64 })
  for i = 0, n - 1 do
    local r, c = math.floor(i / cols), i % cols
    grid:narrow(0, r * (H + 2) + 1, H):narrow(1, c * (W + 2) + 1, W):copy_(xs[i]:permute(1, 2, 0))
  end
  img.write_png(path, grid:round():clamp(0, 255):to(torch.uint8))
  return rows, cols, lo, hi
end

function M.batch_view(ctx)
  local b = ctx.batches[1]
  local x, y = b.x, b.y
  local n = math.min(16, x:size(0))
  local labels = {}
  local yl = y:narrow(0, 0, n)
  local names = ctx.setup.class_names
  if yl:dim() == 1 then
    for i, v in ipairs(yl:double():tolist()) do
      local name = type(names) == "table" and v % 1 == 0 and names[v + 1]
      labels[i] = name and ("%g:%s"):format(v, tostring(name)) or ("%g"):format(v)
    end
  else
    for i = 1, n do labels[i] = shape(yl[i - 1]) end
  end
  local ev = ("input %s %s, target %s %s"):format(shape(x), tostring(x.dtype), shape(y), tostring(y.dtype))
  local image_like
  if x:dim() == 4 and (x:size(1) == 1 or x:size(1) == 3) then image_like = x
  elseif x:dim() == 3 and x:size(1) >= 8 and x:size(2) >= 8 and x:is_floating_point() then image_like = x
  elseif x:dim() == 2 and x:is_floating_point() then
    local side = math.floor(math.sqrt(x:size(1)) + 0.5)
    if side >= 8 and side * side == x:size(1) then image_like = x:view(x:size(0), 1, side, side) end
  end
  local notes = {}
  if ctx.setup.decode then
    for i = 0, math.min(4, x:size(0)) - 1 do
      notes[#notes + 1] = ("  [%s] %s"):format(labels[i + 1], tostring(ctx.setup.decode(x[i])))
    end
  elseif image_like and ctx.opts.out_dir ~= false then
    local dir = ctx.opts.out_dir or "runs/doctor"
    os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'")
    local path = dir .. "/batch.png"
    local ok, rows, cols, lo, hi = pcall(write_grid, path, image_like, n)
    if ok then
      ev = ev .. ("; %d images written to %s (%dx%d grid, pixel range %.3g..%.3g)"):format(n, path, rows, cols, lo, hi)
      ctx.batch_png = path
      for r = 0, rows - 1 do
        local row = {}
        for c = 1, cols do row[#row + 1] = labels[r * cols + c] end
        notes[#notes + 1] = ("  labels row %d: %s"):format(r + 1, table.concat(row, " "))
      end
    else
      notes[#notes + 1] = "  (grid not written: " .. tostring(rows) .. ")"
    end
  elseif not x:is_floating_point() and x:dim() >= 2 then
    -- token ids (or other integer codes) without setup.decode: the raw ids of the first rows
    for i = 0, math.min(3, x:size(0)) - 1 do
      local row = x[i]:flatten()
      local ids = row:narrow(0, 0, math.min(24, row:numel())):tolist()
      notes[#notes + 1] = ("  [%s] %s%s"):format(labels[i + 1], table.concat(ids, " "), row:numel() > 24 and " ..." or "")
    end
    notes[#notes + 1] = "  (integer inputs: pass setup.decode(row) -> string to see them as text)"
  elseif x:dim() == 2 and x:is_floating_point() then
    local xd = x:double()
    local mu, sd = xd:mean(0), xd:std(0)
    local const, big = 0, 0
    for _, v in ipairs(sd:tolist()) do if v == 0 then const = const + 1 end end
    for _, v in ipairs(mu:abs():tolist()) do if v > 10 then big = big + 1 end end
    ev = ev .. ("; features: mean %.3g..%.3g, std %.3g..%.3g; %d constant, %d with |mean| > 10")
      :format(num(mu:min()), num(mu:max()), num(sd:min()), num(sd:max()), const, big)
    notes[#notes + 1] = "  first labels: " .. table.concat(labels, " ")
  else
    notes[#notes + 1] = "  first labels: " .. table.concat(labels, " ")
  end
  ev = ev .. "\n" .. table.concat(notes, "\n")
  return finding("batch_view", "ok", "the batch the model sees", ev,
    "look at it: wrong normalisation, flipped/rotated images, labels that do not match are visible here")
end

---------------------------------------------------------------- LR schedule over the planned run
function M.lr_schedule(ctx)
  local s = ctx.setup
  if not s.scheduler then return finding("lr_schedule", "ok", "no scheduler: constant LR") end
  local epochs = s.epochs
  if not epochs then return finding("lr_schedule", "skip", "setup.epochs not given; cannot plan the schedule") end
  local per_step = s.scheduler_step == "step"
  local spe = s.steps_per_epoch
  if per_step and not spe then
    -- a DataLoader knows its length; a builder returning one is asked once
    local ok, l = pcall(function()
      local v = type(s.train_loader) == "function" and s.train_loader() or s.train_loader
      if S.has_iter(v) and type(v.len) == "function" then return v:len() end
      if type(v) == "table" and #v > 0 then return #v end
    end)
    spe = ok and l or nil
    if not spe then
      return finding("lr_schedule", "skip", "scheduler_step = \"step\" needs setup.steps_per_epoch")
    end
  end
  local total = per_step and epochs * spe or epochs
  local dummy = torch.nn.Linear(1, 1)
  local opt = S.new_optimizer(s, dummy)
  local sched = s.scheduler(opt)
  local base = opt.param_groups[1].lr
  local lrs = {}
  local okr, why = pcall(function()
    for t = 1, total do
      lrs[t] = opt.param_groups[1].lr
      opt:step()
      sched:step()
    end
  end)
  if not okr then
    return finding("lr_schedule", "skip", "the scheduler cannot be stepped without a metric or failed",
      tostring(why))
  end
  local unit = per_step and "step" or "epoch"
  local problems = {}
  local tiny_at
  for t, lr in ipairs(lrs) do if lr < 0.01 * base then tiny_at = t; break end end
  if tiny_at and tiny_at <= 0.5 * total then
    problems[#problems + 1] = ("LR falls below 1%% of its start (%.3g) at %s %d of %d"):format(base, unit, tiny_at - 1, total)
  end
  local ms = rawget(sched, "milestones")
  if type(ms) == "table" then
    local beyond = {}
    for m in pairs(ms) do if type(m) == "number" and m >= total then beyond[#beyond + 1] = m end end
    table.sort(beyond)
    if #beyond > 0 then
      problems[#problems + 1] = ("milestones %s lie beyond the planned %d %ss (never reached)"):format(
        table.concat(beyond, ", "), total, unit)
    end
  end
  local step_size = rawget(sched, "step_size")
  if type(step_size) == "number" and step_size >= total then
    problems[#problems + 1] = ("step_size %d >= the planned %d %ss: the LR never decays"):format(step_size, total, unit)
  end
  local T_max = rawget(sched, "T_max")
  if type(T_max) == "number" and T_max < total then
    problems[#problems + 1] = ("T_max %d < the planned %d %ss: cosine restarts upwards after T_max"):format(T_max, total, unit)
  end
  local q = {}
  for _, f in ipairs({ 0, 0.25, 0.5, 0.75, 1 }) do
    local t = math.max(1, math.min(total, math.floor(f * (total - 1)) + 1))
    q[#q + 1] = ("%d: %.3g"):format(t - 1, lrs[t])
  end
  local ev = ("%d %ss; LR at %s"):format(total, unit, table.concat(q, ", "))
  if #problems == 0 then return finding("lr_schedule", "ok", "LR schedule fits the planned run", ev) end
  return finding("lr_schedule", "warn", "LR schedule does not fit the planned run", ev .. "; " .. table.concat(problems, "; "),
    "schedules borrowed from long runs (decay at epoch 30, ...) decay by epoch number; on a shorter run "
      .. "they drive the LR to ~0 early or never fire; start with a constant LR and tune it")
end

---------------------------------------------------------------- duplicates and leaks
-- One fingerprint per sample: a fixed projection (weights frac(k * 0.7549) + 0.5, no RNG
-- touched) + the sum of the flattened row, in float64.
function M.fingerprints(batches)
  local keys = {}
  local proj
  for _, b in ipairs(batches) do
    local x = b.x:dim() == 1 and b.x:unsqueeze(1) or b.x:flatten(1)
    x = x:to("cpu"):double()
    if not proj then
      proj = (torch.arange(x:size(1), { dtype = torch.float64 }) + 1):mul(0.7548776662466927):frac():add(0.5)
    end
    local p = x:matmul(proj):tolist()
    local s = x:sum(1):tolist()
    for i = 1, #p do keys[#keys + 1] = ("%.12g|%.12g"):format(p[i], s[i]) end
  end
  return keys
end

-- Inputs that take few distinct values (integer tensors, or whole numbers from a small set):
-- equal rows are then expected between different samples.
local function discrete(batches)
  local x = batches[1].x
  if not x:is_floating_point() then return true end
  local xd = x:double()
  if not torch.equal(xd, xd:round()) then return false end
  return torch.unique(xd):numel() <= 64
end

function M.split_leak(ctx)
  local s = ctx.setup
  local tr = ctx.scan_batches or ctx.batches
  local keys = M.fingerprints(tr)
  local seen, dup = {}, 0
  for _, k in ipairs(keys) do
    if seen[k] then dup = dup + 1 else seen[k] = true end
  end
  local ev = ("%d train samples scanned: %d exact duplicates (%.2f%%)"):format(#keys, dup, 100 * dup / #keys)
  local problems = {}
  if dup / #keys > (ctx.opts.dup_tolerance or 0.01) then problems[#problems + 1] = "duplicates within train" end
  if s.val_loader then
    local vb = S.take(s, s.val_loader, ctx.opts.scan_batches or 50)
    local vkeys = M.fingerprints(vb)
    local leak = 0
    for _, k in ipairs(vkeys) do if seen[k] then leak = leak + 1 end end
    ev = ev .. ("; %d val samples: %d also in train (%.2f%%)"):format(#vkeys, leak, 100 * leak / math.max(#vkeys, 1))
    if leak / math.max(#vkeys, 1) > (ctx.opts.leak_tolerance or 0.005) then problems[#problems + 1] = "val samples leak from train" end
  end
  if #problems == 0 then return finding("split_leak", "ok", "no duplicates or train/val leak found", ev) end
  if discrete(tr) then
    -- token ids, categories, binned pixels: different samples repeat by chance, so a repeat is
    -- no evidence of a duplicated or leaked sample
    return finding("split_leak", "inconclusive", "inconclusive: " .. table.concat(problems, "; "),
      ev .. "; the inputs take few distinct values, so samples repeat by chance",
      "compare sample ids rather than contents (tool: `ltorch tool check-splits`)")
  end
  return finding("split_leak", "fail", table.concat(problems, "; "), ev,
    "the split was made after augmentation/duplication, or val is drawn from the train pool; "
      .. "dedupe before splitting (tool: `ltorch tool check-splits`)")
end

return M
