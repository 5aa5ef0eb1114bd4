--[[
  torch.nn.transformer_decoder — nn.TransformerDecoderLayer, nn.TransformerDecoder and the
  whole nn.Transformer (encoder + decoder) with PyTorch 2.11's child names, init and maths:
  https://pytorch.org/docs/stable/generated/torch.nn.Transformer.html

  nn.TransformerDecoderLayer(d_model, nhead, {dim_feedforward = 2048, dropout = 0.1,
      activation = "relu" | "gelu" | function | Module, layer_norm_eps = 1e-5,
      batch_first = false, norm_first = false, dtype =, device =})
    post-norm: x = norm1(x + SA(x)); x = norm2(x + MHA(x, mem)); x = norm3(x + FF(x))
    pre-norm:  x = x + SA(norm1(x)); x = x + MHA(norm2(x), mem); x = x + FF(norm3(x))
    SA(x) = dropout1(self_attn(x, x, x)), MHA(x, m) = dropout2(multihead_attn(x, m, m)),
    FF(x) = dropout3(linear2(dropout(act(linear1(x))))); both attentions with need_weights =
    false, so scaled_dot_product_attention computes them.
  nn.TransformerDecoder(decoder_layer, num_layers, {norm = nil}): num_layers deep copies in
    `layers`, then norm.
  nn.Transformer({d_model = 512, nhead = 8, num_encoder_layers = 6, num_decoder_layers = 6,
      dim_feedforward = 2048, dropout = 0.1, activation = "relu", custom_encoder =,
      custom_decoder =, layer_norm_eps = 1e-5, batch_first = false, norm_first = false,
      dtype =, device =}) (or positionally, in that order): encoder (TransformerEncoder with a
    final LayerNorm) and decoder (TransformerDecoder with a final LayerNorm); every parameter of
    2 or more dims re-initialised xavier_uniform_ afterwards, as PyTorch does.
  nn.Transformer.generate_square_subsequent_mask(sz, {dtype =, device =}): the (sz, sz) causal
    float mask (0 on and below the diagonal, -inf above).

  Shapes (T target, S source, N batch, E d_model): tgt (T, N, E), memory / src (S, N, E), (N, ...,
  E) with batch_first, or unbatched (T, E) / (S, E). tgt_mask (T, T) or (N*nhead, T, T);
  memory_mask (T, S); key padding masks (N, T) / (N, S): bool (true = ignore) or float (added).

  forward arguments, positionally in PyTorch's order or in a trailing table:
    layer:       (tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                  memory_key_padding_mask, tgt_is_causal = false, memory_is_causal = false)
    decoder:     the same, but tgt_is_causal = nil: detected from tgt_mask (PyTorch's
                 _detect_is_causal_mask)
    Transformer: (src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask,
                  tgt_key_padding_mask, memory_key_padding_mask, src_is_causal, tgt_is_causal,
                  memory_is_causal = false)
  The *_is_causal flags are hints that the matching mask is the causal one (a wrong hint gives
  wrong results, as in PyTorch); like PyTorch, MultiheadAttention requires the mask with them.

  Usage:
    local model = nn.Transformer({d_model = 64, nhead = 4, batch_first = true})
    local mask = nn.Transformer.generate_square_subsequent_mask(tgt:size(1))
    local y = model(src, tgt, {tgt_mask = mask, tgt_is_causal = true})

  ltorch always takes this SDPA path; PyTorch's inference fast paths match it within float
  tolerance. bias = false (layers and nn.Transformer) drops every bias: attention projections,
  linear1/linear2 and the LayerNorms (the encoder's and decoder's final norms included).
]]
local module = require "torch.nn.module"
local Linear = require("torch.nn.linear").Linear
local MultiheadAttention = require("torch.nn.attention").MultiheadAttention
local LayerNorm = require("torch.nn.normalization").LayerNorm
local Dropout = require("torch.nn.dropout").Dropout
local ModuleList = require("torch.nn.containers").ModuleList
local encoder = require "torch.nn.transformer"
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"
local TU = require "torch.nn._transformer_util"

local Module, is_module = module.Module, module.is_module
local A = require "torch.nn._fargs"

local M = {}

local function check_dims(label, d_model, nhead)
  if not U.is_int(d_model) or not U.is_int(nhead) or nhead < 1 then
    U.fail(("%s: expected d_model and nhead as positive integers, got %s, %s"):format(label, tostring(d_model),
      tostring(nhead)))
  end
  if d_model % nhead ~= 0 then
    U.fail(("%s: d_model (%d) must be divisible by nhead (%d)"):format(label, d_model, nhead))
  end
end

---------------------------------------------------------------- TransformerDecoderLayer
local TransformerDecoderLayer = Module:extend("TransformerDecoderLayer")
M.TransformerDecoderLayer = TransformerDecoderLayer

function TransformerDecoderLayer:__init(d_model, nhead, opts)
  opts = opts or {}
  check_dims("TransformerDecoderLayer", d_model, nhead)
  local bias = TU.check_bias("TransformerDecoderLayer", opts.bias)
  local f = { bias = bias, dtype = opts.dtype, device = opts.device }
  local dropout = opts.dropout or 0.1
  local ff = opts.dim_feedforward or 2048
  local ln = { eps = opts.layer_norm_eps or 1e-5, bias = bias, dtype = f.dtype, device = f.device }
  local attn = { dropout = dropout, bias = bias, batch_first = opts.batch_first, dtype = f.dtype, device = f.device }
  -- construction order is PyTorch's: it fixes both the child order and the init RNG draws
  self.self_attn = MultiheadAttention(d_model, nhead, attn)
  self.multihead_attn = MultiheadAttention(d_model, nhead, attn)
  self.linear1 = Linear(d_model, ff, f)
  self.dropout = Dropout(dropout)
  self.linear2 = Linear(ff, d_model, f)
  self.norm_first = opts.norm_first == true
  -- one statement each: a multiple assignment may assign (so register) them in any order
  self.norm1 = LayerNorm(d_model, ln)
  self.norm2 = LayerNorm(d_model, ln)
  self.norm3 = LayerNorm(d_model, ln)
  self.dropout1 = Dropout(dropout)
  self.dropout2 = Dropout(dropout)
  self.dropout3 = Dropout(dropout)
  self.d_model, self.nhead = d_model, nhead
  self.activation = TU.activation_fn("TransformerDecoderLayer", opts.activation)   -- a Module registers as a child
end

function TransformerDecoderLayer:_label()
  return ("TransformerDecoderLayer(d_model=%d, nhead=%d)"):format(self.d_model, self.nhead)
end

-- self-attention block: dropout1(self_attn(x, x, x))
function TransformerDecoderLayer:_sa_block(x, attn_mask, key_padding_mask, is_causal)
  return self.dropout1(self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = key_padding_mask,
    is_causal = is_causal, need_weights = false }))
end

-- encoder-decoder attention block: dropout2(multihead_attn(x, mem, mem))
function TransformerDecoderLayer:_mha_block(x, mem, attn_mask, key_padding_mask, is_causal)
  return self.dropout2(self.multihead_attn(x, mem, mem, { attn_mask = attn_mask, key_padding_mask = key_padding_mask,
    is_causal = is_causal, need_weights = false }))
end

-- feed-forward block: dropout3(linear2(dropout(activation(linear1(x)))))
function TransformerDecoderLayer:_ff_block(x)
  return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))
end

local DECODER_ARGS = { "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask", "tgt_is_causal",
  "memory_is_causal" }

-- Checks tgt and memory against d_model and the key padding masks' dtypes.
local function check_decoder_inputs(label, d_model, tgt, memory, a)
  TU.check_seq(label, "tgt", d_model, tgt, a.tgt_key_padding_mask, "tgt_key_padding_mask")
  TU.check_seq(label, "memory", d_model, memory, a.memory_key_padding_mask, "memory_key_padding_mask")
end

--[[ forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
     tgt_is_causal = false, memory_is_causal = false) -> (tgt's shape) ]]
function TransformerDecoderLayer:forward(tgt, memory, ...)
  local label = self:_label()
  local a = U.args(label, DECODER_ARGS, ...)
  check_decoder_inputs(label, self.d_model, tgt, memory, a)
  local tc, mc = a.tgt_is_causal == true, a.memory_is_causal == true
  local x = tgt
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), a.tgt_mask, a.tgt_key_padding_mask, tc)
    x = x + self:_mha_block(self.norm2(x), memory, a.memory_mask, a.memory_key_padding_mask, mc)
    x = x + self:_ff_block(self.norm3(x))
  else
    x = self.norm1(x + self:_sa_block(x, a.tgt_mask, a.tgt_key_padding_mask, tc))
    x = self.norm2(x + self:_mha_block(x, memory, a.memory_mask, a.memory_key_padding_mask, mc))
    x = self.norm3(x + self:_ff_block(x))
  end
  return x
end

---------------------------------------------------------------- TransformerDecoder
local TransformerDecoder = Module:extend("TransformerDecoder")
M.TransformerDecoder = TransformerDecoder

function TransformerDecoder:__init(decoder_layer, num_layers, opts)
  opts = opts or {}
  if not is_module(decoder_layer) then
    U.fail(("TransformerDecoder: decoder_layer must be a Module, got %s"):format(type(decoder_layer)))
  end
  if not U.is_int(num_layers) or num_layers < 0 then
    U.fail(("TransformerDecoder: num_layers must be a non-negative integer, got %s"):format(tostring(num_layers)))
  end
  local clones = {}
  for i = 1, num_layers do clones[i] = TU.deepcopy(decoder_layer) end
  self.layers = ModuleList(clones)
  self.num_layers = num_layers
  if opts.norm ~= nil then
    if not is_module(opts.norm) then U.fail("TransformerDecoder: norm must be a Module or nil") end
    self.norm = opts.norm
  end
end

--[[ forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
     tgt_is_causal = nil, memory_is_causal = false) -> (tgt's shape) ]]
function TransformerDecoder:forward(tgt, memory, ...)
  local first = self.layers._modules.values["0"]
  local label = ("TransformerDecoder(num_layers=%d%s)"):format(self.num_layers,
    first and first.d_model and (", d_model=" .. first.d_model) or "")
  local a = U.args(label, DECODER_ARGS, ...)
  if first and first.d_model then check_decoder_inputs(label, first.d_model, tgt, memory, a) end
  local batch_first = first and first.self_attn and first.self_attn.batch_first
  local tc = TU.detect_is_causal_mask(a.tgt_mask, a.tgt_is_causal, TU.seq_len(tgt, batch_first))
  local out = tgt
  for _, layer in ipairs(self.layers:list()) do
    out = layer(out, memory, { tgt_mask = a.tgt_mask, memory_mask = a.memory_mask,
      tgt_key_padding_mask = a.tgt_key_padding_mask, memory_key_padding_mask = a.memory_key_padding_mask,
      tgt_is_causal = tc, memory_is_causal = a.memory_is_causal == true })
  end
  if self.norm ~= nil then out = self.norm(out) end
  return out
end

---------------------------------------------------------------- Transformer
local Transformer = Module:extend("Transformer")
M.Transformer = Transformer

local TRANSFORMER_ARGS = { "d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward",
  "dropout", "activation", "custom_encoder", "custom_decoder", "layer_norm_eps", "batch_first", "norm_first", "bias",
  "device", "dtype" }

function Transformer:__init(...)
  local a = U.args("Transformer", TRANSFORMER_ARGS, ...)
  local d_model, nhead = a.d_model or 512, a.nhead or 8
  check_dims("Transformer", d_model, nhead)
  local bias = TU.check_bias("Transformer", a.bias)
  local layer_opts = { dim_feedforward = a.dim_feedforward, dropout = a.dropout, activation = a.activation,
    layer_norm_eps = a.layer_norm_eps, batch_first = a.batch_first, norm_first = a.norm_first, bias = bias,
    dtype = a.dtype, device = a.device }
  local ln = { eps = a.layer_norm_eps or 1e-5, bias = bias, dtype = a.dtype, device = a.device }
  if a.custom_encoder ~= nil then
    self.encoder = a.custom_encoder
  else
    self.encoder = encoder.TransformerEncoder(encoder.TransformerEncoderLayer(d_model, nhead, layer_opts),
      a.num_encoder_layers or 6, { norm = LayerNorm(d_model, ln) })
  end
  if a.custom_decoder ~= nil then
    self.decoder = a.custom_decoder
  else
    self.decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, layer_opts), a.num_decoder_layers or 6,
      { norm = LayerNorm(d_model, ln) })
  end
  self:_reset_parameters()
  self.d_model, self.nhead, self.batch_first = d_model, nhead, a.batch_first == true
end

-- Xavier-uniform for every weight matrix (all parameters of 2 or more dims), in parameter order.
function Transformer:_reset_parameters()
  for _, p in ipairs(self:parameters()) do
    if p:dim() > 1 then init.xavier_uniform_(p) end
  end
end

local FORWARD_ARGS = { "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask", "tgt_key_padding_mask",
  "memory_key_padding_mask", "src_is_causal", "tgt_is_causal", "memory_is_causal" }

--[[ forward(src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
     memory_key_padding_mask, src_is_causal, tgt_is_causal, memory_is_causal = false) -> (tgt's shape) ]]
function Transformer:forward(src, tgt, ...)
  local label = ("Transformer(d_model=%d, nhead=%d)"):format(self.d_model, self.nhead)
  local a = U.args(label, FORWARD_ARGS, ...)
  TU.check_seq(label, "src", self.d_model, src, a.src_key_padding_mask, "src_key_padding_mask")
  TU.check_seq(label, "tgt", self.d_model, tgt, a.tgt_key_padding_mask, "tgt_key_padding_mask")
  local bdim = self.batch_first and 0 or 1
  if src:dim() == 3 and (tgt:dim() ~= 3 or src:size(bdim) ~= tgt:size(bdim)) then
    U.fail(("%s: the batch number of src and tgt must be equal, got src %s and tgt %s"):format(label, U.shape(src),
      U.shape(tgt)))
  end
  local memory = self.encoder(src, { mask = a.src_mask, src_key_padding_mask = a.src_key_padding_mask,
    is_causal = a.src_is_causal })
  return self.decoder(tgt, memory, { tgt_mask = a.tgt_mask, memory_mask = a.memory_mask,
    tgt_key_padding_mask = a.tgt_key_padding_mask, memory_key_padding_mask = a.memory_key_padding_mask,
    tgt_is_causal = a.tgt_is_causal, memory_is_causal = a.memory_is_causal })
end

-- A static method in PyTorch: nn.Transformer.generate_square_subsequent_mask(sz); model:...(sz) works too.
function Transformer.generate_square_subsequent_mask(sz, ...)
  if is_module(sz) then return TU.generate_square_subsequent_mask(...) end
  return TU.generate_square_subsequent_mask(sz, ...)
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.TransformerDecoderLayer, "d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', "
  .. "layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True, device=None, "
  .. "dtype=None")
A.init(M.TransformerDecoder, "decoder_layer, num_layers, norm=None")
A.init(M.Transformer, "d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, "
  .. "dropout=0.1, activation='relu', custom_encoder=None, custom_decoder=None, "
  .. "layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True, device=None, "
  .. "dtype=None")

return M
