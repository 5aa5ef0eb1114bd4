--[[
  torch._ops_reduce — reductions and the ops that combine tensors: sum, mean, prod, max/min
  (whole tensor, or along a dim returning values and indices), amax/amin, argmax/argmin,
  all/any, logsumexp, var/std, norm, cumsum, sort, topk; matmul, mm, bmm, addmm, outer, dot;
  cat, stack, index_select, gather, scatter, masked_select, nonzero; softmax/log_softmax.

  Reductions take PyTorch's arguments positionally or as a keyword table:
      x:sum()  x:sum(0)  x:sum({0, 1}, true)  x:sum({dim = 1, keepdim = true, dtype = torch.float64})
  Ops that return two tensors in PyTorch (max along a dim, sort, topk) return two Lua values:
      local values, indices = x:max(1)

  Usage:  torch.cat({a, b}, 0); a:matmul(b); x:std(0, {correction = 0}); x:topk(3)
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local T = require "torch._tensor"
local fallback = require "torch._fallback"

local C, check, Ref = _C.C, _C.check, _C.Ref
local wrap = memory.wrap
local Tensor, operators = T.Tensor, T.operators
local istype = ffi.istype

local M = {}
local out, out2 = _C.TensorOut(), _C.TensorOut()

-- Reads (dim, keepdim, {dtype=...}) or ({dim=, keepdim=, dtype=}) into dims array, n, keepdim, opts.
local function reduce_args(name, a, b, c)
  local opts
  if args.is_options(a) then
    opts, a, b = a, a.dim, a.keepdim
  elseif args.is_options(b) then
    opts, b = b, b.keepdim
  elseif args.is_options(c) then
    opts = c
  end
  local dims, n = args.dims(name, 1, a)
  local keepdim = args.boolean(name, 2, b, false)
  return dims, n, keepdim, opts or {}
end

local reduce_codes = { sum = 0, mean = 1, prod = 2, amax = 3, amin = 4, all = 5, any = 6, logsumexp = 7 }
local reduce_options = { dim = true, keepdim = true, dtype = true }
for name, code in pairs(reduce_codes) do
  local function op(self, a, b, c, ...)
    local given = args.is_options(a) and a or args.is_options(b) and b or args.is_options(c) and c or nil
    if not fallback.only(given, reduce_options) or select("#", ...) > 0 then return fallback.call(name, self, a, b, c, ...) end
    T.handle(name, 1, self)
    local dims, n, keepdim, opts = reduce_args(name, a, b, c)
    local dt = opts.dtype and dtype_mod.resolve(opts.dtype, name, 1).code or -1
    check(C.lt_reduce(out, code, self.h, dims, n, keepdim and 1 or 0, dt), name)
    return wrap(out[0])
  end
  Tensor[name], M[name] = op, op
end

-- max()/min(): whole-tensor value; max(dim[, keepdim]) -> values, indices; max(other) -> maximum.
local function extremum(name, is_min)
  local whole = is_min and Tensor.amin or Tensor.amax
  local pairwise = is_min and "minimum" or "maximum"
  return function(self, a, b)
    T.handle(name, 1, self)
    if a == nil then return whole(self) end
    if istype(Ref, a) then return Tensor[pairwise](self, a) end
    local keepdim = b
    if args.is_options(a) then a, keepdim = a.dim, a.keepdim end
    local dim = args.int(name, 2, a)
    keepdim = args.boolean(name, 3, keepdim, false)
    check(C.lt_max_dim(out, out2, self.h, dim, keepdim and 1 or 0, is_min and 1 or 0), name)
    return wrap(out[0]), wrap(out2[0])
  end
end
Tensor.max, Tensor.min = extremum("max", false), extremum("min", true)
M.max, M.min = Tensor.max, Tensor.min

local DIM_KEEPDIM = { dim = true, keepdim = true }
local function arg_extremum(name, is_min)
  return function(self, dim, keepdim, ...)
    T.handle(name, 1, self)
    if select("#", ...) > 0 or (args.is_options(dim) and not fallback.only(dim, DIM_KEEPDIM))
      or args.is_options(keepdim) then
      return fallback.call(name, self, dim, keepdim, ...)   -- out=, or a keyword ATen must judge
    end
    if args.is_options(dim) then dim, keepdim = dim.dim, dim.keepdim end
    local has = dim ~= nil
    dim = has and args.int(name, 2, dim) or 0
    keepdim = args.boolean(name, 3, keepdim, false)
    check(C.lt_argmax(out, self.h, has and 1 or 0, dim, keepdim and 1 or 0, is_min and 1 or 0), name)
    return wrap(out[0])
  end
end
Tensor.argmax, Tensor.argmin = arg_extremum("argmax", false), arg_extremum("argmin", true)
M.argmax, M.argmin = Tensor.argmax, Tensor.argmin

--[[ var/std: (dim, unbiased, keepdim) positionally, (unbiased) alone (every dim, PyTorch's
     std(input, unbiased) overload), or {dim=, unbiased=, correction=, keepdim=}.
     correction defaults to 1 (Bessel), unbiased=false means correction 0. ]]
local SPREAD_OPTIONS = { dim = true, unbiased = true, correction = true, keepdim = true }
local function spread(name, is_std)
  return function(self, a, b, c, ...)
    T.handle(name, 1, self)
    if type(a) == "boolean" and b == nil and c == nil and select("#", ...) == 0 then a, b = nil, a end
    local given = (args.is_options(a) and a) or (args.is_options(b) and b) or (args.is_options(c) and c) or nil
    if select("#", ...) > 0 or (given and not fallback.only(given, SPREAD_OPTIONS)) then
      return fallback.call(name, self, a, b, c, ...)   -- out=, or a keyword ATen must judge
    end
    local opts = {}
    if args.is_options(a) then opts, a = a, a.dim
    elseif args.is_options(b) then opts, b = b, nil
    elseif args.is_options(c) then opts, c = c, nil end
    local unbiased = b
    if opts.unbiased ~= nil then unbiased = opts.unbiased end
    local keepdim = c
    if opts.keepdim ~= nil then keepdim = opts.keepdim end
    local correction = opts.correction
    if correction == nil then correction = (args.boolean(name, 3, unbiased, true) and 1 or 0) end
    correction = args.int(name, 3, correction)  -- an integer in libtorch 1.13
    local dims, n = args.dims(name, 2, a)
    check(C.lt_var(out, self.h, dims, n, correction, args.boolean(name, 4, keepdim, false) and 1 or 0, is_std and 1 or 0), name)
    return wrap(out[0])
  end
end
Tensor.var, Tensor.std = spread("var", false), spread("std", true)
M.var, M.std = Tensor.var, Tensor.std

-- norm(p=2, dim=nil, keepdim=false) or norm({p=, dim=, keepdim=}); p may be "fro" or math.huge/"inf".
function M.norm(self, p, dim, keepdim)
  T.handle("norm", 1, self)
  if args.is_options(p) then p, dim, keepdim = p.p, p.dim, p.keepdim end
  if p == nil or p == "fro" then p = 2 elseif p == "inf" then p = math.huge elseif p == "-inf" then p = -math.huge end
  args.number("norm", 2, p)
  local dims, n = args.dims("norm", 3, dim)
  check(C.lt_norm(out, self.h, p, dims, n, args.boolean("norm", 4, keepdim, false) and 1 or 0), "norm")
  return wrap(out[0])
end
Tensor.norm = M.norm

function M.cumsum(self, dim, ...)
  if select("#", ...) > 0 or (args.is_options(dim) and not fallback.only(dim, { dim = true })) then
    return fallback.call("cumsum", self, dim, ...)
  end
  T.handle("cumsum", 1, self)
  if args.is_options(dim) then dim = dim.dim end
  check(C.lt_cumsum(out, self.h, args.int("cumsum", 2, dim)), "cumsum")
  return wrap(out[0])
end
Tensor.cumsum = M.cumsum

-- sort(dim=-1, descending=false) or sort({dim=, descending=}) -> values, indices
local SORT_OPTIONS = { dim = true, descending = true }
local function sort(name, self, dim, descending, ...)
  T.handle(name, 1, self)
  if select("#", ...) > 0 or (args.is_options(dim) and not fallback.only(dim, SORT_OPTIONS)) or args.is_options(descending) then
    return fallback.call(name, self, dim, descending, ...)   -- stable=, out=: ATen's sort.stable binds them
  end
  if args.is_options(dim) then dim, descending = dim.dim, dim.descending end
  dim = args.int(name, 2, dim, -1)
  check(C.lt_sort(out, out2, self.h, dim, args.boolean(name, 3, descending, false) and 1 or 0), name)
  return wrap(out[0]), wrap(out2[0])
end
function M.sort(self, ...) return sort("sort", self, ...) end
Tensor.sort = M.sort

function M.argsort(self, dim, descending, ...)
  if select("#", ...) > 0 or (args.is_options(dim) and not fallback.only(dim, SORT_OPTIONS)) or args.is_options(descending) then
    return fallback.call("argsort", self, dim, descending, ...)
  end
  local _, indices = sort("argsort", self, dim, descending)
  return indices
end
Tensor.argsort = M.argsort

-- topk(k, dim=-1, largest=true, sorted=true) or topk(k, {dim=, largest=, sorted=}) -> values, indices
function M.topk(self, k, dim, largest, sorted)
  if args.is_options(k) then return fallback.call("topk", self, k) end  -- topk({k=, dim=})
  T.handle("topk", 1, self)
  k = args.int("topk", 2, k)
  if args.is_options(dim) then dim, largest, sorted = dim.dim, dim.largest, dim.sorted end
  dim = args.int("topk", 3, dim, -1)
  largest = args.boolean("topk", 4, largest, true)
  sorted = args.boolean("topk", 5, sorted, true)
  check(C.lt_topk(out, out2, self.h, k, dim, largest and 1 or 0, sorted and 1 or 0), "topk")
  return wrap(out[0]), wrap(out2[0])
end
Tensor.topk = M.topk

---------------------------------------------------------------- linear algebra
local function pair(name, cfn)
  return function(a, b)
    T.handle(name, 1, a); T.handle(name, 2, b)
    local s = cfn(out, a.h, b.h)
    if s ~= 0 and memory.reclaim(s) then s = cfn(out, a.h, b.h) end   -- out of memory: retry once
    check(s, name)
    return wrap(out[0])
  end
end
for name, cfn in pairs({ matmul = C.lt_matmul, mm = C.lt_mm, bmm = C.lt_bmm, outer = C.lt_outer, dot = C.lt_dot }) do
  Tensor[name], M[name] = pair(name, cfn), pair(name, cfn)
end
Tensor.ger, M.ger = Tensor.outer, M.outer

-- addmm(bias, m1, m2, {beta = 1, alpha = 1}) = beta * bias + alpha * (m1 @ m2)
function M.addmm(bias, m1, m2, opts)
  T.handle("addmm", 1, bias); T.handle("addmm", 2, m1); T.handle("addmm", 3, m2)
  opts = args.opt_table("addmm", 4, opts) or {}
  local beta, alpha = args.number("addmm", 4, opts.beta, 1), args.number("addmm", 4, opts.alpha, 1)
  check(C.lt_addmm(out, bias.h, m1.h, m2.h, beta, alpha), "addmm")
  return wrap(out[0])
end
Tensor.addmm = M.addmm

---------------------------------------------------------------- joins and gathers
local function tensor_list(name, list)
  if type(list) ~= "table" then args.bad(name, 1, "table of Tensors", args.typename(list), 2) end
  local n = #list
  if n == 0 then error(name .. ": expected a non-empty table of Tensors", 3) end
  local arr = _C.TensorArray(n)
  for i = 1, n do
    if not istype(Ref, list[i]) then
      error(("bad argument #1 to '%s' (Tensor expected at position %d, got %s)"):format(name, i, args.typename(list[i])), 3)
    end
    arr[i - 1] = list[i].h
  end
  return arr, n
end

function M.cat(list, dim)
  local arr, n = tensor_list("cat", list)
  check(C.lt_cat(out, arr, n, args.int("cat", 2, dim, 0)), "cat")
  return wrap(out[0])
end
M.concat, M.concatenate = M.cat, M.cat

function M.stack(list, dim)
  local arr, n = tensor_list("stack", list)
  check(C.lt_stack(out, arr, n, args.int("stack", 2, dim, 0)), "stack")
  return wrap(out[0])
end

-- a .. b concatenates along dim 0
operators.concat = function(a, b) return M.cat({ a, b }, 0) end

function M.index_select(self, dim, index)
  T.handle("index_select", 1, self); T.handle("index_select", 3, index)
  check(C.lt_index_select(out, self.h, args.int("index_select", 2, dim), index.h), "index_select")
  return wrap(out[0])
end
Tensor.index_select = M.index_select

function M.gather(self, dim, index)
  T.handle("gather", 1, self); T.handle("gather", 3, index)
  check(C.lt_gather(out, self.h, args.int("gather", 2, dim), index.h), "gather")
  return wrap(out[0])
end
Tensor.gather = M.gather

function M.scatter(self, dim, index, src, ...)
  if select("#", ...) > 0 or type(src) == "number" then   -- reduce=, out=, a number value
    return fallback.call("scatter", self, dim, index, src, ...)
  end
  T.handle("scatter", 1, self); T.handle("scatter", 3, index); T.handle("scatter", 4, src)
  check(C.lt_scatter(out, self.h, args.int("scatter", 2, dim), index.h, src.h), "scatter")
  return wrap(out[0])
end
Tensor.scatter = M.scatter

function M.masked_select(self, mask)
  T.handle("masked_select", 1, self); T.handle("masked_select", 2, mask)
  check(C.lt_masked_select(out, self.h, mask.h), "masked_select")
  return wrap(out[0])
end
Tensor.masked_select = M.masked_select

function M.nonzero(self)
  T.handle("nonzero", 1, self)
  check(C.lt_nonzero(out, self.h), "nonzero")
  return wrap(out[0])
end
Tensor.nonzero = M.nonzero

---------------------------------------------------------------- softmax
local function softmax(name, log)
  return function(self, dim, ...)
    if select("#", ...) > 0 or (args.is_options(dim) and not fallback.only(dim, { dim = true })) then
      return fallback.call(name, self, dim, ...)
    end
    T.handle(name, 1, self)
    if args.is_options(dim) then dim = dim.dim end
    if dim == nil then error(name .. ": dim is required (implicit dim choice is deprecated in PyTorch)", 2) end
    check(C.lt_softmax(out, self.h, args.int(name, 2, dim), log and 1 or 0), name)
    return wrap(out[0])
  end
end
Tensor.softmax, Tensor.log_softmax = softmax("softmax", false), softmax("log_softmax", true)
M.softmax, M.log_softmax = Tensor.softmax, Tensor.log_softmax

return M
