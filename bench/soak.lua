--[[
  bench/soak.lua — the main recipe's training loop for many steps: do memory, tensor handles and
  step time stay flat?

  Why: a leak of one handle or a few bytes per step is invisible in a 10-epoch run and fatal in a
  week-long one. Issue #28 asks for 100,000 steps of the main recipe's loop with RSS, live
  tensor handles and step time flat.

  What: builds the parts of recipes/train_classifier.lua (classifier_lib.build: the MLP on
  Fashion-MNIST, AdamW, CrossEntropy, the shuffling DataLoader with a seeded generator) and runs
  its step (zero_grad, forward, loss, backward, clip + step, loss:item(), accuracy under
  no_grad) epoch after epoch until --steps. At the end of every --window epochs (the loader's
  iterator finished, so what it held mid-epoch is not counted) it records the RSS
  (/proc/self/statm), torch.memory_stats().live_handles and live_bytes, and the mean step time.
  The first window is warm-up (allocator caches, JIT traces); the report compares the others:
      window  steps  ms/step  RSS MB  live handles  live MB
  and ends with one line
      soak: N steps in S s; after warm-up RSS <from> -> <to> MB (max growth G MB), live handles
      <from> -> <to> (max H), step time <first> -> <last> ms (ratio R)
  Exit status 1 when RSS grew more than --max-rss-growth MB (default 64) after warm-up or the
  live handles grew by more than --max-handle-growth (default 64): the spec
  (spec/hardening/soak_spec.lua) runs a short soak on that; the figures of the long one are in
  docs/ROBUSTNESS.md. Step time is reported, never asserted (a shared machine is noisy).

  Run:  build/ltorch bench/soak.lua [--steps 100000] [--window 10] [--limit-train N] [--seed 0]
        (an epoch is 430 steps of batch 128; docs/ROBUSTNESS.md says how long 100,000 take)
]]
local here = (arg and arg[0] or ""):match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local lib = require "recipes.classifier_lib"

local opt = { steps = 100000, window = 10, limit_train = 0, seed = 0, max_rss_growth = 64, max_handle_growth = 64 }
do
  local a, i = arg or {}, 1
  while i <= #a do
    local key = a[i]:match("^%-%-([%w%-]+)$")
    key = key and key:gsub("%-", "_")
    local v = key and tonumber(a[i + 1])
    if not (key and opt[key] ~= nil and v) then
      io.stderr:write("usage: ltorch bench/soak.lua [--steps N] [--window N] [--limit-train N] [--seed N]"
        .. " [--max-rss-growth MB] [--max-handle-growth N]\n")
      os.exit(2)
    end
    opt[key] = v
    i = i + 2
  end
end

local PAGE = 4096
local function rss_mb()
  local f = io.open("/proc/self/statm")
  local s = f and f:read("*l") or ""
  if f then f:close() end
  return (tonumber(s:match("^%d+%s+(%d+)")) or 0) * PAGE / 2 ^ 20
end

local clock = require "torch.tools._clock"

local parts = lib.build({ limit_train = opt.limit_train, limit_eval = 1000, seed = opt.seed, device = "cpu" })
local model, optimizer, loss_fn, loader = parts.model, parts.optimizer, parts.loss_fn, parts.train_loader
local clip = parts.config.clip_grad_norm
model:train()

local function step(x, y)
  optimizer:zero_grad()
  local out = model(x)
  local loss = loss_fn(out, y)
  loss:backward()
  torch.nn.utils.clip_grad_norm_(model:parameters(), clip)
  optimizer:step()
  local l = loss:item()
  local correct = torch.no_grad(function() return out:argmax(1):eq(y):sum():item() end)
  return l, correct
end

local rows, done, epoch = {}, 0, 0
local t_start = clock.now()
local t_window = t_start

local function record()
  torch.collect()   -- a full collection, and the dead refs' handles released (not only at the next sweep)
  local now, stats = clock.now(), torch.memory_stats()
  local r = { steps = done, ms = (now - t_window) * 1000 / (done - (rows[#rows] and rows[#rows].steps or 0)),
    rss = rss_mb(), handles = stats.live_handles, live_mb = tonumber(stats.live_bytes) / 2 ^ 20 }
  rows[#rows + 1] = r
  print(("%6d %8d %8.3f %8.1f %13d %8.2f"):format(#rows, r.steps, r.ms, r.rss, r.handles, r.live_mb))
  io.stdout:flush()
  t_window = clock.now()
end

print(("%6s %8s %8s %8s %13s %8s"):format("window", "steps", "ms/step", "RSS MB", "live handles", "live MB"))
while done < opt.steps do
  epoch = epoch + 1
  loader.generator:manual_seed(opt.seed * 1048576 + epoch)
  for batch in loader:iter() do
    step(batch[1], batch[2])
    done = done + 1
    if done >= opt.steps then break end
  end
  if epoch % opt.window == 0 or done >= opt.steps then record() end
end
if #rows < 3 then
  io.stderr:write("soak: fewer than 3 windows; use more --steps or a smaller --window\n")
  os.exit(2)
end

local first = rows[math.min(2, #rows)]   -- the first window is warm-up
local last = rows[#rows]
local max_rss, max_handles = first.rss, first.handles
for i = 2, #rows do
  max_rss, max_handles = math.max(max_rss, rows[i].rss), math.max(max_handles, rows[i].handles)
end
local rss_growth, handle_growth = max_rss - first.rss, max_handles - first.handles
print(("soak: %d steps in %.0f s; after warm-up RSS %.1f -> %.1f MB (max growth %.1f MB), live handles %d -> %d"
  .. " (max %d), step time %.3f -> %.3f ms (ratio %.2f)"):format(done, clock.now() - t_start, first.rss, last.rss,
  rss_growth, first.handles, last.handles, max_handles, first.ms, last.ms, last.ms / first.ms))
if rss_growth > opt.max_rss_growth or handle_growth > opt.max_handle_growth then
  print(("soak: FAIL (RSS growth %.1f MB > %d, or live handle growth %d > %d)"):format(rss_growth,
    opt.max_rss_growth, handle_growth, opt.max_handle_growth))
  os.exit(1)
end
