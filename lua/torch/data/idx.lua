-- torch/data/idx.lua — read IDX files (the MNIST / Fashion-MNIST format), gzip'd or not.
--
-- Why: Fashion-MNIST ships as gzipped IDX (Debian `dataset-fashion-mnist`); this turns a
-- file into its shape, element type and raw bytes, with no tensor dependency (the tensor
-- side wraps `data` with torch.from_buffer).
--
-- Format (all header integers big-endian uint32):
--   bytes 0-1  zero
--   byte  2    type code: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
--              0x0D float32, 0x0E float64
--   byte  3    number of dimensions n
--   then n sizes, then the payload, row-major, elements big-endian.
--   Images: magic 0x00000803 (2051), dims {N, 28, 28}; labels: 0x00000801 (2049), {N}.
--
-- Use:
--   local idx = require "torch.data.idx"
--   local t = idx.read("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz")
--   -- t.dims == {10000}, t.dtype == "uint8", #t.data == 10000
--   -- For multi-byte types `data` is still big-endian; byte-swap before use.
-- A file starting with the gzip magic (1f 8b) is read through zlib (LuaJIT FFI,
-- gzopen/gzread); anything else is read as plain bytes. Bytes after the payload are
-- ignored.

local ffi = require "ffi"

local M = {}

-- Type code -> dtype name (PyTorch's) and element size in bytes.
M.types = {
  [0x08] = { dtype = "uint8", size = 1 },
  [0x09] = { dtype = "int8", size = 1 },
  [0x0B] = { dtype = "int16", size = 2 },
  [0x0C] = { dtype = "int32", size = 4 },
  [0x0D] = { dtype = "float32", size = 4 },
  [0x0E] = { dtype = "float64", size = 8 },
}

-- Where a missing file comes from, so the error can say what to install.
local PACKAGES = {
  { prefix = "/usr/share/datasets/fashion-mnist/", package = "dataset-fashion-mnist" },
}

ffi.cdef [[
void *gzopen(const char *path, const char *mode);
int gzread(void *file, void *buf, unsigned int len);
int gzclose(void *file);
const char *gzerror(void *file, int *errnum);
]]

local zlib -- loaded on first gzip'd file

-- Without zlib1g-dev only the runtime name libz.so.1 exists, so try both.
local function load_zlib()
  if zlib then return zlib end
  local ok, lib = pcall(ffi.load, "z")
  if not ok then ok, lib = pcall(ffi.load, "libz.so.1") end
  if not ok then
    error("cannot load zlib (libz.so.1) to read gzip'd files: " .. tostring(lib), 0)
  end
  zlib = lib
  return zlib
end

local CHUNK = 16 * 1024 * 1024 -- gzread takes an unsigned int length; read in chunks

-- A reader has read(n) -> string of at most n bytes (shorter only at EOF) and close().
local function gz_reader(path)
  local z = load_zlib()
  local fh = z.gzopen(path, "rb")
  if fh == nil then error(path .. ": gzopen failed", 0) end
  local r = {}
  function r.read(n)
    local buf = ffi.new("uint8_t[?]", n)
    local got = 0
    while got < n do
      local k = z.gzread(fh, buf + got, math.min(n - got, CHUNK))
      if k < 0 then
        local errnum = ffi.new("int[1]")
        error(path .. ": gzip: " .. ffi.string(z.gzerror(fh, errnum)), 0)
      end
      if k == 0 then break end
      got = got + k
    end
    return ffi.string(buf, got)
  end
  function r.close() z.gzclose(fh) end
  return r
end

local function plain_reader(f)
  return {
    read = function(n) return f:read(n) or "" end,
    close = function() f:close() end,
  }
end

local function missing_message(path, why)
  for _, p in ipairs(PACKAGES) do
    if path:sub(1, #p.prefix) == p.prefix then
      return string.format("%s: file not found; install the Debian package %s "
        .. "(apt-get install %s, or run scripts/setup.sh)", path, p.package, p.package)
    end
  end
  return why -- io.open's message already names the path
end

-- Opens path and picks the reader from its first two bytes.
local function open(path)
  local f, why = io.open(path, "rb")
  if not f then error(missing_message(path, why), 0) end
  local head = f:read(2) or ""
  if head == "\31\139" then
    f:close()
    return gz_reader(path)
  end
  f:seek("set", 0)
  return plain_reader(f)
end

local function be_u32(s, i)
  local a, b, c, d = s:byte(i, i + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

-- Parses the header; returns dims, type info, payload size in bytes.
local function read_header(path, r)
  local magic = r.read(4)
  if #magic < 4 then
    error(string.format("%s: not an IDX file (only %d bytes)", path, #magic), 0)
  end
  local z0, z1, code, ndim = magic:byte(1, 4)
  local ty = M.types[code]
  if z0 ~= 0 or z1 ~= 0 or not ty or ndim == 0 then
    error(string.format("%s: not an IDX file (magic 0x%08X)", path, be_u32(magic, 1)), 0)
  end
  local sizes = r.read(4 * ndim)
  if #sizes < 4 * ndim then
    error(string.format("%s: truncated header (%d dims announced, %d bytes of sizes)",
      path, ndim, #sizes), 0)
  end
  local dims, count = {}, 1
  for d = 1, ndim do
    dims[d] = be_u32(sizes, 4 * d - 3)
    count = count * dims[d]
  end
  return dims, ty, count * ty.size
end

local function read_all(path, r)
  local dims, ty, nbytes = read_header(path, r)
  local data = r.read(nbytes)
  if #data < nbytes then
    error(string.format("%s: truncated payload: expected %d bytes for dims {%s} %s, got %d",
      path, nbytes, table.concat(dims, ", "), ty.dtype, #data), 0)
  end
  return { dims = dims, dtype = ty.dtype, data = data }
end

-- idx.read(path) -> { dims = {d1, ...}, dtype = "uint8"|..., data = raw payload string }
function M.read(path)
  if type(path) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
  end
  local ok, r = pcall(open, path)
  if not ok then error("idx.read: " .. tostring(r), 2) end
  local ok2, result = pcall(read_all, path, r)
  r.close()
  if not ok2 then error("idx.read: " .. tostring(result), 2) end
  return result
end

return M
