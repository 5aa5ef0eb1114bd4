--[[
  torch.tools.profile_dataloader — `tool.lua profile-dataloader SCRIPT`: is data loading the
  bottleneck?
    * SCRIPT returns a dataset, a factory or {dataset = ...} (torch.tools._dataset): a DataLoader
      with --batch-size is drained for up to --batches batches at each --workers count (default
      0,1,2); throughput = samples / wall time, worker start-up included. Workers need a dataset
      they can rebuild (a `factory` field, e.g. the datasets in torch.data.datasets).
    * SCRIPT returns a doctor setup (train_loader, model, loss_fn; torch.doctor.setup): its
      train_loader as built is timed over --batches training steps (forward, loss, backward,
      optimizer step); stall fraction = time waiting for the next batch / (wait + step time).
  Exit 0 fine, 1 a worker count failed or the stall fraction is above --max-stall (default 0.2),
  2 usage error or a script that does not load.
]]
local torch = require "torch"
local T = require "torch.tools"
local C = require "torch.tools._clock"
local D = require "torch.tools._dataset"
local S = require "torch.doctor.setup"

local M = { name = "profile-dataloader", summary = "samples/s per worker count, and the share of a step spent waiting for data",
  usage = [[usage: ltorch tools/tool.lua profile-dataloader SCRIPT [--workers 0,1,2] [--batch-size N] [--batches N]
         [--max-stall F] [--json]
  SCRIPT returns a dataset / factory / {dataset = ...}  -> throughput per worker count
      or a doctor setup (train_loader, model, loss_fn)  -> its loader's throughput and stall fraction
exit 0 fine, 1 a worker count failed or stall above --max-stall, 2 usage / script error]] }

local function samples(batch)
  local x = type(batch) == "table" and (batch.x or batch[1]) or batch
  return torch.is_tensor(x) and x:dim() > 0 and x:size(0) or 1
end

-- drain(loader, max) -> seconds, samples, batches
local function drain(loader, max)
  local t0, n, nb = C.now(), 0, 0
  for batch in loader:iter() do
    n, nb = n + samples(batch), nb + 1
    if nb >= max then break end
  end
  return C.now() - t0, n, nb
end

function M.workers(ds, opts)
  local rows = {}
  for _, w in ipairs(opts.workers) do
    local ok, secs, n, nb = pcall(function()
      return drain(torch.utils.data.DataLoader(ds, { batch_size = opts.batch_size, num_workers = w }), opts.batches)
    end)
    if ok then
      rows[#rows + 1] = { workers = w, seconds = secs, samples = n, batches = nb, samples_per_sec = n / math.max(secs, 1e-9) }
    else
      rows[#rows + 1] = { workers = w, error = tostring(secs):match("^[^\n]*"):gsub("^[^:]*:%d+: ", "") }
    end
  end
  return rows
end

function M.stall(setup, opts)
  local model = S.new_model(setup, 0)
  local optim = S.new_optimizer(setup, model)
  model:train()
  local it = S.iterate(setup.train_loader)
  local wait, step, n, nb = 0, 0, 0, 0
  while nb < opts.batches do
    local t0 = C.now()
    local b = it()
    local t1 = C.now()
    if b == nil then break end
    local x, y = S.split(setup, b)
    optim:zero_grad()
    S.call_loss(setup, model:forward(x), y):backward()
    optim:step()
    wait, step = wait + (t1 - t0), step + (C.now() - t1)
    n, nb = n + samples({ x }), nb + 1
  end
  if nb == 0 then T.usage_error("the train_loader gave no batch") end
  return { batches = nb, samples = n, wait_seconds = wait, step_seconds = step,
    samples_per_sec = n / math.max(wait, 1e-9), stall = wait / math.max(wait + step, 1e-12) }
end


local function whole(o, k, min)
  if o[k] ~= nil and not (o[k] >= min and o[k] % 1 == 0) then
    T.usage_error("--%s must be a whole number >= %d", (k:gsub("_", "-")), min)
  end
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { workers = "string", batch_size = "number", batches = "number", max_stall = "number",
    json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one dataset or setup script expected") end
  whole(o, "batch_size", 1); whole(o, "batches", 1)
  if o.max_stall and not (o.max_stall >= 0 and o.max_stall <= 1) then T.usage_error("--max-stall must be in [0, 1]") end
  local opts = { workers = T.whole_numbers(o.workers or "0,1,2", "--workers", 0), batch_size = o.batch_size or 32, batches = o.batches or 50 }
  local max_stall = o.max_stall or 0.2
  local v = D.load_script(pos[1])
  local r, code = {}, 0
  if type(v) == "table" and not D.is_dataset(v) and v.train_loader ~= nil then
    if type(v.model) ~= "function" or v.loss_fn == nil then T.usage_error("%s: the setup needs model and loss_fn", pos[1]) end
    r.step = M.stall(v, opts)
    code = r.step.stall > max_stall and 1 or 0
  else
    r.workers = M.workers(D.dataset(v, pos[1]), opts)
    for _, row in ipairs(r.workers) do if row.error then code = 1 end end
  end
  if o.json then out(require("torch.serialization.json").encode(r)); return code end
  for _, row in ipairs(r.workers or {}) do
    if row.error then
      out(("workers %-3d failed: %s"):format(row.workers, row.error))
    else
      out(("workers %-3d %10.1f samples/s  (%d samples, %d batches, %.3f s)"):format(row.workers, row.samples_per_sec,
        row.samples, row.batches, row.seconds))
    end
  end
  if r.step then
    local s = r.step
    out(("%d steps: waiting for data %.3f s, computing %.3f s; loader %.1f samples/s"):format(s.batches,
      s.wait_seconds, s.step_seconds, s.samples_per_sec))
    out(("stall fraction %.1f%% (limit %.0f%%)%s"):format(100 * s.stall, 100 * max_stall,
      code == 1 and ": the step waits on data; add workers, cache decoded samples or move work off get()" or ""))
  end
  return code
end

return M
