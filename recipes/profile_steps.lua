--[[
  recipes/profile_steps.lua — `--profile N` for the training recipes: runs N training steps
  (forward, loss, backward, optimizer step, as the trainer does) under torch.profiler, writes the
  Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing) and prints PyTorch's
  key_averages table. Each step is a "ProfilerStep#i" row and range; the data loading and the
  step's parts are record_function ranges ("data", "forward", "backward", "optimizer"), so the
  trace shows where a step's time goes.

  Usage (from a recipe, after lib.build):
      require("recipes.profile_steps").run(parts, cfg.profile, cfg.out .. "/profile_trace.json")
]]
local torch = require "torch"

local M = {}

local P = torch.profiler
local rf = P.record_function

-- One training step on `batch`, each part in its own range.
local function step(parts, batch, dev)
  local model, opt, mp, cfg = parts.model, parts.optimizer, parts.amp, parts.config
  local x, y = rf("data", function() return batch[1]:to(dev), batch[2]:to(dev) end)
  opt:zero_grad()
  local loss = rf("forward", function()
    local out = mp and mp:autocast(function() return model(x) end) or model(x)
    return parts.loss_fn(out:float(), y)
  end)
  rf("backward", function() (mp and mp:scale(loss) or loss):backward() end)
  rf("optimizer", function()
    if mp then mp:step(opt, model:parameters(), cfg.clip_grad_norm) else opt:step() end
  end)
  return loss
end

-- run(parts, n, path) -> the stopped profiler; prints the table (sorted by CPU total, 20 rows).
function M.run(parts, n, path)
  local dev = torch.device(parts.device)
  local activities = { P.ProfilerActivity.CPU }
  if dev.type == "cuda" then activities[2] = P.ProfilerActivity.CUDA end
  parts.model:train()
  local batches, it = {}, parts.train_loader:iter()
  for i = 1, n do
    batches[i] = it()
    if batches[i] == nil then error(("--profile %d: the training data has only %d batches"):format(n, i - 1), 0) end
  end
  step(parts, batches[1], dev)   -- one step outside the profile: first-call costs (allocations, kernels) stay out
  local prof = P.profile({ activities = activities, record_shapes = true,
    schedule = P.schedule({ wait = 0, warmup = 1, active = n, ["repeat"] = 1 }) })
  prof:start()
  step(parts, batches[1], dev)   -- the warmup step: recorded by nothing
  prof:step()
  for i = 1, n do
    step(parts, batches[i], dev)
    prof:step()
  end
  prof:stop()
  os.execute("mkdir -p '" .. path:match("^(.*)/[^/]*$"):gsub("'", "'\\''") .. "'")
  prof:export_chrome_trace(path)
  print(prof:key_averages():table({ sort_by = dev.type == "cuda" and "cuda_time_total" or "cpu_time_total", row_limit = 20 }))
  print(("profile: %d training steps, Chrome trace written to %s"):format(n, path))
  return prof
end

return M
