--[[
  bench/run.lua — runs every benchmark workload three ways side by side (ltorch, PyTorch through
  /usr/bin/python3, plain C++ against libtorch), several repetitions interleaved, and writes a
  Markdown table of medians, the ratios ltorch/PyTorch and ltorch/C++ (as time ratios: below 1
  means ltorch is faster), peak RSS, and whether each target is met.

  Run:  build/ltorch bench/run.lua [--reps N] [--scale S] [--only a,b] [--pin CPU|none]
                                   [--malloc same|default] [--device cpu|cuda] [--out FILE]
        (or: bash bench/run.sh ...)
    --reps   repetitions per workload and implementation (default 5; memory runs once)
    --scale  1 = full size; smaller shrinks counts and sizes (the smoke spec uses 0.01)
    --only   comma-separated subset of: dispatch,startup,mlp,memory,cnn,transformer,epoch
             (epoch = workload 5, one epoch of recipes/train_classifier.lua's default config,
             about 6 s per run and implementation: --only epoch --reps 5 takes ~1.5 min)
    --pin    run every workload process on this CPU (taskset -c; default 0 when taskset exists,
             `none` to let the scheduler move them): unpinned, runs on a 2-core VM were bimodal
             (C++ add 0.58 or 0.94 µs, ltorch 0.90 or 1.46 µs, by run), pinned they were not
    --malloc `same` (default): PyTorch and C++ run with the glibc malloc thresholds that the
             ltorch executable sets for itself (runtime/main.c, tune_malloc), through
             GLIBC_TUNABLES, so the comparison is of the front ends over one engine and one
             allocator setting; `default`: they run with glibc's defaults (as users run them)
    --device `cuda`: workloads 2-4 (mlp, cnn, transformer; the default --only there) on the GPU,
             ltorch beside PyTorch (BENCH_PYTHON, default the setup's .venv/bin/python), wall time between
             two synchronizes, the transformer at its full 4 layers and batch 32; no C++ column
             and no pinning (the GPU machine runs bench/gpu/check.sh, which builds ltorch
             against that machine's PyTorch libtorch)
    --out    where the Markdown goes (default build/bench_results.md); also printed to stdout
  The C++ program (bench/workloads.cpp) is compiled to build/bench_workloads_cpp when missing or
  older than its sources (needs g++ and libtorch's headers; without them, or with the environment
  variable BENCH_NO_CPP_BUILD set, the C++ column is n/a).
  The workloads themselves are described in bench/workloads.lua.
]]
local ffi = require "ffi"

local opts = { reps = 5, scale = 1, only = nil, pin = "0", malloc = "same", device = "cpu", out = "build/bench_results.md" }
do
  local i = 1
  while i <= #arg do
    local k, v = arg[i], arg[i + 1]
    if k == "--reps" then opts.reps = assert(tonumber(v), "--reps N")
    elseif k == "--scale" then opts.scale = assert(tonumber(v), "--scale S")
    elseif k == "--only" then opts.only = {} for m in v:gmatch("[^,]+") do opts.only[m] = true end
    elseif k == "--out" then opts.out = v
    elseif k == "--malloc" then
      assert(v == "same" or v == "default", "--malloc same|default")
      opts.malloc = v
    elseif k == "--device" then
      assert(v == "cpu" or v == "cuda", "--device cpu|cuda")
      opts.device = v
    elseif k == "--pin" then
      assert(v == "none" or (v and v:match("^%d+$")), "--pin CPU (a CPU number) or --pin none")
      opts.pin = v
    else error("unknown option " .. tostring(k)) end
    i = i + 2
  end
end

local on_gpu = opts.device ~= "cpu"
if on_gpu then
  opts.only = opts.only or { mlp = true, cnn = true, transformer = true }
  for m in pairs(opts.only) do
    assert(m == "mlp" or m == "cnn" or m == "transformer", "--device cuda runs only mlp, cnn and transformer, not " .. m)
  end
  opts.pin = "none"   -- the host side of a GPU step is not what this compares
end

local root = (arg[0]:match("^(.*)/bench/run%.lua$")) or "."
local LTORCH = os.getenv("LTORCH_BIN") or (root .. "/build/ltorch")
local PYTHON = os.getenv("BENCH_PYTHON") or (root .. "/.venv/bin/python")
local CPP = root .. "/build/bench_workloads_cpp"
local CPP_SRC = root .. "/bench/workloads.cpp"
local CPP_HEADER = root .. "/bench/sdpa_encoder.hpp"   -- the transformer's C++ model, included by CPP_SRC

pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int bench_run_clock_gettime(int, bench_timespec *) __asm__(\"clock_gettime\");")
local ts = ffi.new("bench_timespec")
local function now()
  ffi.C.bench_run_clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- Runs a shell command; returns its output (stdout and stderr) and whether it exited with 0.
local function sh(cmd)
  local p = io.popen("{ " .. cmd .. " ; } 2>&1; echo \"BENCH_EXIT=$?\"")
  local out = p:read("*a")
  p:close()
  local code = tonumber(out:match("BENCH_EXIT=(%d+)%s*$"))
  return (out:gsub("BENCH_EXIT=%d+%s*$", "")), code == 0
end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function mtime(path)
  local out = sh("stat -c %Y " .. q(path))
  return tonumber(out)
end

if on_gpu and not select(2, sh(q(LTORCH) .. [[ -e 'os.exit(require("torch").cuda.is_available() and 0 or 1)']])) then
  io.stderr:write("bench: --device cuda: ", LTORCH, " sees no CUDA device (a CPU-only libtorch, or no GPU)\n")
  os.exit(1)
end

-- C++ build -----------------------------------------------------------------------------------
local cpp_ok = false
do
  local bin, src, header = mtime(CPP), mtime(CPP_SRC), mtime(CPP_HEADER)
  if src and header then src = math.max(src, header) end
  if on_gpu then
    io.stderr:write("bench: --device cuda: no C++ column\n")
  elseif bin and src and bin >= src then
    cpp_ok = true
  elseif os.getenv("BENCH_NO_CPP_BUILD") then
    io.stderr:write("bench: ", CPP, " missing or stale and BENCH_NO_CPP_BUILD is set: C++ column is n/a\n")
  else
    io.stderr:write("bench: compiling ", CPP_SRC, " (about a minute)\n")
    -- The CMake target links the libtorch ltorch itself is built against (CMakeLists.txt).
    local out, ok = sh(("cmake --build %s --target bench_workloads_cpp"):format(q(root .. "/build")))
    cpp_ok = ok and mtime(CPP) ~= nil
    if not cpp_ok then io.stderr:write("bench: C++ build failed, C++ column is n/a\n", out:sub(1, 2000), "\n") end
  end
end

-- The thresholds runtime/main.c's tune_malloc sets with mallopt, as glibc tunables for the others.
local MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456"
local function same_malloc() return opts.malloc == "same" and ("env GLIBC_TUNABLES=" .. MALLOC_TUNABLES .. " ") or "" end
local device_env = on_gpu and ("env BENCH_DEVICE=" .. opts.device .. " ") or ""
local impls = {
  { name = "ltorch", cmd = function(mode) return ("%s%s %s/bench/workloads.lua %s %s"):format(device_env, q(LTORCH), q(root), mode, opts.scale) end },
  { name = "PyTorch", cmd = function(mode) return ("%s%s%s %s/bench/workloads.py %s %s"):format(device_env, same_malloc(), q(PYTHON), q(root), mode, opts.scale) end },
  { name = "C++", cmd = function(mode) return cpp_ok and ("%s%s %s %s"):format(same_malloc(), q(CPP), mode, opts.scale) or nil end,
    -- a second process after the transformer's: libtorch's own C++ module (its own row)
    extra = { transformer = "transformer_api" } },
}

-- Runs one workload process; returns {metric = value} from its RESULT lines.
local function run_one(cmd)
  local out, ok = sh(cmd)
  local r = {}
  for name, v in out:gmatch("RESULT (%S+) (%S+)") do r[name] = tonumber(v) end
  if not ok or next(r) == nil then
    io.stderr:write("bench: FAILED: ", cmd, "\n", out:sub(-3000), "\n")
    return nil
  end
  return r
end

local function median(xs)
  if #xs == 0 then return nil end
  table.sort(xs)
  local n = #xs
  if n % 2 == 1 then return xs[(n + 1) / 2] end
  return (xs[n / 2] + xs[n / 2 + 1]) / 2
end

-- results[impl][metric] = list of values
local results = { ltorch = {}, PyTorch = {}, ["C++"] = {} }
local commands = {}
local function record(impl, r)
  if not r then return end
  for k, v in pairs(r) do
    results[impl][k] = results[impl][k] or {}
    table.insert(results[impl][k], v)
  end
end

local function wanted(m) return not opts.only or opts.only[m] end

-- Start-up: wall time of a process that loads the library and exits.
local startup_cmds = {
  ltorch = ("%s -e 'require\"torch\"'"):format(q(LTORCH)),
  PyTorch = ("%s -c 'import torch'"):format(q(PYTHON)),
  ["C++"] = cpp_ok and (q(CPP) .. " startup") or nil,
}

local have_gnu_time = select(2, sh("/usr/bin/time -f %e true"))
-- Pinning: every workload process (start-up included) on one CPU, when taskset can do it.
if opts.pin ~= "none" and not select(2, sh("taskset -c " .. opts.pin .. " true")) then
  io.stderr:write("bench: taskset -c ", opts.pin, " does not work here; runs are not pinned\n")
  opts.pin = "none"
end
local function pinned(cmd) return opts.pin == "none" and cmd or ("taskset -c " .. opts.pin .. " " .. cmd) end
local modes = { "dispatch", "startup", "mlp", "cnn", "transformer", "epoch", "memory" }
for _, mode in ipairs(modes) do
  if wanted(mode) then
    io.stderr:write(("bench: %s "):format(mode))
    local reps = mode == "memory" and 1 or opts.reps
    for _ = 1, reps do
      for _, impl in ipairs(impls) do
        if mode == "startup" then
          local cmd = startup_cmds[impl.name]
          if cmd then
            commands[impl.name .. " startup"] = cmd
            -- Wall time from here; CPU time (user + sys) of the child from GNU time when present
            -- (on a shared machine the wall time mostly measures the queue for a core).
            local timed = have_gnu_time and ("/usr/bin/time -f 'BENCH_TIME %U %S' " .. pinned(cmd)) or pinned(cmd)
            local t0 = now()
            local o, ok = sh(timed)
            local dt = now() - t0
            if ok then
              local u, sy = o:match("BENCH_TIME (%S+) (%S+)")
              record(impl.name, { startup_ms = dt * 1e3, startup_cpu_ms = u and (tonumber(u) + tonumber(sy)) * 1e3 or nil })
            end
          end
        else
          local extra = impl.extra and impl.extra[mode]
          for _, m in ipairs({ mode, extra }) do
            local cmd = impl.cmd(m)
            if cmd then
              commands[impl.name .. " " .. m] = cmd
              local r = run_one(pinned(cmd))
              if r then r["peak_rss_kb@" .. m], r.peak_rss_kb = r.peak_rss_kb, nil end
              record(impl.name, r)
            end
          end
        end
        io.stderr:write(".")
      end
    end
    io.stderr:write("\n")
  end
end

-- Table -----------------------------------------------------------------------------------------
-- kind "time": lower is better (ratio = ltorch / other); "rate": higher is better (ratio = other /
-- ltorch, i.e. still a time ratio); "kB": memory.
local rows = {
  { "dispatch", "add_us", "add, 10 elements (µs/op)", "time", "dispatch" },
  { "dispatch", "mul_us", "mul, 10 elements (µs/op)", "time", "dispatch" },
  { "dispatch", "matmul8_us", "matmul 8×8 (µs/op)", "time", "dispatch" },
  { "dispatch", "index_us", "x[3] on 16×8 (µs/op)", "time", "dispatch" },
  { "dispatch", "forward8_us", "8-8-4 Sequential forward, autograd on, output dropped (µs)", "time", "none" },
  { "startup", "startup_ms", "start-up: load library, exit: wall (ms)", "time", "startup" },
  { "startup", "startup_cpu_ms", "start-up: load library, exit: CPU user+sys (ms)", "time", "startup" },
  { "mlp", "mlp_steps_per_s", "MLP 784-256-10 AdamW b64 (steps/s)", "rate", "dispatch" },
  { "mlp", "mlp_warmup_s", "MLP: warm-up, the untimed first steps, total (s)", "time", "none" },
  { "cnn", "cnn_steps_per_s", "small CNN AdamW b128 (steps/s)", "rate", "compute" },
  { "cnn", "cnn_warmup_s", "small CNN: warm-up, the untimed first steps, total (s)", "time", "none" },
  { "transformer", "transformer_tokens_per_s", on_gpu and "transformer enc. 4×d256 seq128 b32 (tokens/s)"
    or "transformer enc. 2×d256 seq128 b8 (tokens/s)", "rate", "compute" },
  { "transformer", "transformer_warmup_s", "transformer: warm-up, the untimed first steps, total (s)", "time", "none" },
  -- C++ only: libtorch's own torch::nn::TransformerEncoder, whose attention is other kernels
  -- (bmm + softmax, head-averaged weights); ltorch's and PyTorch's figures are the row above's.
  { "transformer", "transformer_api_tokens_per_s", "transformer, C++ column: libtorch's own `nn::TransformerEncoder` (bmm attention)",
    "rate", "none", "transformer_tokens_per_s" },
  { "epoch", "epoch_wall_s", "full recipe epoch, end to end: wall (s)", "time", "none" },
  { "epoch", "epoch_cpu_s", "full recipe epoch, end to end: process CPU (s)", "time", "none" },
  { "epoch", "epoch_data_wall_s", "full recipe epoch: of which data load + normalise + model/loader setup, wall (s)", "time", "none" },
  { "memory", "mem_rss_after_warmup_kb", "MLP ×N: RSS after warm-up (MiB)", "kB", "none" },
  { "memory", "mem_rss_end_kb", "MLP ×N: RSS at end (MiB)", "kB", "none" },
  { "memory", "mem_growth_mean_kb", "MLP ×N: RSS growth after warm-up, mean of 2nd half − mean of 1st (MiB)", "kB", "growth" },
  { "memory", "mem_growth_kb", "MLP ×N: RSS growth after warm-up, max of 2nd half − max of 1st (MiB)", "kB", "growth" },
  { "memory", "peak_rss_kb@memory", "MLP ×N: peak RSS (MiB)", "kB", "peak" },
}

local function med(impl, key) return median(results[impl][key] or {}) end
local function fmt(v, kind)
  if v == nil then return "n/a" end
  if kind == "kB" then return ("%.1f"):format(v / 1024) end
  if math.abs(v) >= 100 then return ("%.0f"):format(v) end
  if math.abs(v) >= 10 then return ("%.1f"):format(v) end
  return ("%.3g"):format(v)
end
local function ratio(l, o, kind)
  if not l or not o or o == 0 or l == 0 then return nil end
  if kind == "rate" then return o / l end
  return l / o
end
local function fr(r) return r and ("%.2f"):format(r) or "n/a" end

local function verdict(target, l, p, _, rp, rc)
  if target == "dispatch" then
    if not rp or not rc then return "n/a" end
    local ok = rc <= 1.10 and rp <= 1 / 1.3
    return (ok and "met" or "NOT met") .. " (≤1.10× C++, ≤0.77× PyTorch)"
  elseif target == "compute" then
    if not rp then return "n/a" end
    local ok = rp <= 1.03 and (not rc or rc <= 1.03)
    return (ok and "met" or "NOT met") .. " (within 3 %)"
  elseif target == "startup" then
    if not rp then return "n/a" end
    return (rp <= 0.5 and "met" or "NOT met") .. " (≤0.5× PyTorch)"
  elseif target == "growth" then
    if not l then return "n/a" end
    return (l <= 2048 and "met" or "NOT met") .. " (≤2 MiB growth)"
  elseif target == "peak" then
    if not l or not p then return "n/a" end
    return (l <= p and "met" or "NOT met") .. " (≤ PyTorch)"
  end
  return ""
end

local function machine()
  local cpu = sh("grep -m1 'model name' /proc/cpuinfo"):match(":%s*(.-)%s*$") or "?"
  local ncpu = sh("nproc"):match("%d+") or "?"
  local mem = sh("grep MemTotal /proc/meminfo"):match("(%d+)")
  local kernel = sh("uname -r"):gsub("%s+$", "")
  local ver = sh(q(PYTHON) .. " -c 'import torch; print(torch.__version__)'"):gsub("%s+$", "")
  local date = os.date("!%Y-%m-%d %H:%M UTC")
  local gpu = ""
  if on_gpu then
    gpu = "; GPU " .. (sh("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader"):match("^[^\n]+") or "?")
  end
  return ("%s; %s CPUs (nproc); %.0f GiB RAM; Linux %s; libtorch/PyTorch %s%s; %s")
    :format(cpu, ncpu, (tonumber(mem) or 0) / 1048576, kernel, ver, gpu, date)
end

local lines = {}
local function add(s) lines[#lines + 1] = s end
add(("Machine: %s.  "):format(machine()))
add(("Command: `build/ltorch bench/run.lua --reps %d --scale %s%s%s` — medians of %d runs each (memory: 1 run), runs interleaved, %s."):format(
  opts.reps, tostring(opts.scale), on_gpu and (" --device " .. opts.device) or "", opts.only and (" --only " .. table.concat((function() local t = {} for k in pairs(opts.only) do t[#t + 1] = k end table.sort(t) return t end)(), ",")) or "",
  opts.reps, opts.pin == "none" and "not pinned" or ("each process pinned to CPU " .. opts.pin .. " (taskset)"))
  .. (opts.malloc == "same" and " PyTorch and C++ run with ltorch's malloc thresholds (GLIBC_TUNABLES, `--malloc same`)."
      or " PyTorch and C++ run with glibc's default malloc settings (`--malloc default`)."))
add("")
add("| workload | ltorch | PyTorch | C++ | ltorch/PyTorch (time) | ltorch/C++ (time) | peak RSS MiB ltorch / PyTorch / C++ | target |")
add("|---|---:|---:|---:|---:|---:|---|---|")
for _, row in ipairs(rows) do
  local mode, key, label, kind, target = row[1], row[2], row[3], row[4], row[5]
  local own_key = row[6] or key   -- ltorch's and PyTorch's key, where the C++ column has its own
  if wanted(mode) and (not on_gpu or own_key == key) then
    local l, p, c = med("ltorch", own_key), med("PyTorch", own_key), med("C++", key)
    local rp, rc = ratio(l, p, kind), ratio(l, c, kind)
    if kind == "kB" then rp, rc = nil, nil end
    local rk = "peak_rss_kb@" .. mode
    local rss = ""
    if kind ~= "kB" and mode ~= "startup" then
      rss = ("%s / %s / %s"):format(fmt(med("ltorch", rk), "kB"), fmt(med("PyTorch", rk), "kB"), fmt(med("C++", rk), "kB"))
    end
    add(("| %s | %s | %s | %s | %s | %s | %s | %s |"):format(label, fmt(l, kind), fmt(p, kind), fmt(c, kind),
      fr(rp), fr(rc), rss, verdict(target, l, p, c, rp, rc)))
  end
end
add("")

-- Model FLOPs utilisation of the transformer step on the GPU. Per token and layer, forward:
-- QKV and output projections 8·d², feed-forward 4·d·ff, scores and weighted values 4·seq·d;
-- training = 3× forward (backward twice the forward). Against BENCH_PEAK_TFLOPS (default 67:
-- the H200's dense float32 peak without tensor cores; PyTorch's default float32 matmul does not
-- use TF32).
if on_gpu and wanted("transformer") then
  local d, ff, seq, layers = 256, 512, 128, 4
  local flops_per_token = 3 * layers * (8 * d * d + 4 * d * ff + 4 * seq * d)
  local peak = tonumber(os.getenv("BENCH_PEAK_TFLOPS")) or 67
  local function mfu(impl)
    local tps = med(impl, "transformer_tokens_per_s")
    return tps and ("%.1f %%"):format(100 * tps * flops_per_token / (peak * 1e12)) or "n/a"
  end
  add(("Transformer MFU (%.2f MFLOP per token trained, peak %g TFLOPS): ltorch %s, PyTorch %s."):format(
    flops_per_token / 1e6, peak, mfu("ltorch"), mfu("PyTorch")))
  add("")
end
-- One line per workload: what runs (counts at this --scale).
local function cnt(n, lo) return math.max(lo or 1, math.floor(n * opts.scale + 0.5)) end
-- The workloads' warm-up: max(n/10, 10 at this --scale) calls before the timed ones.
local function warmup(n) return math.max(1, math.floor(n / 10), cnt(10)) end
local function thousands(n) return tostring(n):reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "") end
local about = {
  dispatch = ("1 · op dispatch: %s iterations each of `a + b`, `a * b` (10-element float tensors), `m1:matmul(m2)` 8×8, `x[3]` on 16×8; µs per op, process CPU time; then %s forwards of an 8-8-4 `nn.Sequential` (Linear, ReLU, Linear) on a 2×8 batch, autograd on, each output dropped"):format(thousands(cnt(200000, 100)), thousands(cnt(40000, 100))),
  startup = "7 · start-up: a process that loads the library and exits (`ltorch -e 'require\"torch\"'`, `python3 -c 'import torch'`, a C++ `main` linked to libtorch); wall and the child's user+sys",
  mlp = ("2 · MLP step: 784-256-10, ReLU, cross-entropy, AdamW, a fixed synthetic batch of 64, %s steps after %s warm-up steps (timed apart); steps/s, %s"):format(thousands(cnt(2000, 3)), warmup(cnt(2000, 3)),
    on_gpu and "on the GPU, wall time between synchronizes" or "process CPU time"),
  cnn = ("3 · small CNN step: conv(1→16)-ReLU-pool-conv(16→32)-ReLU-pool-Linear(1568→10), batch %d of 1×28×28, AdamW, %d steps after %d warm-up steps (timed apart); steps/s"):format(cnt(128, 2), cnt(100, 2), warmup(cnt(100, 2))),
  transformer = ("4 · transformer step: `nn.TransformerEncoder` %d layers, d_model 256, 4 heads, ff 512, dropout 0, batch %d × seq %d, loss mean(out²), AdamW, %d steps after %d warm-up steps (timed apart); tokens/s. C++ runs the layer as PyTorch's Python computes it in training (`bench/sdpa_encoder.hpp`: packed in-projection, `scaled_dot_product_attention`), as ltorch does; libtorch's own C++ module (bmm attention) on a row of its own"):format(
    on_gpu and 4 or 2, on_gpu and (opts.scale < 1 and 8 or 32) or 8, opts.scale < 1 and 16 or 128, cnt(20, 2), warmup(cnt(20, 2))),
  epoch = ("5 · full recipe epoch: `recipes/train_classifier.lua`'s default config%s — read Fashion-MNIST's gzipped IDX files, seeded split (55k train / 5k val), scale to [0,1] and normalise with the train mean/std, shuffled loader batch 128 (val 1000), MLP 784-256-128-10 with dropout 0.1, AdamW lr 1e-3 wd 1e-4, grad clip 1.0, one epoch, val pass, metrics line + checkpoint; ltorch runs the recipe's own `classifier_lib.build` + `trainer.fit`, PyTorch `TensorDataset` + `DataLoader`, C++ `randperm` + `index_select` batches; seconds in-process (imports excluded)"):format(
    opts.scale < 1 and (" at --limit-train %d --limit-eval %d"):format(cnt(55000, 2), cnt(5000, 2)) or ""),
  memory = ("6 · memory: the MLP step %s times; RSS after warm-up (step %s), at the end, growth after warm-up (mean and max of the 2nd half minus the 1st), peak"):format(
    thousands(cnt(10000, 40)), thousands(math.floor(cnt(10000, 40) / 10))),
}
add("Workloads:")
add("")
for _, mode in ipairs(modes) do if wanted(mode) then add("- " .. about[mode]) end end
add("")
add("Per-run commands (each prints `RESULT name value unit` lines):")
add("")
local keys = {}
for k in pairs(commands) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do add(("- %s: `%s`"):format(k, commands[k])) end

local md = table.concat(lines, "\n") .. "\n"
io.write(md)
local f = io.open(opts.out, "w")
if f then f:write(md); f:close(); io.stderr:write("bench: table written to ", opts.out, "\n") end

-- Raw values, machine-readable (for the smoke spec).
local raw = io.open(opts.out .. ".raw", "w")
if raw then
  for impl, t in pairs(results) do
    for k, vs in pairs(t) do raw:write(("%s %s %s\n"):format(impl, k, tostring(median({ unpack(vs) })))) end
  end
  raw:close()
end
