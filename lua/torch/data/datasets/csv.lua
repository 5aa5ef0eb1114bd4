--[[
  torch.data.datasets.csv — CSV/TSV tables as a Dataset of (features, target) rows.

  CSVDataset(path, {delimiter = "," (TSV: "\t"; default from the .tsv extension),
                    header = true, columns = {names or 1-based numbers} (default: all but target),
                    target = name|number (default: the last column; false for none),
                    categorical = {names...} (string columns mapped to 0-based indices, in order
                    of first appearance; the target is categorical when it is not numeric),
                    missing = {"", "NA", "?"}, on_missing = "error"|"nan"|"skip",
                    skip_lines = 0 (lines dropped before the header)})
    ds.features   float32 (N, F);  ds.targets  int64 (N) when categorical/integral, else float32
    ds.columns    the feature names; ds.categories[name] = {value -> index}, and .names lists
    ds:get(i)     {features[i] (F), target[i]}
  Errors name the file and line: "iris.csv:17: expected 5 fields, got 4", "data.csv:9: column
  'age': missing value", "data.csv:3: column 'x': not a number: 'abc'". Quoted fields ("a,b",
  "" escapes) are supported; embedded newlines are not.

  Use:  local ds = data.datasets.CSVDataset("penguins.csv", {categorical = {"island"}, on_missing = "skip"})
]]
local dataset = require "torch.data.dataset"

local CSV = {}
CSV.__index = CSV
CSV.__name = "CSVDataset"

local function split_line(line, delim, where)
  if not line:find('"', 1, true) then
    local out, start = {}, 1
    while true do
      local i = line:find(delim, start, true)
      if not i then out[#out + 1] = line:sub(start); break end
      out[#out + 1] = line:sub(start, i - 1)
      start = i + #delim
    end
    return out
  end
  local out, i, n = {}, 1, #line
  while i <= n + 1 do
    if line:sub(i, i) == '"' then
      local buf, j = {}, i + 1
      while true do
        local q = line:find('"', j, true)
        if not q then error(where .. ": unterminated quoted field", 0) end
        buf[#buf + 1] = line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then buf[#buf + 1] = '"'; j = q + 2
        else i = q + 1; break end
      end
      out[#out + 1] = table.concat(buf)
      if i <= n and line:sub(i, i + #delim - 1) ~= delim then error(where .. ": text after a quoted field", 0) end
      i = i + #delim
    else
      local k = line:find(delim, i, true) or n + 1
      out[#out + 1] = line:sub(i, k - 1)
      i = k + #delim
    end
  end
  return out
end
CSV.split_line = split_line

function CSV.new(path, opts)
  opts = opts or {}
  local torch = require "torch"
  local f, why = io.open(path, "rb")
  if not f then error("CSVDataset: " .. why, 2) end
  local name = path:match("[^/]+$")
  local delim = opts.delimiter or (path:match("%.tsv$") and "\t" or ",")
  local missing = {}
  for _, m in ipairs(opts.missing or { "", "NA", "?", "nan", "NaN" }) do missing[m] = true end
  local on_missing = opts.on_missing or "error"
  local lineno, header = 0, nil
  for _ = 1, opts.skip_lines or 0 do f:read("*l"); lineno = lineno + 1 end
  if opts.header ~= false then
    local h = f:read("*l")
    lineno = lineno + 1
    if not h then f:close(); error(("CSVDataset: %s: empty file"):format(path), 2) end
    header = split_line((h:gsub("\r$", "")), delim, name .. ":" .. lineno)
  end
  local rows, first = {}, lineno + 1
  for line in f:lines() do
    lineno = lineno + 1
    line = line:gsub("\r$", "")
    if line ~= "" then rows[#rows + 1] = { lineno, line } end
  end
  f:close()
  if #rows == 0 then error(("CSVDataset: %s: no data rows"):format(path), 2) end
  local ncol = header and #header or #split_line(rows[1][2], delim, name .. ":" .. first)
  if not header then header = {}; for c = 1, ncol do header[c] = "column" .. c end end
  local idx_of = {}
  for c, h in ipairs(header) do idx_of[h] = c end
  local function col(v)
    if type(v) == "number" then return v end
    local c = idx_of[v]
    if not c then error(("CSVDataset: %s: no column named '%s' (columns: %s)"):format(path, v, table.concat(header, ", ")), 3) end
    return c
  end
  local target = opts.target == nil and ncol or (opts.target ~= false and col(opts.target) or nil)
  local feats = {}
  if opts.columns then for k, v in ipairs(opts.columns) do feats[k] = col(v) end
  else for c = 1, ncol do if c ~= target then feats[#feats + 1] = c end end end
  local categorical = {}
  for _, v in ipairs(opts.categorical or {}) do categorical[col(v)] = true end

  local cats, catnames = {}, {}
  local function cat_index(c, s)
    local m = cats[c]
    if not m then m = {}; cats[c] = m; catnames[c] = {} end
    if m[s] == nil then m[s] = #catnames[c]; catnames[c][#catnames[c] + 1] = s end
    return m[s]
  end
  -- the target is categorical when any of its values is not a number
  if target and not categorical[target] then
    for _, r in ipairs(rows) do
      local v = split_line(r[2], delim, name .. ":" .. r[1])[target]
      if v and not missing[v] and tonumber(v) == nil then categorical[target] = true; break end
    end
  end

  local X, Y, kept = {}, {}, 0
  for _, r in ipairs(rows) do
    local where = name .. ":" .. r[1]
    local fields = split_line(r[2], delim, where)
    if #fields ~= ncol then
      error(("CSVDataset: %s: expected %d fields, got %d"):format(where, ncol, #fields), 2)
    end
    local row, skip = {}, false
    local function value(c)
      local s = fields[c]
      if missing[s] then
        if on_missing == "nan" then return 0 / 0 end
        if on_missing == "skip" then skip = true; return 0 end
        error(("CSVDataset: %s: column '%s': missing value (%q); pass on_missing = \"skip\" or \"nan\"")
          :format(where, header[c], s), 0)
      end
      if categorical[c] then return cat_index(c, s) end
      local v = tonumber(s)
      if v == nil then
        error(("CSVDataset: %s: column '%s': not a number: '%s' (list it in categorical?)"):format(where, header[c], s), 0)
      end
      return v
    end
    local ok, err = pcall(function()
      for k, c in ipairs(feats) do row[k] = value(c) end
      if target then row.y = value(target) end
    end)
    if not ok then error(err, 2) end
    if not skip then
      kept = kept + 1
      X[kept] = row
      Y[kept] = row.y
      row.y = nil
    end
  end
  local self = dataset.instance(CSV, { path = path, columns = {}, n = kept, categories = {} })
  for k, c in ipairs(feats) do self.columns[k] = header[c] end
  for c, m in pairs(cats) do self.categories[header[c]] = { index = m, names = catnames[c] } end
  self.features = torch.tensor(X, { dtype = torch.float32 })
  if target then
    local integral = categorical[target]
    if not integral then
      integral = true
      for i = 1, kept do if Y[i] ~= math.floor(Y[i]) then integral = false; break end end
    end
    self.target_name = header[target]
    self.targets = torch.tensor(Y, { dtype = integral and torch.int64 or torch.float32 })
  end
  self.factory = { module = "torch.data.datasets.csv", args = { path, opts } }
  return self
end

function CSV:len() return self.n end
function CSV:get(i)
  dataset.check_index("CSVDataset", i, self.n)
  if self.targets then return { self.features:select(0, i), self.targets:select(0, i) } end
  return { self.features:select(0, i) }
end

return setmetatable(CSV, { __index = dataset.Dataset, __call = function(_, ...) return CSV.new(...) end })
