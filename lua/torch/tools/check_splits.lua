--[[
  torch.tools.check_splits — `tool.lua check-splits FILE`: split integrity before trusting an eval.
  Finds, and exits 1 on:
    * duplicates: an id listed twice within one split (or the same content hash, if given);
    * overlap:    an id (or content hash) in two splits (train/val/test leakage);
    * group leakage: a group (patient, user, event, source document) present in two splits;
    * temporal violations: with --temporal, a train item later than the earliest val/test item.
  Input, JSON:  {"train": ["id1", ...], "val": [...], "test": [...]}      (ids only)
             or {"train": [{"id": ..., "group": ..., "time": ..., "hash": ...}, ...], ...}
        CSV:    id,split[,group][,time][,hash]     (time: a number or an ISO date, compared as text)
  Reports the counts and the first 5 offenders of each kind.
  Exit 0 clean, 1 problems found, 2 malformed input or usage error.
]]
local T = require "torch.tools"
local I = require "torch.tools._input"

local M = { name = "check-splits", summary = "train/val/test overlap, duplicates, group leakage (exit 1 on problems)",
  usage = [[usage: ltorch tools/tool.lua check-splits FILE [--temporal] [--json]
  FILE: JSON {"train": [ids or {id, group, time, hash}], "val": [...], "test": [...]}
        or CSV with columns id,split[,group][,time][,hash]
exit 0 clean, 1 problems found, 2 malformed input / usage]] }

local order = { train = 1, val = 2, valid = 2, validation = 2, dev = 2, test = 3 }

-- -> {split -> array of items {id, group, time, hash}}, split names in a stable order
function M.read_splits(path)
  local kind, v = I.load(path)
  local splits, names = {}, {}
  local function add(split, item, where)
    if item.id == nil or item.id == "" then T.usage_error("%s: %s has an item without an id", path, where) end
    item.id = tostring(item.id)
    if not splits[split] then splits[split] = {}; names[#names + 1] = split end
    local list = splits[split]
    list[#list + 1] = item
  end
  if kind == "json" then
    if type(v) ~= "table" or v[1] ~= nil then T.usage_error("%s: expected an object of split name -> list", path) end
    for split, list in pairs(v) do
      if type(list) ~= "table" then T.usage_error("%s: split '%s' must be a list", path, split) end
      for i, it in ipairs(list) do
        if type(it) == "table" then
          add(split, { id = it.id, group = it.group, time = it.time, hash = it.hash }, ("split '%s' item %d"):format(split, i))
        elseif type(it) == "string" or type(it) == "number" then
          add(split, { id = it }, split)
        else
          T.usage_error("%s: split '%s' item %d is not an id or an object", path, split, i)
        end
      end
      if #list == 0 and not splits[split] then splits[split] = {}; names[#names + 1] = split end
    end
  else
    local rows, header = v[1], v[2]
    local has = {}
    for _, h in ipairs(header) do has[h] = true end
    if not (has.id and has.split) then T.usage_error("%s: CSV needs columns id,split", path) end
    for i, r in ipairs(rows) do
      add(r.split, { id = r.id, group = r.group ~= "" and r.group or nil, time = r.time ~= "" and r.time or nil,
        hash = r.hash ~= "" and r.hash or nil }, "row " .. (i + 1))
    end
  end
  if #names < 1 then T.usage_error("%s: no splits found", path) end
  table.sort(names, function(a, b)
    local oa, ob = order[a] or 9, order[b] or 9
    if oa ~= ob then return oa < ob end
    return a < b
  end)
  return splits, names
end

local function tcmp(a, b)
  local na, nb = tonumber(a), tonumber(b)
  if na and nb then return na < nb end
  return tostring(a) < tostring(b)
end

function M.check(splits, names, opts)
  opts = opts or {}
  local res = { duplicates = {}, overlap = {}, groups = {}, temporal = {}, counts = {} }
  local where_id, where_hash, where_group = {}, {}, {}
  for _, s in ipairs(names) do
    local seen = {}
    res.counts[s] = #splits[s]
    for _, it in ipairs(splits[s]) do
      if seen[it.id] then res.duplicates[#res.duplicates + 1] = ("%s: id %s listed twice"):format(s, it.id) end
      seen[it.id] = true
      for _, kind in ipairs({ "id", "hash" }) do
        local key = it[kind]
        if key ~= nil then
          local map = kind == "id" and where_id or where_hash
          local prev = map[key]
          if prev and prev ~= s then
            res.overlap[#res.overlap + 1] = ("%s %s in %s and %s"):format(kind, key, prev, s)
          elseif prev == s and kind == "hash" then
            res.duplicates[#res.duplicates + 1] = ("%s: content hash %s repeated (id %s)"):format(s, key, it.id)
          end
          map[key] = map[key] or s
        end
      end
      if it.group ~= nil then
        local g = tostring(it.group)
        where_group[g] = where_group[g] or {}
        where_group[g][s] = true
      end
    end
  end
  local gnames = {}
  for g in pairs(where_group) do gnames[#gnames + 1] = g end
  table.sort(gnames)
  for _, g in ipairs(gnames) do
    local in_ = {}
    for _, s in ipairs(names) do if where_group[g][s] then in_[#in_ + 1] = s end end
    if #in_ > 1 then res.groups[#res.groups + 1] = ("group %s in %s"):format(g, table.concat(in_, ", ")) end
  end
  if opts.temporal then
    local train = splits[names[1]]
    local latest
    for _, it in ipairs(train) do if it.time and (latest == nil or tcmp(latest, it.time)) then latest = it.time end end
    for i = 2, #names do
      local earliest
      for _, it in ipairs(splits[names[i]]) do if it.time and (earliest == nil or tcmp(it.time, earliest)) then earliest = it.time end end
      if latest and earliest and tcmp(earliest, latest) then
        res.temporal[#res.temporal + 1] = ("%s starts at %s, before the latest %s item (%s)"):format(
          names[i], tostring(earliest), names[1], tostring(latest))
      end
    end
  end
  res.problems = #res.duplicates + #res.overlap + #res.groups + #res.temporal
  return res
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { temporal = "boolean", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one input file expected") end
  local splits, names = M.read_splits(pos[1])
  local r = M.check(splits, names, { temporal = o.temporal })
  if o.json then out(require("torch.serialization.json").encode(r)); return r.problems > 0 and 1 or 0 end
  local sizes = {}
  for _, s in ipairs(names) do sizes[#sizes + 1] = ("%s %d"):format(s, r.counts[s]) end
  out("splits: " .. table.concat(sizes, ", "))
  for _, kind in ipairs({ "duplicates", "overlap", "groups", "temporal" }) do
    local list = r[kind]
    local label = ({ duplicates = "duplicates", overlap = "overlap across splits", groups = "group leakage",
      temporal = "temporal violations" })[kind]
    out(("%-22s %d"):format(label, #list))
    for i = 1, math.min(5, #list) do out("    " .. list[i]) end
    if #list > 5 then out(("    ... %d more"):format(#list - 5)) end
  end
  out(r.problems == 0 and "verdict: clean" or ("verdict: %d problem(s): fix the split before trusting the eval"):format(r.problems))
  return r.problems > 0 and 1 or 0
end

return M
