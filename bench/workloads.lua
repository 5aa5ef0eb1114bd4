--[[
  bench/workloads.lua — the ltorch side of the side-by-side benchmark (bench/run.lua runs it
  beside bench/workloads.py and bench/workloads.cpp, which do the same work the same way).

  Run:  build/ltorch bench/workloads.lua MODE [SCALE]
    MODE   dispatch | mlp | memory | cnn | transformer
    SCALE  1 = full size (default); a smaller number (e.g. 0.01) shrinks iteration counts and
           sizes for the smoke spec (spec/bench/smoke_spec.lua).
  Timing is process CPU time (CLOCK_PROCESS_CPUTIME_ID; all three sides run libtorch with one
  intra-op thread, so on an idle machine it equals wall time, and on a shared one it is far
  steadier). Output: one line per figure, "RESULT <name> <value> <unit>", then "RESULT peak_rss_kb <kB> kB"
  (VmHWM of this process). Nothing else goes to stdout.

  Workloads (bench/README section in docs/PERFORMANCE.md):
    dispatch     small-tensor ops in a loop, µs per op: add and mul of two 10-element float
                 tensors, matmul of 8x8 matrices, x[3] (select) on a 16x8 tensor
    mlp          784-256-10 MLP, ReLU, cross_entropy, AdamW (default foreach path), batch 64
                 (Fashion-MNIST shapes, fixed synthetic batch): training steps/s
    memory       the mlp step N times (10,000 at scale 1): peak RSS, and growth = the highest RSS
                 over steps N/2..N minus the highest over N/10..N/2, and the same with
                 the mean RSS of each half (sampled every N/100 steps)
    cnn          conv(1→16,3,p1)-ReLU-maxpool2-conv(16→32,3,p1)-ReLU-maxpool2-Linear(1568→10),
                 batch 128 of 1x28x28, AdamW: steps/s
    transformer  nn.TransformerEncoder, d_model 256, 4 heads, ff 512, dropout 0, seq 128,
                 batch-first; layers and batch reduced for a 2-core machine (2 layers, batch 8),
                 AdamW, loss = mean of squares: tokens/s
]]
local torch = require "torch"
local ffi = require "ffi"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

local mode = arg[1] or "dispatch"
local scale = tonumber(arg[2] or 1)

pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int, bench_timespec *);")
local ts = ffi.new("bench_timespec")
local function now()
  ffi.C.clock_gettime(2, ts)   -- CLOCK_PROCESS_CPUTIME_ID (see docs/PERFORMANCE.md)
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

local function time_loop(n, fn)
  for _ = 1, math.max(1, math.floor(n / 10)) do fn() end   -- warm-up
  local t0 = now()
  for _ = 1, n do fn() end
  return now() - t0
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
  local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
  local x, y = torch.randn(64, 784), torch.randint(10, { 64 })
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
elseif mode == "mlp" then
  local n = count(2000, 3)
  local step = mlp_setup()
  result("mlp_steps_per_s", n / time_loop(n, step), "steps/s")
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
    nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
  local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
  local bs = count(128, 2)
  local x, y = torch.randn(bs, 1, 28, 28), torch.randint(10, { bs })
  result("cnn_steps_per_s", n / time_loop(n, train_step_fn(model, opt, x, y, F.cross_entropy)), "steps/s")
elseif mode == "transformer" then
  local n = count(20, 2)
  local layers, bs, seq = 2, 8, scale < 1 and 16 or 128
  local layer = nn.TransformerEncoderLayer(256, 4, { dim_feedforward = 512, dropout = 0.0, batch_first = true })
  local model = nn.TransformerEncoder(layer, layers)
  local opt = optim.AdamW(model:parameters(), { lr = 1e-4 })
  local x = torch.randn(bs, seq, 256)
  local step = train_step_fn(model, opt, x, nil, function(out) return (out * out):mean() end)
  result("transformer_tokens_per_s", n * bs * seq / time_loop(n, step), "tokens/s")
else
  error("unknown mode " .. tostring(mode))
end
result("peak_rss_kb", status_kb("VmHWM"), "kB")
