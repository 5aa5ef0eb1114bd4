--[[
  torch._warnings — libtorch's warnings (TORCH_WARN) printed like Python's default warning
  filter prints PyTorch's: each distinct warning once per call site of the user's code, not once
  per call (a warning inside a training step used to print on every step).

      torch.set_warn_always(true)      -- every warning, every time (PyTorch's semantics: libtorch's
                                       -- TORCH_WARN_ONCE warnings repeat too)
      torch.is_warn_always_enabled()   --> true

  How: the bindings install a warning handler on the Lua thread (bindings/lt_warnings.cpp). Under
  the ltorch runtime, _LTORCH.watch_warnings (runtime/warnings.c) has it queue each warning and
  arm a debug hook that finds the user's "file:line" and prints the warning once there; under a
  bare LuaJIT each distinct warning prints once. Warnings of a backward pass go to the line that
  called backward(). Threads without a Lua state keep libtorch's own printing.

  Usage (internal): require("torch._warnings").install(torch), done by torch/init.lua.
]]
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local args = require "torch._args"

local C, check = _C.C, _C.check
local M = {}

-- This thread's warnings go through ltorch's handler (loading torch on a thread does this).
-- Bindings built before lt_warnings.cpp lack the call: libtorch's own printing stays.
function M.watch()
  local host = rawget(_G, "_LTORCH")
  if type(host) == "table" and type(host.watch_warnings) == "function" then
    host.watch_warnings()
  elseif pcall(function() return C.lt_warnings_enable end) then
    check(C.lt_warnings_enable(), "torch")
  end
end

local SET_WARN_ALWAYS = P.signature("set_warn_always", "b")
function M.set_warn_always(...)
  local a = W.bind(SET_WARN_ALWAYS, 2, ...)
  if type(a.b) ~= "boolean" then
    error("set_warn_always: expects a bool, but got " .. args.typename(a.b), 2)
  end
  check(C.lt_set_warn_always(a.b and 1 or 0), "set_warn_always")
end

local int_out = _C.IntOut()
local IS_WARN_ALWAYS = P.signature("is_warn_always_enabled", "")
function M.is_warn_always_enabled(...)
  W.bind(IS_WARN_ALWAYS, 2, ...)
  check(C.lt_get_warn_always(int_out), "is_warn_always_enabled")
  return int_out[0] ~= 0
end

--[[ warn(msg, level, category): a warning raised by the library's Lua code, printed like Python's
     warnings.warn(msg, category, stacklevel): once per message and call site, every time under
     set_warn_always(true). The call site is the function at `level` (counted as error's levels
     from warn's caller), or with no level the first frame outside ltorch's library (the user's
     line, however deep the library's own calls). category: "UserWarning" (default),
     "FutureWarning", "DeprecationWarning". ]]
local printed = {}

local function user_frame()
  for level = 3, 60 do
    local info = debug.getinfo(level, "Sl")
    if info == nil then return nil end
    if info.what ~= "C" and not info.source:find("/lua/torch/", 1, true) and not info.source:find("^@lua/torch/")
      and info.currentline > 0 then
      return info
    end
  end
  return nil
end

function M.warn(msg, level, category)
  local info = level and debug.getinfo(level + 1, "Sl") or user_frame()
  local site = info and info.currentline > 0 and (info.short_src .. ":" .. info.currentline) or nil
  local key = (site or "") .. "\n" .. msg
  local ok, always = pcall(M.is_warn_always_enabled)
  if printed[key] and not (ok and always) then return end
  printed[key] = true
  io.stderr:write(site and (site .. ": ") or "", category or "UserWarning", ": ", msg, "\n")
end

function M.install(torch)
  M.watch()
  torch.set_warn_always = M.set_warn_always
  torch.is_warn_always_enabled = M.is_warn_always_enabled
end

return M
