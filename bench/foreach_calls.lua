--[[
  bench/foreach_calls.lua — what one call of the foreach ops behind the optimizers costs, on four
  four-element tensors (so the call, not the arithmetic, is measured), under no_grad as in an
  optimizer step. bench/foreach_calls.py is PyTorch's twin, the same calls on the same sizes
  (docs/PERFORMANCE.md, "The generated ops compiled").

  Run:  taskset -c 1 build/ltorch bench/foreach_calls.lua [N]     (default 20000 calls, best of 7)
        taskset -c 1 .venv/bin/python bench/foreach_calls.py [N]
  Output: one line per call, µs of process CPU time per call.
]]
local torch = require "torch"

local n = tonumber(arg[1] or 20000)
local ps, gs = {}, {}
for i = 1, 4 do ps[i] = torch.randn(4); gs[i] = torch.randn(4) end

local function time(name, fn)
  for _ = 1, 2000 do fn() end
  local best = math.huge
  for _ = 1, 7 do
    local t0 = os.clock()
    for _ = 1, n do fn() end
    best = math.min(best, (os.clock() - t0) / n * 1e6)
  end
  print(("%-36s %6.2f us"):format(name, best))
end

torch.no_grad(function()
  time("_foreach_add_(ps, 1)", function() torch._foreach_add_(ps, 1) end)
  time("_foreach_mul_(ps, 0.9)", function() torch._foreach_mul_(ps, 0.9) end)
  time("_foreach_lerp_(ps, gs, 0.1)", function() torch._foreach_lerp_(ps, gs, 0.1) end)
  time("_foreach_addcmul_(ps, gs, gs, 0.1)", function() torch._foreach_addcmul_(ps, gs, gs, 0.1) end)
  time("_foreach_sqrt(gs)", function()
    local r = torch._foreach_sqrt(gs)
    for i = 1, #r do r[i]:free() end   -- freed at once, as Python's reference count does
  end)
end)
