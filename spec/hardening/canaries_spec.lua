--[[
  canaries_spec.lua — the allocator's canary mode catches a write past either end of a CPU
  tensor's memory, and tools/api_fuzz.lua --canaries names the call that made it.

  Why: a kernel writing out of bounds corrupts the heap silently; the process dies thousands of
  calls later at an innocent call (seed 20261202: linalg_eigvalsh with out= its input, a
  segfault ~300 calls on). Checking canaries after every call names the culprit.

  What: bindings/lt_allocator.cpp's lt_debug_canaries / lt_debug_check_canaries on blocks of each
  source (small, malloc, mapped), damage after the end, before the start, and in a block released
  before the check; then the fuzzer with one target replaced by an out-of-bounds write.

  How: build/ltorch /usr/bin/busted spec/hardening/canaries_spec.lua   (a few seconds)
]]
local ffi = require "ffi"
local torch = require "torch"

pcall(ffi.cdef, "void lt_debug_canaries(int on); int lt_debug_check_canaries(int64_t *info);")
local C = ffi.C
local info = ffi.new("int64_t[2]")

-- the damage lt_debug_check_canaries reports, or nil
local function damage()
  if C.lt_debug_check_canaries(info) == 0 then return nil end
  return { tonumber(info[0]), tonumber(info[1]) }
end

describe("the allocator's canaries", function()
  before_each(function() C.lt_debug_canaries(1); damage() end)
  after_each(function() C.lt_debug_canaries(0); torch.collect(); damage() end)

  for _, n in ipairs({ 3, 5000, 100000 }) do   -- a small block, a malloc'd one, a mapped one
    it(("report a write past the end of %d floats, and before their start"):format(n), function()
      local t = torch.zeros(n)
      local p = ffi.cast("uint8_t *", t:data_ptr())
      assert.is_nil(damage())
      p[4 * n + 5] = 0
      assert.are.same({ 4 * n, 4 * n + 5 }, damage())
      assert.are.same({ 4 * n, 4 * n + 5 }, damage(), "a damaged block still live is found again")
      p[4 * n + 5] = 0xcb
      assert.is_nil(damage())
      p[-1] = p[-1] + 1
      assert.are.same({ 4 * n, -8 }, damage())
      p[-1] = p[-1] - 1
      assert.is_nil(damage())
    end)
  end

  it("report a block damaged and released before the check", function()
    local t = torch.zeros(10, { dtype = torch.int64 })
    ffi.cast("uint8_t *", t:data_ptr())[80] = 1
    t:free()
    assert.are.same({ 80, 80 }, damage())
    assert.is_nil(damage())
  end)

  it("leave tensor contents, sizes and the live byte count as they are", function()
    local live = torch.memory_stats().live_bytes
    local t = torch.arange(1000)
    assert.are.equal(8000, torch.memory_stats().live_bytes - live)
    assert.are.equal(499500, t:sum():item())
    t:free()
    assert.is_nil(damage())
  end)
end)

describe("tools/api_fuzz.lua --canaries", function()
  it("exits 3 naming the call that wrote out of bounds", function()
    local ltorch = arg and arg[-1] or "build/ltorch"
    local prelude = 'local ffi = require "ffi"; local torch = require "torch"; '
      .. 'torch.logaddexp = function() local t = torch.zeros(4); ffi.cast("float *", t:data_ptr())[4] = 1; return t end'
    local p = assert(io.popen(("timeout -s KILL 60 %s -e %q tools/api_fuzz.lua --only logaddexp --canaries "
      .. "--calls 50 --seconds 30 --seed 3 2>/dev/null; echo rc=$?"):format(ltorch, prelude)))
    local out = p:read("*a")
    p:close()
    assert.matches("rc=3%s*$", out)
    assert.matches("api_fuzz: memory written out of bounds %(a block of 16 bytes, at offset 16%) by call %d+: "
      .. "function logaddexp%(", out)
  end)

  it("stays quiet on calls that keep to their memory", function()
    local ltorch = arg and arg[-1] or "build/ltorch"
    local p = assert(io.popen(("timeout -s KILL 60 %s tools/api_fuzz.lua --only logaddexp --canaries "
      .. "--calls 300 --seconds 30 --seed 3 2>/dev/null; echo rc=$?"):format(ltorch)))
    local out = p:read("*a")
    p:close()
    assert.matches("rc=0%s*$", out)
    assert.matches("api_fuzz: 300 calls", out, 1, true)
  end)
end)
