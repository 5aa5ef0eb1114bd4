--[[
  torch._C — the FFI seam to libltorch_bindings: declares the C ABI once per Lua state and
  gives the rest of the library `C` (the namespace), `check` (turns a failed status into a Lua
  error carrying libtorch's message), and the tensor handle type.

  The declarations come from the library itself (lt_cdef_source() returns the LT_CDEF region of
  bindings/lt.h, embedded at build time), so there is exactly one copy of the ABI. The `ltorch`
  executable and embedding hosts have the library loaded already (ffi.C); under a stock luajit
  this module loads it (see load_bindings), so `luajit -e 'require "torch"'` works too.

  A tensor in Lua is an `lt_tensor_ref` struct cdata holding one C handle and its slot in the
  state's slab (torch._memory, which releases the handle once the collector has freed the ref);
  `x:free()` frees it early and nulls the field, after which any use raises "tensor was freed".

  Test runners such as busted reload modules per spec file. ffi.cdef and ffi.metatype may run only
  once per state, so the declared state is kept in the Lua registry and reused on reload.

  Usage (internal):  local _C = require "torch._C"; local C, check = _C.C, _C.check
]]
local ffi = require "ffi"

local registry = debug.getregistry()
local state = registry["ltorch._C"]

-- Under a stock luajit nothing has loaded the bindings: load them globally (so ffi.C sees them
-- too) from $LTORCH_BINDINGS, beside this file's install prefix or build tree, package.cpath
-- (LuaRocks), or the linker's search path. Returns the namespace, or nil and the reasons.
local function load_bindings()
  local dir = (debug.getinfo(1, "S").source:match("^@(.*)/torch/_C%.lua$") or ".")
  local candidates = {
    os.getenv("LTORCH_BINDINGS"),
    dir .. "/../../../lib/libltorch_bindings.so",   -- <prefix>/share/ltorch/lua
    dir .. "/../build/libltorch_bindings.so",       -- <repo>/lua
    package.searchpath and package.searchpath("libltorch_bindings", package.cpath),
    "ltorch_bindings",
  }
  local errors = {}
  for i = 1, table.maxn(candidates) do
    local name = candidates[i]
    if name then
      local ok, lib = pcall(ffi.load, name, true)
      if ok then return lib end
      errors[#errors + 1] = tostring(lib)
    end
  end
  return nil, table.concat(errors, "; ")
end

if not state then
  ffi.cdef [[ const char *lt_cdef_source(void); ]]
  local lib = ffi.C
  if not pcall(function() return lib.lt_cdef_source end) then
    local err
    lib, err = load_bindings()
    if not lib then
      error("torch: cannot load libltorch_bindings (" .. err .. "); run scripts with the `ltorch` " ..
        "executable, or set LTORCH_BINDINGS to the library's path", 0)
    end
  end
  ffi.cdef(ffi.string(lib.lt_cdef_source()))
  ffi.cdef [[ typedef struct lt_tensor_ref { lt_tensor *h; int32_t slot; } lt_tensor_ref; ]]
  -- Release ids (torch._memory.hold_blob) count up from serial * 2^32: unique per process.
  state = { metatype_set = false, lib = lib,
            next_blob_id = tonumber(lib.lt_next_state_serial()) * 2 ^ 32 }
  state.blob_id_lo, state.blob_id_hi = state.next_blob_id, state.next_blob_id + 2 ^ 32
  registry["ltorch._C"] = state
end

local C = state.lib
local M = { C = C, state = state }

M.Ref = ffi.typeof("lt_tensor_ref")
M.TensorOut = ffi.typeof("lt_tensor*[1]")
M.Int64Array = ffi.typeof("int64_t[?]")
M.IntOut = ffi.typeof("int[1]")
M.Int64Out = ffi.typeof("int64_t[1]")
M.DoubleOut = ffi.typeof("double[1]")
M.Options = ffi.typeof("lt_options")
M.TensorArray = ffi.typeof("const lt_tensor*[?]")

-- Raises a Lua error for a failed status, naming the operation the user called.
-- `level` defaults to blaming the caller of the function that called check.
function M.check(status, what, level)
  if status ~= 0 then
    error(what .. ": " .. ffi.string(C.lt_last_error()), (level or 2) + 1)
  end
end

function M.last_error()
  return ffi.string(C.lt_last_error())
end

return M
