--[[
  spec/distributed/restart_spec.lua — elastic restarts (tools/run.lua --max-restarts) resume
  recipes/ddp_train.lua from its last checkpoint and end exactly where an uninterrupted run ends.

  Why: a preempted or crashed rank must not cost the job, and a resumed job that silently differs
  (optimizer momentum, RNG or sampler epoch not restored) is worse than a crash.

  What: 2 ranks train 4 epochs under --max-restarts 1; once epoch 1's checkpoint is written,
  rank 1 is killed with SIGKILL. The launcher must name rank 1 (not the survivor whose
  all-reduce failed), restart both ranks, which resume from checkpoints/last.pt and finish; the
  final weights must equal those of the same run without the kill (bit for bit: Gloo's two-rank
  sums and the CPU kernels are deterministic). Skipped without the Fashion-MNIST files.

  Run: build/ltorch /usr/bin/busted spec/distributed/restart_spec.lua   (~60 s on 2 cores)
]]
local torch = require "torch"
local fmnist = require "torch.data.fashion_mnist_files"
local h = dofile("spec/distributed/helpers.lua")

local have_data = io.open(fmnist.paths().train_images) ~= nil
local FLAGS = " recipes/ddp_train.lua --device cpu --epochs 4 --limit-train 30000 --limit-test 1000 --out "

-- The run with a kill: a shell script that starts the launcher, waits for epoch 1's metrics
-- line, SIGKILLs the rank whose environment says RANK=1, and waits for the launcher.
local function killed_run(dir)
  local script = table.concat({
    ("%s tools/run.lua --nproc-per-node 2 --master-port %d --max-restarts 1 --timeout 150 %s %s/a > %s/a.log 2>&1 &")
      :format(h.BIN, h.free_port(), FLAGS, dir, dir, dir),
    "L=$!",
    ("i=0; while ! grep -q '\"epoch\": 1' %s/a/metrics.jsonl 2>/dev/null; do sleep 0.1; i=$((i+1)); [ $i -gt 1500 ] && break; done")
      :format(dir),
    "for c in $(pgrep -P $L); do if tr '\\0' '\\n' < /proc/$c/environ | grep -qx RANK=1; then kill -9 $c; echo KILLED; fi; done",
    "wait $L; echo LAUNCHER=$?",
  }, "\n")
  local out = h.run(script, 200)
  local f = io.open(dir .. "/a.log")
  local log = f and f:read("*a") or ""
  if f then f:close() end
  return out, log
end

local function max_diff(a, b)
  local m = 0
  for k, v in pairs(a) do m = math.max(m, (v - b[k]):abs():max():item()) end
  return m
end

describe("tools/run.lua --max-restarts with recipes/ddp_train.lua", function()
  local it_data = have_data and it or pending
  it_data("restarts every rank after one is killed and ends with the uninterrupted run's weights", function()
    local dir = h.tmpname()
    os.execute("mkdir -p " .. dir)
    local out, log = killed_run(dir)
    assert.truthy(out:find("KILLED", 1, true), "rank 1 was not running when epoch 1 ended:\n" .. out .. log)
    assert.truthy(out:find("LAUNCHER=0", 1, true), out .. log)
    assert.truthy(log:find("run.lua: rank 1 failed (signal 9)", 1, true), log)
    assert.truthy(log:find("restarting every rank (restart 1 of 1)", 1, true), log)
    local resumed = tonumber(log:match("resumed from %S+ %(epoch (%d+) done%) after restart 1"))
    assert.truthy(resumed and resumed >= 1 and resumed < 4, log)
    local ref_out, rc = h.run(("%s tools/run.lua --nproc-per-node 2 --master-port %d --timeout 150 %s %s/b")
      :format(h.BIN, h.free_port(), FLAGS, dir), 200)
    assert.equal(0, rc, ref_out)
    local a = torch.load(dir .. "/a/checkpoints/last.pt")
    local b = torch.load(dir .. "/b/checkpoints/last.pt")
    assert.equal(4, a.epoch)
    assert.equal(0, max_diff(a.model, b.model))
    local moments_a, moments_b = {}, {}            -- SGD's momentum buffers, PyTorch's 0-based ids
    for id = 0, 3 do
      moments_a[id] = a.optimizer.state[id].momentum_buffer
      moments_b[id] = b.optimizer.state[id].momentum_buffer
    end
    assert.equal(0, max_diff(moments_a, moments_b))
    os.execute("rm -rf " .. dir)
  end)
end)
