-- spec/data/idx_spec.lua — checks torch.data.idx (lua/torch/data/idx.lua) on small IDX
-- files written to a temp dir, plain and gzip'd (`gzip -c`).
--
-- Needs LuaJIT (FFI) and libz.so.1. Run: `bash scripts/test.sh spec/data/idx_spec.lua`.

local idx = require "torch.data.idx"

local dir

local function be32(n)
  return string.char(math.floor(n / 2^24) % 256, math.floor(n / 2^16) % 256,
    math.floor(n / 2^8) % 256, n % 256)
end

-- IDX header: two zero bytes, type code, ndims, then big-endian sizes.
local function header(code, dims)
  local parts = { string.char(0, 0, code, #dims) }
  for _, d in ipairs(dims) do parts[#parts + 1] = be32(d) end
  return table.concat(parts)
end

local function write(name, bytes)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
  return path
end

local function gzip(path, out_name)
  local out = dir .. "/" .. out_name
  assert(os.execute(string.format("gzip -c '%s' > '%s'", path, out)))
  return out
end

-- 2 images of 2x3 pixels: 0, 1, ..., 11 (stored row-major).
local function pixels()
  local t = {}
  for i = 0, 11 do t[#t + 1] = string.char(i) end
  return table.concat(t)
end

setup(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
end)

teardown(function()
  os.execute("rm -rf '" .. dir .. "'")
end)

describe("torch.data.idx.read", function()
  it("reads a plain uint8 3-dim image file", function()
    local path = write("images-idx3-ubyte", header(0x08, { 2, 2, 3 }) .. pixels())
    local t = idx.read(path)
    assert.are.same({ 2, 2, 3 }, t.dims)
    assert.are.equal("uint8", t.dtype)
    assert.are.equal(pixels(), t.data)
  end)

  it("reads a 1-dim label file (magic 2049)", function()
    local bytes = header(0x08, { 5 }) .. string.char(9, 0, 0, 3, 7)
    assert.are.equal(string.char(0, 0, 8, 1), bytes:sub(1, 4)) -- 0x00000801
    local t = idx.read(write("labels-idx1-ubyte", bytes))
    assert.are.same({ 5 }, t.dims)
    assert.are.same({ 9, 0, 0, 3, 7 }, { t.data:byte(1, -1) })
  end)

  it("reads gzip'd files through zlib, whatever their name", function()
    local plain = write("g-idx3-ubyte", header(0x08, { 2, 2, 3 }) .. pixels())
    for _, name in ipairs({ "g-idx3-ubyte.gz", "no-extension" }) do
      local t = idx.read(gzip(plain, name))
      assert.are.same({ 2, 2, 3 }, t.dims)
      assert.are.equal(pixels(), t.data)
    end
  end)

  it("keeps multi-byte payloads big-endian and names their dtype", function()
    local payload = string.char(0x01, 0x02, 0xFF, 0xFE)
    local t = idx.read(write("i16.idx", header(0x0B, { 2 }) .. payload))
    assert.are.equal("int16", t.dtype)
    assert.are.equal(payload, t.data)
    local f = idx.read(write("f64.idx", header(0x0E, { 1, 1 }) .. string.rep("\0", 8)))
    assert.are.equal("float64", f.dtype)
    assert.are.equal(8, #f.data)
  end)

  it("ignores bytes after the payload", function()
    local t = idx.read(write("extra.idx", header(0x08, { 3 }) .. "abcXYZ"))
    assert.are.equal("abc", t.data)
  end)

  it("rejects a file with a bad magic number", function()
    local path = write("bad-magic", string.char(0x12, 0x34, 0x08, 0x01) .. be32(1) .. "x")
    assert.has_error(function() idx.read(path) end,
      "idx.read: " .. path .. ": not an IDX file (magic 0x12340801)")
    local unknown_type = write("bad-type", string.char(0, 0, 0x42, 1) .. be32(1) .. "x")
    assert.has_error(function() idx.read(unknown_type) end,
      "idx.read: " .. unknown_type .. ": not an IDX file (magic 0x00004201)")
  end)

  it("rejects a file too short to hold a header", function()
    local path = write("tiny", string.char(0, 0))
    local ok, err = pcall(idx.read, path)
    assert.is_false(ok)
    assert.matches("not an IDX file", err, 1, true)
    local dims = write("short-dims", header(0x08, { 2, 2, 3 }):sub(1, 9))
    ok, err = pcall(idx.read, dims)
    assert.is_false(ok)
    assert.matches("truncated header", err, 1, true)
  end)

  it("reports a truncated payload, plain or gzip'd", function()
    local path = write("short-idx3", header(0x08, { 2, 2, 3 }) .. pixels():sub(1, 7))
    assert.has_error(function() idx.read(path) end,
      "idx.read: " .. path .. ": truncated payload: expected 12 bytes for dims {2, 2, 3} uint8, got 7")
    local gz = gzip(path, "short-idx3.gz")
    local ok, err = pcall(idx.read, gz)
    assert.is_false(ok)
    assert.matches("truncated payload", err, 1, true)
  end)

  it("reports a corrupt gzip stream", function()
    local plain = write("c-idx1", header(0x08, { 4000 }) .. string.rep("ab", 2000))
    local gz = gzip(plain, "c-idx1.gz")
    local f = assert(io.open(gz, "rb"))
    local bytes = f:read("*a")
    f:close()
    local cut = write("cut.gz", bytes:sub(1, math.floor(#bytes / 2)))
    local ok, err = pcall(idx.read, cut)
    assert.is_false(ok)
    assert.matches("^idx%.read: .*cut%.gz: ", err)
  end)

  it("names the Debian package when a Fashion-MNIST file is missing", function()
    local path = "/usr/share/datasets/fashion-mnist/no-such-file.gz"
    local ok, err = pcall(idx.read, path)
    assert.is_false(ok)
    assert.matches("dataset-fashion-mnist", err, 1, true)
  end)

  it("reports other missing files with the system's reason", function()
    local ok, err = pcall(idx.read, dir .. "/missing")
    assert.is_false(ok)
    assert.matches("missing: No such file or directory", err, 1, true)
  end)

  it("rejects a non-string path", function()
    assert.has_error(function() idx.read(nil) end,
      "bad argument #1 to 'read' (string expected, got nil)")
  end)
end)
