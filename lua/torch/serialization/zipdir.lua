--[[
  torch.serialization.zipdir — reads a zip file's central directory (end record, zip64 locator,
  entries) with every offset checked against the file size, before libtorch's reader
  (caffe2::serialize::PyTorchStreamReader, miniz) is let near the file. Only stored records
  are accepted: PyTorch never compresses, and a stored record's size is bounded by the file
  (miniz checks it), so reading one can never allocate more than the file holds.

  Pure Lua (no torch), so the fuzz harness runs it as is.

  Usage:  local names = zipdir.list(read, size)   -- read(offset0, n) -> string of <= n bytes
          local bytes = zipdir.read_record(read, size, names, "archive/version")   -- small records
  (names[name] is {offset =, size =} of each record's local header and stored size, from the
  central directory; zip64 sizes are not followed, and read_record refuses those records.)
]]
local M = {}

local function fail(msg) error("zip: " .. msg, 0) end

local function uint(s, pos, n)
  local v = 0
  for i = n - 1, 0, -1 do v = v * 256 + s:byte(pos + i) end
  return v
end

local function read_exact(read, offset, n, size, what)
  if offset < 0 or n < 0 or offset + n > size then fail(what .. " lies outside the file") end
  local s = read(offset, n)
  if #s ~= n then fail("short read of " .. what) end
  return s
end

local function find_eocd(read, size)
  if size < 22 then fail("file too short for a zip archive") end
  local tail_len = math.min(size, 22 + 65535 + 20)
  local tail = read_exact(read, size - tail_len, tail_len, size, "end of archive")
  for pos = tail_len - 21, 1, -1 do
    if tail:byte(pos) == 0x50 and tail:sub(pos, pos + 3) == "PK\5\6" then
      return tail, pos, size - tail_len + pos - 1
    end
  end
  fail("no end-of-central-directory record (not a zip archive, or truncated)")
end

function M.list(read, size)
  local tail, pos, eocd_offset = find_eocd(read, size)
  local count, cd_size, cd_offset = uint(tail, pos + 10, 2), uint(tail, pos + 12, 4), uint(tail, pos + 16, 4)
  if count == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF then
    local loc = read_exact(read, eocd_offset - 20, 20, size, "zip64 locator")
    if loc:sub(1, 4) ~= "PK\6\7" then fail("missing zip64 locator") end
    local rec = read_exact(read, uint(loc, 9, 8), 56, size, "zip64 end record")
    if rec:sub(1, 4) ~= "PK\6\6" then fail("bad zip64 end record") end
    count, cd_size, cd_offset = uint(rec, 33, 8), uint(rec, 41, 8), uint(rec, 49, 8)
  end
  if count * 46 > cd_size then fail("central directory too small for its entry count") end
  local cd = read_exact(read, cd_offset, cd_size, size, "central directory")
  local names, p = {}, 1
  for _ = 1, count do
    if p + 46 - 1 > #cd or cd:sub(p, p + 3) ~= "PK\1\2" then fail("corrupt central directory entry") end
    local method = uint(cd, p + 10, 2)
    local name_len, extra_len, comment_len = uint(cd, p + 28, 2), uint(cd, p + 30, 2), uint(cd, p + 32, 2)
    if p + 46 + name_len + extra_len + comment_len - 1 > #cd then fail("corrupt central directory entry") end
    local name = cd:sub(p + 46, p + 46 + name_len - 1)
    if method ~= 0 then fail(("record '%s' is compressed (method %d); only stored records are read"):format(name, method)) end
    if names[name] then fail("duplicate record '" .. name .. "'") end
    names[name] = { offset = uint(cd, p + 42, 4), size = uint(cd, p + 20, 4) }
    names[#names + 1] = name
    p = p + 46 + name_len + extra_len + comment_len
  end
  return names
end

-- The stored bytes of record `name` (listed by list), through its local header; every offset
-- is checked against the file. For small records: the whole record is returned as a string.
function M.read_record(read, size, names, name)
  local e = names[name]
  if type(e) ~= "table" then fail("no record '" .. name .. "'") end
  if e.offset == 0xFFFFFFFF or e.size == 0xFFFFFFFF then fail("record '" .. name .. "' uses zip64 fields") end
  local h = read_exact(read, e.offset, 30, size, "local header of '" .. name .. "'")
  if h:sub(1, 4) ~= "PK\3\4" then fail("bad local header for '" .. name .. "'") end
  return read_exact(read, e.offset + 30 + uint(h, 27, 2) + uint(h, 29, 2), e.size, size, "record '" .. name .. "'")
end

-- For a whole file already in memory.
function M.list_string(bytes)
  return M.list(function(offset, n) return bytes:sub(offset + 1, offset + n) end, #bytes)
end

return M
