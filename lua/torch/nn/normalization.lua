--[[
  torch.nn.normalization — BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm and GroupNorm with
  PyTorch's arguments, buffers, state_dict keys and repr
  (https://pytorch.org/docs/stable/nn.html#normalization-layers). RMSNorm, LocalResponseNorm and
  CrossMapLRN2d: torch.nn.normalization_extra.

      nn.BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=true, track_running_stats=true)
      nn.InstanceNorm2d(num_features, eps=1e-5, momentum=0.1, affine=false, track_running_stats=false)
      nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=true, bias=true)
      nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=true)

  Arguments after the required ones are positional or in a trailing keyword table (which also
  takes dtype and device). `momentum = false` is PyTorch's momentum=None: the running stats
  become a cumulative average (factor 1 / num_batches_tracked).

  Shapes: BatchNorm1d (N, C) or (N, C, L); BatchNorm2d (N, C, H, W); BatchNorm3d (N, C, D, H, W);
  InstanceNorm1d/2d/3d (N, C, *spatial) or unbatched (C, *spatial), 1/2/3 spatial dims;
  LayerNorm (*, *normalized_shape); GroupNorm (N, C, *). Output shape = input shape.
  State (BatchNorm, InstanceNorm): weight, bias (C) parameters if affine; buffers running_mean (C, zeros),
  running_var (C, ones), num_batches_tracked (int64 scalar) if track_running_stats — the keys
  of PyTorch's state_dict, in its order. Training normalises with the batch statistics and
  updates the running ones (unbiased variance); eval uses the running ones.

  Usage:  local bn = nn.BatchNorm2d(16); local y = bn(x); bn:eval()
          local ln = nn.LayerNorm({64}); nn.GroupNorm(4, 16, {eps = 1e-6})
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"

local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"

local M = {}

local function factory(a) return { dtype = a.dtype, device = a.device } end

-- The affine weight (ones) and bias (zeros) every norm layer has, or both registered as nil.
local function register_affine(self, enabled, shape, f)
  if enabled then
    self.weight = Parameter(torch.empty(shape, f))
    self.bias = Parameter(torch.empty(shape, f))
  else
    self:register_parameter("weight", nil)
    self:register_parameter("bias", nil)
  end
end

local function reset_affine(self)
  if self.weight ~= nil then
    init.ones_(self.weight)
    if self.bias ~= nil then init.zeros_(self.bias) end
  end
end

local function check_positive_int(name, what, v)
  if not U.is_int(v) or v <= 0 then
    U.fail(("%s: %s must be a positive integer, got %s"):format(name, what, tostring(v)))
  end
end

-- Any trailing dims multiply into the count of values per channel (PyTorch's _verify_batch_size).
local function values_per_channel(x, channel_dim)
  local n = 1
  for d = 0, x:dim() - 1 do
    if d ~= channel_dim then n = n * x:size(d) end
  end
  return n
end

---------------------------------------------------------------- _NormBase: BatchNorm, InstanceNorm
local NormBase = Module:extend("_NormBase")  -- not exported: nn has no _NormBase
NormBase._default_affine = true   -- affine and track_running_stats (InstanceNorm: false)

local NORM_ARGS = { "eps", "momentum", "affine", "track_running_stats", "dtype", "device" }

local function flag(v, default)
  if v == nil then return default end
  return v ~= false
end

function NormBase:__init(num_features, ...)
  local name = self._class.__name
  local a = U.args(name, NORM_ARGS, ...)
  check_positive_int(name, "num_features", num_features)
  self.num_features = num_features
  self.eps = a.eps == nil and 1e-5 or a.eps
  -- false = Python's None (cumulative moving average)
  if a.momentum == nil then self.momentum = 0.1 else self.momentum = a.momentum end
  self.affine = flag(a.affine, self._default_affine)
  self.track_running_stats = flag(a.track_running_stats, self._default_affine)
  local f = factory(a)
  register_affine(self, self.affine, num_features, f)
  if self.track_running_stats then
    self:register_buffer("running_mean", torch.zeros(num_features, f))
    self:register_buffer("running_var", torch.ones(num_features, f))
    self:register_buffer("num_batches_tracked", torch.tensor(0, { dtype = torch.int64, device = a.device }))
  else
    self:register_buffer("running_mean", nil)
    self:register_buffer("running_var", nil)
    self:register_buffer("num_batches_tracked", nil)
  end
  self:reset_parameters()
end

function NormBase:reset_running_stats()
  if self.track_running_stats then
    torch.no_grad(function()
      self.running_mean:zero_()
      self.running_var:fill_(1)
      self.num_batches_tracked:zero_()
    end)
  end
end

function NormBase:reset_parameters()
  self:reset_running_stats()
  reset_affine(self)
end

function NormBase:_label() return ("%s(%d)"):format(self._class.__name, self.num_features) end

function NormBase:extra_repr()
  return ("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s"):format(self.num_features,
    U.pyrepr(self.eps, true), U.pyrepr(self.momentum, true), U.pyrepr(self.affine),
    U.pyrepr(self.track_running_stats))
end

---------------------------------------------------------------- BatchNorm
local BatchNorm = NormBase:extend("_BatchNorm")  -- not exported: nn has no _BatchNorm

function BatchNorm:_check_input(x)
  U.check_float_input(self:_label(), x)
  local ok = false
  for _, d in ipairs(self._dims) do ok = ok or x:dim() == d end
  if not ok or x:size(1) ~= self.num_features then
    U.fail(("%s: expected input of shape %s, got %s"):format(self:_label(),
      self._shapes:gsub("C", self.num_features), U.shape(x)))
  end
end

local function dtype_name(t) return (tostring(t.dtype):gsub("^torch%.", "")) end

function BatchNorm:forward(x)
  self:_check_input(x)
  -- libtorch's own message for float64 input into float32 state names BFloat16; say it plainly.
  -- (Half/bfloat16 input with float32 state is a supported mix, as under autocast.)
  local p = self.weight or self.running_mean
  if p ~= nil and x.dtype ~= p.dtype and not (p.dtype == torch.float32 and
      (x.dtype == torch.float16 or x.dtype == torch.bfloat16)) then
    U.fail(("%s: expected input of dtype %s (the module's), got %s of shape %s"):format(self:_label(),
      dtype_name(p), dtype_name(x), U.shape(x)))
  end
  local factor = self.momentum or 0.0
  if self.training and self.track_running_stats and self.num_batches_tracked ~= nil then
    torch.no_grad(function() self.num_batches_tracked:add_(1) end)
    if self.momentum == false then factor = 1.0 / self.num_batches_tracked:item() end
  end
  -- Batch statistics in training, and in eval when there are no running stats to use.
  local bn_training = self.training or (self.running_mean == nil and self.running_var == nil)
  if bn_training and values_per_channel(x, 1) == 1 then
    U.fail(("%s: expected more than 1 value per channel when training, got input of shape %s"):format(
      self:_label(), U.shape(x)))
  end
  if not (self.eps > 0) then U.fail(("batch_norm eps must be positive, but got %s"):format(tostring(self.eps))) end
  -- Running stats are passed when they are updated (training and tracked) or used (eval).
  local use_buffers = not self.training or self.track_running_stats
  return U.guard(self:_label(), torch.batch_norm, x, self.weight, self.bias,
    use_buffers and self.running_mean or nil, use_buffers and self.running_var or nil,
    bn_training, factor, self.eps, true)  -- true: cudnn allowed, as torch.backends.cudnn.enabled
end

local BatchNorm1d = BatchNorm:extend("BatchNorm1d")
BatchNorm1d._dims, BatchNorm1d._shapes = { 2, 3 }, "(N, C) or (N, C, L)"
M.BatchNorm1d = BatchNorm1d

local BatchNorm2d = BatchNorm:extend("BatchNorm2d")
BatchNorm2d._dims, BatchNorm2d._shapes = { 4 }, "(N, C, H, W)"
M.BatchNorm2d = BatchNorm2d

local BatchNorm3d = BatchNorm:extend("BatchNorm3d")
BatchNorm3d._dims, BatchNorm3d._shapes = { 5 }, "(N, C, D, H, W)"
M.BatchNorm3d = BatchNorm3d

---------------------------------------------------------------- InstanceNorm
local InstanceNorm = NormBase:extend("_InstanceNorm")  -- not exported: nn has no _InstanceNorm
InstanceNorm._default_affine = false

--[[ Input (N, C, *spatial) or unbatched (C, *spatial): statistics per sample and channel over the
     spatial dims; running stats (track_running_stats) are updated in training, used in eval. ]]
function InstanceNorm:forward(x)
  U.check_float_input(self:_label(), x)
  local nb = self._no_batch_dim
  if x:dim() ~= nb and x:dim() ~= nb + 1 then
    U.fail(("%s: expected %dD or %dD input (got %dD input)"):format(self:_label(), nb, nb + 1, x:dim()))
  end
  local feature_dim = x:dim() - nb
  if x:size(feature_dim) ~= self.num_features then
    if self.affine then
      U.fail(("%s: expected input's size at dim=%d to match num_features (%d), but got: %d."):format(self:_label(),
        feature_dim, self.num_features, x:size(feature_dim)))
    end
    if not self._warned_num_features then   -- once per module, as Python's warnings show it once per place
      self._warned_num_features = true
      A.warn(("input's size at dim=%d does not match num_features. You can silence this warning by not passing in "
        .. "num_features, which is not used because affine=False"):format(feature_dim))
    end
  end
  local batched = x:dim() == nb + 1
  local out = U.guard(self:_label(), F.instance_norm, batched and x or x:unsqueeze(0), self.running_mean,
    self.running_var, self.weight, self.bias, self.training or not self.track_running_stats, self.momentum or 0.0,
    self.eps)
  return batched and out or out:squeeze(0)
end

for d = 1, 3 do
  local cls = InstanceNorm:extend("InstanceNorm" .. d .. "d")
  cls._no_batch_dim = d + 1
  M["InstanceNorm" .. d .. "d"] = cls
end

---------------------------------------------------------------- LayerNorm
local LayerNorm = Module:extend("LayerNorm")
M.LayerNorm = LayerNorm

function LayerNorm:__init(normalized_shape, ...)
  local a = U.args("LayerNorm", { "eps", "elementwise_affine", "bias", "dtype", "device" }, ...)
  local shape = type(normalized_shape) == "table" and normalized_shape or { normalized_shape }
  local copy = {}
  for i = 1, #shape do
    check_positive_int("LayerNorm", "normalized_shape", shape[i])
    copy[i] = shape[i]
  end
  if #copy == 0 then U.fail("LayerNorm: normalized_shape must have at least one dimension") end
  self.normalized_shape = copy
  self.eps = a.eps == nil and 1e-5 or a.eps
  self.elementwise_affine = a.elementwise_affine ~= false
  local f = factory(a)
  register_affine(self, self.elementwise_affine, copy, f)
  if a.bias == false and self.elementwise_affine then self:register_parameter("bias", nil) end
  self:reset_parameters()
end

function LayerNorm:reset_parameters()
  reset_affine(self)
end

function LayerNorm:_label() return "LayerNorm(" .. U.pyrepr(self.normalized_shape) .. ")" end

-- Input (*, *normalized_shape): its trailing dims must equal normalized_shape.
function LayerNorm:forward(x)
  U.check_float_input(self:_label(), x)
  local ns, d = self.normalized_shape, x:dim()
  local ok = d >= #ns
  for i = 1, #ns do ok = ok and x:size(d - #ns + i - 1) == ns[i] end
  if not ok then
    U.fail(("%s: expected input of shape (*, %s), got %s"):format(self:_label(), table.concat(ns, ", "),
      U.shape(x)))
  end
  return U.guard(self:_label(), F.layer_norm, x, ns, self.weight, self.bias, self.eps)
end

function LayerNorm:extra_repr()
  return ("%s, eps=%s, elementwise_affine=%s"):format(U.pyrepr(self.normalized_shape), U.pyrepr(self.eps, true),
    U.pyrepr(self.elementwise_affine))
end

---------------------------------------------------------------- GroupNorm
local GroupNorm = Module:extend("GroupNorm")
M.GroupNorm = GroupNorm

function GroupNorm:__init(num_groups, num_channels, ...)
  local a = U.args("GroupNorm", { "eps", "affine", "dtype", "device" }, ...)
  check_positive_int("GroupNorm", "num_groups", num_groups)
  check_positive_int("GroupNorm", "num_channels", num_channels)
  if num_channels % num_groups ~= 0 then
    U.fail(("GroupNorm: num_channels (%d) must be divisible by num_groups (%d)"):format(num_channels, num_groups))
  end
  self.num_groups, self.num_channels = num_groups, num_channels
  self.eps = a.eps == nil and 1e-5 or a.eps
  self.affine = a.affine ~= false
  local f = factory(a)
  register_affine(self, self.affine, num_channels, f)
  self:reset_parameters()
end

function GroupNorm:reset_parameters()
  reset_affine(self)
end

function GroupNorm:_label() return ("GroupNorm(%d, %d)"):format(self.num_groups, self.num_channels) end

-- Input (N, C, *): statistics over each group of C / num_groups channels and all of *.
function GroupNorm:forward(x)
  U.check_float_input(self:_label(), x)
  if x:dim() < 2 or x:size(1) ~= self.num_channels then
    U.fail(("%s: expected input of shape (N, %d, *), got %s"):format(self:_label(), self.num_channels, U.shape(x)))
  end
  if values_per_channel(x, 1) * (self.num_channels / self.num_groups) == 1 then
    U.fail(("%s: expected more than 1 value per group, got input of shape %s"):format(self:_label(), U.shape(x)))
  end
  return U.guard(self:_label(), F.group_norm, x, self.num_groups, self.weight, self.bias, self.eps)
end

function GroupNorm:extra_repr()
  return ("%d, %d, eps=%s, affine=%s"):format(self.num_groups, self.num_channels, U.pyrepr(self.eps, true),
    U.pyrepr(self.affine))
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
for _, name in ipairs({ "BatchNorm1d", "BatchNorm2d", "BatchNorm3d" }) do
  A.init(M[name], "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
    .. "device=None, dtype=None")
end
for _, name in ipairs({ "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d" }) do
  A.init(M[name], "num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, "
    .. "device=None, dtype=None")
end
A.init(M.LayerNorm, "normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, "
  .. "dtype=None")
A.init(M.GroupNorm, "num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None")

return M
