--[[
  torch.nn.initializers — nn.init: PyTorch's parameter initialisers, with the same fan
  computations and distributions (torch/nn/init.py), all in place and under no_grad:
  uniform_, normal_, constant_, zeros_, ones_, eye_, xavier_uniform_, xavier_normal_,
  kaiming_uniform_, kaiming_normal_, trunc_normal_, orthogonal_, calculate_gain.

  Given the same seed, the random ones draw the same numbers as PyTorch (same libtorch
  generator, same calls in the same order).

  Usage:  nn.init.kaiming_uniform_(w, {a = math.sqrt(5)}); nn.init.zeros_(b)
]]
local torch = require "torch"

local M = {}

local function opts_of(o) return o or {} end

-- fan_in, fan_out of a weight: (out, in, *kernel) as PyTorch's _calculate_fan_in_and_fan_out.
function M.calculate_fan_in_and_fan_out(t)
  local dim = t:dim()
  if dim < 2 then
    error("nn.init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions", 3)
  end
  local receptive = 1
  for d = 2, dim - 1 do receptive = receptive * t:size(d) end
  return t:size(1) * receptive, t:size(0) * receptive
end

function M.calculate_gain(nonlinearity, param)
  local linear = { linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
    conv_transpose2d = true, conv_transpose3d = true, sigmoid = true }
  if linear[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2) end
  if nonlinearity == "leaky_relu" then
    local slope = param or 0.01
    return math.sqrt(2 / (1 + slope * slope))
  end
  if nonlinearity == "selu" then return 3 / 4 end
  error("nn.init.calculate_gain: unsupported nonlinearity " .. tostring(nonlinearity), 2)
end

local function fan(t, mode)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  if mode == nil or mode == "fan_in" then return fan_in end
  if mode == "fan_out" then return fan_out end
  error("nn.init: mode must be 'fan_in' or 'fan_out', got " .. tostring(mode), 3)
end

local function in_place(fn) return function(t, ...)
  local args = { ... }
  torch.no_grad(function() fn(t, unpack(args)) end)
  return t
end end

M.uniform_ = in_place(function(t, a, b) t:uniform_(a or 0, b or 1) end)
M.normal_ = in_place(function(t, mean, std) t:normal_(mean or 0, std or 1) end)
M.constant_ = in_place(function(t, v) t:fill_(v) end)
M.zeros_ = in_place(function(t) t:zero_() end)
M.ones_ = in_place(function(t) t:fill_(1) end)
M.eye_ = in_place(function(t)
  if t:dim() ~= 2 then error("nn.init.eye_: only 2-D tensors are supported", 4) end
  t:copy_(torch.eye(t:size(0), t:size(1), { dtype = t.dtype }))
end)

-- xavier_uniform_(t, gain=1): U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))
M.xavier_uniform_ = in_place(function(t, gain)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  local a = math.sqrt(3) * ((gain or 1) * math.sqrt(2 / (fan_in + fan_out)))  -- PyTorch's order of operations
  t:uniform_(-a, a)
end)

M.xavier_normal_ = in_place(function(t, gain)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t)
  t:normal_(0, (gain or 1) * math.sqrt(2 / (fan_in + fan_out)))
end)

-- kaiming_uniform_(t, {a=0, mode="fan_in", nonlinearity="leaky_relu"}): bound = gain*sqrt(3/fan)
M.kaiming_uniform_ = in_place(function(t, o)
  o = opts_of(o)
  local gain = M.calculate_gain(o.nonlinearity or "leaky_relu", o.a or 0)
  -- PyTorch's order of operations, so float64 weights get PyTorch's bound to the last bit
  local bound = math.sqrt(3) * (gain / math.sqrt(fan(t, o.mode)))
  t:uniform_(-bound, bound)
end)

M.kaiming_normal_ = in_place(function(t, o)
  o = opts_of(o)
  local gain = M.calculate_gain(o.nonlinearity or "leaky_relu", o.a or 0)
  t:normal_(0, gain / math.sqrt(fan(t, o.mode)))
end)

-- trunc_normal_(t, mean=0, std=1, a=-2, b=2): PyTorch's inverse-CDF method.
M.trunc_normal_ = in_place(function(t, mean, std, a, b)
  mean, std, a, b = mean or 0, std or 1, a or -2, b or 2
  local function cdf(x) return (1 + torch.tensor(x / math.sqrt(2), { dtype = torch.float64 }):erf():item()) / 2 end
  local l, u = cdf((a - mean) / std), cdf((b - mean) / std)
  t:uniform_(2 * l - 1, 2 * u - 1)
  t:erfinv_()
  t:mul_(std * math.sqrt(2))
  t:add_(mean)
  t:clamp_(a, b)
end)

-- orthogonal_(t, gain=1): QR of a normal matrix with the sign fix, as PyTorch.
M.orthogonal_ = in_place(function(t, gain)
  if t:dim() < 2 then error("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported", 4) end
  local rows = t:size(0)
  local cols = t:numel() / rows
  local flat = torch.empty(rows, cols, { dtype = t.dtype }):normal_(0, 1)
  if rows < cols then flat = flat:t() end
  local q, r = torch.linalg.qr(flat)
  q = q * r:diagonal(0, -2, -1):sign()
  if rows < cols then q = q:t() end
  t:view_as(q):copy_(q)
  t:mul_(gain or 1)
end)

return M
