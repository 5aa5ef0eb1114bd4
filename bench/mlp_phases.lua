--[[
  bench/mlp_phases.lua — the MLP training step of bench/workloads.lua (784-256-10, ReLU,
  cross_entropy, AdamW with the default foreach path, batch 64), or its small CNN step (WORKLOAD
  cnn: two conv-ReLU-maxpool blocks and a Linear, batch 128 of 1x28x28), or a tiny step whose
  time is nearly all front end (WORKLOAD tiny: 8-8-4, batch 2), timed phase by phase: forward and
  loss, zero_grad, backward, optimizer step. Its twins bench/mlp_phases.py (PyTorch) and
  bench/mlp_phases.cpp (plain libtorch) time the same phases the same way; bench/mlp_phases.sh
  runs the three interleaved and prints medians. It says which phase of the step a front end
  adds to (docs/PERFORMANCE.md, "The MLP step phase by phase").

  Run:  build/ltorch bench/mlp_phases.lua [STEPS] [WORKLOAD] [count]   (mlp: default 2000 steps
        after 200 untimed; cnn: 100 after 10; tiny: 20000 after 2000)
  Output: one line "PHASES lua <fwd> <zero_grad> <bwd> <step> <total>", µs of process CPU time
  per step (os.clock is process CPU time in LuaJIT, as CLOCK_PROCESS_CPUTIME_ID on the C++ side).
  With `count`: the warm-up steps, then STEPS untimed steps inside a callback of the C library's
  qsort (bench/counted.lua), so that callgrind's --toggle-collect=qsort counts those steps alone
  (bench/step_cost.sh);
  prints "COUNTED lua <workload> <steps>".
]]
local torch = require "torch"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

local workload = arg[2] or "mlp"
if workload ~= "mlp" and workload ~= "cnn" and workload ~= "tiny" then
  error("WORKLOAD: mlp, cnn or tiny, not " .. workload)
end
local cnn, tiny = workload == "cnn", workload == "tiny"
local steps = tonumber(arg[1]) or (cnn and 100 or tiny and 20000 or 2000)
local warm = cnn and 10 or tiny and 2000 or 200
torch.manual_seed(0)
local model, x, y
if cnn then
  model = nn.Sequential(nn.Conv2d(1, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3,
    { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
  x, y = torch.randn(128, 1, 28, 28), torch.randint(10, { 128 })
elseif tiny then
  model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
  x, y = torch.randn(2, 8), torch.randint(4, { 2 })
else
  model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  x, y = torch.randn(64, 784), torch.randint(10, { 64 })
end
local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })

if arg[3] == "count" then
  local function run(k)
    for _ = 1, k do
      local loss = F.cross_entropy(model(x), y)
      opt:zero_grad()
      loss:backward()
      opt:step()
    end
  end
  run(warm)
  require("bench.counted")(run, steps)
  print(("COUNTED lua %s %d"):format(workload, steps))
  return
end
local clock = os.clock
local t = { 0, 0, 0, 0 }
for i = 1, warm + steps do
  local t0 = clock()
  local loss = F.cross_entropy(model(x), y)
  local t1 = clock()
  opt:zero_grad()
  local t2 = clock()
  loss:backward()
  local t3 = clock()
  opt:step()
  local t4 = clock()
  if i > warm then
    t[1], t[2], t[3], t[4] = t[1] + t1 - t0, t[2] + t2 - t1, t[3] + t3 - t2, t[4] + t4 - t3
  end
end
local us = function(v) return v / steps * 1e6 end
print(("PHASES lua %.1f %.1f %.1f %.1f %.1f"):format(us(t[1]), us(t[2]), us(t[3]), us(t[4]),
  us(t[1] + t[2] + t[3] + t[4])))
