--[[
  torch.nn.functional's dropout family and the activations PyTorch writes in Python, with its
  signatures and defaults (https://pytorch.org/docs/stable/nn.functional.html):

      dropout(input, p=0.5, training=True, inplace=False)       also dropout1d / 2d / 3d
      alpha_dropout(input, p=0.5, training=False, inplace=False) also feature_alpha_dropout
      softmin(input, dim=None, _stacklevel=3, dtype=None)        softmax(-input)
      softsign(input) = input / (1 + |input|)    tanhshrink(input) = input - tanh(input)
      logsigmoid(input) = log(1 / (1 + exp(-input)))
      normalize(input, p=2.0, dim=1, eps=1e-12) = input / max(||input||_p over dim, eps)
      relu(input, inplace=False)    silu(input, inplace=False)    gelu(input, approximate='none')
      leaky_relu(input, negative_slope=0.01, inplace=False)    sigmoid(input)    tanh(input)
      softmax / log_softmax(input, dim=None, _stacklevel=3, dtype=None)
      elu / celu(input, alpha=1.0, inplace=False), selu / relu6 / hardsigmoid / hardswish / mish(input,
      inplace=False), hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False),
      threshold(input, threshold, value, inplace=False), rrelu(input, lower=1/8, upper=1/3,
      training=False, inplace=False), glu(input, dim=-1),
      gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1)

  Arguments are positional or in a trailing keyword table: F.dropout(x, {p = 0.2, training = false}).
  dropout1d/2d/3d zero whole channels (feature_dropout); their inputs are (N, C, L) / (C, L),
  (N, C, H, W) / (C, H, W) and (N, C, D, H, W) / (C, D, H, W).
]]
local torch = require "torch"
local T = require "torch._tensor"
local A = require "torch.nn._fargs"

local Tensor = T.Tensor

local fail = A.fail

local M = {}

local def = A.definer(M)

---------------------------------------------------------------- dropout
local function check_p(who, sig, a)
  local p = A.number(sig, a, "p")
  if p < 0 or p > 1 then fail("%s: dropout probability has to be between 0 and 1, but got %s", who, p) end
  A.tensor(sig, a, "input")
  return p, A.boolean(sig, a, "training"), A.boolean(sig, a, "inplace")
end

-- The ATen op `op` (dropout, feature_dropout, alpha_dropout, ...), in place with inplace.
local function drop(op, input, p, training, inplace)
  return A.call(torch[inplace and (op .. "_") or op], input, p, training)
end

for _, spec in ipairs({ { "dropout", "dropout", "True" }, { "alpha_dropout", "alpha_dropout", "False" },
  { "feature_alpha_dropout", "feature_alpha_dropout", "False" } }) do
  def(spec[1], "input, p=0.5, training=" .. spec[3] .. ", inplace=False", function(who, sig, a)
    local p, training, inplace = check_p(who, sig, a)
    return drop(spec[2], a.input, p, training, inplace)
  end)
end

--[[ Channel dropout on an input of `dims` (batched) or dims - 1 (unbatched, given a batch dim of
     1 for the op) dimensions. ]]
local function channel_dropout(x, p, training, inplace, dims)
  local batched = x:dim() == dims
  if not batched then x = inplace and x:unsqueeze_(0) or x:unsqueeze(0) end
  local y = drop("feature_dropout", x, p, training, inplace)
  if not batched then y = inplace and y:squeeze_(0) or y:squeeze(0) end
  return y
end

def("dropout1d", "input, p=0.5, training=True, inplace=False", function(who, sig, a)
  local p, training, inplace = check_p(who, sig, a)
  local d = a.input:dim()
  if d ~= 2 and d ~= 3 then
    fail("dropout1d: Expected 2D or 3D input, but received a %dD input. Note that dropout1d exists to provide "
      .. "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
      .. "dimension (i.e. 2D or 3D inputs).", d)
  end
  return channel_dropout(a.input, p, training, inplace, 3)
end)

def("dropout2d", "input, p=0.5, training=True, inplace=False", function(who, sig, a)
  local p, training, inplace = check_p(who, sig, a)
  local d = a.input:dim()
  if d ~= 3 and d ~= 4 then
    A.warn(("dropout2d: Received a %d-D input to dropout2d, which is deprecated and will result in an error in a "
      .. "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
      .. "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
      .. "dimension, and an optional batch dimension (i.e. 3D or 4D inputs)."):format(d))
  end
  if d == 3 then
    A.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
      .. "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
      .. "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
      .. "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.")
  end
  return drop("feature_dropout", a.input, p, training, inplace)
end)

def("dropout3d", "input, p=0.5, training=True, inplace=False", function(who, sig, a)
  local p, training, inplace = check_p(who, sig, a)
  local d = a.input:dim()
  if d ~= 4 and d ~= 5 then
    A.warn(("dropout3d: Received a %d-D input to dropout3d, which is deprecated and will result in an error in a "
      .. "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
      .. "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
      .. "dimension, and an optional batch dimension (i.e. 4D or 5D inputs)."):format(d))
  end
  return channel_dropout(a.input, p, training, inplace, 5)
end)

---------------------------------------------------------------- activations
--[[ Like def, with a fast path: a call of lo to hi (at most 2) arguments, the last not a table,
     goes straight to fast(...) (the Tensor method), as training loops call F.relu(x). ]]
local function def_fast(name, text, lo, hi, fast, impl)
  def(name, text, impl)
  local bound = M[name]
  M[name] = function(...)
    local k = select("#", ...)
    while k > hi and select(k, ...) == nil do k = k - 1 end   -- f(x, nil): trailing nils are absent
    if k >= lo and k <= hi and type((select(k, ...))) ~= "table" then
      local x, second = ...
      if k == 1 then return fast(x) end
      return fast(x, second)
    end
    return bound(...)
  end
end

local function inplace_or(method)
  return function(_, sig, a)
    local x = A.tensor(sig, a, "input")
    if A.boolean(sig, a, "inplace") then return Tensor[method .. "_"](x) end
    return Tensor[method](x)
  end
end

def_fast("relu", "input, inplace=False", 1, 1, Tensor.relu, inplace_or("relu"))
def_fast("silu", "input, inplace=False", 1, 1, Tensor.silu, inplace_or("silu"))
def_fast("sigmoid", "input", 1, 1, Tensor.sigmoid, function(_, sig, a) return Tensor.sigmoid(A.tensor(sig, a, "input")) end)
def_fast("tanh", "input", 1, 1, Tensor.tanh, function(_, sig, a) return Tensor.tanh(A.tensor(sig, a, "input")) end)

def_fast("gelu", "input, approximate='none'", 1, 1, Tensor.gelu, function(_, sig, a)
  return Tensor.gelu(A.tensor(sig, a, "input"), { approximate = a.approximate })
end)

def_fast("leaky_relu", "input, negative_slope=0.01, inplace=False", 1, 2, Tensor.leaky_relu, function(_, sig, a)
  local x, slope = A.tensor(sig, a, "input"), A.number(sig, a, "negative_slope")
  if A.boolean(sig, a, "inplace") then return require("torch")._nn.leaky_relu_(x, slope) end   -- ATen's nn namespace
  return Tensor.leaky_relu(x, slope)
end)

--[[ Activations with an `inplace` flag: name(input, <params>, inplace=False) -> torch.name(input,
     <params>) or torch.name_(...). `params` are the Python parameters between input and inplace. ]]
local function with_inplace(name, params, text)
  def(name, text, function(_, sig, a)
    local x = A.tensor(sig, a, "input")
    local values = {}
    for i, p in ipairs(params) do values[i] = A.number(sig, a, p) end
    if name == "hardtanh" and values[1] > values[2] then fail("hardtanh: min_val cannot be greater than max_val") end
    local op = A.boolean(sig, a, "inplace") and torch[name .. "_"] or torch[name]
    return A.call(op, x, unpack(values, 1, #params))
  end)
end

with_inplace("elu", { "alpha" }, "input, alpha=1.0, inplace=False")
with_inplace("celu", { "alpha" }, "input, alpha=1.0, inplace=False")
with_inplace("selu", {}, "input, inplace=False")
with_inplace("relu6", {}, "input, inplace=False")
with_inplace("hardtanh", { "min_val", "max_val" }, "input, min_val=-1.0, max_val=1.0, inplace=False")
with_inplace("hardsigmoid", {}, "input, inplace=False")
with_inplace("hardswish", {}, "input, inplace=False")
with_inplace("mish", {}, "input, inplace=False")
with_inplace("threshold", { "threshold", "value" }, "input, threshold, value, inplace=False")

-- rrelu: a random slope in [lower, upper] per element when training, else their mean
def("rrelu", "input, lower=0.125, upper=0.3333333333333333, training=False, inplace=False", function(_, sig, a)
  local x = A.tensor(sig, a, "input")
  local op = A.boolean(sig, a, "inplace") and torch.rrelu_ or torch.rrelu
  return A.call(op, x, A.number(sig, a, "lower"), A.number(sig, a, "upper"), A.boolean(sig, a, "training"))
end)

-- glu: first half of dim times sigmoid(second half)
def("glu", "input, dim=-1", function(who, sig, a)
  local x = A.tensor(sig, a, "input")
  if x:dim() == 0 then fail("%s: glu does not support scalars because halving size must be even", who) end
  return A.call(torch.glu, x, A.int(sig, a, "dim"))
end)

-- PyTorch's implicit softmax dim (deprecated): 0 for 0-, 1- and 3-d inputs, else 1.
local implicit_warned = {}
local function softmax_dim(who, ndim)
  if not implicit_warned[who] then
    implicit_warned[who] = true
    A.warn(("Implicit dimension choice for %s has been deprecated. Change the call to include dim=X as an argument.")
      :format(who))
  end
  return (ndim == 0 or ndim == 1 or ndim == 3) and 0 or 1
end

-- softmax(sign * input) over dim (PyTorch's implicit dim when nil), cast to dtype first if given
local function softmax_like(method, sign)
  return function(who, sig, a)
    local x = A.tensor(sig, a, "input")
    local dim = a.dim
    if dim == nil then dim = softmax_dim(who, x:dim()) end
    if sign < 0 then x = -x end
    if a.dtype ~= nil then return Tensor[method](x, dim, a.dtype) end
    return Tensor[method](x, dim)
  end
end

local SOFTMAX = "input, dim=None, _stacklevel=3, dtype=None"
def("softmin", SOFTMAX, softmax_like("softmax", -1))
def_fast("softmax", SOFTMAX, 2, 2, Tensor.softmax, softmax_like("softmax", 1))
def_fast("log_softmax", SOFTMAX, 2, 2, Tensor.log_softmax, softmax_like("log_softmax", 1))

--[[ gumbel_softmax: softmax((logits + g) / tau) over dim, g ~ Gumbel(0, 1) drawn from the
     generator as PyTorch draws it (-log of exponential_()); hard: the one-hot argmax in the
     forward pass, the soft sample's gradient in the backward (straight through). ]]
local eps_warned = false
def("gumbel_softmax", "logits, tau=1, hard=False, eps=1e-10, dim=-1", function(_, sig, a)
  local logits = A.tensor(sig, a, "logits")
  local tau, dim = A.number(sig, a, "tau"), A.int(sig, a, "dim")
  if A.number(sig, a, "eps") ~= 1e-10 and not eps_warned then
    eps_warned = true
    A.warn("`eps` parameter is deprecated and has no effect.")
  end
  local gumbels = -torch.empty_like(logits):exponential_():log()
  local y_soft = ((logits + gumbels) / tau):softmax(dim)
  if not A.boolean(sig, a, "hard") then return y_soft end
  local _, index = y_soft:max(dim, true)
  local y_hard = torch.zeros_like(logits):scatter_(dim, index, 1.0)
  return y_hard - y_soft:detach() + y_soft
end)

def("softsign", "input", function(_, sig, a)
  local x = A.tensor(sig, a, "input")
  return x / (x:abs() + 1)
end)

def("tanhshrink", "input", function(_, sig, a)
  local x = A.tensor(sig, a, "input")
  return x - x:tanh()
end)

def("logsigmoid", "input", function(_, sig, a)
  return torch.log_sigmoid(A.tensor(sig, a, "input"))
end)

def("normalize", "input, p=2.0, dim=1, eps=1e-12, out=None", function(_, sig, a)
  local x = A.tensor(sig, a, "input")
  local denom = x:norm(A.number(sig, a, "p"), a.dim, true):clamp_min(A.number(sig, a, "eps")):expand_as(x)
  if a.out ~= nil then return torch.div(x, denom, { out = a.out }) end
  return x / denom
end)

return M
