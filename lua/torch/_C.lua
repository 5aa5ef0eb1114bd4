--[[
  torch._C — the FFI seam to libltorch_bindings: declares the C ABI once per Lua state and
  gives the rest of the library `C` (the namespace), `check` (turns a failed status into a Lua
  error carrying libtorch's message), and the tensor handle type.

  The declarations come from the library itself (lt_cdef_source() returns the LT_CDEF region of
  bindings/lt.h, embedded at build time), so there is exactly one copy of the ABI.

  A tensor in Lua is an `lt_tensor_ref` struct cdata holding one C handle. Its metatable (set
  once, in torch.tensor) frees the handle when the cdata is collected; `x:free()` frees it early
  and nulls the field, after which any use raises "tensor was freed".

  Test runners such as busted reload modules per spec file. ffi.cdef and ffi.metatype may run only
  once per state, so the declared state is kept in the Lua registry and reused on reload.

  Usage (internal):  local _C = require "torch._C"; local C, check = _C.C, _C.check
]]
local ffi = require "ffi"

local registry = debug.getregistry()
local state = registry["ltorch._C"]

if not state then
  ffi.cdef [[ const char *lt_cdef_source(void); ]]
  local ok, source = pcall(function() return ffi.string(ffi.C.lt_cdef_source()) end)
  if not ok then
    error("torch: the ltorch bindings are not loaded in this process (" .. tostring(source) ..
      "); run scripts with the `ltorch` executable, or load libltorch_bindings first", 0)
  end
  ffi.cdef(source)
  ffi.cdef [[ typedef struct lt_tensor_ref { lt_tensor *h; } lt_tensor_ref; ]]
  state = { metatype_set = false }
  registry["ltorch._C"] = state
end

local C = ffi.C
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
