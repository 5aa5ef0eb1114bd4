--[[
  bench/memory_trace.lua — RSS, Lua heap and live tensor bytes every 1,000 steps of the benchmark's
  MLP training step (bench/workloads.lua "memory"), to tell a leak (a trend) from the GC cycle's
  oscillation (tensors left to the collector are freed in batches).

  Run: build/ltorch bench/memory_trace.lua [steps=10000]
  Prints: step, VmRSS kB, Lua heap kB, live tensor bytes, tensor allocations so far.
]]
local torch = require "torch"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional
local function rss() local f = io.open("/proc/self/status") local s = f:read("*a") f:close() return tonumber(s:match("VmRSS:%s+(%d+)")) end
local steps = tonumber(arg[1] or 10000)
torch.manual_seed(0)
local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
local x, y = torch.randn(64, 784), torch.randint(10, { 64 })
print("step", "rss_kb", "lua_kb", "live_bytes", "allocations")
for i = 1, steps do
  local loss = F.cross_entropy(model(x), y); opt:zero_grad(); loss:backward(); opt:step()
  if i % 1000 == 0 then
    local st = torch.memory_stats()
    print(i, rss(), math.floor(collectgarbage("count")), st.live_bytes, st.allocations)
  end
end
