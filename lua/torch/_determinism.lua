--[[
  torch._determinism — the switches of libtorch's global context that PyTorch sets from torch.*
  (bindings/lt_context.cpp): deterministic algorithms and the float32 matmul precision.

      torch.use_deterministic_algorithms(true)                    -- nondeterministic ops raise
      torch.use_deterministic_algorithms(true, {warn_only = true}) -- ... or warn
      torch.are_deterministic_algorithms_enabled()               --> true
      torch.is_deterministic_algorithms_warn_only_enabled()      --> true
      torch.set_deterministic_debug_mode("warn")                 -- 0/"default", 1/"warn", 2/"error"
      torch.get_deterministic_debug_mode()                       --> 1
      torch.set_float32_matmul_precision("high")                 -- "highest" (default), "high", "medium"
      torch.get_float32_matmul_precision()                       --> "high"

  Process-wide, as in PyTorch. One difference: PyTorch only warns (and changes nothing) for an
  unknown precision name; here it is an error.

  Usage (internal): require("torch._determinism").install(torch), done by torch/init.lua.
]]
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local args = require "torch._args"

local C, check = _C.C, _C.check
local M = {}

local on_out, warn_out = _C.IntOut(), _C.IntOut()
local function state()
  check(C.lt_get_deterministic(on_out, warn_out), "are_deterministic_algorithms_enabled", 3)
  return on_out[0] ~= 0, warn_out[0] ~= 0
end

local USE = P.signature("use_deterministic_algorithms", "mode, *, warn_only=False")
function M.use_deterministic_algorithms(...)
  local a = W.bind(USE, 2, ...)
  W.bool(USE, a, "mode", 2)
  W.bool(USE, a, "warn_only", 2)
  check(C.lt_set_deterministic(a.mode and 1 or 0, a.warn_only and 1 or 0), "use_deterministic_algorithms")
end

local ARE = P.signature("are_deterministic_algorithms_enabled", "")
function M.are_deterministic_algorithms_enabled(...)
  W.bind(ARE, 2, ...)
  return (state())
end

local WARN_ONLY = P.signature("is_deterministic_algorithms_warn_only_enabled", "")
function M.is_deterministic_algorithms_warn_only_enabled(...)
  W.bind(WARN_ONLY, 2, ...)
  local _, warn_only = state()
  return warn_only
end

local MODES = { default = 0, warn = 1, error = 2 }
local SET_MODE = P.signature("set_deterministic_debug_mode", "debug_mode")
function M.set_deterministic_debug_mode(...)
  local mode = W.bind(SET_MODE, 2, ...).debug_mode
  if type(mode) == "string" then
    if MODES[mode] == nil then
      error("set_deterministic_debug_mode: invalid value of debug_mode, expected one of `default`, `warn`, " ..
        "`error`, but got " .. mode, 2)
    end
    mode = MODES[mode]
  elseif not args.is_int(mode) then
    error("set_deterministic_debug_mode: debug_mode must be str or int, but got " .. args.typename(mode), 2)
  end
  if mode ~= 0 and mode ~= 1 and mode ~= 2 then
    error("set_deterministic_debug_mode: invalid value of debug_mode, expected 0, 1, or 2, but got " .. mode, 2)
  end
  check(C.lt_set_deterministic(mode == 0 and 0 or 1, mode == 1 and 1 or 0), "set_deterministic_debug_mode")
end

local GET_MODE = P.signature("get_deterministic_debug_mode", "")
function M.get_deterministic_debug_mode(...)
  W.bind(GET_MODE, 2, ...)
  local on, warn_only = state()
  if not on then return 0 end
  return warn_only and 1 or 2
end

local PRECISIONS = { [0] = "highest", "high", "medium" }
local SET_PRECISION = P.signature("set_float32_matmul_precision", "precision")
function M.set_float32_matmul_precision(...)
  local p = W.bind(SET_PRECISION, 2, ...).precision
  if p ~= "highest" and p ~= "high" and p ~= "medium" then
    error(("set_float32_matmul_precision: %s is not one of 'highest', 'high', or 'medium'"):format(
      type(p) == "string" and ("'" .. p .. "'") or args.typename(p)), 2)
  end
  check(C.lt_set_float32_matmul_precision(p), "set_float32_matmul_precision")
end

local precision_out = _C.IntOut()
local GET_PRECISION = P.signature("get_float32_matmul_precision", "")
function M.get_float32_matmul_precision(...)
  W.bind(GET_PRECISION, 2, ...)
  check(C.lt_get_float32_matmul_precision(precision_out), "get_float32_matmul_precision")
  return PRECISIONS[precision_out[0]]
end

function M.install(torch)
  for _, name in ipairs { "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision" } do
    torch[name] = M[name]
  end
end

return M
