--[[
  torch._tensor_str — tostring(x) in PyTorch's repr format, so printed tensors read the same as
  in Python: tensor([[1.0000, 2.5000], ...], dtype=torch.float64, requires_grad=True).

  Follows torch/_tensor_str.py (PyTorch 2.11) and its print options (M.options, set by
  torch.set_printoptions: lua/torch/_python_utils.lua): by default precision 4, summarise above
  1000 elements showing 3 edge items per dim, line width 80. The number format is chosen once
  per tensor over the values shown: integer-valued floats print as "1.", a wide range (max/min >
  1000, max > 1e8, or min < 1e-4) switches to scientific notation unless sci_mode is set. Complex
  tensors format real and imaginary parts apart ("1.+2.j"), read from a contiguous CPU copy.

  Usage:  print(x); tostring(x); torch.set_printoptions{precision = 2}.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local T = require "torch._tensor"
local dtype_mod = require "torch.dtype"

local C, check = _C.C, _C.check
local Tensor = T.Tensor
local out = ffi.new("lt_tensor*[1]")
local M = {}

-- PyTorch's PRINT_OPTS; sci_mode nil chooses per tensor (PyTorch's None).
local OPTS = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80, sci_mode = nil }
M.options = OPTS
local floor, abs, huge, max, min = math.floor, math.abs, math.huge, math.max, math.min

-- A complex tensor's elements as 2 * numel doubles, (real, imag) interleaved. Lua numbers
-- cannot hold complex values, so x:tolist() refuses them; printing reads the memory directly.
local function complex_values(x)
  local sizes, numel = T.sizes_of(x), Tensor.numel(x)
  -- resolve_conj/resolve_neg: a conj() or neg view shares its base's memory with a flag, and
  -- contiguous() keeps the flag, so the raw memory would print the unconjugated values.
  local c = Tensor.cpu(x):resolve_conj():resolve_neg():contiguous()  -- kept alive while read
  local name = T.dtype_of(x).name
  if name == "complex32" then c, name = Tensor.cfloat(c), "complex64" end   -- half pairs: widened
  local src = ffi.cast(name == "complex64" and "float*" or "double*", Tensor.data_ptr(c))
  local buf = ffi.new("double[?]", math.max(2 * numel, 1))
  for i = 0, 2 * numel - 1 do buf[i] = src[i] end
  return buf, sizes, numel
end

-- PyTorch's get_summarized_data: the first and last OPTS.edgeitems of every longer dim, cut before
-- any value is read, so printing a huge (e.g. expanded) tensor reads only what it shows.
local function summarized(x, sizes)
  for d = 1, #sizes do
    if sizes[d] > 2 * OPTS.edgeitems then
      local head = Tensor.narrow(x, d - 1, 0, OPTS.edgeitems)
      local tail = Tensor.narrow(x, d - 1, -OPTS.edgeitems, OPTS.edgeitems)  -- sizes[d] may exceed 2^53
      local arr = _C.TensorArray(2)
      arr[0], arr[1] = head.h, tail.h
      check(C.lt_cat(out, arr, 2, d - 1), "tostring")
      x = memory.wrap(out[0])
    end
  end
  return x
end

-- Reads the shown values into a flat Lua array plus the (summarised) shape, and a flag per
-- dim saying whether it was cut ("..." goes in the middle of that dim).
-- For a complex tensor the leaves of `nested` are {real, imag} pairs and `values` holds the real
-- parts, `imags` the imaginary ones (each gets its own number format, as in PyTorch).
local function shown_values(x, summarize, complex)
  local buf, sizes, numel
  local full = T.sizes_of(x)
  if summarize then x = summarized(x, full) end
  if complex then buf, sizes, numel = complex_values(x) else buf, sizes, numel = Tensor.tolist(x, true) end
  local ndim = #sizes
  local strides = {}
  local acc = 1
  for d = ndim, 1, -1 do strides[d] = acc; acc = acc * sizes[d] end
  local function keep(d)
    local n = sizes[d]
    local idx = {}
    for i = 0, n - 1 do idx[#idx + 1] = i end
    return idx, summarize and full[d] > 2 * OPTS.edgeitems
  end
  local kept, cut = {}, {}
  for d = 1, ndim do kept[d], cut[d] = keep(d) end
  local values, imags = {}, {}
  local function walk(d, offset, nested)
    if d > ndim then
      if complex then
        local re, im = tonumber(buf[2 * offset]), tonumber(buf[2 * offset + 1])
        values[#values + 1], imags[#imags + 1] = re, im
        return { re, im }
      end
      local v = buf[offset]
      values[#values + 1] = type(v) == "cdata" and v or tonumber(v)   -- uint64 values stay exact (cdata)
      return values[#values]
    end
    local level = {}
    for _, i in ipairs(kept[d]) do level[#level + 1] = walk(d + 1, offset + i * strides[d], nested) end
    return level
  end
  local nested = numel > 0 and walk(1, 0) or {}
  return values, nested, cut, ndim, imags
end

-- Numbers go through C's snprintf: LuaJIT's own string.format rounds a tie away from zero
-- ("%.2f" of 7.125 gives 7.13), where C and Python round the exact binary value (7.12).
pcall(ffi.cdef, "int snprintf(char *s, size_t n, const char *format, ...);")
local fmt_buf = ffi.new("char[?]", 512)
local function c_format(spec, v)
  local n = ffi.C.snprintf(fmt_buf, 512, spec, ffi.new("double", v))
  if n < 0 then error("tostring: cannot format " .. tostring(v) .. " with " .. spec, 0) end
  return ffi.string(fmt_buf, math.min(n, 511))
end

local function fmt_fixed(v, digits)
  if v ~= v then return "nan" end
  if v == huge then return "inf" end
  if v == -huge then return "-inf" end
  return c_format("%." .. digits .. "f", v)
end
local function fmt_sci(v)
  if v ~= v then return "nan" end
  if v == huge then return "inf" end
  if v == -huge then return "-inf" end
  return c_format("%." .. OPTS.precision .. "e", v)
end

-- Returns format(v) -> padded string, and the width.
local function formatter(values, dt)
  local width = 1
  if dt.name == "bool" then
    for _, v in ipairs(values) do width = max(width, v ~= 0 and 4 or 5) end
    return function(v)
      local s = v ~= 0 and "True" or "False"
      return string.rep(" ", width - #s) .. s
    end, width
  end
  if not dt.is_floating_point then
    local function int_str(v)
      if type(v) == "cdata" then return (tostring(v):gsub("U?LL$", "")) end
      return string.format("%d", v)
    end
    for _, v in ipairs(values) do width = max(width, #int_str(v)) end
    return function(v)
      local s = int_str(v)
      return string.rep(" ", width - #s) .. s
    end, width
  end
  local lo, hi, any = huge, 0, false
  local int_mode = true
  for _, v in ipairs(values) do
    if v == v and v ~= huge and v ~= -huge and v ~= 0 then
      local a = abs(v)
      lo, hi, any = min(lo, a), max(hi, a), true
      if v ~= math.ceil(v) then int_mode = false end
    end
  end
  local sci = false
  if any then
    sci = OPTS.sci_mode
    if sci == nil then sci = hi / lo > 1000 or hi > 1e8 or lo < 1e-4 end
    for _, v in ipairs(values) do
      if v == v and v ~= huge and v ~= -huge and v ~= 0 then
        local s
        if sci then s = fmt_sci(v)
        elseif int_mode then s = fmt_fixed(v, 0) .. "."
        else s = fmt_fixed(v, OPTS.precision) end
        width = max(width, #s)
      end
    end
  end
  return function(v)
    local s
    if sci then s = fmt_sci(v)
    elseif int_mode then
      s = fmt_fixed(v, 0)
      if v == v and v ~= huge and v ~= -huge then s = s .. "." end
    else s = fmt_fixed(v, OPTS.precision) end
    return string.rep(" ", width - #s) .. s
  end, width
end

-- PyTorch formats real and imaginary parts apart: "1.+2.j", "3.-10.j" (the imag part unpadded).
local float64 = dtype_mod.by_name.float64
local function complex_formatter(reals, imags)
  local fr, wr = formatter(reals, float64)
  local fi, wi = formatter(imags, float64)
  return function(v)
    local re = fr(v[1])
    local im = (fi(v[2]) .. "j"):gsub("^%s+", "")
    local sign = im:sub(1, 1)
    if sign == "+" or sign == "-" then return re .. im end
    return re .. "+" .. im
  end, wr + wi + 1
end

local function default_complex()
  return dtype_mod.default_float.name == "float64" and dtype_mod.by_name.complex128 or dtype_mod.by_name.complex64
end

local function vector_str(list, cut, indent, format, width)
  local per_line = max(1, floor((OPTS.linewidth - indent) / (width + 2)))
  local data = {}
  for i, v in ipairs(list) do
    if cut and i == OPTS.edgeitems + 1 then data[#data + 1] = " ..." end
    data[#data + 1] = format(v)
  end
  local lines = {}
  for i = 1, #data, per_line do
    lines[#lines + 1] = table.concat(data, ", ", i, min(i + per_line - 1, #data))
  end
  return "[" .. table.concat(lines, ",\n" .. string.rep(" ", indent + 1)) .. "]"
end

local function nested_str(level, d, ndim, cut, indent, format, width)
  if d == ndim then return vector_str(level, cut[d], indent, format, width) end
  local parts = {}
  for i, sub in ipairs(level) do
    if cut[d] and i == OPTS.edgeitems + 1 then parts[#parts + 1] = "..." end
    parts[#parts + 1] = nested_str(sub, d + 1, ndim, cut, indent + 1, format, width)
  end
  return "[" .. table.concat(parts, "," .. string.rep("\n", ndim - d) .. string.rep(" ", indent + 1)) .. "]"
end

local function add_suffixes(body, suffixes, indent)
  local parts = { body }
  local nl = body:match(".*()\n")
  local last_len = #body - (nl or 0) + 1
  for _, s in ipairs(suffixes) do
    if last_len + #s + 2 > OPTS.linewidth then
      parts[#parts + 1] = ",\n" .. string.rep(" ", indent) .. s
      last_len = indent + #s
    else
      parts[#parts + 1] = ", " .. s
      last_len = last_len + #s + 2
    end
  end
  parts[#parts + 1] = ")"
  return table.concat(parts)
end

-- Python's str(tuple(shape)): "()", "(3,)", "(2, 3)".
local function size_tuple(sizes, ndim)
  local parts = {}
  for i = 1, ndim do parts[i] = tostring(sizes[i]) end
  return "(" .. table.concat(parts, ", ") .. (ndim == 1 and ",)" or ")")
end

function M.repr(x)
  if x.h == nil then return "tensor(<freed>)" end
  local prefix = "tensor("
  local indent = #prefix
  local dt = T.dtype_of(x)
  local dev = T.device_of(x)
  local sizes, ndim = T.sizes_of(x)
  local numel = 1
  for i = 1, ndim do numel = numel * sizes[i] end
  local suffixes = {}
  if dev.type ~= "cpu" then suffixes[#suffixes + 1] = "device='" .. tostring(dev) .. "'" end
  local body
  if dev.type == "meta" then
    -- no data: PyTorch prints the shape (and a non-default dtype) instead of values
    body = "..."
    suffixes[#suffixes + 1] = "size=" .. size_tuple(sizes, ndim)
    if dt ~= dtype_mod.default_float then suffixes[#suffixes + 1] = "dtype=" .. tostring(dt) end
  elseif numel == 0 then
    body = "[]"
    if ndim ~= 1 then suffixes[#suffixes + 1] = "size=" .. size_tuple(sizes, ndim) end
    if dt ~= dtype_mod.default_float then suffixes[#suffixes + 1] = "dtype=" .. tostring(dt) end
  else
    if OPTS.edgeitems == 0 then suffixes[#suffixes + 1] = "size=" .. size_tuple(sizes, ndim) end
    if dt ~= dtype_mod.default_float and dt ~= default_complex() and dt.name ~= "int64" and dt.name ~= "bool" then
      suffixes[#suffixes + 1] = "dtype=" .. tostring(dt)
    end
  end
  if body == nil and numel > 0 and OPTS.edgeitems == 0 and ndim > 0 and numel > OPTS.threshold then
    body = "[...]"     -- PyTorch: no edge items, nothing of the data shown
  elseif body == nil and numel > 0 then
    local values, nested, cut, _, imags = shown_values(x, numel > OPTS.threshold, dt.is_complex)
    local format, width
    if dt.is_complex then format, width = complex_formatter(values, imags)
    else format, width = formatter(values, dt) end
    if ndim == 0 then body = format(dt.is_complex and nested or values[1])
    else body = nested_str(nested, 1, ndim, cut, indent, format, width) end
  end
  local fn = Tensor.grad_fn_name(x)
  if fn then
    suffixes[#suffixes + 1] = "grad_fn=<" .. fn .. ">"
  elseif x.requires_grad then
    suffixes[#suffixes + 1] = "requires_grad=True"
  end
  return add_suffixes(prefix .. body, suffixes, indent)
end

_C.state.repr = M.repr

return M
