--[[
  torch.data.image — decode PNG/JPEG bytes into uint8 tensors, and write PNGs.

  Why: ImageFolder (and any image pipeline) needs a decoder; runtime/image.c compiles stb_image
  (Debian libstb-dev) into the ltorch executable and this module reaches it through the FFI.
  Decoding is thread-safe (per-thread error slot), so DataLoader workers decode in parallel.

  What:
    decode(bytes, {channels = 0|1|3|4, name = "file.png"}) -> uint8 tensor (H, W, C)
        channels = 0 keeps the file's own count; `name` only labels errors:
        "file.png: cannot decode image (bad png sig)"
    read(path, opts)          -> decode(contents of path) with errors naming the path
    write_png(path, x)        x: uint8 (H, W) or (H, W, C), C in 1..4

  Use:  local img = require "torch.data.image"; local x = img.read("cat.png", {channels = 3})
]]
local ffi = require "ffi"

-- The declarations are runtime/ltorch_image.h's LTIMG_CDEF region, embedded in the runtime at
-- build time (cmake/embed_cdef.cmake): one copy of the ABI, as torch._C does for bindings/lt.h.
local registry = debug.getregistry()
if not registry["ltorch.data.image"] then
  ffi.cdef [[ const char *ltimg_cdef_source(void); ]]
  local ok, src = pcall(function() return ffi.C.ltimg_cdef_source() end)
  if not ok then
    error("torch.data.image: image decoding needs the ltorch runtime (the `ltorch` executable or " ..
      "libltorch), which this process lacks (no ltimg_cdef_source)", 0)
  end
  ffi.cdef(ffi.string(src))
  registry["ltorch.data.image"] = true
end

local C = ffi.C
local M = {}

local w_, h_, c_ = ffi.new("int[1]"), ffi.new("int[1]"), ffi.new("int[1]")
local px = ffi.new("unsigned char*[1]")
local vp = ffi.new("void*[1]")

function M.decode(bytes, opts)
  opts = opts or {}
  local torch = require "torch"
  if type(bytes) ~= "string" then
    error("bad argument #1 to 'decode' (string of encoded bytes expected, got " .. type(bytes) .. ")", 2)
  end
  if C.ltimg_decode(bytes, #bytes, opts.channels or 0, w_, h_, c_, px) ~= 0 then
    error(("%s: cannot decode image (%s)"):format(opts.name or "image", ffi.string(C.ltimg_error())), 2)
  end
  local h, w, c = h_[0], w_[0], c_[0]
  local x = torch.empty({ h, w, c }, { dtype = torch.uint8 })
  C.lt_tensor_data_ptr(x.h, vp)
  ffi.copy(vp[0], px[0], h * w * c)
  C.ltimg_free(px[0])
  return x
end

function M.read(path, opts)
  local f, why = io.open(path, "rb")
  if not f then error("image.read: " .. why, 2) end
  local bytes = f:read("*a")
  f:close()
  local o = { channels = opts and opts.channels, name = path }
  local ok, x = pcall(M.decode, bytes, o)
  if not ok then error(x, 2) end
  return x
end

function M.write_png(path, x)
  local torch = require "torch"
  if x:dim() == 2 then x = x:unsqueeze(2) end
  x = x:contiguous()
  if x.dtype ~= torch.uint8 then error("write_png: uint8 tensor expected, got " .. tostring(x.dtype), 2) end
  C.lt_tensor_data_ptr(x.h, vp)
  if C.ltimg_write_png(path, x:size(1), x:size(0), x:size(2), vp[0]) ~= 0 then
    error("write_png: " .. ffi.string(C.ltimg_error()), 2)
  end
end

return M
