--[[
  torch.tools.check_dataset — `tool.lua check-dataset SCRIPT`: the map-style dataset contract
  (torch.data.dataset) checked on up to --max-samples evenly spaced samples:
    * len() is a whole number >= 1, and get(0) .. get(len - 1) answer;
    * every sample has the structure, shapes and dtypes of sample 0 (else default collate fails);
    * no NaN/Inf in floating tensors;
    * get(i) called twice returns equal samples (random augmentation belongs in a seeded transform);
    * labels (the field --label, default the last field of a table sample, when integer-valued):
      range (all in [0, --num-classes) when given), per-class counts and the imbalance ratio.
  SCRIPT returns a dataset, a factory function, or {dataset = ...} (torch.tools._dataset).
  Exit 0 the contract holds, 1 a violation found, 2 usage error or a script that does not load.
]]
local torch = require "torch"
local T = require "torch.tools"
local D = require "torch.tools._dataset"

local M = { name = "check-dataset", summary = "dataset contract: length, shapes/dtypes, labels, NaN/Inf, determinism",
  usage = [[usage: ltorch tools/tool.lua check-dataset SCRIPT [--max-samples N] [--num-classes C] [--label FIELD] [--json]
  SCRIPT returns a dataset (len, get(i) 0-based), a factory function, or {dataset = ...}
  --label FIELD: which field of a sample holds the label (default: the last one, if integer)
exit 0 contract holds, 1 violation found, 2 usage / script error]] }

-- flatten(sample) -> {field -> "dtype[shape]" | "number" | ...}, sorted field names
local function flatten(v, prefix, out, names)
  if torch.is_tensor(v) then
    out[prefix] = ("%s[%s]"):format(tostring(v.dtype):gsub("^torch%.", ""), table.concat(v:size(), ", "))
    names[#names + 1] = prefix
  elseif type(v) == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do flatten(v[k], prefix == "" and tostring(k) or (prefix .. "." .. tostring(k)), out, names) end
  else
    out[prefix] = type(v)
    names[#names + 1] = prefix
  end
  return out, names
end

local function field(v, name)
  if name == "" then return v end
  for part in name:gmatch("[^%.]+") do
    if type(v) ~= "table" then return nil end
    v = v[tonumber(part) or part]
  end
  return v
end

local function same(a, b)
  if torch.is_tensor(a) and torch.is_tensor(b) then
    return a.dtype == b.dtype and a:dim() == b:dim() and table.concat(a:size(), ",") == table.concat(b:size(), ",")
      and a:equal(b)
  end
  if type(a) == "table" and type(b) == "table" then
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  return a == b or (a ~= a and b ~= b)
end

-- label value of a sample as an integer, or nil
local function as_label(v)
  if type(v) == "number" and v % 1 == 0 then return v end
  if torch.is_tensor(v) and v:numel() == 1 and not v:is_floating_point() then return v:item() end
  return nil
end

local function nonfinite(v, acc)
  if torch.is_tensor(v) then
    if v:is_floating_point() then acc.n = acc.n + v:isfinite():logical_not():sum():item() end
  elseif type(v) == "table" then
    for _, x in pairs(v) do nonfinite(x, acc) end
  elseif type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then
    acc.n = acc.n + 1
  end
end

local function indices(n, max)
  local idx = {}
  if n <= max then for i = 0, n - 1 do idx[#idx + 1] = i end; return idx end
  for k = 0, max - 1 do idx[#idx + 1] = math.floor(k * (n - 1) / (max - 1) + 0.5) end
  return idx
end

function M.check(ds, opts)
  opts = opts or {}
  local r = { problems = {}, labels = {} }
  local function problem(fmt, ...) r.problems[#r.problems + 1] = fmt:format(...) end
  local ok, n = pcall(ds.len, ds)
  if not ok or type(n) ~= "number" or n % 1 ~= 0 or n < 1 then
    problem("len() must give a whole number >= 1, got %s", tostring(n)); return r
  end
  r.length = n
  local idx = indices(n, opts.max_samples or 1000)
  r.checked = #idx
  local sig0, names0, label_name
  local bad_shape, bad_finite, bad_det, counts = 0, 0, 0, {}
  for k, i in ipairs(idx) do
    local okg, s = pcall(ds.get, ds, i)
    if not okg then problem("get(%d) failed: %s", i, tostring(s)); return r end
    local sig, names = flatten(s, "", {}, {})
    if not sig0 then
      sig0, names0 = sig, names
      r.fields = sig0
      label_name = opts.label or (#names > 1 and names[#names]) or nil
      r.label_field = label_name
    else
      local diff = #names ~= #names0
      for _, f in ipairs(names0) do if sig[f] ~= sig0[f] then diff = true end end
      if diff then
        bad_shape = bad_shape + 1
        if bad_shape <= 5 then
          local parts = {}
          for _, f in ipairs(names) do parts[#parts + 1] = f .. " " .. sig[f] end
          problem("sample %d differs from sample 0: %s", i, table.concat(parts, ", "))
        end
      end
    end
    local acc = { n = 0 }
    nonfinite(s, acc)
    if acc.n > 0 then
      bad_finite = bad_finite + 1
      if bad_finite <= 5 then problem("sample %d has %d non-finite value(s)", i, acc.n) end
    end
    if k <= (opts.repeats or 8) then
      local ok2, s2 = pcall(ds.get, ds, i)
      if not (ok2 and same(s, s2)) then
        bad_det = bad_det + 1
        if bad_det <= 5 then problem("get(%d) twice gives different samples (unseeded randomness in get?)", i) end
      end
    end
    local y = label_name and as_label(field(s, label_name))
    if y then counts[y] = (counts[y] or 0) + 1 end
  end
  local classes = {}
  for c in pairs(counts) do classes[#classes + 1] = c end
  table.sort(classes)
  if #classes > 0 then
    local lo, hi = math.huge, 0
    for _, c in ipairs(classes) do
      r.labels[#r.labels + 1] = { class = c, count = counts[c] }
      lo, hi = math.min(lo, counts[c]), math.max(hi, counts[c])
    end
    r.label_min, r.label_max, r.imbalance = classes[1], classes[#classes], hi / lo
    if classes[1] < 0 then problem("negative label %d", classes[1]) end
    if opts.num_classes and classes[#classes] >= opts.num_classes then
      problem("label %d is outside [0, %d)", classes[#classes], opts.num_classes)
    end
  end
  r.shape_mismatches, r.nonfinite_samples, r.nondeterministic = bad_shape, bad_finite, bad_det
  return r
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { max_samples = "number", num_classes = "number", label = "string", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one dataset script expected") end
  if o.max_samples and not (o.max_samples >= 2 and o.max_samples % 1 == 0) then
    T.usage_error("--max-samples must be a whole number >= 2")
  end
  if o.num_classes and not (o.num_classes >= 1 and o.num_classes % 1 == 0) then
    T.usage_error("--num-classes must be a whole number >= 1")
  end
  local ds = D.dataset(D.load_script(pos[1]), pos[1])
  local r = M.check(ds, o)
  local code = #r.problems > 0 and 1 or 0
  if o.json then out(require("torch.serialization.json").encode(r)); return code end
  if r.length then out(("length %d, %d samples checked"):format(r.length, r.checked or 0)) end
  if r.fields then
    local names = {}
    for f in pairs(r.fields) do names[#names + 1] = f end
    table.sort(names)
    for _, f in ipairs(names) do out(("  %-12s %s"):format(f == "" and "(sample)" or f, r.fields[f])) end
  end
  if #r.labels > 0 then
    local parts = {}
    for i = 1, math.min(10, #r.labels) do parts[#parts + 1] = ("%d: %d"):format(r.labels[i].class, r.labels[i].count) end
    out(("labels (%s): %d classes, range [%d, %d], imbalance %.1fx  {%s%s}"):format(r.label_field, #r.labels,
      r.label_min, r.label_max, r.imbalance, table.concat(parts, ", "), #r.labels > 10 and ", ..." or ""))
  end
  for i = 1, math.min(5, #r.problems) do out("  " .. r.problems[i]) end
  if #r.problems > 5 then out(("  ... %d more"):format(#r.problems - 5)) end
  out(code == 0 and "verdict: contract holds" or ("verdict: %d violation(s)"):format(#r.problems))
  return code
end

return M
