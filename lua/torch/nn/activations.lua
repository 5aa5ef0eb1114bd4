--[[
  torch.nn.activations — the activation modules (https://pytorch.org/docs/stable/nn.html#non-linear-activations-weighted-sum-nonlinearity),
  each a thin Module over the functional op, with PyTorch 2.11's constructor signature and repr:

      ReLU, SiLU, Hardsigmoid, Hardswish, Mish, SELU, ReLU6 (inplace=False)
      LeakyReLU(negative_slope=0.01, inplace=False)   ELU / CELU(alpha=1.0, inplace=False)
      Threshold(threshold, value, inplace=False)      Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)
      RReLU(lower=1/8, upper=1/3, inplace=False)      (random slopes in training, their mean in eval)
      PReLU(num_parameters=1, init=0.25)              (a learnt slope: parameter `weight`)
      GELU(approximate='none')   GLU(dim=-1)   Hardshrink / Softshrink(lambd=0.5)
      Softplus(beta=1.0, threshold=20.0)   Softmax / LogSoftmax / Softmin(dim)   Softmax2d()
      Tanh, Sigmoid, LogSigmoid, Softsign, Tanhshrink ()      Flatten(start_dim=1, end_dim=-1)

  `inplace=True` overwrites the input with the result (the op's `_` form), as PyTorch does.
  Settings PyTorch declares float print as Python floats (`alpha=1.0`), so ELU(2) prints
  `alpha=2.0` where Python, seeing an int, prints `alpha=2`.

  Usage:  nn.Sequential(nn.Linear(4, 8), nn.ReLU({inplace = true}), nn.Linear(8, 2), nn.LogSoftmax(1))
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"
local P = require "torch._pysig"

local M = {}

local fl = U.pyfloat

local function check_tensor(name, x)
  if not torch.is_tensor(x) then U.fail(("%s: expected a Tensor input, got %s"):format(name, type(x))) end
end

--[[ The constructor arguments (...), bound positionally by torch._pysig's "all" form, as a table
     name -> value with PyTorch's defaults filled in, each checked: `inplace` a boolean, `dim` and
     `num_parameters` integers, names in `skip` unchecked, every other a number; nil only where
     the default is None. ]]
local INTS = { dim = true, num_parameters = true }
local function settings(sig, skip, ...)
  local a = {}
  for i, key in ipairs(sig.names) do
    local v, d = select(i, ...), sig.defaults[key]
    if v == nil and d ~= P.NONE then v = d end
    a[key] = v
  end
  for _, key in ipairs(sig.names) do
    if not (skip and skip[key]) and (a[key] ~= nil or sig.defaults[key] ~= P.NONE) then
      if key == "inplace" then A.boolean(sig, a, key)
      elseif INTS[key] then A.int(sig, a, key)
      else A.number(sig, a, key) end
    end
  end
  return a
end

--[[ define(name, text, forward): a module class whose constructor takes PyTorch's signature
     `text`; each parameter becomes a field of that name. forward(self, x) gets a Tensor. ]]
local function define(name, text, forward)
  local cls = Module:extend(name)
  M[name] = cls
  function cls:__init(...)
    local sig = cls.__signature
    local a = settings(sig, nil, ...)
    for _, key in ipairs(sig.names) do self[key] = a[key] end
  end
  function cls:forward(x)
    check_tensor(name, x)
    return forward(self, x)
  end
  A.init(cls, text, "all")
  return cls
end

local function inplace_repr(self) return self.inplace and "inplace=True" or "" end
local function inplace_suffix(self) return self.inplace and ", inplace=True" or "" end

---------------------------------------------------------------- inplace=False only
-- name(inplace=False): fn(self, x), which honours self.inplace. `silent`: the repr does not show
-- the setting (PyTorch's Hardsigmoid and Hardswish have no extra_repr).
local function inplace_only(name, fn, silent)
  local cls = define(name, "inplace=False", fn)
  if not silent then cls.extra_repr = inplace_repr end
end
inplace_only("ReLU", function(self, x) if self.inplace then return x:relu_() end return x:relu() end)
inplace_only("SiLU", function(self, x) if self.inplace then return x:silu_() end return x:silu() end)
inplace_only("Hardsigmoid", function(self, x) return F.hardsigmoid(x, self.inplace) end, true)
inplace_only("Hardswish", function(self, x) return F.hardswish(x, self.inplace) end, true)
inplace_only("Mish", function(self, x) return F.mish(x, self.inplace) end)
inplace_only("SELU", function(self, x) return F.selu(x, self.inplace) end)

-- ReLU6 is PyTorch's Hardtanh(0.0, 6.0, inplace) (min_val and max_val are its fields too).
local ReLU6 = define("ReLU6", "inplace=False", function(self, x) return F.hardtanh(x, 0.0, 6.0, self.inplace) end)
ReLU6.min_val, ReLU6.max_val = 0.0, 6.0
ReLU6.extra_repr = inplace_repr

---------------------------------------------------------------- with settings
local LeakyReLU = define("LeakyReLU", "negative_slope=0.01, inplace=False", function(self, x)
  if self.inplace then return torch._nn.leaky_relu_(x, self.negative_slope) end
  return x:leaky_relu(self.negative_slope)
end)
function LeakyReLU:extra_repr() return ("negative_slope=%s%s"):format(fl(self.negative_slope), inplace_suffix(self)) end

local function alpha_repr(self) return ("alpha=%s%s"):format(fl(self.alpha), inplace_suffix(self)) end
define("ELU", "alpha=1.0, inplace=False", function(self, x) return F.elu(x, self.alpha, self.inplace) end)
  .extra_repr = alpha_repr
define("CELU", "alpha=1.0, inplace=False", function(self, x) return F.celu(x, self.alpha, self.inplace) end)
  .extra_repr = alpha_repr

local Threshold = define("Threshold", "threshold, value, inplace=False", function(self, x)
  return F.threshold(x, self.threshold, self.value, self.inplace)
end)
function Threshold:extra_repr()
  return ("threshold=%s, value=%s%s"):format(fl(self.threshold), fl(self.value), inplace_suffix(self))
end

-- Training: a slope drawn from U(lower, upper) per element; eval: (lower + upper) / 2.
local RReLU = define("RReLU", "lower=0.125, upper=0.3333333333333333, inplace=False", function(self, x)
  return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)
end)
function RReLU:extra_repr() return ("lower=%s, upper=%s%s"):format(fl(self.lower), fl(self.upper), inplace_suffix(self)) end

local Softplus = define("Softplus", "beta=1.0, threshold=20.0", function(self, x)
  return F.softplus(x, self.beta, self.threshold)
end)
function Softplus:extra_repr() return ("beta=%s, threshold=%s"):format(fl(self.beta), fl(self.threshold)) end

local function lambd_repr(self) return fl(self.lambd) end
define("Hardshrink", "lambd=0.5", function(self, x) return F.hardshrink(x, self.lambd) end).extra_repr = lambd_repr
define("Softshrink", "lambd=0.5", function(self, x) return F.softshrink(x, self.lambd) end).extra_repr = lambd_repr

local function dim_repr(self) return ("dim=%s"):format(self.dim == nil and "None" or ("%d"):format(self.dim)) end
define("GLU", "dim=-1", function(self, x) return F.glu(x, self.dim) end).extra_repr = dim_repr
-- dim=None: PyTorch's implicit dim, with its deprecation warning (F.softmin's).
define("Softmin", "dim=None", function(self, x) return F.softmin(x, self.dim) end).extra_repr = dim_repr

---------------------------------------------------------------- Hardtanh
local Hardtanh = Module:extend("Hardtanh")
M.Hardtanh = Hardtanh

local warned = {}
local function deprecated(old, new)
  if warned[old] then return end
  warned[old] = true
  A.warn(("keyword argument `%s` is deprecated and rename to `%s`"):format(old, new))
end

-- min_value / max_value: PyTorch's deprecated spellings of min_val / max_val (they win, with a warning).
function Hardtanh:__init(...)
  local a = settings(Hardtanh.__signature, nil, ...)
  if a.min_value ~= nil then deprecated("min_value", "min_val"); a.min_val = a.min_value end
  if a.max_value ~= nil then deprecated("max_value", "max_val"); a.max_val = a.max_value end
  if a.max_val <= a.min_val then
    U.fail(("Hardtanh: max_val (%s) must be greater than min_val (%s)"):format(fl(a.max_val), fl(a.min_val)))
  end
  self.min_val, self.max_val, self.inplace = a.min_val, a.max_val, a.inplace
end
function Hardtanh:forward(x)
  check_tensor("Hardtanh", x)
  return F.hardtanh(x, self.min_val, self.max_val, self.inplace)
end
function Hardtanh:extra_repr()
  return ("min_val=%s, max_val=%s%s"):format(fl(self.min_val), fl(self.max_val), inplace_suffix(self))
end
A.init(Hardtanh, "min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None", "all")

---------------------------------------------------------------- PReLU
-- max(0, x) + weight * min(0, x); weight: one slope (num_parameters = 1) or one per channel
-- (input dim 1), all starting at `init`.
local PReLU = Module:extend("PReLU")
M.PReLU = PReLU

function PReLU:__init(...)
  local a = settings(PReLU.__signature, { device = true, dtype = true }, ...)
  if a.num_parameters < 1 then U.fail(("PReLU: num_parameters must be positive, got %d"):format(a.num_parameters)) end
  self.num_parameters, self.init = a.num_parameters, a.init
  self.weight = Parameter(torch.empty(a.num_parameters, { device = a.device, dtype = a.dtype }))
  self:reset_parameters()
end
function PReLU:reset_parameters() init.constant_(self.weight, self.init) end
function PReLU:forward(x)
  check_tensor("PReLU", x)
  return F.prelu(x, self.weight)
end
function PReLU:extra_repr() return ("num_parameters=%d"):format(self.num_parameters) end
A.init(PReLU, "num_parameters=1, init=0.25, device=None, dtype=None", "all")

---------------------------------------------------------------- no settings
-- PyTorch's (*args, **kwargs) constructors take nothing but Module's (no argument).
local function plain(name, fn)
  local cls = Module:extend(name)
  function cls:forward(x)
    check_tensor(name, x)
    return fn(x)
  end
  A.init(cls, "")
  M[name] = cls
  return cls
end
plain("Tanh", function(x) return x:tanh() end)
plain("Sigmoid", function(x) return x:sigmoid() end)
plain("LogSigmoid", function(x) return F.logsigmoid(x) end)
plain("Softsign", function(x) return F.softsign(x) end)
plain("Tanhshrink", function(x) return F.tanhshrink(x) end)

-- softmax over the channels of (N, C, H, W) or (C, H, W)
plain("Softmax2d", function(x)
  local d = x:dim()
  if d ~= 3 and d ~= 4 then U.fail(("Softmax2d: expected input to be 3D or 4D, got %dD instead"):format(d)) end
  return x:softmax(-3)
end)

---------------------------------------------------------------- GELU, Softmax, LogSoftmax, Flatten
local GELU = Module:extend("GELU")
M.GELU = GELU
function GELU:__init(opts) self.approximate = opts and opts.approximate or "none" end
function GELU:forward(x)
  if self.approximate == "none" then return x:gelu() end
  return x:gelu({ approximate = self.approximate })
end
function GELU:extra_repr() return ("approximate='%s'"):format(self.approximate) end

local function dim_module(name, method)
  local cls = Module:extend(name)
  function cls:__init(dim)
    if type(dim) ~= "number" then error(name .. ": dim is required (implicit dim choice is deprecated in PyTorch)", 3) end
    self.dim = dim
  end
  function cls:forward(x) return x[method](x, self.dim) end
  function cls:extra_repr() return ("dim=%d"):format(self.dim) end
  M[name] = cls
end
dim_module("Softmax", "softmax")
dim_module("LogSoftmax", "log_softmax")

local Flatten = Module:extend("Flatten")
M.Flatten = Flatten
function Flatten:__init(start_dim, end_dim) self.start_dim, self.end_dim = start_dim or 1, end_dim or -1 end
function Flatten:forward(x) return x:flatten(self.start_dim, self.end_dim) end
function Flatten:extra_repr() return ("start_dim=%d, end_dim=%d"):format(self.start_dim, self.end_dim) end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.GELU, "approximate='none'")
A.init(M.Softmax, "dim=None", "all")
A.init(M.LogSoftmax, "dim=None", "all")
A.init(M.Flatten, "start_dim=1, end_dim=-1", "all")

return M
