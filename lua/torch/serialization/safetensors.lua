--[[
  torch.serialization.safetensors — the safetensors container (https://huggingface.co/docs/safetensors):
  an 8-byte little-endian header length N, N bytes of JSON
  {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, "__metadata__": {...}},
  then the tensor bytes (offsets relative to the end of the header).

  Pure Lua (no torch), so the fuzz harness runs it as is. parse_header checks everything before
  a byte of tensor data is touched: header length against the file, strict JSON (duplicate keys
  refused), known dtypes, non-negative integral shapes, end - begin == numel * itemsize, every
  range inside the data area and no two ranges overlapping; metadata values must be strings.

  Usage:  local st = require "torch.serialization.safetensors"
          local entries, metadata, data_start = st.parse_header(bytes)
          local header = st.build_header({{name=, dtype=, shape=, nbytes=}, ...}, metadata)
]]
local json = require "torch.serialization.json"

local M = {}

local MAX_HEADER = 100 * 1024 * 1024
local SAFE_INT = 2 ^ 53

-- safetensors dtype -> torch dtype name, element size
M.dtypes = {
  F64 = { "float64", 8 }, F32 = { "float32", 4 }, F16 = { "float16", 2 }, BF16 = { "bfloat16", 2 },
  I64 = { "int64", 8 }, I32 = { "int32", 4 }, I16 = { "int16", 2 }, I8 = { "int8", 1 },
  U8 = { "uint8", 1 }, BOOL = { "bool", 1 },
}
M.codes = {}
for code, d in pairs(M.dtypes) do M.codes[d[1]] = code end

local function fail(msg) error("safetensors: " .. msg, 0) end

local function u64le(s, pos)
  local v = 0
  for i = 7, 0, -1 do v = v * 256 + s:byte(pos + i) end
  return v
end

local function check_entry(name, e, data_len)
  if type(e) ~= "table" then fail(("entry '%s' is not an object"):format(name)) end
  for k in pairs(e) do
    if k ~= "dtype" and k ~= "shape" and k ~= "data_offsets" then fail(("entry '%s' has unknown field '%s'"):format(name, tostring(k))) end
  end
  local d = M.dtypes[e.dtype]
  if not d then fail(("entry '%s' has unsupported dtype %s"):format(name, tostring(e.dtype))) end
  if type(e.shape) ~= "table" or #e.shape > 64 then fail(("entry '%s' has a bad shape"):format(name)) end
  local numel = 1
  for i = 1, #e.shape do
    local s = e.shape[i]
    if type(s) ~= "number" or s < 0 or s ~= math.floor(s) then fail(("entry '%s' has a bad shape"):format(name)) end
    numel = numel * s
    if numel >= SAFE_INT then fail(("entry '%s' is too large"):format(name)) end
  end
  local off = e.data_offsets
  if type(off) ~= "table" or #off ~= 2 then fail(("entry '%s' has bad data_offsets"):format(name)) end
  local b, en = off[1], off[2]
  if type(b) ~= "number" or type(en) ~= "number" or b ~= math.floor(b) or en ~= math.floor(en) or b < 0 or en < b then
    fail(("entry '%s' has bad data_offsets"):format(name))
  end
  if en > data_len then fail(("entry '%s' ends at byte %d, past the %d data bytes"):format(name, en, data_len)) end
  if en - b ~= numel * d[2] then
    fail(("entry '%s' holds %d bytes, its shape and dtype need %d"):format(name, en - b, numel * d[2]))
  end
  return { name = name, dtype = d[1], shape = e.shape, begin = b, ["end"] = en }
end

-- bytes: the whole file (or at least 8 + N bytes of it) -> entries (sorted by name), metadata,
-- data_start (1-based position of the first data byte in bytes).
function M.parse_header(bytes, file_size)
  file_size = file_size or #bytes
  if #bytes < 8 then fail("file too short for a header") end
  local n = u64le(bytes, 1)
  if n > MAX_HEADER or 8 + n > file_size or 8 + n > #bytes then fail(("header length %d is past the end of the file"):format(n)) end
  local ok, header = pcall(json.decode, bytes:sub(9, 8 + n), 16)
  if not ok then fail("header: " .. tostring(header)) end
  if type(header) ~= "table" or header == json.null or (next(header) ~= nil and #header > 0) then fail("header is not a JSON object") end
  local data_len = file_size - 8 - n
  local entries, metadata = {}, {}
  for name, e in pairs(header) do
    if name == "__metadata__" then
      if type(e) ~= "table" or e == json.null then fail("__metadata__ is not an object") end
      for k, v in pairs(e) do
        if type(k) ~= "string" or type(v) ~= "string" then fail("__metadata__ values must be strings") end
        metadata[k] = v
      end
    else
      entries[#entries + 1] = check_entry(name, e, data_len)
    end
  end
  local by_offset = {}
  for i, e in ipairs(entries) do by_offset[i] = e end
  table.sort(by_offset, function(a, b) return a.begin < b.begin or (a.begin == b.begin and a["end"] < b["end"]) end)
  for i = 2, #by_offset do
    if by_offset[i].begin < by_offset[i - 1]["end"] then
      fail(("entries '%s' and '%s' overlap"):format(by_offset[i - 1].name, by_offset[i].name))
    end
  end
  table.sort(entries, function(a, b) return a.name < b.name end)
  return entries, metadata, 9 + n
end

-- entries: array of {name=, dtype= (torch name), shape=, nbytes=} in data order.
-- Returns the 8-byte length plus the JSON header, padded with spaces to a multiple of 8.
function M.build_header(entries, metadata)
  local h, offset = {}, 0
  for _, e in ipairs(entries) do
    local code = M.codes[e.dtype]
    if not code then fail("dtype " .. tostring(e.dtype) .. " has no safetensors code") end
    if h[e.name] then fail("duplicate tensor name '" .. e.name .. "'") end
    h[e.name] = { dtype = code, shape = e.shape, data_offsets = { offset, offset + e.nbytes } }
    setmetatable(h[e.name].shape, nil)
    offset = offset + e.nbytes
  end
  if metadata and next(metadata) then h.__metadata__ = metadata end
  local text = json.encode(h)
  -- an empty shape [] encodes as {} through json.encode's array test: fix scalars up
  text = text:gsub('"shape":{}', '"shape":[]')
  if next(h) == nil then text = "{}" end
  text = text .. (" "):rep((8 - #text % 8) % 8)
  local n, len = #text, {}
  for i = 1, 8 do len[i] = string.char(n % 256); n = math.floor(n / 256) end
  return table.concat(len) .. text
end

return M
