--[[
  torch.tools.serving — `tool.lua serving-capacity`: from per-request latency to the requests/s one
  replica sustains, and the replicas a target load needs under a p99 budget.

  Latency is given (--p50/--p99 ms, optional --mean, default p50) or measured: --setup SCRIPT
  times --requests forward passes of the setup's model on one sample of its first train batch.
  Each replica serves --concurrency requests at once; each slot is modelled as an M/M/1 queue:
    capacity per replica  = concurrency / mean                     (requests/s at 100% busy)
    utilization rho       = qps / (replicas * capacity)
    p99 wait (M/M/1)      = max(0, ln(100 rho)) / (1/mean - qps/(replicas*concurrency))
    estimated p99         = p99 service + p99 wait
  replicas = the fewest with rho <= --max-util (default 0.8) and estimated p99 <= --slo.
  Exit 0 the budget is met, 1 it cannot be (p99 service alone above the SLO), 2 usage error.
]]
local torch = require "torch"
local T = require "torch.tools"
local C = require "torch.tools._clock"
local U = require "torch.tools._setup"
local S = require "torch.doctor.setup"

local M = { name = "serving-capacity", summary = "requests/s per replica and replicas for a QPS under a p99 SLO",
  usage = [[usage: ltorch tools/tool.lua serving-capacity (--p50 MS --p99 MS [--mean MS] | --setup SCRIPT [--requests N])
         [--qps Q] [--slo MS] [--concurrency C] [--max-util U] [--json]
  latencies in milliseconds per request; --setup times the setup's model on one sample
exit 0 the p99 budget is met, 1 it cannot be, 2 usage / setup error]] }

-- measure(setup path, n) -> {p50, p95, p99, mean} in ms: n single-sample forwards, no grad.
function M.measure(path, n)
  local setup = U.load(path, { "model", "train_loader" })
  local okm, model = pcall(S.new_model, setup, 0)
  if not okm then T.usage_error("%s: %s", path, tostring(model)) end
  model:eval()
  local x = U.first_batch(setup, path)
  x = x:narrow(0, 0, 1)
  local times = {}
  torch.no_grad(function()
    model:forward(x)                                   -- warm-up
    for i = 1, n do
      local t0 = C.now()
      model:forward(x)
      times[i] = (C.now() - t0) * 1e3
    end
  end)
  table.sort(times)
  local sum = 0
  for _, t in ipairs(times) do sum = sum + t end
  return { p50 = C.percentile(times, 0.5), p95 = C.percentile(times, 0.95), p99 = C.percentile(times, 0.99),
    mean = sum / n, requests = n }
end

-- plan(o) -> result table; o: p50, p99, mean (ms), qps, slo (ms), concurrency, max_util
function M.plan(o)
  local mean, c, umax = o.mean or o.p50, o.concurrency or 1, o.max_util or 0.8
  local r = { mean_ms = mean, p99_ms = o.p99, concurrency = c, max_util = umax }
  r.capacity = c / (mean / 1e3)
  r.sustainable = r.capacity * umax
  r.meets_slo = not o.slo or o.p99 <= o.slo
  if not o.qps or not r.meets_slo then return r end
  local function p99_at(n)
    local rho = o.qps / (n * r.capacity)
    if rho >= 1 then return math.huge, rho end
    local wait = math.max(0, math.log(100 * rho)) / (1e3 / mean - o.qps / (n * c))
    return o.p99 + wait * 1e3, rho
  end
  local n = math.max(1, math.ceil(o.qps / r.sustainable))
  while true do
    local p99, rho = p99_at(n)
    if rho <= umax and (not o.slo or p99 <= o.slo) then
      r.replicas, r.utilization, r.p99_est_ms = n, rho, p99
      return r
    end
    n = n + 1
  end
end

local function positive(o, k)
  if o[k] ~= nil and not (o[k] > 0) then T.usage_error("--%s must be positive", (k:gsub("_", "-"))) end
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { p50 = "number", p95 = "number", p99 = "number", mean = "number", qps = "number",
    slo = "number", concurrency = "number", max_util = "number", setup = "string", requests = "number", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos > 0 then T.usage_error("unexpected argument '%s'", pos[1]) end
  for _, k in ipairs({ "p50", "p95", "p99", "mean", "qps", "slo", "concurrency", "requests" }) do positive(o, k) end
  if o.max_util and not (o.max_util > 0 and o.max_util <= 1) then T.usage_error("--max-util must be in (0, 1]") end
  if o.requests and o.requests % 1 ~= 0 then T.usage_error("--requests must be a whole number") end
  if o.concurrency and o.concurrency % 1 ~= 0 then T.usage_error("--concurrency must be a whole number") end
  local measured
  if o.setup then
    if o.p50 or o.p99 then T.usage_error("give either --setup or --p50/--p99, not both") end
    measured = M.measure(o.setup, math.floor(o.requests or 50))
    o.p50, o.p95, o.p99, o.mean = measured.p50, measured.p95, measured.p99, measured.mean
  elseif not (o.p50 and o.p99) then
    T.usage_error("--p50 and --p99 (or --setup) are required")
  end
  if o.p99 < o.p50 then T.usage_error("--p99 (%g) is below --p50 (%g)", o.p99, o.p50) end
  local r = M.plan(o)
  r.measured = measured
  local code = r.meets_slo and 0 or 1
  if o.json then out(require("torch.serialization.json").encode(r)); return code end
  if measured then
    out(("measured %d requests: p50 %.3f ms, p95 %.3f ms, p99 %.3f ms, mean %.3f ms"):format(
      measured.requests, measured.p50, measured.p95, measured.p99, measured.mean))
  end
  out(("per replica: %.1f req/s at 100%% busy, %.1f req/s at %.0f%% utilization (concurrency %d)"):format(
    r.capacity, r.sustainable, r.max_util * 100, r.concurrency))
  if not r.meets_slo then
    out(("verdict: p99 service time %.3f ms is above the %g ms SLO: no replica count meets it; make each request faster"):format(o.p99, o.slo))
  elseif r.replicas then
    out(("replicas for %g req/s: %d (utilization %.0f%%, estimated p99 %.3f ms%s)"):format(o.qps, r.replicas,
      r.utilization * 100, r.p99_est_ms, o.slo and (", SLO " .. o.slo .. " ms") or ""))
  end
  return code
end

return M
