--[[
  torch.nn.transformer — nn.TransformerEncoderLayer and nn.TransformerEncoder with PyTorch's
  child names, init and maths (PyTorch 2.11); the decoder and nn.Transformer are in
  lua/torch/nn/transformer_decoder.lua.
  https://pytorch.org/docs/stable/generated/torch.nn.TransformerEncoderLayer.html

  nn.TransformerEncoderLayer(d_model, nhead, {dim_feedforward = 2048, dropout = 0.1,
      activation = "relu" | "gelu" | function | Module, layer_norm_eps = 1e-5,
      batch_first = false, norm_first = false, bias = true, dtype =, device =})
    bias = false: no bias in self_attn (in_proj_bias, out_proj.bias), linear1, linear2, norm1, norm2.
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
  or float. Both become float masks first (F._canonical_mask), as in PyTorch.

  forward(src, src_mask, src_key_padding_mask, is_causal) (layer) and forward(src, mask,
  src_key_padding_mask, is_causal) (encoder), positionally or in a trailing table. is_causal is
  a hint that the mask is the causal one (nn.Transformer.generate_square_subsequent_mask): self
  attention then lets scaled_dot_product_attention build it. The encoder's is_causal = nil (the
  default) checks whether mask is exactly that (S, S) mask, as PyTorch's _detect_is_causal_mask.

  Usage:
    local layer = nn.TransformerEncoderLayer(512, 8, {batch_first = true})
    local encoder = nn.TransformerEncoder(layer, 6, {norm = nn.LayerNorm(512)})
    local y = encoder(x, {mask = nn.Transformer.generate_square_subsequent_mask(T), is_causal = true})

  Self-attention runs with need_weights = false, so MultiheadAttention computes it with
  F.scaled_dot_product_attention, as PyTorch 2.x does. PyTorch's fused inference fast path
  (torch._transformer_encoder_layer_fwd, and its nested-tensor conversion) is not taken: ltorch
  always takes this SDPA path, whose results the fast path matches within float tolerance.
]]
local module = require "torch.nn.module"
local Linear = require("torch.nn.linear").Linear
local MultiheadAttention = require("torch.nn.attention").MultiheadAttention
local LayerNorm = require("torch.nn.normalization").LayerNorm
local Dropout = require("torch.nn.dropout").Dropout
local ModuleList = require("torch.nn.containers").ModuleList
local U = require "torch.nn._layer_util"
local TU = require "torch.nn._transformer_util"
local release = require "torch.nn._release"

local Module, is_module = module.Module, module.is_module
local A = require "torch.nn._fargs"

local M = {}

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
  local bias = TU.check_bias("TransformerEncoderLayer", opts.bias)
  local f = { bias = bias, dtype = opts.dtype, device = opts.device }
  local dropout = opts.dropout or 0.1
  local ff = opts.dim_feedforward or 2048
  local eps = opts.layer_norm_eps or 1e-5
  -- construction order is PyTorch's: it fixes both the child order and the init RNG draws
  self.self_attn = MultiheadAttention(d_model, nhead, { dropout = dropout, bias = bias,
    batch_first = opts.batch_first, dtype = f.dtype, device = f.device })
  self.linear1 = Linear(d_model, ff, f)
  self.dropout = Dropout(dropout)
  self.linear2 = Linear(ff, d_model, f)
  self.norm_first = opts.norm_first == true
  self.norm1 = LayerNorm(d_model, { eps = eps, bias = bias, dtype = f.dtype, device = f.device })
  self.norm2 = LayerNorm(d_model, { eps = eps, bias = bias, dtype = f.dtype, device = f.device })
  self.dropout1 = Dropout(dropout)
  self.dropout2 = Dropout(dropout)
  self.d_model, self.nhead = d_model, nhead
  self.activation = TU.activation_fn("TransformerEncoderLayer", opts.activation)   -- a Module registers as a child
end

function TransformerEncoderLayer:_label()
  return ("TransformerEncoderLayer(d_model=%d, nhead=%d)"):format(self.d_model, self.nhead)
end

-- self-attention block: dropout1(self_attn(x, x, x)), weights not asked for (the SDPA path)
function TransformerEncoderLayer:_sa_block(x, attn_mask, key_padding_mask, is_causal)
  local out = self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = key_padding_mask,
    need_weights = false, is_causal = is_causal })
  return self.dropout1(out)
end

-- feed-forward block: dropout2(linear2(dropout(activation(linear1(x)))))
function TransformerEncoderLayer:_ff_block(x)
  return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
end

local LAYER_ARGS = { "src_mask", "src_key_padding_mask", "is_causal" }

--[[ forward(src, src_mask, src_key_padding_mask, is_causal = false) -> (src's shape); any of
     them positionally (PyTorch's order) or in a trailing table. ]]
function TransformerEncoderLayer:forward(src, ...)
  local label = self:_label()
  local a = U.args(label, LAYER_ARGS, ...)
  TU.check_seq(label, "src", self.d_model, src, a.src_key_padding_mask, "src_key_padding_mask")
  local mask, kpm = TU.canonical_masks(label, src, a.src_mask, a.src_key_padding_mask, "src_mask",
    "src_key_padding_mask")
  local causal = a.is_causal == true
  -- every tensor made below is private to this call when the layer keeps nothing
  -- (torch.nn._release): all but the result are released on return, as C++ frees them
  return release.privately(self, self._forward_body, self, src, mask, kpm, causal)
end

function TransformerEncoderLayer:_forward_body(src, mask, kpm, causal)
  local x = src
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), mask, kpm, causal)
    x = x + self:_ff_block(self.norm2(x))
  else
    x = self.norm1(x + self:_sa_block(x, mask, kpm, causal))
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
  for i = 1, num_layers do clones[i] = TU.deepcopy(encoder_layer) end
  self.layers = ModuleList(clones)
  self.num_layers = num_layers
  if opts.norm ~= nil then
    if not is_module(opts.norm) then error("TransformerEncoder: norm must be a Module or nil", 3) end
    self.norm = opts.norm
  end
  self.enable_nested_tensor = opts.enable_nested_tensor ~= false
  self.mask_check = opts.mask_check ~= false
end

local ENCODER_ARGS = { "mask", "src_key_padding_mask", "is_causal" }

--[[ forward(src, mask, src_key_padding_mask, is_causal = nil) -> (src's shape); any of them
     positionally (PyTorch's order) or in a trailing table. is_causal = nil: detected from mask. ]]
function TransformerEncoder:forward(src, ...)
  local first = self.layers._modules.values["0"]
  local label = ("TransformerEncoder(num_layers=%d%s)"):format(self.num_layers,
    first and first.d_model and (", d_model=" .. first.d_model) or "")
  local a = U.args(label, ENCODER_ARGS, ...)
  if first and first.d_model then
    TU.check_seq(label, "src", first.d_model, src, a.src_key_padding_mask, "src_key_padding_mask")
  end
  local mask, kpm = TU.canonical_masks(label, src, a.mask, a.src_key_padding_mask, "mask", "src_key_padding_mask")
  local batch_first = first and first.self_attn and first.self_attn.batch_first
  local causal = TU.detect_is_causal_mask(mask, a.is_causal, TU.seq_len(src, batch_first))
  local out, previous_ok = src, false   -- previous_ok: the layer that made `out` keeps nothing
  for _, layer in ipairs(self.layers:list()) do
    local y = layer(out, { src_mask = mask, src_key_padding_mask = kpm, is_causal = causal })
    local ok = release.keeps_nothing(layer)
    if release.intermediate(out, y, previous_ok, ok, src, mask, kpm) then out:free() end
    out, previous_ok = y, ok
  end
  if self.norm ~= nil then
    local y = self.norm(out)
    if release.intermediate(out, y, previous_ok, release.keeps_nothing(self.norm), src, mask, kpm) then out:free() end
    out = y
  end
  return out
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.TransformerEncoderLayer, "d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', "
  .. "layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True, device=None, "
  .. "dtype=None")
A.init(M.TransformerEncoder, "encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True")

return M
