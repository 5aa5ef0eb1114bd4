--[[
  torch.nn._layer_util — small helpers shared by the layer families (conv, pooling,
  normalization, dropout, sparse, bilinear); internal, not part of nn's public surface.

  - args(fname, names, ...): PyTorch-style constructor arguments. Positional values fill
    `names` in order; a trailing keyword table (string keys, no array part) fills the rest by
    name. `nn.Conv2d(3, 16, 3, 1, 1)` and `nn.Conv2d(3, 16, 3, {padding = 1})` read the same.
    `false` stands for Python's None where a setting can be None (BatchNorm's momentum).
  - ntuple(fname, what, v, n): an int or a table of n ints -> a Lua array of n ints
    (PyTorch's _pair/_single).
  - pyrepr(v): a Lua value written as Python's repr would write the PyTorch attribute:
    floats as `1e-05`/`0.1`/`1.0`, tables as tuples `(5, 5)`/`(3,)`, booleans `True`/`False`,
    nil/false-as-None `None`.
  - shape(x): "[8, 1, 28, 28]"; guard(label, fn, ...): calls a functional op, and prefixes any
    libtorch error with the module's label so the user sees which layer failed.
  - fail(msg): every error of the layer files goes through it; it blames the user's line.

  Usage (internal):  local U = require "torch.nn._layer_util"
]]
local torch = require "torch"

local M = {}

local floor = math.floor

--[[ Raises msg blaming the first caller outside lua/torch/nn/: the user's line that built or
     called the module, however many layer-internal (or tail-called) frames lie between, and
     the torch.scope (lua/torch/_scope.lua, its pcall) a module's forward may run inside
     (torch.nn._release). ]]
local function inside(level)   -- level as M.fail counts it (this function's frame is one more)
  level = level + 1
  local info = debug.getinfo(level, "S")
  if info == nil then return false end
  if info.source:find("torch/nn/[%w_]+%.lua$") or info.source:find("torch/_scope%.lua$") then return true end
  if info.what ~= "C" then return false end
  local up = debug.getinfo(level + 1, "S")   -- torch.scope's pcall, not a caller's
  return up ~= nil and up.source:find("torch/_scope%.lua$") ~= nil
end
function M.fail(msg)
  local level = 2
  while inside(level) do level = level + 1 end
  error(msg, level)
end

local function is_int(v) return type(v) == "number" and floor(v) == v end
M.is_int = is_int

local function is_keywords(v)
  return type(v) == "table" and getmetatable(v) == nil and v[1] == nil
    and not torch.is_tensor(v)
end

--[[ Reads constructor arguments after the required ones. `names` lists the optional
     parameters in PyTorch's order. Returns a table name -> value.
     Meant to be called from a class's __init: errors blame the line that built the module. ]]
function M.args(fname, names, ...)
  local n = select("#", ...)
  local vals = { ... }
  local kw = nil
  if n > 0 and is_keywords(vals[n]) then kw, n = vals[n], n - 1 end
  if n > #names then
    M.fail(("%s: takes at most %d optional positional arguments, got %d"):format(fname, #names, n))
  end
  local out, known = {}, {}
  for i, name in ipairs(names) do
    known[name] = true
    if i <= n then out[name] = vals[i] end
  end
  if kw then
    for k, v in pairs(kw) do
      if not known[k] then M.fail(("%s: unknown option '%s'"):format(fname, tostring(k))) end
      if out[k] ~= nil then M.fail(("%s: got multiple values for argument '%s'"):format(fname, k)) end
      out[k] = v
    end
  end
  return out
end

-- Like PyTorch's _single/_pair: v is an int, or a table of exactly n ints.
function M.ntuple(fname, what, v, n)
  if is_int(v) then
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  if type(v) == "table" and #v == n then
    local t = {}
    for i = 1, n do
      if not is_int(v[i]) then break end
      t[i] = v[i]
    end
    if #t == n then return t end
  end
  M.fail(("%s: %s must be an integer or a table of %d integers, got %s"):format(fname, what, n, M.pyrepr(v)))
end

-- Python's repr(float): shortest round-tripping digits; scientific below 1e-4 or from 1e16.
function M.pyfloat(v)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  if v == 0 then return (1 / v < 0) and "-0.0" or "0.0" end
  local s
  for p = 1, 17 do
    s = ("%." .. (p - 1) .. "e"):format(v)
    if tonumber(s) == v then break end
  end
  local sign, mant, exp = s:match("^(-?)([%d%.]+)e([-+]%d+)$")
  exp = tonumber(exp)
  local digits = mant:gsub("%.", "")
  if exp < -4 or exp >= 16 then
    local m = digits:sub(1, 1) .. (#digits > 1 and ("." .. digits:sub(2)) or "")
    return ("%s%se%s%02d"):format(sign, m, exp < 0 and "-" or "+", math.abs(exp))
  end
  if exp < 0 then return sign .. "0." .. ("0"):rep(-exp - 1) .. digits end
  if #digits <= exp + 1 then return sign .. digits .. ("0"):rep(exp + 1 - #digits) .. ".0" end
  return sign .. digits:sub(1, exp + 1) .. "." .. digits:sub(exp + 2)
end

-- repr of a setting as PyTorch prints it. `as_float`: a number is a Python float (eps, p).
function M.pyrepr(v, as_float)
  local t = type(v)
  if v == nil or v == false and as_float then return "None" end
  if t == "boolean" then return v and "True" or "False" end
  if t == "number" then
    if is_int(v) and not as_float then return ("%d"):format(v) end
    return M.pyfloat(v)
  end
  if t == "string" then return v end
  if t == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = M.pyrepr(v[i], as_float) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  end
  return tostring(v)
end

function M.shape(x) return "[" .. table.concat(x:size(), ", ") .. "]" end

-- Errors for non-Tensor and non-floating inputs, named after the module.
function M.check_float_input(label, x)
  if not torch.is_tensor(x) then
    M.fail(("%s: expected a Tensor input, got %s"):format(label, type(x)))
  end
  if not x:is_floating_point() then
    M.fail(("%s: expected a floating-point input, got %s of shape %s"):format(label,
      (tostring(x.dtype):gsub("^torch%.", "")), M.shape(x)))
  end
end

-- Re-raises a caught error as "<label>: <message>" (dropping its "file:line: " prefix).
function M.rethrow(label, err)
  M.fail(label .. ": " .. (tostring(err):gsub("^[^\n]-:%d+: ", "")))
end

-- Calls fn(...) (one result) and re-raises a failure with the module's label.
function M.guard(label, fn, ...)
  local ok, out = pcall(fn, ...)
  if ok then return out end
  M.rethrow(label, out)
end

-- A pooling layer's input: (N, C, *spatial) or (C, *spatial), with d spatial dims.
local SPATIAL = { [1] = "L", [2] = "H, W", [3] = "D, H, W" }
function M.check_pooling_input(label, x, d)
  if not torch.is_tensor(x) then M.fail(("%s: expected a Tensor input, got %s"):format(label, type(x))) end
  if x:dim() ~= d + 1 and x:dim() ~= d + 2 then
    M.fail(("%s: expected input of shape (N, C, %s) or (C, %s), got %s"):format(label, SPATIAL[d], SPATIAL[d],
      M.shape(x)))
  end
end

-- A layer's input must be a Tensor: "<name>: expected a Tensor input, got <type>" at the user's line.
function M.check_tensor(name, x)
  if not torch.is_tensor(x) then M.fail(("%s: expected a Tensor input, got %s"):format(name, type(x))) end
end

-- Registers self.bias as a Parameter of n elements (factory options f), or as nil without bias,
-- as PyTorch's layers do (the key then stays out of the state_dict).
function M.optional_bias(self, has_bias, n, f)
  if has_bias then
    self.bias = require("torch.nn.module").Parameter(torch.empty(n, f))
  else
    self:register_parameter("bias", nil)
  end
end

-- The repr line of a pooling window: "kernel_size=.., stride=.., padding=..".
function M.window_repr(self)
  return ("kernel_size=%s, stride=%s, padding=%s"):format(M.pyrepr(self.kernel_size), M.pyrepr(self.stride),
    M.pyrepr(self.padding))
end

return M
