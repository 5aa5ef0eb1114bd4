--[[
  torch.serialization.safetensors — the safetensors container (https://huggingface.co/docs/safetensors):
  an 8-byte little-endian header length N, N bytes of JSON
  {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, "__metadata__": {...}},
  then the tensor bytes (offsets relative to the end of the header).

  Pure Lua (no torch), so the fuzz harness runs it as is. parse_header accepts exactly the files
  the format's own reader (the safetensors crate / Python package) accepts, checking everything
  before a byte of tensor data is touched: a header length of at most 100,000,000 bytes and
  inside the file, a header of valid UTF-8 (names and metadata), strict JSON (duplicate keys
  refused, where the crate keeps the last; an object at the top), known dtypes, shapes and
  offsets written as unsigned integers (4.0 and -0 are not), end - begin == numel * itemsize,
  and the tensors, in offset order, covering the data area exactly: the first at 0, each where
  the previous one ends, the last at the end of the file (no gaps, no trailing bytes);
  __metadata__ null or an object of strings; other fields of an entry ignored, as the crate
  does. Messages give the numbers as the file holds them (a length of 2^64 - 1 reads
  18446744073709551615, not a rounded double).

  Usage:  local st = require "torch.serialization.safetensors"
          local entries, metadata, data_start = st.parse_header(bytes)
          local header = st.build_header({{name=, dtype=, shape=, nbytes=}, ...}, metadata)
]]
require "ffi"   -- the exact 64-bit header length (0ULL arithmetic)
local json = require "torch.serialization.json"

local M = {}

local MAX_HEADER = 100000000   -- the format's limit (safetensors' MAX_HEADER_SIZE)
local SAFE_INT = 2 ^ 53

-- safetensors dtype -> torch dtype name, element size
M.dtypes = {
  F64 = { "float64", 8 }, F32 = { "float32", 4 }, F16 = { "float16", 2 }, BF16 = { "bfloat16", 2 },
  I64 = { "int64", 8 }, I32 = { "int32", 4 }, I16 = { "int16", 2 }, I8 = { "int8", 1 },
  U8 = { "uint8", 1 }, BOOL = { "bool", 1 }, C64 = { "complex64", 8 },
  U16 = { "uint16", 2 }, U32 = { "uint32", 4 }, U64 = { "uint64", 8 },
  F8_E4M3 = { "float8_e4m3fn", 1 }, F8_E5M2 = { "float8_e5m2", 1 },
  F8_E4M3FNUZ = { "float8_e4m3fnuz", 1 }, F8_E5M2FNUZ = { "float8_e5m2fnuz", 1 },
}
-- The codes safetensors' torch binding maps (safetensors.torch._TYPES). The format's other
-- codes (F8_E8M0, F4, F6_*) name dtypes that binding does not load either: refused by name.
M.codes = {}
for code, d in pairs(M.dtypes) do M.codes[d[1]] = code end

local function fail(msg) error("safetensors: " .. msg, 0) end

-- The 8-byte little-endian length at pos, exactly: a uint64 cdata.
local function u64le(s, pos)
  local v = 0ULL
  for i = 7, 0, -1 do v = v * 256 + s:byte(pos + i) end
  return v
end

local function u64_text(v) return (tostring(v):gsub("ULL$", "")) end

-- A JSON number as the file wrote it (anything but an unsigned integer below 2^53 arrives as
-- json.Number, its literal text).
local function num(x)
  if getmetatable(x) == json.Number then return x.text end
  if type(x) ~= "number" then return tostring(x) end
  if x == math.floor(x) and math.abs(x) < SAFE_INT then return ("%d"):format(x) end
  return ("%.17g"):format(x)
end

-- nil when s is valid UTF-8 (what Rust's str::from_utf8 accepts: no overlong forms, no
-- surrogates, nothing past U+10FFFF), else the 1-based position of the first bad sequence.
function M.utf8_error(s)
  local i, n = 1, #s
  while true do
    i = s:find("[\128-\255]", i)
    if not i then return nil end
    local c, lo, hi = s:byte(i), 0x80, 0xBF
    local len
    if c >= 0xC2 and c <= 0xDF then len = 2
    elseif c >= 0xE0 and c <= 0xEF then len = 3; if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
    elseif c >= 0xF0 and c <= 0xF4 then len = 4; if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
    else return i end
    if i + len - 1 > n then return i end
    local b = s:byte(i + 1)
    if b < lo or b > hi then return i end
    for k = 2, len - 1 do
      b = s:byte(i + k)
      if b < 0x80 or b > 0xBF then return i end
    end
    i = i + len
  end
end

local function check_entry(name, e, data_len)
  if type(e) ~= "table" then fail(("entry '%s' is not an object"):format(name)) end
  -- other fields are ignored, as the format's reader ignores them
  local d = M.dtypes[e.dtype]
  if not d then fail(("entry '%s' has unsupported dtype %s"):format(name, tostring(e.dtype))) end
  if type(e.shape) ~= "table" or #e.shape > 64 then fail(("entry '%s' has a bad shape"):format(name)) end
  local numel = 1
  for i = 1, #e.shape do
    local s = e.shape[i]
    if type(s) ~= "number" or s < 0 or s ~= math.floor(s) then
      fail(("entry '%s' has a bad shape: dimension %d is %s"):format(name, i, num(s)))
    end
    numel = numel * s
    if numel >= SAFE_INT then fail(("entry '%s' is too large: its shape holds 2^53 elements or more"):format(name)) end
  end
  local off = e.data_offsets
  if type(off) ~= "table" or #off ~= 2 then fail(("entry '%s' has bad data_offsets"):format(name)) end
  local b, en = off[1], off[2]
  if getmetatable(b) == json.Number or getmetatable(en) == json.Number then
    fail(("entry '%s' has data_offsets [%s, %s]: offsets are unsigned integers below 2^53"):format(name, num(b), num(en)))
  end
  if type(b) ~= "number" or type(en) ~= "number" or b ~= math.floor(b) or en ~= math.floor(en) or b < 0 or en < b then
    fail(("entry '%s' has bad data_offsets [%s, %s]"):format(name, num(b), num(en)))
  end
  if en > data_len then fail(("entry '%s' ends at byte %s, past the %d data bytes"):format(name, num(en), data_len)) end
  if en - b ~= numel * d[2] then
    fail(("entry '%s' holds %s bytes, its shape and dtype need %s"):format(name, num(en - b), num(numel * d[2])))
  end
  return { name = name, dtype = d[1], shape = e.shape, begin = b, ["end"] = en }
end

-- bytes: the whole file (or at least 8 + N bytes of it) -> entries (sorted by name), metadata,
-- data_start (1-based position of the first data byte in bytes).
function M.parse_header(bytes, file_size)
  file_size = file_size or #bytes
  local n = M.header_length(bytes, file_size)
  if 8 + n > #bytes then fail(("header length %d is past the end of the %d bytes given"):format(n, #bytes)) end
  local text = bytes:sub(9, 8 + n)
  local bad = M.utf8_error(text)
  if bad then
    fail(("header is not valid UTF-8: byte 0x%02x at file offset %d (header byte %d)"):format(text:byte(bad), 8 + bad - 1, bad - 1))
  end
  local ok, header = pcall(json.decode, text, 16, { exact_integers = true })
  if not ok then fail("header: " .. tostring(header)) end
  if type(header) ~= "table" or header == json.null or getmetatable(header) == json.Number or not text:match("^[ \t\r\n]*{") then
    fail("header is not a JSON object")
  end
  local data_len = file_size - 8 - n
  local entries, metadata = {}, {}
  for name, e in pairs(header) do
    if name == "__metadata__" then   -- null: no metadata, as the format allows
      if e ~= json.null and (type(e) ~= "table" or getmetatable(e) == json.Number or (next(e) ~= nil and #e > 0)) then fail("__metadata__ is not an object") end
      for k, v in pairs(e ~= json.null and e or {}) do
        if type(k) ~= "string" or type(v) ~= "string" then fail("__metadata__ values must be strings") end
        metadata[k] = v
      end
    else
      entries[#entries + 1] = check_entry(name, e, data_len)
    end
  end
  -- In offset order the tensors tile the data area: no overlap, no gap, nothing after.
  local by_offset = {}
  for i, e in ipairs(entries) do by_offset[i] = e end
  table.sort(by_offset, function(a, b)
    if a.begin ~= b.begin then return a.begin < b.begin end
    if a["end"] ~= b["end"] then return a["end"] < b["end"] end
    return a.name < b.name
  end)
  local at, prev = 0, nil
  for _, e in ipairs(by_offset) do
    if e.begin < at then
      fail(("entries '%s' and '%s' overlap"):format(prev, e.name))
    elseif e.begin > at then
      fail(("entry '%s' starts at data byte %d, but %s at byte %d: the %d bytes between are unused (the format stores tensors without gaps)"):format(
        e.name, e.begin, prev and ("'" .. prev .. "' ends") or "the data starts", at, e.begin - at))
    end
    at, prev = e["end"], e.name
  end
  if at ~= data_len then
    fail(("the tensors end at data byte %d of %d: %d trailing bytes after them (the format allows none)"):format(at, data_len, data_len - at))
  end
  table.sort(entries, function(a, b) return a.name < b.name end)
  return entries, metadata, 9 + n
end

-- header_length(bytes, file_size) -> N, the header's length, checked as the format's reader
-- does: at most 100,000,000 bytes, and 8 + N within the file. bytes needs only its first 8.
function M.header_length(bytes, file_size)
  if #bytes < 8 then fail(("file too short for a header (%d bytes, the length alone takes 8)"):format(#bytes)) end
  local n = u64le(bytes, 1)
  if n > MAX_HEADER then
    fail(("header length %s exceeds the format's limit of 100000000 bytes"):format(u64_text(n)))
  end
  n = tonumber(n)
  if 8 + n > file_size then
    fail(("header length %d is past the end of the file (%d bytes after the 8-byte length)"):format(n, file_size - 8))
  end
  return n
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
