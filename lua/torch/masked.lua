--[[
  torch.masked — PyTorch 2.11's masked reductions and normalizations
  (https://pytorch.org/docs/2.11/masked.html; torch/masked/_ops.py), on strided tensors:

      local m = x:gt(0)
      torch.masked.sum(x, 1, {mask = m})                  -- sum of the masked-in elements
      torch.masked.amax(x, {dim = {0, 1}, keepdim = true, mask = m})
      torch.masked.softmax(x, 0, {mask = m})              -- masked-out elements get 0
      torch.masked.var(x, {dim = 1, correction = 0, mask = m})
      torch.masked.logaddexp(a, b, {input_mask = ma, other_mask = mb})

  Each function takes PyTorch's signature: its positional parameters, then a trailing table of
  keywords (dim, keepdim, dtype, mask, ...). A mask is broadcast to the input's shape (it may not
  have more dims) and read as bool. As in _ops.py, masked-out elements are replaced with the op's
  identity by torch.where(mask, input, identity) (0 for sum, 1 for prod, -inf for amax and
  softmax, +inf for amin and softmin, NaN for median, ...), then the plain op runs: the same ATen
  calls in the same order, so values, dtypes and gradients are PyTorch's. mean, var and std
  divide by the count of masked-in elements (a fully masked-out slice gives NaN).

  ltorch has only the strided layout: there are no sparse COO/CSR inputs and no MaskedTensor;
  anything but a Tensor as input or mask is refused by name.
]]
local P = require "torch._pysig"
local W = require "torch._pywrap"
local T = require "torch._tensor"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local torch = require "torch"

local M = {}

local D = dtype_mod.by_name
local INT_RANGE = { uint8 = { 0, 255 }, int8 = { -128, 127 }, int16 = { -32768, 32767 },
  int32 = { -2 ^ 31, 2 ^ 31 - 1 } }
-- Integer dtypes a masked sum or prod promotes to int64 when no dtype is given.
local PROMOTED = { uint8 = true, bool = true, int8 = true, int16 = true, int32 = true }

local function is_float(dt) return dt.is_floating_point end
local function is_inexact(dt) return dt.is_floating_point or dt.is_complex end

local function scalar(v, input, dt)
  return torch.tensor(v, { dtype = dt or input.dtype, device = input.device })
end

-- torch.iinfo(dtype).min / .max as a 0-dim tensor (int64's max is no Lua number: ~min).
local function int_limit(input, want_max)
  local name = input.dtype.name
  if name == "int64" then
    local lo = scalar(-2 ^ 63, input)
    return want_max and lo:bitwise_not() or lo
  end
  local r = INT_RANGE[name]
  return r and scalar(want_max and r[2] or r[1], input)
end

-- _reduction_identity: the value masked-out elements take for `op`; nil where undefined.
local function identity(op, input, ord)
  local dt = input.dtype
  local int_like = dt.is_signed and not is_inexact(dt) or dt.name == "uint8"
  local v
  if op == "sum" or op == "cumsum" then return scalar(0, input)
  elseif op == "prod" or op == "cumprod" then return scalar(1, input)
  elseif op == "amax" or op == "argmax" or op == "logaddexp" then
    if is_float(dt) then return scalar(-math.huge, input) end
    if int_like then v = int_limit(input, false) end
  elseif op == "logsumexp" then
    if is_inexact(dt) then return scalar(-math.huge, input) end
    if int_like then v = int_limit(input, false) end
  elseif op == "amin" or op == "argmin" then
    if is_float(dt) then return scalar(math.huge, input) end
    if int_like then v = int_limit(input, true) end
  elseif op == "norm" then
    if ord == -math.huge then
      if not is_float(dt) then error("input must be floating point, got " .. tostring(dt)) end
      return scalar(math.huge, input)
    end
    return scalar(0, input)
  elseif op == "median" then
    return scalar(0 / 0, input, is_float(dt) and dt or D.float32)
  end
  if v == nil then error(("identity of %s on %s input"):format(op, tostring(dt))) end
  return v
end

-- _canonical_dim: dim (nil, an int or a list of ints; {} means all) as a sorted list of dims.
local function canonical_dim(dim, ndim)
  if dim == nil or (type(dim) == "table" and #dim == 0) then
    local all = {}
    for d = 0, ndim - 1 do all[#all + 1] = d end
    return all
  end
  ndim = math.max(ndim, 1)
  local list = type(dim) == "table" and dim or { dim }
  local dims, seen = {}, {}
  for _, d in ipairs(list) do
    if not args.is_int(d) then error("dim must be an int or a list of ints, got " .. args.typename(d)) end
    if seen[d] then error(("dim=%d appears multiple times in the list of dims"):format(d)) end
    if d >= ndim or d < -ndim then
      error(("Dimension out of range (expected to be in range of [%d, %d], but got %d)"):format(-ndim, ndim - 1, d))
    end
    seen[d] = true
    dims[#dims + 1] = d % ndim
  end
  table.sort(dims)
  return dims
end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- _input_mask: the mask broadcast to input's shape, as bool.
local function input_mask(input, mask)
  if not T.is_tensor(mask) then
    error("mask must be a strided Tensor (ltorch has no sparse layout or MaskedTensor), not " .. args.typename(mask))
  end
  if not same_shape(mask.shape, input.shape) then
    if mask:dim() > input:dim() then
      error("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
    end
    mask = torch.broadcast_to(mask:clone(), input.shape)
  end
  return mask:to(D.bool)
end

-- _combine_input_and_mask: input with its masked-out elements replaced by op's identity.
local function combine(op, input, mask, ord)
  if mask == nil then return input end
  local m = input_mask(input, mask)
  return torch.where(m, input, identity(op, input, ord))
end

local function check_input(fname, input, name)
  if not T.is_tensor(input) then
    error(("masked %s expects a strided Tensor as %s (ltorch has no sparse layout or MaskedTensor), got %s")
      :format(fname, name or "input", args.typename(input)))
  end
end

-- The dtype keyword (resolved by run below), or default when not given.
local function dtype_or(a, default)
  if a.dtype == nil then return default end
  return a.dtype
end

----------------------------------------------------------------------------- reductions
-- The output dtype of sum and prod: int64 for small integer inputs when none is given.
local function sum_dtype(a)
  if a.dtype ~= nil then return a.dtype end
  return PROMOTED[a.input.dtype.name] and D.int64 or a.input.dtype
end

local function sum(a)
  local dims = canonical_dim(a.dim, a.input:dim())
  return torch.sum(combine("sum", a.input, a.mask), dims, a.keepdim and true or false, { dtype = sum_dtype(a) })
end

local function prod(a)
  local dims = canonical_dim(a.dim, a.input:dim())
  local r = combine("prod", a.input, a.mask):to(sum_dtype(a))
  for i = #dims, 1, -1 do r = r:prod(dims[i], a.keepdim and true or false) end
  return r
end

local function cumulative(op, ident)
  return function(a)
    local dt = dtype_or(a, a.input.dtype)
    local d = canonical_dim(a.dim, a.input:dim())[1]
    return torch[op](combine(ident, a.input, a.mask), d, { dtype = dt }):to(dt)
  end
end

local function extremum(op)
  return function(a)
    local dt = dtype_or(a, a.input.dtype)
    local x = combine(op, a.input, a.mask)
    return torch[op](x, canonical_dim(a.dim, x:dim()), a.keepdim and true or false):to(dt)
  end
end

local function arg_extremum(op)
  return function(a)
    local dt = dtype_or(a, a.input.dtype)
    if a.dim ~= nil and not args.is_int(a.dim) then error(op .. "(): argument 'dim' must be int, not " .. args.typename(a.dim)) end
    return torch[op](combine(op, a.input, a.mask), a.dim, a.keepdim and true or false):to(dt)
  end
end

local function mean(a)
  local input, dt, source = a.input, a.dtype, "Optional"
  if dt == nil then dt, source = input.dtype, "Input" end
  if not is_inexact(dt) then
    error(("mean(): Could not infer output dtype. %s dtype must be either a floating point or complex dtype. Got: %s")
      :format(source, tostring(dt)))
  end
  local kw = { dim = a.dim, keepdim = a.keepdim, dtype = dt }
  local count
  if a.mask == nil then
    count = sum({ input = torch.ones(input.shape, { dtype = D.int64, device = input.device }), dim = a.dim, keepdim = a.keepdim })
  else
    kw.mask = input_mask(input, a.mask)
    count = torch.sum(kw.mask, canonical_dim(a.dim, input:dim()), a.keepdim and true or false)
  end
  kw.input = input
  return sum(kw) / count
end

local function median(a)
  local input = a.input
  local dt = dtype_or(a, input.dtype)
  local d = canonical_dim(a.dim, input:dim())[1]
  local float = is_float(input.dtype)
  if not float then input = input:to(D.float32) end
  local out = (torch.nanmedian(combine("median", input, a.mask), d, a.keepdim and true or false))
  if float then return out end
  if not torch.isnan(out):any():item() then return out:to(dt) end
  error("masked median expects no fully masked out rows if dtype is not floating point")
end

local function logsumexp(a)
  local dt = dtype_or(a, a.input.dtype)
  local dims = canonical_dim(a.dim, a.input:dim())
  return torch.logsumexp(combine("logsumexp", a.input, a.mask), dims, a.keepdim and true or false):to(dt)
end

local function norm(a)
  local dt = dtype_or(a, a.input.dtype)
  local x = combine("norm", a.input, a.mask, a.ord)
  local dims = canonical_dim(a.dim, a.input:dim())
  return torch.linalg.vector_norm(x, a.ord, dims, a.keepdim and true or false, { dtype = dt })
end

-- _std_var: sum((x - mean) * conj(x - mean)) / max(count - correction, 0), over masked-in elements.
local function std_var(a, take_sqrt)
  if a.unbiased ~= nil and a.correction ~= nil then error("Only one of unbiased and correction may be given") end
  local correction = 1.0
  if a.unbiased ~= nil then correction = a.unbiased and 1.0 or 0.0 end
  if a.correction ~= nil then correction = a.correction end
  local input = a.input
  local dt = dtype_or(a, input.dtype)
  if a.dtype == nil and not is_inexact(dt) then dt = D.float32 end
  local compute = is_inexact(dt) and dt or D.float32
  local count, total_sample, inmask
  if a.mask == nil then
    count = sum({ input = torch.ones(input.shape, { dtype = D.int64, device = input.device }), dim = a.dim, keepdim = true })
    total_sample = sum({ input = input, dim = a.dim, keepdim = true, dtype = dt })
  else
    inmask = input_mask(input, a.mask)
    count = torch.sum(inmask, canonical_dim(a.dim, input:dim()), true)
    total_sample = sum({ input = input, dim = a.dim, keepdim = true, dtype = dt, mask = inmask })
  end
  local x = torch.subtract(input, torch.divide(total_sample, count))
  local total = sum({ input = x * x:conj(), dim = a.dim, keepdim = a.keepdim, dtype = compute, mask = inmask })
  if not a.keepdim then count = count:reshape(total.shape) end
  if correction ~= 0 then
    local real = compute.is_complex and (compute.name == "complex64" and D.float32 or D.float64) or compute
    count = torch.subtract(count:to(real), correction)
    count = torch.maximum(count, count:new_zeros({}))
  end
  local out = torch.divide(total, count):to(dt)
  if take_sqrt then out = torch.sqrt(out) end
  return out
end

----------------------------------------------------------------------------- normalizations
local function softmax_like(ident, fn)
  return function(a)
    local dt = dtype_or(a, a.input.dtype)
    local d = canonical_dim(a.dim, a.input:dim())[1]
    return fn(combine(ident, a.input, a.mask), d, dt)
  end
end

local function normalize(a)
  local dt = dtype_or(a, a.input.dtype)
  local x = combine("sum", a.input, a.mask)
  local nrm = norm({ input = a.input, ord = a.ord, dim = a.dim, keepdim = true, dtype = dt, mask = a.mask })
  return torch.divide(x, torch.maximum(nrm, nrm:new_full({}, a.eps)))
end

local function logaddexp(a)
  local dt = dtype_or(a, a.input.dtype)
  local x = combine("logaddexp", a.input, a.input_mask)
  local y = combine("logaddexp", a.other, a.other_mask)
  return torch.logaddexp(x, y):to(dt)
end

----------------------------------------------------------------------------- the public functions
local REDUCTION = "input, dim=None, *, keepdim=False, dtype=None, mask=None"
local NORMALIZATION = "input, dim, *, dtype=None, mask=None"

-- name -> { PyTorch's signature, implementation over the bound arguments }
local FUNCTIONS = {
  sum = { REDUCTION, sum },
  prod = { REDUCTION, prod },
  cumsum = { NORMALIZATION, cumulative("cumsum", "sum") },
  cumprod = { NORMALIZATION, cumulative("cumprod", "prod") },
  amax = { REDUCTION, extremum("amax") },
  amin = { REDUCTION, extremum("amin") },
  argmax = { REDUCTION, arg_extremum("argmax") },
  argmin = { REDUCTION, arg_extremum("argmin") },
  mean = { REDUCTION, mean },
  median = { "input, dim=-1, *, keepdim=False, dtype=None, mask=None", median },
  logsumexp = { REDUCTION, logsumexp },
  norm = { "input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None", norm },
  var = { "input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None",
    function(a) return std_var(a, false) end },
  std = { "input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None",
    function(a) return std_var(a, true) end },
  softmax = { NORMALIZATION, softmax_like("amax", function(x, d, dt) return torch.softmax(x, d, { dtype = dt }) end) },
  log_softmax = { NORMALIZATION, softmax_like("amax", function(x, d, dt) return torch.log_softmax(x, d, { dtype = dt }) end) },
  softmin = { NORMALIZATION, softmax_like("amin", function(x, d, dt) return torch.softmax(-x, d, { dtype = dt }) end) },
  normalize = { "input, ord, dim, *, eps=1e-12, dtype=None, mask=None", normalize },
  logaddexp = { "input, other, *, dtype=None, input_mask=None, other_mask=None", logaddexp },
}

local function run(name, impl, a, binary)
  check_input(name, a.input)
  if binary then check_input(name, a.other, "other") end
  if a.dtype ~= nil then a.dtype = dtype_mod.resolve(a.dtype, "masked." .. name) end
  return impl(a)
end

for name, spec in pairs(FUNCTIONS) do
  local sig, impl = P.signature("masked." .. name, spec[1]), spec[2]
  M[name] = function(...)
    local a = W.bind(sig, 2, ...)
    local r = W.call(2, run, name, impl, a, sig.index.other ~= nil)   -- not a tail call: errors blame the caller
    return r
  end
end

return M
