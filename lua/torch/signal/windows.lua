--[[
  torch.signal.windows — PyTorch 2.11's window functions (https://pytorch.org/docs/2.11/signal.html;
  torch/signal/windows/windows.py), written as PyTorch writes them: a linspace over the window's
  abscissae, then elementwise ops, so values, dtypes and gradients are PyTorch's.

      torch.signal.windows.hann(10)                              -- periodic = {sym = false}
      torch.signal.windows.kaiser(8, {beta = 5.0, dtype = torch.float64})
      torch.signal.windows.general_cosine(6, {a = {0.46, 0.23, 0.31}, sym = false})
      torch.signal.windows.exponential(5, {tau = 0.5, sym = false, center = 1.0})

  Every window takes M (its length) positionally and keywords only after it: sym (true: symmetric,
  for filter design; false: periodic, for spectral analysis), dtype (float32 or float64; default
  torch.get_default_dtype()), layout (strided only), device, requires_grad, and its own
  parameters (exponential: center, tau; gaussian: std; kaiser: beta; general_cosine: a;
  general_hamming: alpha). Bad inputs raise PyTorch's messages; hamming, hann, general_hamming and
  nuttall, which PyTorch computes through general_cosine, name general_cosine in them:
      general_cosine requires non-negative window length, got M=-1
      kaiser expects float32 or float64 dtypes, got: torch.int64
      gaussian is implemented for strided tensors only, got: torch.sparse_coo
]]
local P = require "torch._pysig"
local W = require "torch._pywrap"
local T = require "torch._tensor"
local torch = require "torch"

local M = {}

local COMMON = "sym=True, dtype=None, layout=None, device=None, requires_grad=False"

-- Layouts spelt as Python prints them: torch.strided, torch.sparse_coo, ...
local function layout_name(layout)
  local s = tostring(layout)
  if not s:find("^torch%.") then s = "torch." .. s end
  return s
end

-- _window_function_checks; returns the dtype (the default dtype when none was given).
local function checks(name, a)
  local m, dtype = a.M, a.dtype or torch.get_default_dtype()
  if type(m) ~= "number" then error(("%s(): argument 'M' must be int, not %s"):format(name, type(m))) end
  if m < 0 then error(("%s requires non-negative window length, got M=%d"):format(name, m)) end
  local layout = a.layout
  if layout ~= nil and layout_name(layout) ~= "torch.strided" then
    error(("%s is implemented for strided tensors only, got: %s"):format(name, layout_name(layout)))
  end
  if dtype ~= torch.float32 and dtype ~= torch.float64 then
    error(("%s expects float32 or float64 dtypes, got: %s"):format(name, tostring(dtype)))
  end
  return dtype
end

local function options(a, dtype)
  return { dtype = dtype, device = a.device, requires_grad = a.requires_grad }
end

-- The window of length 0 or 1 every window but exponential, cosine and gaussian starts with.
local function trivial(a, dtype)
  if a.M == 0 then return torch.empty({ 0 }, options(a, dtype)) end
  if a.M == 1 then return torch.ones({ 1 }, options(a, dtype)) end
end

-- M points from start by step (PyTorch's linspace(start, start + (M - 1) * step, M)).
local function abscissae(a, dtype, start, step)
  return torch.linspace(start, start + (a.M - 1) * step, a.M, options(a, dtype))
end

local function define(name, params, impl)
  local sig = P.signature(name, "M, *, " .. (params ~= "" and params .. ", " or "") .. COMMON)
  M[name] = function(...)
    local a = W.bind(sig, 2, ...)
    return W.call(2, impl, a)
  end
end

-- w[n] = exp(-|n - center| / tau)
define("exponential", "center=None, tau=1.0", function(a)
  local dtype = checks("exponential", a)
  if a.tau <= 0 then error(("Tau must be positive, got: %s instead."):format(tostring(a.tau))) end
  if a.sym and a.center ~= nil then error("Center must be None for symmetric windows") end
  if a.M == 0 then return torch.empty({ 0 }, options(a, dtype)) end
  local center = a.center or ((not a.sym and a.M > 1) and a.M or a.M - 1) / 2.0
  local c = 1 / a.tau
  local k = torch.linspace(-center * c, (-center + (a.M - 1)) * c, a.M, options(a, dtype))
  return torch.exp(-torch.abs(k))
end)

-- w[n] = sin(pi (n + 0.5) / M)
define("cosine", "", function(a)
  local dtype = checks("cosine", a)
  if a.M == 0 then return torch.empty({ 0 }, options(a, dtype)) end
  local c = math.pi / ((not a.sym and a.M > 1) and a.M + 1 or a.M)
  return torch.sin(abscissae(a, dtype, 0.5 * c, c))
end)

-- w[n] = exp(-n^2 / (2 std^2)), n centred on the window
define("gaussian", "std=1.0", function(a)
  local dtype = checks("gaussian", a)
  if a.std <= 0 then error(("Standard deviation must be positive, got: %s instead."):format(tostring(a.std))) end
  if a.M == 0 then return torch.empty({ 0 }, options(a, dtype)) end
  local start = -((not a.sym and a.M > 1) and a.M or a.M - 1) / 2.0
  local c = 1 / (a.std * math.sqrt(2))
  local k = abscissae(a, dtype, start * c, c)
  return torch.exp(-(k ^ 2))
end)

-- w[n] = I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta); beta is a tensor of the window's
-- dtype, as in PyTorch, so the end point rounds as PyTorch's does.
define("kaiser", "beta=12.0", function(a)
  local dtype = checks("kaiser", a)
  if a.beta < 0 then error(("beta must be non-negative, got: %s instead."):format(tostring(a.beta))) end
  local w = trivial(a, dtype)
  if w then return w end
  local beta = torch.tensor(a.beta, { dtype = dtype, device = a.device })
  local start = -beta
  local c = 2.0 * beta / (a.sym and a.M - 1 or a.M)
  local stop = torch.minimum(beta, start + (a.M - 1) * c)
  local k = torch.linspace(start:item(), stop:item(), a.M, options(a, dtype))
  return torch.i0(torch.sqrt(beta * beta - torch.pow(k, 2))) / torch.i0(beta)
end)

-- w[n] = 1 - |2n / (M - 1) - 1|
define("bartlett", "", function(a)
  local dtype = checks("bartlett", a)
  local w = trivial(a, dtype)
  if w then return w end
  local k = abscissae(a, dtype, -1, 2 / (a.sym and a.M - 1 or a.M))
  return 1 - torch.abs(k)
end)

-- w[n] = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))
local function general_cosine(a, coefficients)
  local dtype = checks("general_cosine", a)
  local w = trivial(a, dtype)
  if w then return w end
  if T.is_tensor(coefficients) then coefficients = coefficients:reshape(-1):tolist() end
  if type(coefficients) ~= "table" then error("Coefficients must be a list/tuple") end
  if #coefficients == 0 then error("Coefficients cannot be empty") end
  local k = abscissae(a, dtype, 0, 2 * math.pi / (a.sym and a.M - 1 or a.M))
  local signed = {}
  for i, v in ipairs(coefficients) do signed[i] = (i % 2 == 1 and 1 or -1) * v end
  local a_i = torch.tensor(signed, options(a, dtype))
  local i = torch.arange(#signed, { dtype = dtype, device = a.device, requires_grad = a.requires_grad })
  return (a_i:unsqueeze(-1) * torch.cos(i:unsqueeze(-1) * k)):sum(0)
end

define("general_cosine", "a", function(a) return general_cosine(a, a.a) end)
define("general_hamming", "alpha=0.54", function(a) return general_cosine(a, { a.alpha, 1.0 - a.alpha }) end)
define("hamming", "", function(a) return general_cosine(a, { 0.54, 1.0 - 0.54 }) end)
define("hann", "", function(a) return general_cosine(a, { 0.5, 0.5 }) end)
define("nuttall", "", function(a) return general_cosine(a, { 0.3635819, 0.4891775, 0.1365995, 0.0106411 }) end)

define("blackman", "", function(a)
  checks("blackman", a)
  return general_cosine(a, { 0.42, 0.5, 0.08 })
end)

return M
