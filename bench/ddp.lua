--[[
  bench/ddp.lua — DistributedDataParallel throughput on this machine, ltorch beside PyTorch in
  one run: training steps/s with 1 rank and with 2 ranks (Gloo on loopback, one intra-op thread
  per rank), and the gain from overlapping bucketed all-reduces with backward over one
  all-reduce after backward.

  Run:  build/ltorch bench/ddp.lua [STEPS]          (drives everything; ~1 minute on 2 cores)
        (it starts `tools/run.lua --nproc-per-node W bench/ddp.lua --worker MODEL CAP STEPS` and,
        with the reference venv, `python -m torch.distributed.run ... bench/ddp.py` with the same
        arguments; each worker prints "RESULT steps_per_s <x>" from rank 0)

  Models (synthetic fixed batch per rank, cross_entropy, SGD momentum 0.9, plain loss:backward()):
    mlp   workload 2 of bench/workloads.lua: 784-256-10, ReLU, batch 64 per rank (0.2 M params)
    wide  784-2048-2048-2048-10, ReLU, batch 32 per rank (10.1 M params, 40 MB of gradients):
          communication-heavy, where overlap can show
  CAP: bucket_cap_mb; "one" = a single bucket (1e6 MB), all-reduced when backward is done.
  Timing: wall clock over STEPS steps after 5 warm-up steps (rank 0; ranks run in lockstep).
]]
local ffi = require "ffi"

pcall(ffi.cdef, "struct bench_ddp_ts { long s; long ns; }; int bench_ddp_clock_gettime(int, struct bench_ddp_ts *) __asm__(\"clock_gettime\");")
local function wall()
  local ts = ffi.new("struct bench_ddp_ts")
  ffi.C.bench_ddp_clock_gettime(1, ts)
  return tonumber(ts.s) + tonumber(ts.ns) * 1e-9
end

local function worker(model_name, cap, steps)
  local torch = require "torch"
  local nn, optim, F, dist = torch.nn, torch.optim, torch.nn.functional, torch.distributed
  torch.set_num_threads(1)
  dist.init_process_group{ backend = "gloo" }
  torch.manual_seed(0)
  local model, batch
  if model_name == "mlp" then
    model, batch = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)), 64
  else
    model, batch = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
      nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)), 32
  end
  local ddp = nn.parallel.DistributedDataParallel(model, { bucket_cap_mb = cap == "one" and 1e6 or tonumber(cap) })
  local opt = optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
  local x, y = torch.randn(batch, 784), torch.randint(0, 10, { batch })
  local function step()
    opt:zero_grad()
    F.cross_entropy(ddp(x), y):backward()
    opt:step()
  end
  for _ = 1, 5 do step() end
  dist.barrier()
  local t0 = wall()
  for _ = 1, steps do step() end
  local secs = wall() - t0
  if dist.get_rank() == 0 then print(("RESULT steps_per_s %.6g"):format(steps / secs)) end
  dist.destroy_process_group()
end

local function capture(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("*a")
  p:close()
  return tonumber(out:match("RESULT steps_per_s (%S+)")), out
end

local function driver(steps)
  local exe = arg[-1] or "build/ltorch"
  local root = debug.getinfo(1, "S").source:match("^@(.*)/bench/ddp%.lua$") or "."
  local python = os.getenv("LTORCH_PYTHON") or (root .. "/.venv/bin/python")
  local have_py = io.open(python) ~= nil
  local port = 29800
  local function run(world, model, cap)
    port = port + 1
    local lt = capture(("%s %s/tools/run.lua --nproc-per-node %d --master-port %d %s/bench/ddp.lua --worker %s %s %d")
      :format(exe, root, world, port, root, model, cap, steps))
    local py
    if have_py then
      port = port + 1
      py = capture(("OMP_NUM_THREADS=1 %s -m torch.distributed.run --nproc-per-node %d --master-port %d %s/bench/ddp.py %s %s %d")
        :format(python, world, port, root, model, cap, steps))
    end
    return lt, py
  end
  local function fmt(v) return v and ("%8.1f"):format(v) or "     n/a" end
  local function ratio(a, b) return (a and b) and ("%6.2f"):format(a / b) or "   n/a" end
  print(("%-38s %8s %8s %6s"):format("configuration (steps/s)", "ltorch", "PyTorch", "lt/pt"))
  local rows = {
    { "mlp, 1 rank", 1, "mlp", "25" }, { "mlp, 2 ranks", 2, "mlp", "25" },
    { "wide, 1 rank", 1, "wide", "25" }, { "wide, 2 ranks, 1 MB buckets (overlap)", 2, "wide", "1" },
    { "wide, 2 ranks, one bucket after bwd", 2, "wide", "one" },
  }
  local got = {}
  for _, r in ipairs(rows) do
    local lt, py = run(r[2], r[3], r[4])
    got[#got + 1] = { lt, py }
    print(("%-38s %s %s %s"):format(r[1], fmt(lt), fmt(py), ratio(lt, py)))
  end
  local function gain(a, b) return (a and b) and ("%.2f×"):format(a / b) or "n/a" end
  print(("2 ranks / 1 rank (mlp, samples/s):     ltorch %s   PyTorch %s"):format(
    gain(got[2][1] and got[2][1] * 2, got[1][1]), gain(got[2][2] and got[2][2] * 2, got[1][2])))
  print(("overlap / one bucket (wide, steps/s):  ltorch %s   PyTorch %s"):format(
    gain(got[4][1], got[5][1]), gain(got[4][2], got[5][2])))
end

if arg[1] == "--worker" then
  worker(arg[2], arg[3], tonumber(arg[4]))
else
  driver(tonumber(arg[1] or 40))
end
