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

-- Step 1. The header (nil with header = false) and the non-empty data lines, each {lineno, text};
-- `first` is the number of the first line after the header. Errors blame CSV.new's caller.
local function read_rows(path, name, delim, opts)
  local f, why = io.open(path, "rb")
  if not f then error("CSVDataset: " .. why, 3) end
  local lineno, header = 0, nil
  for _ = 1, opts.skip_lines or 0 do f:read("*l"); lineno = lineno + 1 end
  if opts.header ~= false then
    local h = f:read("*l")
    lineno = lineno + 1
    if not h then f:close(); error(("CSVDataset: %s: empty file"):format(path), 3) end
    header = split_line((h:gsub("\r$", "")), delim, name .. ":" .. lineno)
  end
  local rows, first = {}, lineno + 1
  for line in f:lines() do
    lineno = lineno + 1
    line = line:gsub("\r$", "")
    if line ~= "" then rows[#rows + 1] = { lineno, line } end
  end
  f:close()
  if #rows == 0 then error(("CSVDataset: %s: no data rows"):format(path), 3) end
  return header, rows, first
end

-- Step 2. Column numbers from opts: the target's (nil for none), the features', and the set of
-- categorical ones. A name that is not a column blames CSV.new's caller.
local function resolve_columns(path, header, ncol, opts)
  local idx_of = {}
  for c, h in ipairs(header) do idx_of[h] = c end
  local function col(v)
    if type(v) == "number" then return v end
    local c = idx_of[v]
    if not c then error(("CSVDataset: %s: no column named '%s' (columns: %s)"):format(path, v, table.concat(header, ", ")), 4) end
    return c
  end
  local target = opts.target == nil and ncol or (opts.target ~= false and col(opts.target) or nil)
  local feats = {}
  if opts.columns then for k, v in ipairs(opts.columns) do feats[k] = col(v) end
  else for c = 1, ncol do if c ~= target then feats[#feats + 1] = c end end end
  local categorical = {}
  for _, v in ipairs(opts.categorical or {}) do categorical[col(v)] = true end
  return target, feats, categorical
end

-- Step 3. The target is categorical when any of its values is not a number.
local function target_is_categorical(rows, delim, name, target, missing)
  for _, r in ipairs(rows) do
    local v = split_line(r[2], delim, name .. ":" .. r[1])[target]
    if v and not missing[v] and tonumber(v) == nil then return true end
  end
  return false
end

-- The categories seen so far: index(c, s) gives string s of column c its 0-based index, in
-- order of first appearance; cats[c] = {value -> index}, names[c] = the values in order.
local function categories()
  local cats, names = {}, {}
  local function index(c, s)
    local m = cats[c]
    if not m then m = {}; cats[c] = m; names[c] = {} end
    if m[s] == nil then m[s] = #names[c]; names[c][#names[c] + 1] = s end
    return m[s]
  end
  return { cats = cats, names = names, index = index }
end

-- Step 4. The rows' numbers: X[k] = the k-th kept row's features, Y[k] its target; `t` holds
-- the table's facts (ncol, header, feats, target, categorical, missing, on_missing, cat).
-- Returns X, Y and the number of rows kept (on_missing = "skip" drops rows).
local function parse_rows(rows, delim, name, t)
  local X, Y, kept = {}, {}, 0
  for _, r in ipairs(rows) do
    local where = name .. ":" .. r[1]
    local fields = split_line(r[2], delim, where)
    if #fields ~= t.ncol then
      error(("CSVDataset: %s: expected %d fields, got %d"):format(where, t.ncol, #fields), 3)
    end
    local row, skip = {}, false
    local function value(c)
      local s = fields[c]
      if t.missing[s] then
        if t.on_missing == "nan" then return 0 / 0 end
        if t.on_missing == "skip" then skip = true; return 0 end
        error(("CSVDataset: %s: column '%s': missing value (%q); pass on_missing = \"skip\" or \"nan\"")
          :format(where, t.header[c], s), 0)
      end
      if t.categorical[c] then return t.cat.index(c, s) end
      local v = tonumber(s)
      if v == nil then
        error(("CSVDataset: %s: column '%s': not a number: '%s' (list it in categorical?)"):format(where, t.header[c], s), 0)
      end
      return v
    end
    local ok, err = pcall(function()
      for k, c in ipairs(t.feats) do row[k] = value(c) end
      if t.target then row.y = value(t.target) end
    end)
    if not ok then error(err, 3) end
    if not skip then
      kept = kept + 1
      X[kept] = row
      Y[kept] = row.y
      row.y = nil
    end
  end
  return X, Y, kept
end

-- Step 5. ds.targets: int64 when the target is categorical or every value is integral.
local function targets_tensor(torch, Y, kept, categorical)
  local integral = categorical
  if not integral then
    integral = true
    for i = 1, kept do if Y[i] ~= math.floor(Y[i]) then integral = false; break end end
  end
  return torch.tensor(Y, { dtype = integral and torch.int64 or torch.float32 })
end

function CSV.new(path, opts)
  opts = opts or {}
  local torch = require "torch"
  local name = path:match("[^/]+$")
  local delim = opts.delimiter or (path:match("%.tsv$") and "\t" or ",")
  local missing = {}
  for _, m in ipairs(opts.missing or { "", "NA", "?", "nan", "NaN" }) do missing[m] = true end
  local header, rows, first = read_rows(path, name, delim, opts)
  local ncol = header and #header or #split_line(rows[1][2], delim, name .. ":" .. first)
  if not header then header = {}; for c = 1, ncol do header[c] = "column" .. c end end
  local target, feats, categorical = resolve_columns(path, header, ncol, opts)
  if target and not categorical[target] and target_is_categorical(rows, delim, name, target, missing) then
    categorical[target] = true
  end
  local cat = categories()
  local X, Y, kept = parse_rows(rows, delim, name, { ncol = ncol, header = header, feats = feats, target = target,
    categorical = categorical, missing = missing, on_missing = opts.on_missing or "error", cat = cat })

  local self = dataset.instance(CSV, { path = path, columns = {}, n = kept, categories = {} })
  for k, c in ipairs(feats) do self.columns[k] = header[c] end
  for c, m in pairs(cat.cats) do self.categories[header[c]] = { index = m, names = cat.names[c] } end
  self.features = torch.tensor(X, { dtype = torch.float32 })
  if target then
    self.target_name = header[target]
    self.targets = targets_tensor(torch, Y, kept, categorical[target])
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
