--[[
  torch._ops_math — elementwise math as Tensor methods and torch functions: unary ops (exp,
  log, sqrt, tanh, sigmoid, relu, ...), binary ops with broadcasting (add/sub with alpha, mul,
  div with rounding_mode, pow, remainder, comparisons eq/ne/lt/le/gt/ge, maximum/minimum,
  logical and bitwise ops), their in-place `_` forms (which return the tensor itself), clamp,
  where, masked_fill, lerp, leaky_relu, allclose, equal — and the Lua operators.

  Either operand of a binary op may be a Lua number (`2 - x`, `x:mul(0.5)`) where PyTorch's
  binding takes a Python number (not atan2/maximum/minimum/logical_*, nor the first operand of
  eq/ne/lt/le/gt/ge/fmod); integral numbers count as Python ints for type promotion (see torch._args).

  Usage:  x:add(y, {alpha = 2}); torch.mul(x, 3); x:clamp({min = 0}); x:eq(y); (x * y):sum()
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local T = require "torch._tensor"
local fallback = require "torch._fallback"

local C, check, Ref = _C.C, _C.check, _C.Ref
local wrap, reclaim = memory.wrap, memory.reclaim
local Tensor, operators = T.Tensor, T.operators
local istype, scalar = ffi.istype, args.scalar

local M = {}
local out = _C.TensorOut()
local int_out = _C.IntOut()

local unary_ops = {
  "neg", "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
  "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "floor", "ceil",
  "round", "trunc", "frac", "sign", "reciprocal", "square", "erf", "logical_not", "bitwise_not",
  "isnan", "isinf", "isfinite", "silu", "gelu",
}
local no_inplace = { isnan = true, isinf = true, isfinite = true, gelu = true }

for code, name in ipairs(unary_ops) do
  code = code - 1  -- lt_unary_op numbering starts at LT_NEG = 0
  local function op(self, ...)
    if select("#", ...) > 0 then return fallback.call(name, self, ...) end
    if not istype(Ref, self) then args.bad(name, 1, "Tensor", args.typename(self)) end
    local s = C.lt_unary(out, code, self.h)
    if s ~= 0 and reclaim(s) then s = C.lt_unary(out, code, self.h) end   -- out of memory: retry once
    check(s, name)
    return wrap(out[0])
  end
  Tensor[name], M[name] = op, op
  if not no_inplace[name] then
    local iname = name .. "_"
    local function op_(self, ...)
      if select("#", ...) > 0 then return fallback.call(iname, self, ...) end
      if not istype(Ref, self) then args.bad(iname, 1, "Tensor", args.typename(self)) end
      check(C.lt_unary_(code, self.h), iname)
      return self
    end
    Tensor[iname], M[iname] = op_, op_
  end
end
Tensor.negative, M.negative = Tensor.neg, M.neg

local binary_codes = {
  add = 0, sub = 1, mul = 2, div = 3, pow = 4, remainder = 5, fmod = 6, floor_divide = 7,
  eq = 8, ne = 9, lt = 10, le = 11, gt = 12, ge = 13, maximum = 14, minimum = 15, atan2 = 16,
  logical_and = 17, logical_or = 18, logical_xor = 19, bitwise_and = 20, bitwise_or = 21,
  bitwise_xor = 22,
}
local with_alpha = { add = true, sub = true }
local no_binary_inplace = { maximum = true, minimum = true }
-- Where PyTorch's binding takes no Python number (a TypeError there): both operands of these
-- (`atan2(Tensor input, Tensor other)`), and the first operand of these (they have a Scalar
-- `other` overload, `torch.eq(x, 2)`, but no Scalar `input` one: `torch.eq(2, x)` is refused).
local tensor_operands = { atan2 = true, maximum = true, minimum = true,
  logical_and = true, logical_or = true, logical_xor = true }
local tensor_input = { eq = true, ne = true, lt = true, le = true, gt = true, ge = true, fmod = true }
local function not_a_number(name, n, v)
  args.bad(name, n, "Tensor", ("number; PyTorch's binding takes a Tensor here: write torch.tensor(%s)")
    :format(tostring(v)), 3)
end

local function get_alpha(name, opts)
  if opts == nil then return 1 end
  if type(opts) ~= "table" then args.bad(name, 3, "options table", args.typename(opts), 3) end
  local alpha = opts.alpha
  if alpha == nil then return 1 end
  if type(alpha) ~= "number" then error(name .. ": alpha must be a number, got " .. args.typename(alpha), 3) end
  return alpha
end

local alpha_only = { alpha = true }

for name, code in pairs(binary_codes) do
  local takes_alpha = with_alpha[name]
  local fast_opts = takes_alpha and alpha_only or {}
  local number_input = not (tensor_operands[name] or tensor_input[name])
  local number_other = not tensor_operands[name]
  local function op(a, b, opts, ...)
    if not number_input and type(a) == "number" then not_a_number(name, 1, a) end
    if not number_other and type(b) == "number" then not_a_number(name, 2, b) end
    if not fallback.only(opts, fast_opts) or select("#", ...) > 0 or args.is_options(b) then
      return fallback.call(name, a, b, opts, ...)
    end
    local alpha = takes_alpha and get_alpha(name, opts) or 1
    if istype(Ref, a) then
      if istype(Ref, b) then
        local s = C.lt_binary(out, code, a.h, b.h, alpha)
        if s ~= 0 and reclaim(s) then s = C.lt_binary(out, code, a.h, b.h, alpha) end   -- out of memory: retry once
        check(s, name)
      else
        local v, kind = scalar(b)
        if v == nil then args.bad(name, 2, "Tensor or number", args.typename(b)) end
        if alpha ~= 1 then v, kind = scalar(v * alpha) end
        local s = C.lt_binary_scalar(out, code, a.h, v, kind)
        if s ~= 0 and reclaim(s) then s = C.lt_binary_scalar(out, code, a.h, v, kind) end
        check(s, name)
      end
    else
      local v, kind = scalar(a)
      if v == nil then args.bad(name, 1, "Tensor or number", args.typename(a)) end
      if not istype(Ref, b) then args.bad(name, 2, "Tensor", args.typename(b)) end
      if alpha ~= 1 then
        check(C.lt_binary_scalar(out, 2, b.h, alpha, select(2, scalar(alpha))), name)
        local scaled = wrap(out[0])
        check(C.lt_scalar_binary(out, code, v, kind, scaled.h), name)
      else
        check(C.lt_scalar_binary(out, code, v, kind, b.h), name)
      end
    end
    return wrap(out[0])
  end
  Tensor[name], M[name] = op, op
  if not no_binary_inplace[name] then
    local iname = name .. "_"
    local function op_(a, b, opts, ...)
      if not number_other and type(b) == "number" then not_a_number(iname, 2, b) end
      if not fallback.only(opts, fast_opts) or select("#", ...) > 0 then return fallback.call(iname, a, b, opts, ...) end
      if not istype(Ref, a) then args.bad(iname, 1, "Tensor", args.typename(a)) end
      local alpha = takes_alpha and get_alpha(iname, opts) or 1
      if istype(Ref, b) then
        check(C.lt_binary_(code, a.h, b.h, alpha), iname)
      else
        local v, kind = scalar(b)
        if v == nil then args.bad(iname, 2, "Tensor or number", args.typename(b)) end
        if alpha ~= 1 then v, kind = scalar(v * alpha) end
        check(C.lt_binary_scalar_(code, a.h, v, kind), iname)
      end
      return a
    end
    Tensor[iname], M[iname] = op_, op_
  end
end

-- PyTorch's aliases.
for alias, name in pairs({ subtract = "sub", multiply = "mul", divide = "div", true_divide = "div",
  greater = "gt", greater_equal = "ge", less = "lt", less_equal = "le", not_equal = "ne" }) do
  Tensor[alias], M[alias] = Tensor[name], M[name]
  Tensor[alias .. "_"], M[alias .. "_"] = Tensor[name .. "_"], M[name .. "_"]
end

-- div(a, b, {rounding_mode = nil | "floor" | "trunc"})
local plain_div, plain_div_ = Tensor.div, Tensor.div_
local function rounding(name, opts)
  if opts == nil then return nil end
  if type(opts) ~= "table" then args.bad(name, 3, "options table", args.typename(opts), 3) end
  local mode = opts.rounding_mode
  if mode ~= nil and mode ~= "floor" and mode ~= "trunc" then
    error(("%s: rounding_mode must be nil, 'trunc' or 'floor', got %s"):format(name, tostring(mode)), 3)
  end
  return mode
end
-- Integral operands (integer tensor or Lua integer) keep an integer result under a rounding mode.
local function integral(v)
  if istype(Ref, v) then
    local d = T.dtype_of(v)
    return not (d.is_floating_point or d.is_complex)
  end
  return args.is_int(v)
end
-- a - fmod(a, b) is an exact multiple of b, so floor division of it truncates exactly. Errors
-- (ZeroDivisionError, shapes) are reported as div's, not as the helper ops'.
local function trunc_divide(name, a, b, inplace)
  local ok, r = pcall(function()
    if inplace then return a:sub_(a:fmod(b)):floor_divide_(b) end
    local ta = type(a) == "number" and istype(Ref, b) and b:new_full({}, a) or a   -- fmod takes no number input
    return M.floor_divide(M.sub(a, M.fmod(ta, b)), b)
  end)
  if not ok then error((tostring(r):gsub("^.-%f[%w]%a[%w_]*: ", name .. ": ", 1)), 3) end
  return r
end
local rounding_only = { rounding_mode = true }
function M.div(a, b, opts, ...)
  if not fallback.only(opts, rounding_only) or select("#", ...) > 0 then return fallback.call("div", a, b, opts, ...) end
  local mode = rounding("div", opts)
  if mode == "floor" then return M.floor_divide(a, b) end
  if mode == "trunc" and integral(a) and integral(b) then return trunc_divide("div", a, b) end
  local r = plain_div(a, b)
  if mode == "trunc" then r:trunc_() end
  return r
end
function M.div_(a, b, opts, ...)
  if not fallback.only(opts, rounding_only) or select("#", ...) > 0 then return fallback.call("div_", a, b, opts, ...) end
  local mode = rounding("div_", opts)
  if mode == "floor" then return Tensor.floor_divide_(a, b) end
  if mode == "trunc" and integral(a) and integral(b) then return trunc_divide("div_", a, b, true) end
  plain_div_(a, b)
  if mode == "trunc" then a:trunc_() end
  return a
end
Tensor.div, Tensor.div_ = M.div, M.div_
Tensor.divide, M.divide, Tensor.true_divide, M.true_divide = M.div, M.div, M.div, M.div

---------------------------------------------------------------- clamp, where, masks
local function clamp_bounds(name, lo, hi)
  if type(lo) == "table" then lo, hi = lo.min, lo.max end
  if lo ~= nil and type(lo) ~= "number" then args.bad(name, 2, "number or nil", args.typename(lo), 3) end
  if hi ~= nil and type(hi) ~= "number" then args.bad(name, 3, "number or nil", args.typename(hi), 3) end
  if lo == nil and hi == nil then error(name .. ": at least one of min or max must be given", 3) end
  return lo ~= nil and 1 or 0, lo or 0, hi ~= nil and 1 or 0, hi or 0
end

function M.clamp(self, lo, hi, ...)
  if istype(Ref, lo) or istype(Ref, hi) or select("#", ...) > 0 then return fallback.call("clamp", self, lo, hi, ...) end
  T.handle("clamp", 1, self)
  local has_lo, vlo, has_hi, vhi = clamp_bounds("clamp", lo, hi)
  check(C.lt_clamp(out, self.h, has_lo, vlo, has_hi, vhi), "clamp")
  return wrap(out[0])
end
function M.clamp_(self, lo, hi, ...)
  if istype(Ref, lo) or istype(Ref, hi) or select("#", ...) > 0 then return fallback.call("clamp_", self, lo, hi, ...) end
  T.handle("clamp_", 1, self)
  local has_lo, vlo, has_hi, vhi = clamp_bounds("clamp_", lo, hi)
  check(C.lt_clamp_(self.h, has_lo, vlo, has_hi, vhi), "clamp_")
  return self
end
Tensor.clamp, Tensor.clamp_, Tensor.clip, Tensor.clip_ = M.clamp, M.clamp_, M.clamp, M.clamp_
M.clip, M.clip_ = M.clamp, M.clamp_

--[[ A Lua number next to a tensor operand becomes a 0-dim tensor of that tensor's dtype and
     device, moved up a category as PyTorch's wrapped numbers are (int64 tensor and 2.5 -> the
     default float; bool tensor and 1 -> int64). With no tensor operand (`like` is nil) the
     number's own default dtype is used, on `device_of`'s device. ]]
local function as_tensor_like(name, pos, v, like, device_of)
  if istype(Ref, v) then return v end
  local s, kind = scalar(v)
  if s == nil then args.bad(name, pos, "Tensor or number", args.typename(v), 3) end
  local default_float, int64 = dtype_mod.default_float.code, dtype_mod.by_name.int64.code
  local o = _C.Options()
  local dt = like and T.dtype_of(like)
  if not dt then
    o.dtype = kind == 2 and dtype_mod.by_name.bool.code or (kind == 1 and int64 or default_float)
  elseif kind == 0 and not (dt.is_floating_point or dt.is_complex) then
    o.dtype = default_float
  elseif kind == 1 and dt.name == "bool" then
    o.dtype = int64
  else
    o.dtype = dt.code
  end
  o.device_type, o.device_index = require("torch.device").codes(T.device_of(like or device_of))
  check(C.lt_scalar_tensor(out, s, kind, o), name, 2)
  return wrap(out[0])
end

-- torch.where(cond, a, b): elements of a where cond is true, else b.
function M.where(cond, a, b)
  if a == nil and b == nil then return fallback.call("where", cond) end   -- where(cond): nonzero as a list
  T.handle("where", 1, cond)
  local like = istype(Ref, a) and a or (istype(Ref, b) and b or nil)
  a = as_tensor_like("where", 2, a, like, cond)
  b = as_tensor_like("where", 3, b, like, cond)
  check(C.lt_where(out, cond.h, a.h, b.h), "where")
  return wrap(out[0])
end
-- x:where(cond, y) is torch.where(cond, x, y), as in PyTorch.
function Tensor.where(self, cond, other) return M.where(cond, self, other) end

function M.masked_fill(self, mask, value)
  if istype(Ref, value) then return fallback.call("masked_fill", self, mask, value) end
  T.handle("masked_fill", 1, self); T.handle("masked_fill", 2, mask)
  local v, kind = scalar(value)
  if v == nil then args.bad("masked_fill", 3, "number or boolean", args.typename(value)) end
  check(C.lt_masked_fill(out, self.h, mask.h, v, kind), "masked_fill")
  return wrap(out[0])
end
function M.masked_fill_(self, mask, value)
  if istype(Ref, value) then return fallback.call("masked_fill_", self, mask, value) end
  T.handle("masked_fill_", 1, self); T.handle("masked_fill_", 2, mask)
  local v, kind = scalar(value)
  if v == nil then args.bad("masked_fill_", 3, "number or boolean", args.typename(value)) end
  check(C.lt_masked_fill_(self.h, mask.h, v, kind), "masked_fill_")
  return self
end
Tensor.masked_fill, Tensor.masked_fill_ = M.masked_fill, M.masked_fill_

function M.leaky_relu(self, slope)
  T.handle("leaky_relu", 1, self)
  check(C.lt_leaky_relu(out, self.h, args.number("leaky_relu", 2, slope, 0.01)), "leaky_relu")
  return wrap(out[0])
end
Tensor.leaky_relu = M.leaky_relu

function M.lerp(self, target, weight)
  if istype(Ref, weight) then return fallback.call("lerp", self, target, weight) end
  T.handle("lerp", 1, self); T.handle("lerp", 2, target)
  check(C.lt_lerp(out, self.h, target.h, args.number("lerp", 3, weight)), "lerp")
  return wrap(out[0])
end
Tensor.lerp = M.lerp

function M.allclose(a, b, opts)
  T.handle("allclose", 1, a); T.handle("allclose", 2, b)
  opts = args.opt_table("allclose", 3, opts) or {}
  local rtol, atol = args.number("allclose", 3, opts.rtol, 1e-5), args.number("allclose", 3, opts.atol, 1e-8)
  check(C.lt_allclose(a.h, b.h, rtol, atol, opts.equal_nan and 1 or 0, int_out), "allclose")
  return int_out[0] == 1
end
Tensor.allclose = M.allclose

function M.equal(a, b)
  T.handle("equal", 1, a); T.handle("equal", 2, b)
  check(C.lt_equal(a.h, b.h, int_out), "equal")
  return int_out[0] == 1
end
Tensor.equal = M.equal

---------------------------------------------------------------- Lua operators
operators.add, operators.sub, operators.mul = M.add, M.sub, M.mul
operators.div, operators.remainder, operators.pow, operators.neg = M.div, M.remainder, M.pow, M.neg

return M
