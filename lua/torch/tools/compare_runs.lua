--[[
  torch.tools.compare_runs — `tool.lua compare-runs FILE`: is configuration B really better than A,
  or is it seed noise? Runs are paired by seed (same seed = same data order/init, so the
  difference cancels shared noise); the mean paired difference gets a percentile bootstrap
  interval (--resamples, default 10000, seeded), beside the seed-noise floor (the std across
  seeds of each configuration).

  Input, JSON:  {"a": {"0": 0.871, "1": 0.868, ...}, "b": {"0": 0.874, ...}}
                (or arrays, paired by position; names other than a/b: the first two keys, sorted)
        CSV:    config,seed,score    (two distinct configs; header names as shown)
  --higher-is-better (default) or --lower-is-better; --confidence 0.95.
  Verdict: "B better" / "A better" when the interval excludes 0, else "inconclusive".
  Exit 0: a difference, 1: inconclusive, 2: malformed input or usage error.
]]
local T = require "torch.tools"
local I = require "torch.tools._input"

local M = { name = "compare-runs", summary = "paired seeds, bootstrap CI of the difference, verdict",
  usage = [[usage: ltorch tools/tool.lua compare-runs FILE [--lower-is-better] [--confidence 0.95] [--resamples N] [--seed N]
  FILE: JSON {"a": {seed: score, ...}, "b": {...}} or CSV with columns config,seed,score
exit 0 a significant difference, 1 inconclusive, 2 malformed input / usage]] }

local function to_number(v, where)
  local n = tonumber(v)
  if not n or n ~= n then T.usage_error("%s: score '%s' is not a number", where, tostring(v)) end
  return n
end

-- -> names {a, b}, runs {a = {seed -> score}, b = {...}}
function M.read_runs(path)
  local kind, v = I.load(path)
  local runs, names = {}, {}
  if kind == "json" then
    if type(v) ~= "table" then T.usage_error("%s: expected an object of two configurations", path) end
    for k in pairs(v) do names[#names + 1] = k end
    table.sort(names)
    if #names ~= 2 then T.usage_error("%s: expected exactly two configurations, got %d", path, #names) end
    for _, n in ipairs(names) do
      if type(v[n]) ~= "table" then T.usage_error("%s: configuration '%s' must map seeds to scores", path, n) end
      runs[n] = {}
      for seed, score in pairs(v[n]) do runs[n][tostring(seed)] = to_number(score, path) end
    end
  else
    local rows, header = v[1], v[2]
    local has = {}
    for _, h in ipairs(header) do has[h] = true end
    if not (has.config and has.seed and has.score) then T.usage_error("%s: CSV needs columns config,seed,score", path) end
    for _, r in ipairs(rows) do
      if not runs[r.config] then runs[r.config] = {}; names[#names + 1] = r.config end
      if runs[r.config][r.seed] then T.usage_error("%s: seed %s appears twice for %s", path, r.seed, r.config) end
      runs[r.config][r.seed] = to_number(r.score, path)
    end
    if #names ~= 2 then T.usage_error("%s: expected exactly two configs, got %d", path, #names) end
  end
  return names, runs
end

local function mean(xs) local s = 0; for _, x in ipairs(xs) do s = s + x end; return s / #xs end
local function std(xs)
  if #xs < 2 then return 0 end
  local m, s = mean(xs), 0
  for _, x in ipairs(xs) do s = s + (x - m) ^ 2 end
  return math.sqrt(s / (#xs - 1))
end

-- A small deterministic PRNG (LCG), so the interval does not depend on math.random's state.
local function rng(seed)
  local state = (seed or 0) % 2147483647 + 1
  return function(n)
    state = (state * 48271) % 2147483647
    return state % n + 1
  end
end

--[[ compare(a, b, opts) -> result. a, b: {seed -> score}. opts: higher_is_better (true),
     confidence (0.95), resamples (10000), seed (0). ]]
function M.compare(a, b, opts)
  opts = opts or {}
  local seeds = {}
  for s in pairs(a) do if b[s] ~= nil then seeds[#seeds + 1] = s end end
  table.sort(seeds, function(x, y)
    local nx, ny = tonumber(x), tonumber(y)
    if nx and ny then return nx < ny end
    return tostring(x) < tostring(y)
  end)
  if #seeds < 2 then T.usage_error("need at least 2 seeds present in both configurations, got %d", #seeds) end
  local d, va, vb = {}, {}, {}
  for i, s in ipairs(seeds) do va[i], vb[i] = a[s], b[s]; d[i] = b[s] - a[s] end
  local B = opts.resamples or 10000
  local draw = rng(opts.seed or 0)
  local means = {}
  for r = 1, B do
    local sum = 0
    for _ = 1, #d do sum = sum + d[draw(#d)] end
    means[r] = sum / #d
  end
  table.sort(means)
  local conf = opts.confidence or 0.95
  if conf <= 0 or conf >= 1 then T.usage_error("--confidence must be in (0, 1)") end
  local lo = means[math.max(1, math.floor((1 - conf) / 2 * B))]
  local hi = means[math.min(B, math.ceil((1 + conf) / 2 * B))]
  local res = { n = #seeds, mean_a = mean(va), mean_b = mean(vb), std_a = std(va), std_b = std(vb),
    diff = mean(d), diff_std = std(d), lo = lo, hi = hi, confidence = conf }
  local hib = opts.higher_is_better ~= false
  if lo > 0 then res.verdict = hib and "B better" or "A better"
  elseif hi < 0 then res.verdict = hib and "A better" or "B better"
  else res.verdict = "inconclusive" end
  local only = 0
  for s in pairs(a) do if b[s] == nil then only = only + 1 end end
  for s in pairs(b) do if a[s] == nil then only = only + 1 end end
  res.unpaired = only
  return res
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { lower_is_better = "boolean", higher_is_better = "boolean", confidence = "number",
    resamples = "number", seed = "number" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one input file expected") end
  local names, runs = M.read_runs(pos[1])
  local r = M.compare(runs[names[1]], runs[names[2]], { higher_is_better = not o.lower_is_better,
    confidence = o.confidence, resamples = o.resamples, seed = o.seed })
  out(("A = %s, B = %s, %d paired seeds%s"):format(names[1], names[2], r.n,
    r.unpaired > 0 and (" (%d runs without a partner ignored)"):format(r.unpaired) or ""))
  out(("  A: mean %.6g, seed std %.4g"):format(r.mean_a, r.std_a))
  out(("  B: mean %.6g, seed std %.4g"):format(r.mean_b, r.std_b))
  out(("  B - A: mean %.6g, %d%% bootstrap CI [%.6g, %.6g]"):format(r.diff, math.floor(r.confidence * 100 + 0.5), r.lo, r.hi))
  out(("  seed-noise floor: %.4g (the larger seed std)"):format(math.max(r.std_a, r.std_b)))
  if r.verdict == "inconclusive" then
    out("verdict: inconclusive — the interval contains 0; the difference is within seed noise (add seeds)")
    return 1
  end
  if r.n < 5 then out("note: fewer than 5 seeds; treat the interval as rough") end
  out("verdict: " .. r.verdict .. (o.lower_is_better and " (lower is better)" or " (higher is better)"))
  return 0
end

return M
