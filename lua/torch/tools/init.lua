--[[
  torch.tools — the helper tools behind `build/ltorch tools/tool.lua NAME ...`: small command-line
  programs that compute what the training checklist asks for. Each is a module here with
  { name, summary, usage, main(argv, out) -> exit code }; `out` is a writer (default io.stdout)
  so specs can capture what they print.

    env               libtorch/LuaJIT versions, devices, threads, the BLAS library loaded
    estimate-memory   training memory per GPU: weights, grads, optimizer states, activations
    estimate-compute  training FLOPs (6 N T), GPU-hours, wall-clock, cost, MFU, tokens/param regime
    compare-runs      paired comparison of two configurations across seeds (bootstrap CI)
    check-splits      train/val/test overlap, duplicates, group leakage, temporal order
    find-nan-batches  scans a doctor setup's loaders for non-finite inputs/targets
    inspect-checkpoint  keys, shapes, parameters per module, optimizer state, metadata
    check-dataset     the dataset contract: length, shapes/dtypes, labels, NaN/Inf, determinism
    profile-dataloader  samples/s per worker count, and the share of a step spent waiting for data
    benchmark-model   forward/backward latency, throughput and peak memory by batch size
    serving-capacity  requests/s per replica and the replicas for a QPS under a p99 SLO

  Exit codes (all tools): 0 fine, 1 the tool found a problem (does not fit, inconclusive,
  leak, NaN), 2 usage error or malformed input. `--help` prints the usage and exits 0.
]]
local M = {}

M.names = { "env", "estimate-memory", "estimate-compute", "compare-runs", "check-splits", "find-nan-batches",
  "inspect-checkpoint", "check-dataset", "profile-dataloader", "benchmark-model", "serving-capacity" }
local modules = {
  ["env"] = "torch.tools.env", ["estimate-memory"] = "torch.tools.memory",
  ["estimate-compute"] = "torch.tools.compute", ["compare-runs"] = "torch.tools.compare_runs",
  ["check-splits"] = "torch.tools.check_splits", ["find-nan-batches"] = "torch.tools.find_nan",
  ["inspect-checkpoint"] = "torch.tools.inspect_checkpoint", ["check-dataset"] = "torch.tools.check_dataset",
  ["profile-dataloader"] = "torch.tools.profile_dataloader", ["benchmark-model"] = "torch.tools.benchmark",
  ["serving-capacity"] = "torch.tools.serving",
}

-- A usage error: raised as a table so main() can turn it into exit status 2.
function M.usage_error(fmt, ...)
  error({ usage_error = select("#", ...) > 0 and fmt:format(...) or fmt }, 0)
end

--[[ parse(argv, spec) -> options, positional. spec: {name = "number"|"string"|"boolean"}; flags
     are --name VALUE, --name=VALUE or --name (booleans). Dashes in names become underscores.
     Numbers accept suffixes K, M, B/G, T (1e3 .. 1e12): --params 7B. ]]
local suffix = { k = 1e3, K = 1e3, M = 1e6, B = 1e9, G = 1e9, T = 1e12 }
function M.number(s, what)
  if type(s) == "number" then return s end
  local n = tonumber(s)
  if n then return n end
  local base, suf = tostring(s):match("^([%d%.eE%+%-]+)([kKMBGT])$")
  if base and tonumber(base) then return tonumber(base) * suffix[suf] end
  M.usage_error("%s expects a number, got '%s'", what, tostring(s))
end

-- "1,8,32" -> {1, 8, 32}: whole numbers >= min from a comma list (what: the flag, for errors).
function M.whole_numbers(s, what, min)
  local list = {}
  for part in tostring(s):gmatch("[^,]+") do
    local n = tonumber(part)
    if not n or n < min or n % 1 ~= 0 then M.usage_error("%s expects whole numbers >= %d, got '%s'", what, min, part) end
    list[#list + 1] = n
  end
  if #list == 0 then M.usage_error("%s is empty", what) end
  return list
end

function M.parse(argv, spec)
  local o, pos = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then o.help = true
    elseif a:sub(1, 2) == "--" then
      local k, v = a:match("^%-%-([^=]+)=(.*)$")
      k = (k or a:sub(3)):gsub("%-", "_")
      local kind = spec[k]
      if not kind then M.usage_error("unknown option --%s", (k:gsub("_", "-"))) end
      if kind == "boolean" then
        o[k] = v == nil or v == "true"
      else
        if v == nil then i = i + 1; v = argv[i] end
        if v == nil then M.usage_error("option --%s needs a value", (k:gsub("_", "-"))) end
        o[k] = kind == "number" and M.number(v, "--" .. k:gsub("_", "-")) or v
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return o, pos
end

-- A writer that collects lines (for specs): w(line); w.lines; w.text()
function M.collector()
  local lines = {}
  return setmetatable({ lines = lines, text = function() return table.concat(lines, "\n") end },
    { __call = function(_, s) lines[#lines + 1] = s end })
end

local function stdout(s) io.stdout:write(s, "\n") end
local function stderr(s) io.stderr:write(s, "\n") end

function M.find(name) return modules[name] and require(modules[name]) end

--[[ run(name, argv, out, err) -> exit code; out(line) prints (default stdout), err(line) the
     errors (default: stderr, or `out` when out is given). Usage errors print "NAME: message" and
     the usage, and give 2. ]]
function M.run(name, argv, out, err)
  err = err or out or stderr
  out = out or stdout
  local tool = M.find(name)
  if not tool then
    err(("tool: unknown tool '%s' (known: %s)"):format(tostring(name), table.concat(M.names, ", ")))
    return 2
  end
  local ok, code = pcall(tool.main, argv or {}, out)
  if ok then return code or 0 end
  if type(code) == "table" and code.usage_error then
    err(("%s: %s"):format(name, code.usage_error))
    err(tool.usage)
    return 2
  end
  err(("%s: %s"):format(name, tostring(code)))
  return 2
end

function M.list(out)
  out = out or stdout
  out("usage: ltorch tools/tool.lua NAME [options]   (NAME --help for each)")
  for _, n in ipairs(M.names) do out(("  %-18s %s"):format(n, M.find(n).summary)) end
end

return M
