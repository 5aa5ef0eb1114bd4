--[[
  bench/gpu/graph_step.lua — how much faster is a launch-bound training step replayed as a CUDA
  graph than run eagerly? A small MLP (64-256-256-10, batch 32, MSE, SGD with momentum: an
  optimizer whose step queues only device work, so it can be captured) trains with
    eager:  zero_grad, forward, backward, step, every step from Lua;
    graph:  the same step captured once with torch.cuda.graph (after 3 warmup steps on a side
            stream) and replayed with g:replay(): no Lua, dispatcher or allocator work per step.
  Prints steps/s of each and their ratio, after checking that the graphed parameters equal the
  eager ones after the same number of steps (within 1e-4). PyTorch eager on the same step:
  bench/gpu/check.sh runs the same model in the machine's python beside it.

  Without a GPU (bench/gpu/check.sh's dry run) it runs the eager step on the CPU, checks that
  torch.cuda.CUDAGraph() raises, and says so.

  Run:  build/ltorch bench/gpu/graph_step.lua [--steps 500]
]]
local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional

local steps = 500
if arg and arg[1] == "--steps" then steps = assert(tonumber(arg[2]), "--steps N") end

local cuda = torch.cuda.is_available()
local device = cuda and "cuda" or "cpu"

local function setup()
  torch.manual_seed(0)
  local model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    :to(device)
  local opt = torch.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
  local x = torch.randn(32, 64, { device = device })
  local y = torch.randn(32, 10, { device = device })
  return model, opt, x, y
end

local function step(model, opt, x, y)
  opt:zero_grad({ set_to_none = false })
  local loss = F.mse_loss(model(x), y)
  loss:backward()
  opt:step()
  return loss
end

local function sync() if cuda then torch.cuda.synchronize() end end

-- Wall-clock seconds (CLOCK_MONOTONIC): GPU work is timed between two synchronizes.
local ffi = require "ffi"
pcall(ffi.cdef, "struct graph_step_ts { long s; long ns; }; int graph_step_clock_gettime(int, struct graph_step_ts *) __asm__(\"clock_gettime\");")
local ts = ffi.new("struct graph_step_ts")
local function now()
  ffi.C.graph_step_clock_gettime(1, ts)
  return tonumber(ts.s) + tonumber(ts.ns) * 1e-9
end

local function timed(n, fn)
  sync()
  local t0 = now()
  for _ = 1, n do fn() end
  sync()
  return now() - t0
end

-- eager
local model_e, opt_e, x, y = setup()
for _ = 1, 10 do step(model_e, opt_e, x, y) end
local eager_s = timed(steps, function() step(model_e, opt_e, x, y) end)
print(("graph_step: eager  %d steps on %s: %.1f steps/s"):format(steps, device, steps / eager_s))

if not cuda then
  local ok, err = pcall(torch.cuda.CUDAGraph)
  assert(not ok, "CUDAGraph() should raise without a GPU")
  print("graph_step: no CUDA device: CUDA graphs skipped (" .. tostring(err):match("^[^\n]*") .. ")")
  return
end

-- graphed: 3 warmup steps on a side stream, capture one, replay the rest
local model, opt, sx, sy = setup()
local s = torch.cuda.Stream()
s:wait_stream(torch.cuda.current_stream())
torch.cuda.stream(s, function() for _ = 1, 3 do step(model, opt, sx, sy) end end)
torch.cuda.current_stream():wait_stream(s)
local g = torch.cuda.CUDAGraph()
torch.cuda.graph(g, function() step(model, opt, sx, sy) end)
-- the capture does not run the step: 3 + (10 + steps - 3) replays = the eager model's 10 + steps
for _ = 1, 7 do g:replay() end
local graph_s = timed(steps, function() g:replay() end)
print(("graph_step: graph  %d replays on cuda: %.1f steps/s (%.2fx eager)"):format(steps, steps / graph_s,
  eager_s / graph_s))
local pe, pg = model_e:parameters(), model:parameters()
for i = 1, #pe do
  local d = (pe[i] - pg[i]):abs():max():item()
  assert(d < 1e-4, ("graph_step: parameter %d differs from the eager run by %g"):format(i, d))
end
print("graph_step: graphed parameters equal the eager ones")
