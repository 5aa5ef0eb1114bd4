--[[
  torch._pywrap — helpers for torch.* functions that PyTorch writes in Python (torch.unique,
  torch.lu, torch.broadcast_shapes, ...) and ltorch writes in Lua over the generated ops
  (internal). They bind arguments with PyTorch's signature (torch._pysig) and make every error,
  the binder's or an op's, blame the user's line rather than the library's.

      local W = require "torch._pywrap"
      local SIG = P.signature("unique", "input, sorted=True, return_inverse=False, ...")
      function M.unique(...)
        local a = W.bind(SIG, 2, ...)            -- errors blame the caller of M.unique
        W.bool(SIG, a, "sorted", 2)              -- a.sorted must be a boolean
        return W.call(2, generated_op, a.input, {...})   -- an op error blames that caller too
      end
]]
local P = require "torch._pysig"
local T = require "torch._tensor"
local args = require "torch._args"

local M = {}

-- The generated function torch.<name> (the dispatcher's, not a fast path), looked up once.
local ops = {}
function M.op(name)
  local f = ops[name]
  if f == nil then
    f = assert(require("torch._dispatch").function_for(name, "torch." .. name), name)
    ops[name] = f
  end
  return f
end

-- The message of an error raised inside the library, without its "file:line: " position.
function M.bare(msg)
  if type(msg) ~= "string" then return msg end
  return (msg:gsub("^[^\n]-%.lua:%d+: ", "", 1))
end
local bare = M.bare

-- Binds (...) to sig with its defaults filled (torch._pysig.bind); misuse blames `level`.
function M.bind(sig, level, ...)
  local ok, a = pcall(P.bind, sig, ...)
  if not ok then error(bare(a), level + 1) end
  return a
end

local function results(level, ok, ...)
  if not ok then error(bare((...)), level + 1) end   -- results replaced call (a tail call)
  return ...
end

-- fn(...), with an error it raises re-raised at `level` (counted from the caller of call).
function M.call(level, fn, ...)
  return results(level, pcall(fn, ...))
end

-- Checks that a[name] is a boolean (Python's bool).
function M.bool(sig, a, name, level)
  local v = a[name]
  if type(v) ~= "boolean" then
    error(("%s(): argument '%s' must be bool, not %s"):format(sig.name, name, args.typename(v)), level + 1)
  end
  return v
end

-- Checks that a[name] is a live Tensor; returns it.
function M.tensor(sig, a, name, level)
  local v = a[name]
  if not T.is_tensor(v) then
    error(("%s(): argument '%s' must be Tensor, not %s"):format(sig.name, name, args.typename(v)), level + 1)
  end
  if v.h == nil then
    error(sig.name .. ": tensor was freed (x:free() or a finished torch.scope) and can no longer be used", level + 1)
  end
  return v
end

-- Checks that a[name] is an integer, or nil when optional; returns it.
function M.int(sig, a, name, level, optional)
  local v = a[name]
  if v == nil and optional then return nil end
  if not args.is_int(v) then
    error(("%s(): argument '%s' must be int, not %s"):format(sig.name, name,
      type(v) == "number" and "float" or args.typename(v)), level + 1)
  end
  return v
end

return M
