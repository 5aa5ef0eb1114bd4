--[[
  bench/workloads.lua — the ltorch side of the side-by-side benchmark (bench/run.lua runs it
  beside bench/workloads.py and bench/workloads.cpp, which do the same work the same way).

  Run:  [BENCH_DEVICE=cuda] build/ltorch bench/workloads.lua MODE [SCALE]
    MODE   dispatch | mlp | memory | cnn | transformer | epoch
    SCALE  1 = full size (default); a smaller number (e.g. 0.01) shrinks iteration counts and
           sizes for the smoke spec (spec/bench/smoke_spec.lua).
  Timing is process CPU time (CLOCK_PROCESS_CPUTIME_ID; all three sides run libtorch with one
  intra-op thread, so on an idle machine it equals wall time, and on a shared one it is far
  steadier). Output: one line per figure, "RESULT <name> <value> <unit>", then "RESULT peak_rss_kb <kB> kB"
  (VmHWM of this process). Nothing else goes to stdout.

  Workloads (bench/README section in docs/PERFORMANCE.md):
    dispatch     small-tensor ops in a loop, µs per op: add and mul of two 10-element float
                 tensors, matmul of 8x8 matrices, x[3] (select) on a 16x8 tensor; and µs per
                 forward of an 8-8-4 Sequential (Linear, ReLU, Linear) on a 2x8 batch with
                 autograd on, its output dropped (each leaves a graph for the front end to free)
    mlp          784-256-10 MLP, ReLU, cross_entropy, AdamW (default foreach path), batch 64
                 (Fashion-MNIST shapes, fixed synthetic batch): training steps/s
    memory       the mlp step N times (10,000 at scale 1): peak RSS, and growth = the highest RSS
                 over steps N/2..N minus the highest over N/10..N/2, and the same with
                 the mean RSS of each half (sampled every N/100 steps)
    cnn          conv(1→16,3,p1)-ReLU-maxpool2-conv(16→32,3,p1)-ReLU-maxpool2-Linear(1568→10),
                 batch 128 of 1x28x28, AdamW: steps/s
    transformer  nn.TransformerEncoder, d_model 256, 4 heads, ff 512, dropout 0, seq 128,
                 batch-first; layers and batch reduced for a 2-core machine (2 layers, batch 8;
                 on a GPU the full 4 layers, batch 32), AdamW, loss = mean of squares: tokens/s
    epoch        one epoch of recipes/train_classifier.lua's default config, driven through the
                 recipe's own code (classifier_lib.build + trainer.fit, epochs 1, quiet): read
                 Fashion-MNIST from Debian's gzipped IDX files, split 55k/5k (seeded randperm),
                 scale to [0,1], normalise with the train split's mean/std, TensorDataset +
                 DataLoader (shuffle, batch 128; val batch 1000), MLP 784-256-128-10 with ReLU
                 and dropout 0.1, head bias from the class priors, AdamW lr 1e-3 wd 1e-4,
                 clip_grad_norm 1.0, one epoch, evaluation on val, metrics.jsonl line and
                 checkpoint (to a temporary directory). Timed end to end in-process (imports
                 excluded): wall seconds, process CPU seconds, and the data part (load + split +
                 normalise + model + loaders) in wall seconds; also epoch_train_n, epoch_val_n and
                 epoch_val_acc (not in the table; the smoke spec checks them). Below scale 1:
                 limit_train / limit_eval = 55000 / 5000 × scale (the IDX files are still read whole).
]]
local torch = require "torch"
local ffi = require "ffi"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

local mode = arg[1] or "dispatch"
local scale = tonumber(arg[2] or 1)
-- BENCH_DEVICE=cuda (bench/run.lua --device cuda) runs the mlp, cnn and transformer steps on the
-- GPU: model and batch on the device, timed in wall time between two torch.cuda.synchronize()
-- (process CPU time would not see the GPU's work), transformer at the issue's full size.
local device = os.getenv("BENCH_DEVICE") or "cpu"
local on_gpu = device ~= "cpu"
if on_gpu and not (mode == "mlp" or mode == "cnn" or mode == "transformer") then
  error("BENCH_DEVICE=" .. device .. ": only the mlp, cnn and transformer workloads run on a GPU, not " .. mode)
end

-- Declared under its own name (asm alias): a plain `clock_gettime` declaration here would take
-- the name from recipes/trainer.lua's (another struct type), which the epoch mode loads.
pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_wl_timespec;"
  .. " int bench_wl_clock_gettime(int, bench_wl_timespec *) __asm__(\"clock_gettime\");")
local ts = ffi.new("bench_wl_timespec")
local function now()
  ffi.C.bench_wl_clock_gettime(2, ts)   -- CLOCK_PROCESS_CPUTIME_ID (see docs/PERFORMANCE.md)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end
local function wall()
  ffi.C.bench_wl_clock_gettime(1, ts)   -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local function status_kb(field)
  local f = io.open("/proc/self/status")
  local s = f:read("*a"); f:close()
  return tonumber(s:match(field .. ":%s+(%d+)"))
end

local function result(name, value, unit) io.write(("RESULT %s %.6g %s\n"):format(name, value, unit)) end
local function count(n, min) return math.max(min or 1, math.floor(n * scale + 0.5)) end

torch.manual_seed(0)

-- Runs fn n times after a warm-up of max(n/10, 10 at scale 1) calls; returns the time of the n
-- timed calls and of the warm-up. The warm-up covers lazy set-up (optimizer state) and the heap
-- growing to its steady size; it is reported too (RESULT <mode>_warmup_s), so that one-time cost
-- is visible rather than hidden.
local clock = now
local function sync() end
if on_gpu then
  clock = wall
  sync = function() torch.cuda.synchronize() end
end
local function time_loop(n, fn)
  sync()
  local t0 = clock()
  for _ = 1, math.max(1, math.floor(n / 10), count(10)) do fn() end
  sync()
  local t1 = clock()
  for _ = 1, n do fn() end
  sync()
  return clock() - t1, t1 - t0
end

local function train_step_fn(model, opt, x, y, lossfn)
  return function()
    local loss = lossfn(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    return loss
  end
end

local function mlp_setup()
  local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)):to(device)
  local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
  local x, y = torch.randn(64, 784):to(device), torch.randint(10, { 64 }):to(device)
  return train_step_fn(model, opt, x, y, F.cross_entropy)
end

if mode == "dispatch" then
  local n = count(200000, 100)
  local a, b = torch.randn(10), torch.randn(10)
  local m1, m2 = torch.randn(8, 8), torch.randn(8, 8)
  local big = torch.randn(16, 8)
  local r
  result("add_us", time_loop(n, function() r = a + b end) / n * 1e6, "us/op")
  result("mul_us", time_loop(n, function() r = a * b end) / n * 1e6, "us/op")
  result("matmul8_us", time_loop(n, function() r = m1:matmul(m2) end) / n * 1e6, "us/op")
  result("index_us", time_loop(n, function() r = big[3] end) / n * 1e6, "us/op")
  local tiny, x8 = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)), torch.randn(2, 8)
  local nf = count(40000, 100)
  result("forward8_us", time_loop(nf, function() r = tiny(x8) end) / nf * 1e6, "us/forward")
  assert(r ~= nil)   -- the results were kept (r is the sink of the loops above)
elseif mode == "mlp" then
  local n = count(2000, 3)
  local dt, warm = time_loop(n, mlp_setup())
  result("mlp_steps_per_s", n / dt, "steps/s")
  result("mlp_warmup_s", warm, "s")
elseif mode == "memory" then
  local n = count(10000, 40)
  local step = mlp_setup()
  -- RSS is sampled every n/100 steps; the Lua GC frees tensors in cycles, so RSS oscillates
  -- (a few MiB here) and two single samples would read a phase of the cycle as growth. Growth is
  -- the highest RSS over the second half minus the highest over warm-up..half.
  local every, warm, half = math.max(1, math.floor(n / 100)), math.floor(n / 10), math.floor(n / 2)
  local rss_warm, max1, max2, sum1, n1, sum2, n2 = nil, 0, 0, 0, 0, 0, 0
  for i = 1, n do
    step()
    if i == warm then rss_warm = status_kb("VmRSS") end
    if i % every == 0 and i >= warm then
      local r = status_kb("VmRSS")
      if i <= half then max1, sum1, n1 = math.max(max1, r), sum1 + r, n1 + 1
      else max2, sum2, n2 = math.max(max2, r), sum2 + r, n2 + 1 end
    end
  end
  result("mem_rss_after_warmup_kb", rss_warm, "kB")
  result("mem_rss_end_kb", status_kb("VmRSS"), "kB")
  result("mem_growth_kb", max2 - max1, "kB")
  result("mem_growth_mean_kb", sum2 / n2 - sum1 / n1, "kB")
elseif mode == "cnn" then
  local n = count(100, 2)
  local model = nn.Sequential(nn.Conv2d(1, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10)):to(device)
  local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
  local bs = count(128, 2)
  local x, y = torch.randn(bs, 1, 28, 28):to(device), torch.randint(10, { bs }):to(device)
  local dt, warm = time_loop(n, train_step_fn(model, opt, x, y, F.cross_entropy))
  result("cnn_steps_per_s", n / dt, "steps/s")
  result("cnn_warmup_s", warm, "s")
elseif mode == "transformer" then
  local n = count(20, 2)
  local layers, bs, seq = 2, 8, scale < 1 and 16 or 128
  if on_gpu then layers, bs = 4, scale < 1 and 8 or 32 end
  local layer = nn.TransformerEncoderLayer(256, 4, { dim_feedforward = 512, dropout = 0.0, batch_first = true })
  local model = nn.TransformerEncoder(layer, layers):to(device)
  local opt = optim.AdamW(model:parameters(), { lr = 1e-4 })
  local x = torch.randn(bs, seq, 256):to(device)
  local step = train_step_fn(model, opt, x, nil, function(out) return (out * out):mean() end)
  local dt, warm = time_loop(n, step)
  result("transformer_tokens_per_s", n * bs * seq / dt, "tokens/s")
  result("transformer_warmup_s", warm, "s")
elseif mode == "epoch" then
  local root = (arg[0]:match("^(.*)/bench/workloads%.lua$")) or "."
  package.path = root .. "/?.lua;" .. package.path
  local lib = require "recipes.classifier_lib"
  local trainer = require "recipes.trainer"
  local out = os.tmpname()
  os.remove(out)
  local cfg = { epochs = 1, out = out }   -- everything else: lib.DEFAULTS
  if scale < 1 then cfg.limit_train, cfg.limit_eval = count(55000, 2), count(5000, 2) end
  local w0, c0 = wall(), now()
  local parts = lib.build(cfg)
  local w1 = wall()
  local history = trainer.fit(parts, { log = function() end, quiet = true })
  local w2, c2 = wall(), now()
  os.execute("rm -rf '" .. out .. "'")
  io.stderr:write(("epoch: %d train / %d val, train loss %.4f, val loss %.4f, val acc %.4f\n"):format(
    parts.train_loader.dataset:len(), parts.val_loader.dataset:len(), history[1].train_loss, history[1].val_loss,
    history[1].val_accuracy))
  result("epoch_wall_s", w2 - w0, "s")
  result("epoch_cpu_s", c2 - c0, "s")
  result("epoch_data_wall_s", w1 - w0, "s")
  result("epoch_train_n", parts.train_loader.dataset:len(), "samples")
  result("epoch_val_n", parts.val_loader.dataset:len(), "samples")
  result("epoch_val_acc", history[1].val_accuracy, "")
else
  error("unknown mode " .. tostring(mode))
end
result("peak_rss_kb", status_kb("VmHWM"), "kB")
