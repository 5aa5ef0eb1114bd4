--[[
  spec/runtime/ffi_headers_spec.lua — each C ABI the runtime offers the Lua side has one
  declaration: a header that the C file includes and whose cdef region the build embeds
  (cmake/embed_cdef.cmake) for the Lua module's ffi.cdef.
    runtime/ltorch_workers.h  ltw_*    runtime/workers.c  lua/torch/data/_pool.lua
    runtime/ltorch_image.h    ltimg_*  runtime/image.c    lua/torch/data/image.lua

  Covers, for each: the C file includes the header, defines every function it declares and
  declares every function of that prefix it exports; the running executable's
  <prefix>_cdef_source() is the header's region (a stale build fails here); no Lua file writes a
  declaration of that prefix by hand; the worker status codes _pool.lua exports come from the
  header's enums.

  Run: build/ltorch /usr/bin/busted spec/runtime/ffi_headers_spec.lua
]]
local ffi = require "ffi"

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/runtime/[^/]*$") or ".")

local HEADERS = {
  { header = "ltorch_workers.h", source = "workers.c", marker = "LTW_CDEF", prefix = "ltw",
    module = "torch.data._pool" },
  { header = "ltorch_image.h", source = "image.c", marker = "LTIMG_CDEF", prefix = "ltimg",
    module = "torch.data.image" },
}

local function read(path)
  local f = assert(io.open(ROOT .. "/" .. path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function region_of(h)
  local text = read("runtime/" .. h.header)
  return assert(text:match("(/%* " .. h.marker .. "_BEGIN %*/.-)/%* " .. h.marker .. "_END %*/"),
    h.header .. ": no " .. h.marker .. " region")
end

-- The names of the `<prefix>_*` functions a C text declares or defines at file scope.
local function functions(text, prefix, defined_only)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local name = line:match("^[%a_][%w_ %*]-[%s%*](" .. prefix .. "_[%w_]+)%s*%(")
    if name and not line:match("^static") and not line:match("^typedef") then
      if not defined_only or not line:match(";%s*$") then out[name] = true end
    end
  end
  return out
end

for _, h in ipairs(HEADERS) do
  describe("runtime/" .. h.header, function()
    local region = region_of(h)

    it("is included by " .. h.source .. ", which defines what it declares and declares what it exports", function()
      local src = read("runtime/" .. h.source)
      assert.truthy(src:find('#include "' .. h.header .. '"', 1, true))
      local declared, defined = functions(region, h.prefix), functions(src, h.prefix, true)
      assert.is_true(declared[h.prefix .. "_cdef_source"])
      declared[h.prefix .. "_cdef_source"] = nil   -- defined by the generated <build>/gen/*_cdef_gen.c
      assert.is_true(next(declared) ~= nil)
      assert.are.same(declared, defined)
    end)

    it("is what the running executable hands to ffi.cdef (the build is current)", function()
      require(h.module)
      assert.are.equal(region, ffi.string(ffi.C[h.prefix .. "_cdef_source"]()))
    end)

    it("is declared nowhere else: no Lua file writes a " .. h.prefix .. "_* declaration", function()
      local hits = {}
      local p = assert(io.popen("cd '" .. ROOT .. "' && grep -rl '" .. h.prefix .. "_' lua --include=*.lua"))
      for path in p:lines() do
        for line in read(path):gmatch("[^\n]+") do
          local declares = line:match("struct " .. h.prefix .. "_")
            or (line:match("^%s*[%a_][%w_ %*]-[%s%*]" .. h.prefix .. "_[%w_]+%s*%(")
              and not line:match(h.prefix .. "_cdef_source"))
          if declares then hits[#hits + 1] = path .. ": " .. line end
        end
      end
      p:close()
      assert.are.same({}, hits)
    end)
  end)
end

describe("torch.data._pool's status codes", function()
  it("come from ltorch_workers.h's enums", function()
    local pool = require "torch.data._pool"
    assert.are.same({ 0, 1, 2, 3, 4, 1, 2 },
      { pool.OK, pool.TIMEOUT, pool.ERROR, pool.DEAD, pool.SHUTDOWN, pool.RESULT_ERROR, pool.RESULT_END })
    assert.truthy(region_of(HEADERS[1]):find("LTW_DEAD = 3", 1, true))
  end)
end)
