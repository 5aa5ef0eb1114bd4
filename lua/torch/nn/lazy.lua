--[[
  torch.nn.lazy — lazy modules: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
  LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d, with PyTorch's semantics
  (https://pytorch.org/docs/stable/generated/torch.nn.modules.lazy.LazyModuleMixin.html):

    local fc = nn.LazyLinear(10)            -- in_features is inferred from the first input
    local opt = optim.SGD(fc:parameters(), {lr = 0.1})   -- may be built before the first call
    local y = fc(torch.randn(4, 32))        -- fc is now an nn.Linear(32, 10)

  Each takes its ordinary class's constructor signature without the inferred first argument
  (in_features, in_channels or num_features). Until the first forward the module's name is the
  Lazy one, the inferred size reads 0 (as in PyTorch's repr), and its weight / bias (and
  BatchNorm's running_mean / running_var) are uninitialized: `m.weight` is an
  UninitializedParameter whose every use raises. state_dict() holds those UninitializedParameter /
  UninitializedBuffer entries under PyTorch's keys (any use of one raises; loading one into a module
  whose entry is uninitialized too matches it, as PyTorch's). load_state_dict with real tensors
  materializes the module from their shapes (Linear: weight's in dim; Conv: weight:size(1) * groups;
  ConvTranspose: weight:size(0); norms: the length of weight / running_mean) and then copies them,
  as PyTorch's materializes its uninitialized parameters on load; here the module also becomes the
  ordinary class at once, with the inferred size in its repr (PyTorch waits for the forward and keeps
  printing 0). The first forward infers the size from the input (Linear: input:size(-1); Conv: the channel
  dim of a batched or unbatched input; norms: input:size(1)), builds the ordinary module's
  parameters with its own reset_parameters, and the module becomes that class (PyTorch's
  cls_to_become): under the same manual_seed the values are PyTorch's bit for bit.

  How: at construction a probe of the ordinary class (smallest valid size, on the CPU, the
  generator's state restored) checks the arguments and provides the settings; the lazy tensors
  are registered as empty placeholders, so parameters() lists them as PyTorch's does and an
  optimizer built early keeps working: materializing swaps in the real storage (p.data = ...),
  keeping each tensor's identity. m:has_uninitialized_params(); m:initialize_parameters(input)
  materializes without running forward (and, unlike PyTorch, already swaps the class).
]]
local torch = require "torch"
local A = require "torch.nn._fargs"
local P = require "torch._pysig"
local pack = require("torch._args").pack
local guard = require "torch._guard"
local Parameter = require("torch.nn.module").Parameter
local linear = require "torch.nn.linear"
local conv = require "torch.nn.conv"
local norm = require "torch.nn.normalization"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

---------------------------------------------------------------- UninitializedParameter
local Uninit = {}

local function uninit_error(self)
  local what = rawget(self, "kind")
  A.fail("%s.%s is an uninitialized %s (%s): its shape is inferred at the module's first forward. Call forward "
    .. "with a dummy batch to initialize the parameters before using them", rawget(self, "owner"), rawget(self, "name"),
    what == "buffer" and "buffer" or "parameter", what == "buffer" and "UninitializedBuffer" or "UninitializedParameter")
end
Uninit.__index, Uninit.__newindex, Uninit.__call = uninit_error, uninit_error, uninit_error
for _, mm in ipairs({ "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__concat", "__len", "__lt", "__le" }) do
  Uninit[mm] = uninit_error
end
M.Uninitialized = Uninit   -- the metatable of the UninitializedParameter / UninitializedBuffer entries
Uninit.__tostring = function(self)
  return rawget(self, "kind") == "buffer" and "<UninitializedBuffer>" or "<UninitializedParameter>"
end

---------------------------------------------------------------- the mechanism
local INTERNAL = { _parameters = true, _buffers = true, _modules = true, _non_persistent = true, _forward_hooks = true,
  _forward_pre_hooks = true, _class = true, training = true, _lazy = true, _uninit = true }

-- The first placeholder (its dtype and device are what the ordinary parameters get), or nil.
local function first_placeholder(self)
  local lz = rawget(self, "_lazy")
  return lz.placeholders[1]
end

-- Builds the ordinary module for inferred size n and moves its state into self; self becomes it.
local function materialize(self, n)
  local lz = rawget(self, "_lazy")
  local become = lz.become
  local ph = first_placeholder(self)
  local real
  if ph ~= nil then
    local rest = {}
    for k, v in pairs(lz.rest) do rest[k] = v end
    rest.dtype, rest.device = ph.dtype, ph.device
    local args = { n }
    for i = 1, #lz.required do args[i + 1] = lz.required[i] end
    args[#args + 1] = rest
    real = become(unpack(args, 1, #lz.required + 2))
    torch.no_grad(function()
      for _, map in ipairs({ "_parameters", "_buffers" }) do
        for _, name in ipairs(real[map].names) do
          local mine, theirs = self[map].values[name], real[map].values[name]
          if lz.uninit[name] ~= nil then mine.data = theirs else self[map].values[name] = mine or theirs end
        end
      end
    end)
    for k, v in pairs(real) do
      if not INTERNAL[k] then rawset(self, k, v) end
    end
  end
  rawset(self, "_lazy", nil)
  rawset(self, "_uninit", nil)
  rawset(self, "_class", become)
  setmetatable(self, become.__instance_mt)
end

local function has_uninitialized(self) return rawget(self, "_lazy") ~= nil and first_placeholder(self) ~= nil end

--[[ The constructor of every lazy class: `...` is the Lua form of its PyTorch signature
     (required values, then the table of the others). Probes `become`, registers placeholders. ]]
local function lazy_init(self, name, become, field, ...)
  local sig = self._class.__signature
  local args, n = pack(...)
  local required, rest = { unpack(args, 1, n - 1) }, {}
  for k, v in pairs(args[n]) do rest[k] = v end
  for k, d in pairs(sig.defaults) do
    if rest[k] == nil and d ~= P.NONE then rest[k] = d end   -- the Lazy class's defaults (InstanceNorm: affine=True)
  end
  local probe_rest = {}
  for k, v in pairs(rest) do probe_rest[k] = v end
  probe_rest.device = "cpu"
  local probe_args = { rest.groups or 1 }
  for i, v in ipairs(required) do probe_args[i + 1] = v end
  probe_args[#required + 2] = probe_rest
  -- the probe's initialization draws nothing from the caller's generator (torch._guard: restored
  -- whatever raised)
  local probe = guard.rng(torch.get_rng_state(), nil, become, unpack(probe_args, 1, #required + 2))
  for k, v in pairs(probe) do
    if not INTERNAL[k] then rawset(self, k, v) end
  end
  self[field] = 0
  local lz = { become = become, required = required, rest = rest, uninit = {}, placeholders = {} }
  rawset(self, "_lazy", lz)
  rawset(self, "_uninit", lz.uninit)
  for _, pname in ipairs(probe._parameters.names) do
    local p = probe._parameters.values[pname]
    if p ~= nil then
      self:register_parameter(pname, Parameter(torch.empty(0, { dtype = p.dtype, device = rest.device })))
      lz.placeholders[#lz.placeholders + 1] = self._parameters.values[pname]
      lz.uninit[pname] = setmetatable({ owner = name, name = pname, kind = "parameter", uninitialized = true }, Uninit)
    end
  end
  for _, bname in ipairs(probe._buffers.names) do
    local b = probe._buffers.values[bname]
    if b ~= nil and b:dim() > 0 then   -- running_mean, running_var; not num_batches_tracked
      self:register_buffer(bname, torch.empty(0, { dtype = b.dtype, device = rest.device }), not probe._non_persistent[bname])
      lz.placeholders[#lz.placeholders + 1] = self._buffers.values[bname]
      lz.uninit[bname] = setmetatable({ owner = name, name = bname, kind = "buffer", uninitialized = true }, Uninit)
    elseif b ~= nil then
      self:register_buffer(bname, b:to(rest.device or "cpu"), not probe._non_persistent[bname])
    end
  end
end

-- A tensor of sd (not an uninitialized entry), or nil.
local function loaded(sd, key)
  local v = sd[key]
  if torch.is_tensor(v) then return v end
  return nil
end

--[[ The load_state_dict pre-hook of a lazy module: real tensors for its uninitialized entries
     materialize it with the size infer_loaded(self, sd, prefix) reads from their shapes. ]]
local function load_hook(self, name, infer_loaded)
  return function(sd, prefix)
    if not has_uninitialized(self) then return end
    local any = false
    for k in pairs(rawget(self, "_uninit")) do any = any or loaded(sd, prefix .. k) ~= nil end
    if not any then return end
    local n = infer_loaded(self, function(key) return loaded(sd, prefix .. key) end)
    if n == nil then
      A.fail("%s: cannot infer the module's size from the state dict: its weight (or running_mean) is missing", name)
    end
    materialize(self, n)
  end
end

--[[ lazy_class(name, become, field, infer, text, infer_loaded): a class extending `become` whose
     constructor takes become's signature (text) without its first parameter `field`;
     infer(self, input) -> the size at the first forward; infer_loaded(self, get) -> the size from
     the tensors a load_state_dict brings (get(name) -> the loaded tensor or nil). ]]
local function lazy_class(name, become, field, infer, text, infer_loaded)
  local cls = become:extend(name)
  M[name] = cls
  cls.cls_to_become = become
  local mt = cls.__instance_mt
  local base_index, base_newindex = mt.__index, mt.__newindex
  mt.__index = function(self, k)
    local u = rawget(self, "_uninit")
    if u ~= nil and u[k] ~= nil then return u[k] end
    return base_index(self, k)
  end
  mt.__newindex = function(self, k, v)
    local u = rawget(self, "_uninit")
    if u ~= nil then u[k] = nil end
    return base_newindex(self, k, v)
  end

  function cls:__init(...)
    lazy_init(self, name, become, field, ...)
    self:_register_load_state_dict_pre_hook(load_hook(self, name, infer_loaded))
  end

  function cls:has_uninitialized_params() return has_uninitialized(self) end

  -- Infers the size from input and becomes the ordinary class (no parameter left to infer: 0, as PyTorch).
  function cls:initialize_parameters(input)
    if rawget(self, "_lazy") == nil then return end
    if not has_uninitialized(self) then return materialize(self, 0) end
    if not torch.is_tensor(input) then A.fail("%s: expected a Tensor input, got %s", name, type(input)) end
    materialize(self, infer(self, input))
  end

  function cls:forward(input, ...)
    cls.initialize_parameters(self, input)
    return self:forward(input, ...)   -- now the ordinary class's forward
  end

  function cls:reset_parameters()   -- nothing to reset before the shapes are known (PyTorch's LazyModuleMixin)
    if rawget(self, "_lazy") == nil then return become.reset_parameters(self) end
  end

  A.init(cls, text)
  return cls
end

---------------------------------------------------------------- the classes
local function infer_linear(self, input)
  if input:dim() < 1 then A.fail("%s: expected an input with at least 1 dim, got a 0-d Tensor", self._class.__name) end
  return input:size(-1)
end

local function infer_conv(nd)
  return function(self, input)
    if input:dim() ~= nd + 1 and input:dim() ~= nd + 2 then
      A.fail("Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s", nd + 1, nd + 2,
        self._class.__name, shape(input))
    end
    return input:dim() == nd + 2 and input:size(1) or input:size(0)
  end
end

local function infer_norm(self, input)
  if input:dim() < 2 then A.fail("%s: expected an input with at least 2 dims (N, C, ...), got %s", self._class.__name,
    shape(input)) end
  return input:size(1)
end

-- The size from loaded tensors. Linear weight: [out, in]; Conv weight: [out, in / groups, k...];
-- ConvTranspose weight: [in, out / groups, k...]; norms: [num_features].
local function loaded_linear(_, get) local w = get("weight") return w and w:size(1) end
local function loaded_conv(self, get) local w = get("weight") return w and w:size(1) * self.groups end
local function loaded_conv_transpose(_, get) local w = get("weight") return w and w:size(0) end
local function loaded_norm(_, get)
  local t = get("weight") or get("bias") or get("running_mean") or get("running_var")
  return t and t:size(0)
end

lazy_class("LazyLinear", linear.Linear, "in_features", infer_linear, "out_features, bias=True, device=None, dtype=None",
  loaded_linear)
for nd = 1, 3 do
  lazy_class("LazyConv" .. nd .. "d", conv["Conv" .. nd .. "d"], "in_channels", infer_conv(nd),
    "out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros', "
    .. "device=None, dtype=None", loaded_conv)
  lazy_class("LazyConvTranspose" .. nd .. "d", conv["ConvTranspose" .. nd .. "d"], "in_channels", infer_conv(nd),
    "out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, "
    .. "padding_mode='zeros', device=None, dtype=None", loaded_conv_transpose)
  for _, kind in ipairs({ "BatchNorm", "InstanceNorm" }) do
    lazy_class("Lazy" .. kind .. nd .. "d", norm[kind .. nd .. "d"], "num_features", infer_norm,
      "eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None", loaded_norm)
  end
end

return M
