--[[
  torch.nn.utils_norm_hooks — the hook forms of weight and spectral normalisation
  (torch/nn/utils/weight_norm.py, spectral_norm.py), gathered into torch.nn.utils:

    weight_norm(module, name="weight", dim=0) -> module
        replaces parameter `name` by name_g (the norm over every dim but `dim`; dim=nil: the whole
        tensor) and name_v (the direction); before each forward a pre-hook sets
        module[name] = name_v * (name_g / ||name_v||). PyTorch deprecates this form in favour
        of nn.utils.parametrizations.weight_norm and warns once, as here.
    remove_weight_norm(module, name="weight")  puts the computed weight back as a parameter
    spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=nil) -> module
        keeps the parameter as name_orig and the power-iteration vectors as buffers name_u,
        name_v; before each forward module[name] = name_orig / sigma, sigma estimated by
        n_power_iterations steps of the power method (in training mode only). dim=nil: 1 for
        ConvTranspose layers, else 0.
    remove_spectral_norm(module, name="weight")

  State dict keys are PyTorch's (Linear: bias, weight_g, weight_v / bias, weight_orig,
  weight_u, weight_v); u and v start from the same random draws as PyTorch's under the same seed.
  Gradients flow to name_g/name_v and name_orig through the recomputed weight.

  Usage:  local m = nn.utils.weight_norm(nn.Linear(20, 40)); print(m.weight_g:size())
]]
local torch = require "torch"
local P = require "torch._pysig"
local module = require "torch.nn.module"
local conv = require "torch.nn.conv"
local F = require "torch.nn.functional"

local Parameter = module.Parameter

local M = {}

-- module -> { ["weight_norm weight"] = { handle = the pre-hook's handle, opts = its settings }, ... }
local hooks = setmetatable({}, { __mode = "k" })

local function find_hook(m, kind, name)
  local mine = hooks[m]
  return mine and mine[kind .. " " .. name]
end

local function add_hook(m, kind, name, fn, opts)
  hooks[m] = hooks[m] or {}
  hooks[m][kind .. " " .. name] = { handle = m:register_forward_pre_hook(fn), opts = opts }
end

local function drop_hook(m, kind, name)
  find_hook(m, kind, name).handle.remove()
  hooks[m][kind .. " " .. name] = nil
end

local function check_module(fname, m, name)
  if not module.is_module(m) then P.fail("bad argument #1 to '%s' (Module expected, got %s)", fname, type(m)) end
  if type(name) ~= "string" then P.fail("bad argument #2 to '%s' (string expected, got %s)", fname, type(name)) end
end

---------------------------------------------------------------- weight norm
function M._warn(msg) require("torch._warnings").warn(msg, nil, "FutureWarning") end
local warned = false
function M._reset_warnings() warned = false end   -- specs

local WEIGHT_NORM = P.signature("weight_norm", "module, name='weight', dim=0")
function M.weight_norm(...)
  local a = P.bind(WEIGHT_NORM, ...)
  local m, name, dim = a.module, a.name, a.dim == nil and -1 or a.dim
  check_module("weight_norm", m, name)
  if not warned then
    warned = true
    M._warn("`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.")
  end
  if find_hook(m, "weight_norm", name) then
    P.fail("weight_norm: Cannot register two weight_norm hooks on the same parameter %s", name)
  end
  local weight = m._parameters.values[name]
  if weight == nil then P.fail("weight_norm: module has no parameter '%s'", name) end
  local function compute() return torch._weight_norm(m[name .. "_v"], m[name .. "_g"], dim) end
  m:register_parameter(name, nil)
  m:register_parameter(name .. "_g", Parameter(torch.norm_except_dim(weight:detach(), 2, dim)))
  m:register_parameter(name .. "_v", Parameter(weight:detach()))
  m[name] = compute()
  add_hook(m, "weight_norm", name, function(self) self[name] = compute() end, { dim = dim })
  return m
end

local REMOVE_WEIGHT_NORM = P.signature("remove_weight_norm", "module, name='weight'")
function M.remove_weight_norm(...)
  local a = P.bind(REMOVE_WEIGHT_NORM, ...)
  local m, name = a.module, a.name
  check_module("remove_weight_norm", m, name)
  if not find_hook(m, "weight_norm", name) then
    P.fail("remove_weight_norm: weight_norm of '%s' not found in %s", name, tostring(m))
  end
  local dim = find_hook(m, "weight_norm", name).opts.dim
  local weight = torch._weight_norm(m[name .. "_v"], m[name .. "_g"], dim)
  drop_hook(m, "weight_norm", name)
  rawset(m, name, nil)
  m[name .. "_g"], m[name .. "_v"] = nil, nil
  m[name] = Parameter(weight:detach())
  return m
end

---------------------------------------------------------------- spectral norm
-- weight as a (size(dim), -1) matrix, `dim` moved first.
local function weight_matrix(weight, dim)
  if dim ~= 0 then
    local order = { dim }
    for d = 0, weight:dim() - 1 do if d ~= dim then order[#order + 1] = d end end
    weight = weight:permute(order)
  end
  return weight:reshape(weight:size(0), -1)
end

local function spectral_weight(m, name, o, power)
  local weight, u, v = m[name .. "_orig"], m[name .. "_u"], m[name .. "_v"]
  local mat = weight_matrix(weight, o.dim)
  if power then
    torch.no_grad(function()
      for _ = 1, o.n_power_iterations do
        v:copy_(F.normalize(torch.mv(mat:t(), u), { dim = 0, eps = o.eps }))
        u:copy_(F.normalize(torch.mv(mat, v), { dim = 0, eps = o.eps }))
      end
    end)
    u, v = u:clone(), v:clone()
  end
  return weight / torch.dot(u, torch.mv(mat, v))
end

local function is_conv_transpose(m) return conv.is_transposed(rawget(m, "_class")) end

local SPECTRAL_NORM = P.signature("spectral_norm", "module, name='weight', n_power_iterations=1, eps=1e-12, dim=None")
function M.spectral_norm(...)
  local a = P.bind(SPECTRAL_NORM, ...)
  local m, name = a.module, a.name
  check_module("spectral_norm", m, name)
  local o = { n_power_iterations = a.n_power_iterations, eps = a.eps, dim = a.dim }
  if o.dim == nil then o.dim = is_conv_transpose(m) and 1 or 0 end
  if find_hook(m, "spectral_norm", name) then
    P.fail("spectral_norm: Cannot register two spectral_norm hooks on the same parameter %s", name)
  end
  if type(o.n_power_iterations) ~= "number" or o.n_power_iterations <= 0 then
    P.fail("spectral_norm: Expected n_power_iterations to be positive, but got n_power_iterations=%s",
      tostring(o.n_power_iterations))
  end
  local weight = m._parameters.values[name]
  if weight == nil then P.fail("spectral_norm: `SpectralNorm` cannot be applied as parameter `%s` is None", name) end
  if o.dim < 0 then o.dim = o.dim + weight:dim() end
  local u, v = torch.no_grad(function()
    local mat = weight_matrix(weight, o.dim)
    local h, w = mat:size(0), mat:size(1)
    local f = { dtype = weight.dtype, device = weight.device }
    local u0 = F.normalize(torch.empty(h, f):normal_(0, 1), { dim = 0, eps = o.eps })
    return u0, F.normalize(torch.empty(w, f):normal_(0, 1), { dim = 0, eps = o.eps })
  end)
  m:register_parameter(name, nil)
  m:register_parameter(name .. "_orig", weight)
  m[name] = weight:detach()
  m:register_buffer(name .. "_u", u)
  m:register_buffer(name .. "_v", v)
  add_hook(m, "spectral_norm", name, function(self) self[name] = spectral_weight(self, name, o, self.training) end, o)
  return m
end

local REMOVE_SPECTRAL_NORM = P.signature("remove_spectral_norm", "module, name='weight'")
function M.remove_spectral_norm(...)
  local a = P.bind(REMOVE_SPECTRAL_NORM, ...)
  local m, name = a.module, a.name
  check_module("remove_spectral_norm", m, name)
  if not find_hook(m, "spectral_norm", name) then
    P.fail("remove_spectral_norm: spectral_norm of '%s' not found in %s", name, tostring(m))
  end
  local o = find_hook(m, "spectral_norm", name).opts
  local weight = torch.no_grad(function() return spectral_weight(m, name, o, false) end)
  drop_hook(m, "spectral_norm", name)
  rawset(m, name, nil)
  m[name .. "_u"], m[name .. "_v"], m[name .. "_orig"] = nil, nil, nil
  m:register_parameter(name, Parameter(weight:detach()))
  return m
end

return M
