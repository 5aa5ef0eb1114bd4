--[[
  torch.nn.initializers — nn.init: PyTorch's parameter initialisers, with the same fan
  computations and distributions (torch/nn/init.py), all in place and under no_grad:
  uniform_, normal_, constant_, zeros_, ones_, eye_, dirac_, xavier_uniform_, xavier_normal_,
  kaiming_uniform_, kaiming_normal_, trunc_normal_, orthogonal_, sparse_, calculate_gain, and
  PyTorch's deprecated names without the underscore (nn.init.uniform, ...), which warn once.

  Arguments bind as PyTorch's (positional, keyword or mixed). Given the same seed, the random
  ones draw the same numbers as PyTorch (same libtorch generator, same calls in the same order);
  `generator=` is refused (ltorch has no Generator objects: seed with torch.manual_seed).

  Usage:  nn.init.kaiming_uniform_(w, {a = math.sqrt(5)}); nn.init.zeros_(b)
          nn.init.dirac_(conv.weight, 2); nn.init.sparse_(w, 0.1)
]]
local torch = require "torch"
local P = require "torch._pysig"

local M = {}

-- fan_in, fan_out of a weight: (out, in, *kernel) as PyTorch's _calculate_fan_in_and_fan_out.
function M.calculate_fan_in_and_fan_out(t)
  local dim = t:dim()
  if dim < 2 then
    P.fail("nn.init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions")
  end
  local receptive = 1
  for d = 2, dim - 1 do receptive = receptive * t:size(d) end
  return t:size(1) * receptive, t:size(0) * receptive
end

local LINEAR = { linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
  conv_transpose2d = true, conv_transpose3d = true, sigmoid = true }

local GAIN = P.signature("calculate_gain", "nonlinearity, param=None")
function M.calculate_gain(...)
  local a = P.bind(GAIN, ...)
  local nonlinearity, param = a.nonlinearity, a.param
  if LINEAR[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2) end
  if nonlinearity == "leaky_relu" then
    local slope = param or 0.01
    if type(slope) ~= "number" then P.fail("nn.init.calculate_gain: negative_slope %s not a valid number", tostring(slope)) end
    return math.sqrt(2 / (1 + slope * slope))
  end
  if nonlinearity == "selu" then return 3 / 4 end
  P.fail("nn.init.calculate_gain: unsupported nonlinearity %s", tostring(nonlinearity))
end

local function fan(t, mode)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  if mode == "fan_in" then return fan_in end
  if mode == "fan_out" then return fan_out end
  P.fail("nn.init: mode %s not supported, please use one of fan_in, fan_out", tostring(mode))
end

--[[ def(name, text, fill): nn.init[name] binds PyTorch's signature `text`, checks the tensor,
     runs fill(t, a) under no_grad and returns the tensor. An explicit generator is refused:
     ltorch draws from the default generator only (seed it with torch.manual_seed). ]]
local function def(name, text, fill)
  local sig = P.signature(name, text)
  M[name] = function(...)
    local a = P.bind(sig, ...)
    local t = a.tensor
    if not torch.is_tensor(t) then
      P.fail("bad argument #1 to '%s' (Tensor expected, got %s)", name, type(t))
    end
    if a.generator ~= nil then
      P.fail("nn.init.%s: explicit generators are not supported; seed the default one with torch.manual_seed", name)
    end
    torch.no_grad(function() fill(t, a) end)
    return t
  end
end

def("uniform_", "tensor, a=0.0, b=1.0, generator=None", function(t, a) t:uniform_(a.a, a.b) end)
def("normal_", "tensor, mean=0.0, std=1.0, generator=None", function(t, a) t:normal_(a.mean, a.std) end)
def("constant_", "tensor, val", function(t, a) t:fill_(a.val) end)
def("zeros_", "tensor", function(t) t:zero_() end)
def("ones_", "tensor", function(t) t:fill_(1) end)
def("eye_", "tensor", function(t)
  if t:dim() ~= 2 then P.fail("nn.init.eye_: only 2-D tensors are supported") end
  t:copy_(torch.eye(t:size(0), t:size(1), { dtype = t.dtype }))
end)

-- dirac_(tensor, groups=1): zeros, then a 1 at the kernel's centre of each (out, in) pair
-- d < min(out / groups, in) in every group, so a conv with this weight passes channels through.
def("dirac_", "tensor, groups=1", function(t, a)
  local dims, groups = t:dim(), a.groups
  if dims < 3 or dims > 5 then P.fail("nn.init.dirac_: only tensors with 3, 4, or 5 dimensions are supported") end
  if type(groups) ~= "number" or groups < 1 or groups % 1 ~= 0 then
    P.fail("nn.init.dirac_: groups must be a positive integer, got %s", tostring(groups))
  end
  if t:size(0) % groups ~= 0 then P.fail("nn.init.dirac_: dim 0 must be divisible by groups") end
  local per_group = t:size(0) / groups
  t:zero_()
  for g = 0, groups - 1 do
    for d = 0, math.min(per_group, t:size(1)) - 1 do
      local v = t:select(0, g * per_group + d):select(0, d)
      for k = 2, dims - 1 do v = v:select(0, math.floor(t:size(k) / 2)) end
      v:fill_(1)
    end
  end
end)

-- xavier_uniform_(t, gain=1): U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))
def("xavier_uniform_", "tensor, gain=1.0, generator=None", function(t, a)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  local bound = math.sqrt(3) * (a.gain * math.sqrt(2 / (fan_in + fan_out)))  -- PyTorch's order of operations
  t:uniform_(-bound, bound)
end)

def("xavier_normal_", "tensor, gain=1.0, generator=None", function(t, a)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  t:normal_(0, a.gain * math.sqrt(2 / (fan_in + fan_out)))
end)

-- PyTorch's kaiming inits leave a zero-element tensor alone, with a warning (nn.Linear(0, n)).
local function zero_element(t)
  if t:numel() ~= 0 then return false end
  require("torch._warnings").warn("Initializing zero-element tensors is a no-op")
  return true
end

-- kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="leaky_relu"): bound = gain * sqrt(3 / fan)
def("kaiming_uniform_", "tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None", function(t, a)
  if zero_element(t) then return end
  local gain = M.calculate_gain(a.nonlinearity, a.a)
  -- PyTorch's order of operations, so float64 weights get PyTorch's bound to the last bit
  local bound = math.sqrt(3) * (gain / math.sqrt(fan(t, a.mode)))
  t:uniform_(-bound, bound)
end)

def("kaiming_normal_", "tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None", function(t, a)
  if zero_element(t) then return end
  local gain = M.calculate_gain(a.nonlinearity, a.a)
  t:normal_(0, gain / math.sqrt(fan(t, a.mode)))
end)

-- trunc_normal_(t, mean=0, std=1, a=-2, b=2): PyTorch's inverse-CDF method.
def("trunc_normal_", "tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None", function(t, o)
  local mean, std, a, b = o.mean, o.std, o.a, o.b
  local function cdf(x) return (1 + torch.tensor(x / math.sqrt(2), { dtype = torch.float64 }):erf():item()) / 2 end
  local l, u = cdf((a - mean) / std), cdf((b - mean) / std)
  t:uniform_(2 * l - 1, 2 * u - 1)
  t:erfinv_()
  t:mul_(std * math.sqrt(2))
  t:add_(mean)
  t:clamp_(a, b)
end)

-- orthogonal_(t, gain=1): QR of a normal matrix with the sign fix, as PyTorch.
def("orthogonal_", "tensor, gain=1, generator=None", function(t, a)
  if t:dim() < 2 then P.fail("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported") end
  if t:numel() == 0 then return end
  local rows = t:size(0)
  local cols = t:numel() / rows
  local flat = torch.empty(rows, cols, { dtype = t.dtype }):normal_(0, 1)
  if rows < cols then flat = flat:t() end
  local q, r = torch.linalg.qr(flat)
  q = q * r:diagonal(0, -2, -1):sign()
  if rows < cols then q = q:t() end
  t:view_as(q):copy_(q)
  t:mul_(a.gain)
end)

-- sparse_(t, sparsity, std=0.01): N(0, std) everywhere, then in each column ceil(sparsity * rows)
-- entries, chosen by a fresh randperm(rows), set to 0 (Martens 2010). Draws as PyTorch does.
def("sparse_", "tensor, sparsity, std=0.01, generator=None", function(t, a)
  if t:dim() ~= 2 then P.fail("nn.init.sparse_: only tensors with 2 dimensions are supported") end
  if type(a.sparsity) ~= "number" then
    P.fail("bad argument #2 to 'sparse_' (number expected, got %s)", type(a.sparsity))
  end
  local rows, cols = t:size(0), t:size(1)
  local num_zeros = math.ceil(a.sparsity * rows)
  -- randperm(rows)[:num_zeros] as Python slices it (a negative count drops from the end)
  local take = num_zeros < 0 and math.max(rows + num_zeros, 0) or math.min(num_zeros, rows)
  t:normal_(0, a.std)
  for col = 0, cols - 1 do
    local zero_rows = torch.randperm(rows):narrow(0, 0, take):to(t.device)
    t:select(1, col):index_fill_(0, zero_rows, 0)
  end
end)

--[[ PyTorch's deprecated names without the trailing underscore (nn.init.uniform, ...): each
     calls the new one and warns once, with PyTorch's FutureWarning text. ]]
function M._warn(msg) require("torch._warnings").warn(msg, nil, "FutureWarning") end

local function deprecated(new_name)
  local old_name, warned = new_name:sub(1, -2), false
  return function(...)
    if not warned then
      warned = true
      M._warn(("`nn.init.%s` is now deprecated in favor of `nn.init.%s`."):format(old_name, new_name))
    end
    return M[new_name](...)
  end
end
for _, name in ipairs({ "uniform_", "normal_", "constant_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_",
  "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_" }) do
  M[name:sub(1, -2)] = deprecated(name)
end

return M
