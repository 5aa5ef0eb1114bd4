--[[
  torch.nn.parametrizations — torch.nn.utils.parametrizations: weight_norm, spectral_norm and
  orthogonal as parametrizations (torch/nn/utils/parametrizations.py), registered with
  torch.nn.parametrize:

    weight_norm(module, name="weight", dim=0) -> module
        weight = original1 * (original0 / ||original1||), the norm over every dim but `dim`
        (dim=nil: the whole tensor); state dict "parametrizations.weight.original0" (g) and
        ".original1" (v). A state dict with the hook form's name_g / name_v keys loads too.
    spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=nil) -> module
        weight = original / sigma, sigma from the power method on the weight as a matrix (dim
        first; dim=nil: 1 for ConvTranspose, else 0), u and v kept as buffers of the
        parametrization ("parametrizations.weight.0._u", "._v") and advanced
        n_power_iterations steps per access in training mode; 15 steps at registration.
    orthogonal(module, name="weight", orthogonal_map=nil, {use_trivialization = true}) -> module
        weight an orthogonal matrix (or batch), mapped from the original by "matrix_exp",
        "cayley" or "householder" (default: matrix_exp for square matrices, else householder);
        with use_trivialization a buffer "parametrizations.weight.0.base" holds the current
        orthogonal base.

  Random draws (spectral norm's u and v; orthogonal's completion of a non-square base) are
  PyTorch's under the same seed.

  Usage:  local m = nn.utils.parametrizations.weight_norm(nn.Linear(20, 40))
          m.parametrizations.weight.original0   -- g
]]
local torch = require "torch"
local P = require "torch._pysig"
local module = require "torch.nn.module"
local conv = require "torch.nn.conv"
local F = require "torch.nn.functional"
local parametrize = require "torch.nn.parametrize"

local Module = module.Module

local M = {}

local function tensor_of(fname, m, name)
  if not module.is_module(m) then P.fail("bad argument #1 to '%s' (Module expected, got %s)", fname, type(m)) end
  local ok, w = pcall(function() return m[name] end)
  if not ok or not torch.is_tensor(w) then
    P.fail("%s: Module '%s' has no parameter or buffer with name '%s'", fname, m._class.__name, tostring(name))
  end
  return w
end

---------------------------------------------------------------- weight norm
local WeightNorm = Module:extend("_WeightNorm")

function WeightNorm:__init(dim)
  self.dim = dim == nil and -1 or dim
end
function WeightNorm:forward(weight_g, weight_v) return torch._weight_norm(weight_v, weight_g, self.dim) end
function WeightNorm:right_inverse(weight) return torch.norm_except_dim(weight, 2, self.dim), weight end

-- The hook form's keys (prefix .. name_g / name_v) renamed to original0 / original1.
local function weight_norm_compat(name)
  return function(sd, prefix)
    local g_key, v_key = prefix .. name .. "_g", prefix .. name .. "_v"
    if sd[g_key] ~= nil and sd[v_key] ~= nil then
      sd[prefix .. "parametrizations." .. name .. ".original0"], sd[g_key] = sd[g_key], nil
      sd[prefix .. "parametrizations." .. name .. ".original1"], sd[v_key] = sd[v_key], nil
    end
  end
end

local WEIGHT_NORM = P.signature("weight_norm", "module, name='weight', dim=0")
function M.weight_norm(...)
  local a = P.bind(WEIGHT_NORM, ...)
  tensor_of("weight_norm", a.module, a.name)
  parametrize.register_parametrization(a.module, a.name, WeightNorm(a.dim), { unsafe = true })
  a.module:_register_load_state_dict_pre_hook(weight_norm_compat(a.name))
  return a.module
end

---------------------------------------------------------------- spectral norm
local SpectralNorm = Module:extend("_SpectralNorm")

-- weight (ndim > 1) as a (size(dim), -1) matrix, `dim` moved first.
function SpectralNorm:_reshape_weight_to_matrix(weight)
  if self.dim ~= 0 then
    local order = { self.dim }
    for d = 0, weight:dim() - 1 do if d ~= self.dim then order[#order + 1] = d end end
    weight = weight:permute(order)
  end
  return weight:flatten(1)
end

-- n steps of the power method, u and v updated in place (no grad).
function SpectralNorm:_power_method(weight_mat, n)
  torch.no_grad(function()
    local u, v = self._u, self._v
    for _ = 1, n do
      u:copy_(F.normalize(torch.mv(weight_mat, v), { dim = 0, eps = self.eps }))
      v:copy_(F.normalize(torch.mv(weight_mat.mH, u), { dim = 0, eps = self.eps }))
    end
  end)
end

function SpectralNorm:__init(weight, n_power_iterations, dim, eps)
  local ndim = weight:dim()
  if dim >= ndim or dim < -ndim then
    P.fail("spectral_norm: Dimension out of range (expected to be in range of [-%d, %d] but got %d)", ndim, ndim - 1, dim)
  end
  if type(n_power_iterations) ~= "number" or n_power_iterations <= 0 then
    P.fail("spectral_norm: Expected n_power_iterations to be positive, but got n_power_iterations=%s",
      tostring(n_power_iterations))
  end
  self.dim = dim >= 0 and dim or dim + ndim
  self.eps = eps
  if ndim > 1 then
    self.n_power_iterations = n_power_iterations
    local mat = torch.no_grad(function() return self:_reshape_weight_to_matrix(weight) end)
    local f = { dtype = mat.dtype, device = mat.device }
    local u = torch.empty(mat:size(0), f):normal_(0, 1)
    local v = torch.empty(mat:size(1), f):normal_(0, 1)
    self:register_buffer("_u", F.normalize(u, { dim = 0, eps = eps }))
    self:register_buffer("_v", F.normalize(v, { dim = 0, eps = eps }))
    self:_power_method(mat, 15)
  end
end

function SpectralNorm:forward(weight)
  if weight:dim() == 1 then return F.normalize(weight, { dim = 0, eps = self.eps }) end
  local mat = self:_reshape_weight_to_matrix(weight)
  if self.training then self:_power_method(mat, self.n_power_iterations) end
  local u, v = self._u:clone(), self._v:clone()
  return weight / torch.vdot(u, torch.mv(mat, v))
end

function SpectralNorm:right_inverse(value) return value end

local function is_conv_transpose(m) return conv.is_transposed(parametrize.type_before_parametrizations(m)) end

local SPECTRAL_NORM = P.signature("spectral_norm", "module, name='weight', n_power_iterations=1, eps=1e-12, dim=None")
function M.spectral_norm(...)
  local a = P.bind(SPECTRAL_NORM, ...)
  local weight = tensor_of("spectral_norm", a.module, a.name)
  local dim = a.dim
  if dim == nil then dim = is_conv_transpose(a.module) and 1 or 0 end
  parametrize.register_parametrization(a.module, a.name, SpectralNorm(weight, a.n_power_iterations, dim, a.eps))
  return a.module
end

---------------------------------------------------------------- orthogonal
local Orthogonal = Module:extend("_Orthogonal")
local MAPS = { matrix_exp = true, cayley = true, householder = true }
local EPS = { [torch.float32] = 2 ^ -23, [torch.float64] = 2 ^ -52, [torch.float16] = 2 ^ -10, [torch.bfloat16] = 2 ^ -7 }

function Orthogonal:__init(weight, orthogonal_map, use_trivialization)
  if weight:is_complex() and orthogonal_map == "householder" then
    P.fail("orthogonal: The householder parametrization does not support complex tensors.")
  end
  self.shape = weight:size()
  self.orthogonal_map = orthogonal_map
  self.use_trivialization = use_trivialization
  if use_trivialization then self:register_buffer("base", nil) end
end

-- Q from A by QR (Householder), the signs fixed so that R has a positive diagonal.
local function make_orthogonal(a)
  local x, tau = torch.geqrf(a)
  local q = torch.linalg.householder_product(x, tau)
  return q * x:diagonal(0, -2, -1):sgn():unsqueeze(-2)
end

function Orthogonal:forward(x)
  local n, k = x:size(-2), x:size(-1)
  local transposed = n < k
  if transposed then x, n, k = x.mT, k, n end
  local q
  if self.orthogonal_map == "householder" then
    local a = x:tril(-1)
    local tau = 2.0 / (1.0 + (a * a):sum(-2))
    q = torch.linalg.householder_product(a, tau)
    q = q * x:diagonal(0, -2, -1):int():unsqueeze(-2)
  else
    x = x:tril()
    if n ~= k then
      local pad_shape = x:size()
      pad_shape[#pad_shape] = n - k
      x = torch.cat({ x, x:new_zeros(n, n - k):expand(pad_shape) }, -1)
    end
    local a = x - x.mH
    if self.orthogonal_map == "matrix_exp" then
      q = torch.matrix_exp(a)
    else
      local id = torch.eye(n, { dtype = a.dtype, device = a.device })
      q = torch.linalg.solve(torch.add(id, a, { alpha = -0.5 }), torch.add(id, a, { alpha = 0.5 }))
    end
    if n ~= k then q = q:narrow(-1, 0, k) end
  end
  if self.use_trivialization then q = self.base:matmul(q) end
  if transposed then q = q.mT end
  return q
end

function Orthogonal:right_inverse(q)
  return torch.no_grad(function() return self:_right_inverse(q) end)
end

function Orthogonal:_right_inverse(q)
  if table.concat(q:size(), ",") ~= table.concat(self.shape, ",") then
    P.fail("orthogonal: Expected a matrix or batch of matrices of shape [%s]. Got a tensor of shape [%s].",
      table.concat(self.shape, ", "), table.concat(q:size(), ", "))
  end
  local q_init = q
  local n, k = q:size(-2), q:size(-1)
  local transpose = n < k
  if transpose then q, n, k = q.mT, k, n end
  if not self.use_trivialization then
    if self.orthogonal_map ~= "householder" then
      parametrize.NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
        .. "parametrizations when use_trivialization=False.")
    end
    local a, tau = torch.geqrf(q)
    local d = a:diagonal(0, -2, -1)
    d:sign_()
    d:copy_(torch.where(tau:eq(0), -d, d))
    return transpose and a.mT or a
  end
  if n == k then
    local id = torch.eye(k, { dtype = q.dtype, device = q.device })
    local is_orth = torch.allclose(q.mH:matmul(q), id, { atol = 10 * n * (EPS[q.dtype] or 2 ^ -23) })
    q = is_orth and q:clone() or make_orthogonal(q)
  else
    local size = q:size()
    size[#size] = n - k
    q = make_orthogonal(torch.cat({ q, torch.randn(size, { dtype = q.dtype, device = q.device }) }, -1))
  end
  self:register_buffer("base", q)
  local neg_id = torch.zeros_like(q_init)
  neg_id:diagonal(0, -2, -1):fill_(-1.0)
  return neg_id
end

local ORTHOGONAL = P.signature("orthogonal", "module, name='weight', orthogonal_map=None, *, use_trivialization=True")
function M.orthogonal(...)
  local a = P.bind(ORTHOGONAL, ...)
  local weight = tensor_of("orthogonal", a.module, a.name)
  if weight:dim() < 2 then
    P.fail("orthogonal: Expected a matrix or batch of matrices. Got a tensor of %d dimensions.", weight:dim())
  end
  local map = a.orthogonal_map
  if map == nil then
    map = (weight:size(-2) == weight:size(-1) or weight:is_complex()) and "matrix_exp" or "householder"
  end
  if not MAPS[map] then
    P.fail('orthogonal: orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: %s', tostring(map))
  end
  parametrize.register_parametrization(a.module, a.name, Orthogonal(weight, map, a.use_trivialization), { unsafe = true })
  return a.module
end

return M
