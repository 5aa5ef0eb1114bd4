--[[
  torch.nn.transformer — nn.TransformerEncoderLayer and nn.TransformerEncoder with PyTorch's
  child names, init and maths (PyTorch 1.13's reference path):
  https://pytorch.org/docs/stable/generated/torch.nn.TransformerEncoderLayer.html

  nn.TransformerEncoderLayer(d_model, nhead, {dim_feedforward = 2048, dropout = 0.1,
      activation = "relu" | "gelu" | function | Module, layer_norm_eps = 1e-5,
      batch_first = false, norm_first = false, dtype =, device =})
    post-norm: x = norm1(x + SA(x)); x = norm2(x + FF(x))
    pre-norm:  x = x + SA(norm1(x)); x = x + FF(norm2(x))      (norm_first = true)
    SA(x) = dropout1(self_attn(x, x, x)), FF(x) = dropout2(linear2(dropout(act(linear1(x)))))
    Children (state_dict prefixes): self_attn, linear1, dropout, linear2, norm1, norm2,
    dropout1, dropout2 (and activation, when it is a Module).
  nn.TransformerEncoder(encoder_layer, num_layers, {norm = nil}): num_layers deep copies of the
    layer in `layers` (a ModuleList: keys "layers.0.self_attn.in_proj_weight", ...), then norm.

  Shapes (S sequence, N batch, E d_model): src (S, N, E), (N, S, E) with batch_first, or
  unbatched (S, E); output has src's shape. src_mask / mask: (S, S) or (N*nhead, S, S), bool
  (true = may not attend) or float (added); src_key_padding_mask (N, S): bool (true = padding)
  or float.

  Usage:
    local layer = nn.TransformerEncoderLayer(512, 8, {batch_first = true})
    local encoder = nn.TransformerEncoder(layer, 6, {norm = nn.LayerNorm(512)})
    local y = encoder(x, {mask = causal, src_key_padding_mask = pad})

  PyTorch's fused inference fast path (and its nested-tensor conversion) is not taken; the
  reference path it matches within float tolerance always is.
]]
local torch = require "torch"
local module = require "torch.nn.module"
local Linear = require("torch.nn.linear").Linear
local MultiheadAttention = require("torch.nn.attention").MultiheadAttention
local LayerNorm = require("torch.nn.normalization").LayerNorm
local Dropout = require("torch.nn.dropout").Dropout
local ModuleList = require("torch.nn.containers").ModuleList

local Module, Parameter, is_module = module.Module, module.Parameter, module.is_module

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

--[[ copy.deepcopy for a module tree: new parameter and buffer tensors with the same values
     (and requires_grad), new child modules, copies of plain tables; classes, functions and
     other objects with a metatable are shared. Hooks are kept (as Python's deepcopy does). ]]
local function deepcopy(v, memo)
  if memo[v] ~= nil then return memo[v] end
  if torch.is_tensor(v) then
    local c = torch.no_grad(function() return v:detach():clone() end)
    if module.is_parameter(v) then c = Parameter(c, v.requires_grad) end
    memo[v] = c
    return c
  end
  if type(v) ~= "table" or (getmetatable(v) ~= nil and not is_module(v)) then return v end
  local c = {}
  memo[v] = c
  for k, x in next, v do rawset(c, deepcopy(k, memo), deepcopy(x, memo)) end
  return setmetatable(c, getmetatable(v))
end

local function activation_fn(name, activation)
  if activation == nil or activation == "relu" then return function(x) return x:relu() end end
  if activation == "gelu" then return function(x) return x:gelu() end end
  if type(activation) == "function" or is_module(activation) then return activation end
  error(("%s: activation should be relu/gelu, a function or a Module, not %s"):format(name, tostring(activation)), 4)
end

-- Splits forward's (src, mask | opts, opts) arguments: PyTorch's mask may come positionally.
local function mask_args(mask, opts, mask_key)
  if type(mask) == "table" and not torch.is_tensor(mask) then mask, opts = nil, mask end
  opts = opts or {}
  return mask or opts[mask_key], opts.src_key_padding_mask
end

-- Checks src's rank, feature size and key-padding-mask dtype; `label` names the module.
local function check_src(label, d_model, src, kpm, level)
  if not torch.is_tensor(src) then error(("%s: expected a Tensor src, got %s"):format(label, type(src)), level) end
  if (src:dim() ~= 2 and src:dim() ~= 3) or src:size(-1) ~= d_model then
    error(("%s: expected src of shape (S, N, %d), (N, S, %d) or (S, %d), got %s"):format(label, d_model, d_model,
      d_model, shape(src)), level)
  end
  if kpm ~= nil and (not torch.is_tensor(kpm) or (kpm.dtype ~= torch.bool and not kpm:is_floating_point())) then
    error(("%s: only bool and floating types of src_key_padding_mask are supported, got %s"):format(label,
      torch.is_tensor(kpm) and tostring(kpm.dtype) or type(kpm)), level)
  end
end

---------------------------------------------------------------- TransformerEncoderLayer
local TransformerEncoderLayer = Module:extend("TransformerEncoderLayer")
M.TransformerEncoderLayer = TransformerEncoderLayer

function TransformerEncoderLayer:__init(d_model, nhead, opts)
  opts = opts or {}
  if type(d_model) ~= "number" or type(nhead) ~= "number" then
    error(("TransformerEncoderLayer: expected d_model and nhead as integers, got %s, %s"):format(type(d_model),
      type(nhead)), 3)
  end
  if d_model % nhead ~= 0 then
    error(("TransformerEncoderLayer: d_model (%d) must be divisible by nhead (%d)"):format(d_model, nhead), 3)
  end
  local f = { dtype = opts.dtype, device = opts.device }
  local dropout = opts.dropout or 0.1
  local ff = opts.dim_feedforward or 2048
  local eps = opts.layer_norm_eps or 1e-5
  -- construction order is PyTorch's: it fixes both the child order and the init RNG draws
  self.self_attn = MultiheadAttention(d_model, nhead, { dropout = dropout, batch_first = opts.batch_first,
    dtype = f.dtype, device = f.device })
  self.linear1 = Linear(d_model, ff, f)
  self.dropout = Dropout(dropout)
  self.linear2 = Linear(ff, d_model, f)
  self.norm_first = opts.norm_first == true
  self.norm1 = LayerNorm(d_model, { eps = eps, dtype = f.dtype, device = f.device })
  self.norm2 = LayerNorm(d_model, { eps = eps, dtype = f.dtype, device = f.device })
  self.dropout1 = Dropout(dropout)
  self.dropout2 = Dropout(dropout)
  self.d_model, self.nhead = d_model, nhead
  self.activation = activation_fn("TransformerEncoderLayer", opts.activation)   -- a Module registers as a child
end

function TransformerEncoderLayer:_label()
  return ("TransformerEncoderLayer(d_model=%d, nhead=%d)"):format(self.d_model, self.nhead)
end

-- self-attention block: dropout1(self_attn(x, x, x))
function TransformerEncoderLayer:_sa_block(x, attn_mask, key_padding_mask)
  local out = self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = key_padding_mask, need_weights = false })
  return self.dropout1(out)
end

-- feed-forward block: dropout2(linear2(dropout(activation(linear1(x)))))
function TransformerEncoderLayer:_ff_block(x)
  return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
end

--[[ forward(src, {src_mask =, src_key_padding_mask =}) -> (src's shape); src_mask may also be
     the second argument, as in PyTorch. ]]
function TransformerEncoderLayer:forward(src, src_mask, opts)
  local mask, kpm = mask_args(src_mask, opts, "src_mask")
  check_src(self:_label(), self.d_model, src, kpm, 3)
  local x = src
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), mask, kpm)
    x = x + self:_ff_block(self.norm2(x))
  else
    x = self.norm1(x + self:_sa_block(x, mask, kpm))
    x = self.norm2(x + self:_ff_block(x))
  end
  return x
end

---------------------------------------------------------------- TransformerEncoder
local TransformerEncoder = Module:extend("TransformerEncoder")
M.TransformerEncoder = TransformerEncoder

-- opts: norm (a Module or nil); enable_nested_tensor and mask_check are accepted for ports and
-- have no effect (they steer PyTorch's inference fast path).
function TransformerEncoder:__init(encoder_layer, num_layers, opts)
  opts = opts or {}
  if not is_module(encoder_layer) then
    error(("TransformerEncoder: encoder_layer must be a Module, got %s"):format(type(encoder_layer)), 3)
  end
  if type(num_layers) ~= "number" or num_layers < 0 or num_layers % 1 ~= 0 then
    error(("TransformerEncoder: num_layers must be a non-negative integer, got %s"):format(tostring(num_layers)), 3)
  end
  local clones = {}
  for i = 1, num_layers do clones[i] = deepcopy(encoder_layer, {}) end
  self.layers = ModuleList(clones)
  self.num_layers = num_layers
  if opts.norm ~= nil then
    if not is_module(opts.norm) then error("TransformerEncoder: norm must be a Module or nil", 3) end
    self.norm = opts.norm
  end
  self.enable_nested_tensor = opts.enable_nested_tensor ~= false
  self.mask_check = opts.mask_check ~= false
end

--[[ forward(src, {mask =, src_key_padding_mask =}) -> (src's shape); mask may also be the second
     argument, as in PyTorch. ]]
function TransformerEncoder:forward(src, mask, opts)
  local m, kpm = mask_args(mask, opts, "mask")
  local first = self.layers._modules.values["0"]
  if first and first.d_model then
    check_src(("TransformerEncoder(num_layers=%d, d_model=%d)"):format(self.num_layers, first.d_model), first.d_model,
      src, kpm, 3)
  end
  local out = src
  for _, layer in ipairs(self.layers:list()) do
    out = layer(out, { src_mask = m, src_key_padding_mask = kpm })
  end
  if self.norm ~= nil then out = self.norm(out) end
  return out
end

return M
