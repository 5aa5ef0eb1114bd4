--[[
  torch._python_defaults — calls whose meaning in PyTorch comes from its Python wrapper, not from
  the ATen overload ltorch's dispatcher picks; each wrapper here gives the generated op the
  arguments the Python wrapper would, so the same call means the same thing.

    stft(input, n_fft, hop_length, win_length, window, center=True, pad_mode='reflect',
         normalized, onesided, return_complex): torch.functional.stft pads the signal by n_fft // 2
      on both sides when center is true, its default. ATen has two overloads: `stft` (no center,
      no padding) and `stft.center`; the dispatcher takes the first that accepts the arguments,
      so `torch.stft(x, {n_fft = 10, return_complex = true})` gave 21 frames of a 50-sample
      signal where PyTorch gives 26. Without a center argument (by position: the sixth, or by
      keyword) the call now passes center = true, which selects `stft.center` as in PyTorch.

    Python's *tensors: broadcast_tensors, block_diag, cartesian_prod, meshgrid, chain_matmul,
      atleast_1d/2d/3d take the tensors as separate arguments (torch.block_diag(a, b)), as PyTorch
      does; the Lua list form (torch.block_diag({a, b})) stays. einsum(equation, a, b) likewise.
    tensordot(a, b, dims=2): dims an integer (the last `dims` dims of a against the first of b)
      or a pair of lists ({{1, 0}, {0, 1}}), as torch.functional.tensordot; ATen's own four-list
      form (a, b, dims_a, dims_b) stays.
    norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None): p = 'nuc' is the nuclear
      norm (linalg.matrix_norm, as torch.functional.norm); dtype= and out= go to ATen's norm.
    nonzero(input, *, as_tuple=False): as_tuple = true gives one index tensor per dim (a list, as
      torch.where(cond) gives), ATen's nonzero_numpy.
    cdist(x1, x2, p=2.0, compute_mode=...): the mode by torch.cdist's names
      ('use_mm_for_euclid_dist_if_necessary', 'use_mm_for_euclid_dist', 'donot_use_mm_for_euclid_dist').
    gradient(input, *, spacing=, dim=, edge_order=): spacing may be a list of numbers, one per dim.
    empty_strided, empty_permuted (..., requires_grad=False): the keyword PyTorch's binding adds to
      every factory; the result gets requires_grad_.
]]
local args = require "torch._args"
local dispatch = require "torch._dispatch"
local P = require "torch._pysig"
local T = require "torch._tensor"

local M = {}

local CENTER_POSITION = 6   -- input, n_fft, hop_length, win_length, window, center

-- Returns the arguments with center = true added when the caller gave no center.
local function with_center(...)
  local a, n = args.pack(...)
  while n > 0 and a[n] == nil do n = n - 1 end
  local kw
  if n > 0 and args.is_options(a[n]) then kw, n = a[n], n - 1 end
  if n >= CENTER_POSITION or (kw and kw.center ~= nil) then return ... end
  local opts = {}
  for k, v in pairs(kw or {}) do opts[k] = v end
  opts.center = true
  a[n + 1] = opts
  return unpack(a, 1, n + 1)
end

local generated_stft, generated_stft_method
function M.stft(...)
  generated_stft = generated_stft or dispatch.function_for("stft", "torch.stft")
  return generated_stft(with_center(...))
end

---------------------------------------------------------------- Python's *tensors
local is_tensor = T.is_tensor

-- (a, b, ..., rest...) -> {a, b, ...}, rest...: the leading tensors as one list.
local function leading_tensors(...)
  local n, a = select("#", ...), { ... }
  local list, i = {}, 1
  while i <= n and is_tensor(a[i]) do list[i] = a[i]; i = i + 1 end
  return list, unpack(a, i, n)
end

-- f(a, b, ..., [opts]) -> f({a, b, ...}, [opts]) for the ATen op that takes a Tensor[]; a list
-- given as the first argument passes through. `single` (atleast_*) keeps f(a) as f(a).
local function tensors_varargs(name, single)
  local generated
  return function(...)
    generated = generated or dispatch.function_for(name, "torch." .. name)
    if not is_tensor((...)) or (single and not is_tensor((select(2, ...)))) then return generated(...) end
    return generated(leading_tensors(...))
  end
end

-- einsum(equation, a, b, ...) as torch.einsum(equation, *operands); einsum(equation, {a, b}) too.
local generated_einsum
local function einsum(equation, ...)
  generated_einsum = generated_einsum or dispatch.function_for("einsum", "torch.einsum")
  if is_tensor((...)) then return generated_einsum(equation, leading_tensors(...)) end
  return generated_einsum(equation, ...)
end

---------------------------------------------------------------- tensordot
local TENSORDOT = P.signature("tensordot", "a, b, dims=2, out=None")
local generated_tensordot

local function tensordot(a, b, dims, ...)
  generated_tensordot = generated_tensordot or dispatch.function_for("tensordot", "torch.tensordot")
  local rest = select("#", ...) > 0 and (...) or nil
  if type(dims) == "table" and not P.is_keywords(dims) and type(rest) == "table" and not P.is_keywords(rest) then
    return generated_tensordot(a, b, dims, ...)   -- ATen's (a, b, dims_a, dims_b[, opts])
  end
  local bound = P.bind(TENSORDOT, a, b, dims, ...)
  for i, name in ipairs({ "a", "b" }) do
    if not is_tensor(bound[name]) then P.fail("bad argument #%d to 'tensordot' (Tensor expected, got %s)", i,
      args.typename(bound[name])) end
  end
  local d, da, db = bound.dims, {}, {}
  if is_tensor(d) then d = d:numel() == 1 and d:item() or d:tolist() end
  if type(d) == "number" then
    if d < 0 or d ~= math.floor(d) then P.fail("tensordot expects dims >= 0, but got dims=%s", tostring(d)) end
    if d > bound.a:dim() or d > bound.b:dim() then
      P.fail("tensordot: dims=%s is more than the dims of a (%d) or b (%d)", tostring(d), bound.a:dim(), bound.b:dim())
    end
    for i = 1, d do da[i] = i - d - 1; db[i] = i - 1 end
  elseif type(d) == "table" and #d == 2 then
    da = type(d[1]) == "table" and d[1] or { d[1] }
    db = type(d[2]) == "table" and d[2] or { d[2] }
  else
    P.fail("tensordot expects dims to be an integer or a pair of lists of dims, got %s", args.typename(d))
  end
  if bound.out ~= nil then return generated_tensordot(bound.a, bound.b, da, db, { out = bound.out }) end
  return generated_tensordot(bound.a, bound.b, da, db)
end

---------------------------------------------------------------- norm, nonzero
local NORM = P.signature("norm", "input, p='fro', dim=None, keepdim=False, out=None, dtype=None")
local NORM_METHOD = P.signature("norm", "self, p='fro', dim=None, keepdim=False, dtype=None")   -- Tensor.norm: no out

local function python_norm(fast, sig)
  local generated_norm, matrix_norm
  return function(...)
    local a = P.bind(sig, ...)
    a.input = a.input or a.self
    if not is_tensor(a.input) then P.fail("bad argument #1 to 'norm' (Tensor expected, got %s)", args.typename(a.input)) end
    local kw = (a.out ~= nil or a.dtype ~= nil) and { out = a.out, dtype = a.dtype } or nil
    if a.p == "inf" then a.p = math.huge elseif a.p == "-inf" then a.p = -math.huge end   -- Lua's spelling of float('inf')
    if type(a.p) == "string" and a.p ~= "fro" then
      -- 'nuc' (and any other string: PyTorch's error) goes to linalg.matrix_norm, over all dims
      -- when dim is not given, as torch.functional.norm does
      matrix_norm = matrix_norm or dispatch.function_for("linalg_matrix_norm", "torch.linalg.matrix_norm")
      local dim = a.dim
      if dim == nil then
        dim = {}
        for d = 1, a.input:dim() do dim[d] = d - 1 end
      end
      return matrix_norm(a.input, a.p, type(dim) == "table" and dim or { dim }, a.keepdim, kw)
    end
    if kw == nil then return fast(a.input, a.p, a.dim, a.keepdim) end
    generated_norm = generated_norm or dispatch.function_for("norm", "torch.norm")
    local p = (a.p == "fro") and 2 or a.p
    if a.dim == nil then return generated_norm(a.input, p, kw) end
    return generated_norm(a.input, p, type(a.dim) == "table" and a.dim or { a.dim }, a.keepdim, kw)
  end
end

local function python_nonzero(previous)
  local numpy
  return function(self, opts, ...)
    if P.is_keywords(opts) and opts.as_tuple ~= nil then
      local rest = {}
      for k, v in pairs(opts) do if k ~= "as_tuple" then rest[k] = v end end
      if next(rest) ~= nil then P.fail("nonzero: as_tuple cannot be combined with %s", (next(rest))) end
      if opts.as_tuple then
        numpy = numpy or dispatch.function_for("nonzero_numpy", "torch.nonzero")
        return numpy(self)
      end
      return previous(self)
    end
    return previous(self, opts, ...)
  end
end

---------------------------------------------------------------- requires_grad= of the factories
-- PyTorch's Python binding gives every factory requires_grad=; ATen's schemas of the factories the
-- generated surface serves (empty_strided, empty_permuted) have no such parameter: the keyword is
-- taken off, the op runs, and the result gets requires_grad_ (which refuses integer dtypes with
-- PyTorch's message).
local function factory_requires_grad(name)
  local generated
  return function(...)
    generated = generated or dispatch.function_for(name, "torch." .. name)
    local a, n = args.pack(...)
    while n > 0 and a[n] == nil do n = n - 1 end
    local kw = n > 0 and args.is_options(a[n]) and a[n] or nil
    if kw == nil or kw.requires_grad == nil then return generated(...) end
    local opts = {}
    for k, v in pairs(kw) do if k ~= "requires_grad" then opts[k] = v end end
    if next(opts) == nil then n = n - 1 else a[n] = opts end   -- an empty table would read as a list
    local rg = kw.requires_grad
    if type(rg) ~= "boolean" then
      P.fail("%s(): argument 'requires_grad' must be bool, not %s", name, args.typename(rg))
    end
    local t = generated(unpack(a, 1, n))
    if rg and not (t.dtype.is_floating_point or t.dtype.is_complex) then
      P.fail("torch.%s: Only Tensors of floating point and complex dtype can require gradients", name)
    end
    if rg then t:requires_grad_(true) end
    return t
  end
end

---------------------------------------------------------------- cdist, gradient
-- cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'): torch.functional.cdist
-- maps the mode's name to ATen's code (None, 1, 2).
local CDIST = P.signature("cdist", "x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'")
local CDIST_MODES = { use_mm_for_euclid_dist_if_necessary = false, use_mm_for_euclid_dist = 1,
  donot_use_mm_for_euclid_dist = 2 }
local generated_cdist
local function cdist(...)
  generated_cdist = generated_cdist or dispatch.function_for("cdist", "torch.cdist")
  local a = P.bind(CDIST, ...)
  local code = CDIST_MODES[a.compute_mode]
  if code == nil then P.fail("%s is not a valid value for compute_mode", tostring(a.compute_mode)) end
  return generated_cdist(a.x1, a.x2, a.p, code or nil)
end

--[[ gradient(input, *, spacing=1, dim=None, edge_order=1) with spacing a list of numbers (ATen's
     gradient.scalararray / .scalarrayarray, Scalar[] overloads the generated surface does not
     bind): each dim's gradient is the scalar-spacing one along that dim alone, which is what
     ATen computes; the dims and sizes are checked first by the scalar overload over every dim,
     so errors are ATen's. Any other spacing goes to the generated op. ]]
local generated_gradient
local function is_number_list(v)
  return type(v) == "table" and not is_tensor(v) and type(v[1]) == "number"
end
local function gradient(input, kw, ...)
  generated_gradient = generated_gradient or dispatch.function_for("gradient", "torch.gradient")
  if select("#", ...) > 0 or not args.is_options(kw) or not is_number_list(kw.spacing) then
    return generated_gradient(input, kw, ...)
  end
  local spacing, dim, edge_order = kw.spacing, kw.dim, kw.edge_order or 1
  for k in pairs(kw) do
    if k ~= "spacing" and k ~= "dim" and k ~= "edge_order" then return generated_gradient(input, kw, ...) end
  end
  if type(dim) == "number" then dim = { dim } end
  if not is_tensor(input) then return generated_gradient(input, kw, ...) end
  local dims = dim
  if dims == nil then
    if #spacing ~= input:dim() then
      P.fail("torch.gradient: torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
        .. "equal to 'self.dim() = %d', since dim argument was not given, but got a list of length %d",
        input:dim(), #spacing)
    end
    dims = {}
    for i = 1, input:dim() do dims[i] = i - 1 end
  elseif #spacing ~= #dims then
    P.fail("torch.gradient: torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
      .. "arguments to have the same length, but got a spacing argument of length %d and a dim argument of "
      .. "length %d.", #spacing, #dims)
  end
  generated_gradient(input, { spacing = 1, dim = dims, edge_order = edge_order })   -- ATen's checks
  local out = {}
  for i, d in ipairs(dims) do
    out[i] = generated_gradient(input, { spacing = spacing[i], dim = { d }, edge_order = edge_order })[1]
  end
  return out
end

function M.install(torch, Tensor)
  torch.cdist = cdist
  torch.gradient = gradient
  for _, name in ipairs({ "empty_strided", "empty_permuted" }) do torch[name] = factory_requires_grad(name) end
  torch.stft = M.stft
  for _, name in ipairs({ "broadcast_tensors", "block_diag", "cartesian_prod", "meshgrid", "chain_matmul" }) do
    torch[name] = tensors_varargs(name)
  end
  for _, name in ipairs({ "atleast_1d", "atleast_2d", "atleast_3d" }) do torch[name] = tensors_varargs(name, true) end
  torch.einsum = einsum
  torch.tensordot = tensordot
  torch.norm = python_norm(torch.norm, NORM)
  Tensor.norm = python_norm(Tensor.norm, NORM_METHOD)
  torch.nonzero = python_nonzero(torch.nonzero)
  Tensor.nonzero = python_nonzero(Tensor.nonzero)
  function Tensor.stft(...)
    generated_stft_method = generated_stft_method or dispatch.method_for("stft")
    return generated_stft_method(with_center(...))
  end
end

return M
