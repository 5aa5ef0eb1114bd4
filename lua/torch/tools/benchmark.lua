--[[
  torch.tools.benchmark — `tool.lua benchmark-model SETUP.lua`: forward and forward+backward
  latency and throughput of the setup's model for each --batch-sizes (default 1,8,32), on
  batches made by repeating the first sample of its first train batch.
    forward   eval mode, no grad;  train step: forward, loss (setup.loss_fn, else output sum),
    backward, grads zeroed;  each timed over --iters runs after --warmup runs, median reported;
    samples/s = batch / median.  On CUDA every timing is bracketed by torch.cuda.synchronize().
  Peak memory: on CPU the process's peak RSS (VmHWM, Linux), on CUDA
  torch.cuda.max_memory_allocated after reset_peak_memory_stats per batch size.
  --profile: one more train step at the largest batch size under torch.profiler, and its
  key_averages table (sorted by CPU total, or CUDA total on CUDA; top 15 rows); with --json the
  ops as {name, count, cpu_total_us, self_cpu_us}.
  Exit 0 all batch sizes ran, 1 one failed (out of memory, shape error: the message is shown),
  2 usage error or a setup that does not load.
]]
local torch = require "torch"
local T = require "torch.tools"
local C = require "torch.tools._clock"
local U = require "torch.tools._setup"
local S = require "torch.doctor.setup"

local M = { name = "benchmark-model", summary = "forward/backward latency, throughput and peak memory by batch size",
  usage = [[usage: ltorch tools/tool.lua benchmark-model SETUP.lua [--batch-sizes 1,8,32] [--iters N] [--warmup N]
         [--device cpu|cuda] [--profile] [--json]
  SETUP.lua returns a doctor setup (model, train_loader, loss_fn; see torch.doctor.setup)
exit 0 all batch sizes ran, 1 one failed, 2 usage / setup error]] }

-- peak resident set size in bytes (Linux), or nil
function M.peak_rss()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  local kb = s:match("VmHWM:%s*(%d+)")
  return kb and tonumber(kb) * 1024
end

local function median(times)
  table.sort(times)
  return C.percentile(times, 0.5)
end

local function timed(fn, iters, warmup, cuda)
  for _ = 1, warmup do fn() end
  local times = {}
  for i = 1, iters do
    if cuda then torch.cuda.synchronize() end
    local t0 = C.now()
    fn()
    if cuda then torch.cuda.synchronize() end
    times[i] = C.now() - t0
  end
  return median(times)
end

-- one batch size -> {batch, forward_ms, train_ms, forward_sps, train_sps, peak_bytes}
function M.bench(setup, model, x, y, b, opts)
  local cuda = opts.device == "cuda"
  local xb, yb = U.batch_of(x, b), U.batch_of(y, b)
  if cuda then
    xb = xb:to("cuda"); if torch.is_tensor(yb) then yb = yb:to("cuda") end
    torch.cuda.reset_peak_memory_stats()
  end
  model:eval()
  local fwd = timed(function() torch.no_grad(function() return model:forward(xb) end) end, opts.iters, opts.warmup, cuda)
  model:train()
  local step = timed(function()
    model:zero_grad()
    local out = model:forward(xb)
    local loss = (setup.loss_fn and yb ~= nil) and S.call_loss(setup, out, yb) or out:sum()
    loss:backward()
  end, opts.iters, opts.warmup, cuda)
  return { batch = b, forward_ms = fwd * 1e3, train_ms = step * 1e3, forward_sps = b / fwd, train_sps = b / step,
    peak_bytes = cuda and torch.cuda.max_memory_allocated() or M.peak_rss() }
end

-- --profile: one train step at batch b under torch.profiler -> the stopped profiler.
function M.profile_step(setup, model, x, y, b, opts)
  local P = torch.profiler
  local xb, yb = U.batch_of(x, b), U.batch_of(y, b)
  local acts = { P.ProfilerActivity.CPU }
  if opts.device == "cuda" then
    xb = xb:to("cuda"); if torch.is_tensor(yb) then yb = yb:to("cuda") end
    acts[2] = P.ProfilerActivity.CUDA
  end
  model:train()
  return P.profile({ activities = acts, record_shapes = true }, function()
    model:zero_grad()
    local out = P.record_function("forward", function() return model:forward(xb) end)
    local loss = (setup.loss_fn and yb ~= nil) and S.call_loss(setup, out, yb) or out:sum()
    P.record_function("backward", function() loss:backward() end)
    if opts.device == "cuda" then torch.cuda.synchronize() end
  end)
end

local function profile_rows(prof)
  local rows = {}
  for _, e in ipairs(prof:key_averages()) do
    rows[#rows + 1] = { name = e.key, count = e.count, cpu_total_us = e.cpu_time_total, self_cpu_us = e.self_cpu_time_total }
  end
  table.sort(rows, function(a, b) return a.cpu_total_us > b.cpu_total_us end)
  return rows
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { batch_sizes = "string", iters = "number", warmup = "number", device = "string", json = "boolean",
    profile = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one setup script expected") end
  local bs = T.whole_numbers(o.batch_sizes or "1,8,32", "--batch-sizes", 1)
  o.iters, o.warmup = o.iters or 10, o.warmup or 2
  if not (o.iters >= 1 and o.iters % 1 == 0) then T.usage_error("--iters must be a whole number >= 1") end
  if not (o.warmup >= 0 and o.warmup % 1 == 0) then T.usage_error("--warmup must be a whole number >= 0") end
  local setup = U.load(pos[1], { "model", "train_loader" })
  o.device = o.device or setup.device or "cpu"
  if o.device ~= "cpu" and o.device ~= "cuda" then T.usage_error("--device must be cpu or cuda") end
  if o.device == "cuda" and not torch.cuda.is_available() then T.usage_error("--device cuda: no CUDA device") end
  local x, y = U.first_batch(setup, pos[1])
  local okm, model = pcall(S.new_model, setup, 0)
  if not okm then T.usage_error("%s: %s", pos[1], tostring(model)) end
  if o.device == "cuda" then model:to("cuda") end
  local rows, failed = {}, nil
  for _, b in ipairs(bs) do
    local ok, r = pcall(M.bench, setup, model, x, y, b, o)
    if not ok then failed = { batch = b, error = tostring(r) }; break end
    rows[#rows + 1] = r
  end
  local code = failed and 1 or 0
  local prof = o.profile and #rows > 0 and M.profile_step(setup, model, x, y, rows[#rows].batch, o) or nil
  if o.json then
    out(require("torch.serialization.json").encode({ device = o.device, results = rows, failed = failed,
      profile = prof and { batch = rows[#rows].batch, ops = profile_rows(prof) } or nil }))
    return code
  end
  out(("device %s, median of %d runs after %d warm-up"):format(o.device, o.iters, o.warmup))
  out(("%7s %12s %14s %12s %14s %12s"):format("batch", "forward ms", "fwd samples/s", "train ms", "train samples/s",
    o.device == "cuda" and "peak alloc MB" or "peak RSS MB"))
  for _, r in ipairs(rows) do
    out(("%7d %12.3f %14.1f %12.3f %14.1f %12.1f"):format(r.batch, r.forward_ms, r.forward_sps, r.train_ms, r.train_sps,
      (r.peak_bytes or 0) / 2 ^ 20))
  end
  if failed then out(("batch %d failed: %s"):format(failed.batch, failed.error)) end
  if prof then
    out(("torch.profiler, one train step at batch %d:"):format(rows[#rows].batch))
    out(prof:key_averages():table({ sort_by = o.device == "cuda" and "cuda_time_total" or "cpu_time_total", row_limit = 15 }))
  end
  return code
end

return M
