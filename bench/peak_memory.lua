--[[
  bench/peak_memory.lua — peak live tensor bytes of a training step, ltorch against the C++
  floor (bench/peak_memory.cpp, the same step in plain libtorch), both counted by the same
  allocator: the counting CPU allocator of bindings/lt_allocator.cpp, which ltorch installs and
  which the C++ twin gets by linking libltorch_bindings (lt_memory()'s live/peak bytes). Also
  the Lua GC cycles per step, counted by torch._memory's sentinel (torch.memory_stats().gc_cycles:
  one per finished cycle).

  Run:  build/ltorch bench/peak_memory.lua [WORKLOAD] [STEPS]
        (cmake --build build --target bench_peak_memory_cpp; build/bench_peak_memory_cpp WORKLOAD STEPS)
    WORKLOAD  mlp | cnn | transformer | all (default all, each in its own process):
              bench/workloads.lua's steps and sizes
    STEPS     measured steps after 5 warm-up steps (default 50)
  Output, per workload: "RESULT <workload>_peak_bytes <n> bytes" (the highest live bytes over
  the measured steps, counted from a peak reset after warm-up), "RESULT <workload>_base_bytes"
  (live bytes at that reset: parameters, optimizer state, batch, and what warm-up left), and
  "RESULT <workload>_gc_cycles_per_step", and "RESULT <workload>_ms_per_step" (process CPU time).
  docs/PERFORMANCE.md ("Peak live bytes") has the table.
]]
local torch = require "torch"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional
local C = require("torch._C").C

local which = arg[1] or "all"
local steps = tonumber(arg[2] or 50)
local WARMUP = 5
local mem = C.lt_memory()

local function result(name, value, unit) io.write(("RESULT %s %.10g %s\n"):format(name, value, unit)) end

local function step_fn(model, opt, x, y, lossfn)
  return function()
    local loss = lossfn(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
  end
end

local builders = {
  mlp = function()
    local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
    return step_fn(model, opt, torch.randn(64, 784), torch.randint(10, { 64 }), F.cross_entropy)
  end,
  cnn = function()
    local model = nn.Sequential(nn.Conv2d(1, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
      nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
    return step_fn(model, opt, torch.randn(128, 1, 28, 28), torch.randint(10, { 128 }), F.cross_entropy)
  end,
  transformer = function()
    local layer = nn.TransformerEncoderLayer(256, 4, { dim_feedforward = 512, dropout = 0.0, batch_first = true })
    local model = nn.TransformerEncoder(layer, 2)
    local opt = optim.AdamW(model:parameters(), { lr = 1e-4 })
    return step_fn(model, opt, torch.randn(8, 128, 256), nil, function(out) return (out * out):mean() end)
  end,
}

-- Warm-up, a collection and a peak reset, then the measured steps: peak, base, cycles, seconds.
local function run(step)
  for _ = 1, WARMUP do step() end
  torch.collect()   -- the reset starts from live tensors only, as C++'s does; garbage made from here counts
  mem.peak_bytes = mem.live_bytes
  local base = tonumber(mem.live_bytes)
  local cycles = torch.memory_stats().gc_cycles
  local t0 = os.clock()
  for _ = 1, steps do step() end
  return tonumber(mem.peak_bytes), base, torch.memory_stats().gc_cycles - cycles, os.clock() - t0
end

local function measure(name)
  torch.manual_seed(0)
  local peak, base, cycles, dt = run(builders[name]())
  result(name .. "_peak_bytes", peak, "bytes")
  result(name .. "_base_bytes", base, "bytes")
  result(name .. "_gc_cycles_per_step", cycles / steps, "cycles")
  result(name .. "_ms_per_step", dt / steps * 1000, "ms")
end

torch.set_num_threads(1)
if which == "all" then
  -- each workload in its own process, so that none starts with another's leftovers
  for _, name in ipairs({ "mlp", "cnn", "transformer" }) do
    local p = assert(io.popen(("%s %s %s %d"):format(arg[-1] or "build/ltorch", arg[0], name, steps)))
    io.write(p:read("*a"))
    assert(p:close(), name .. " failed")
  end
elseif builders[which] then
  measure(which)
else
  error("unknown workload " .. which .. " (mlp, cnn, transformer or all)")
end
