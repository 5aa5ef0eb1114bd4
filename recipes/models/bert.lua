--[[
  recipes/models/bert.lua — a BERT encoder with Hugging Face's module layout (transformers'
  models/bert/modeling_bert.py, BertModel), so its state dicts load with strict keys:
    embeddings.{word_embeddings,position_embeddings,token_type_embeddings}.weight,
    embeddings.LayerNorm.{weight,bias},
    encoder.layer.N.attention.self.{query,key,value}.{weight,bias},
    encoder.layer.N.attention.output.{dense,LayerNorm}.{weight,bias},
    encoder.layer.N.intermediate.dense.{weight,bias}, encoder.layer.N.output.{dense,LayerNorm}.*,
    pooler.dense.{weight,bias}
  (16 keys per layer, 5 + 16 L + 2 in all). embeddings.position_ids is a non-persistent buffer, as
  in transformers 4.31 and later: older files carry it, and load_state_dict drops it after
  checking it holds 0, 1, 2, ... (what transformers ignores on load).

  Shapes (B batch, T tokens, H hidden_size, h heads, d = H / h, I intermediate_size):
    input_ids, attention_mask, token_type_ids (B, T) int64 (mask: 1 = token, 0 = padding)
    -> last_hidden_state (B, T, H), pooler_output (B, H) = tanh(dense(hidden[:, 0]))
  Each layer (post-LayerNorm, as BERT):
    a = LayerNorm(x + dense(softmax(q k^T / sqrt(d) + mask) v))   q, k, v: (B, h, T, d)
    y = LayerNorm(a + dense2(gelu(dense1(a))))                      gelu: the exact, erf form
  Dropout (hidden_dropout_prob, attention_probs_dropout_prob) acts in train() mode only.

  Usage:  local bert = require "recipes.models.bert"
          local model = bert.BertModel(config)   -- config.json's fields (vocab_size, hidden_size, ...)
          local hidden, pooled = model(input_ids, attention_mask)
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional

local M = {}

---------------------------------------------------------------- embeddings
local BertEmbeddings = nn.Module:extend("BertEmbeddings")
M.BertEmbeddings = BertEmbeddings

function BertEmbeddings:__init(c)
  self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, { padding_idx = c.pad_token_id })
  self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
  self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
  self.LayerNorm = nn.LayerNorm(c.hidden_size, { eps = c.layer_norm_eps })
  self.dropout = nn.Dropout(c.hidden_dropout_prob)
  self:register_buffer("position_ids", torch.arange(c.max_position_embeddings):view(1, -1), false)
end

function BertEmbeddings:forward(input_ids, token_type_ids)
  local T = input_ids:size(1)
  local pos = self.position_ids:narrow(1, 0, T)
  local x = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(token_type_ids)
  return self.dropout(self.LayerNorm(x))
end

---------------------------------------------------------------- attention
local BertSelfAttention = nn.Module:extend("BertSelfAttention")
M.BertSelfAttention = BertSelfAttention

function BertSelfAttention:__init(c)
  if c.hidden_size % c.num_attention_heads ~= 0 then
    error(("BertSelfAttention: hidden_size %d is not a multiple of num_attention_heads %d"):format(c.hidden_size, c.num_attention_heads), 3)
  end
  rawset(self, "heads", c.num_attention_heads)
  rawset(self, "p", c.attention_probs_dropout_prob)
  self.query = nn.Linear(c.hidden_size, c.hidden_size)
  self.key = nn.Linear(c.hidden_size, c.hidden_size)
  self.value = nn.Linear(c.hidden_size, c.hidden_size)
end

-- x (B, T, H), keep (B, 1, 1, T) bool (true = may attend) -> context (B, T, H)
function BertSelfAttention:forward(x, keep)
  local B, T, H = x:size(0), x:size(1), x:size(2)
  local function heads(t) return t:view(B, T, self.heads, H / self.heads):transpose(1, 2) end
  local ctx = F.scaled_dot_product_attention(heads(self.query(x)), heads(self.key(x)), heads(self.value(x)),
    { attn_mask = keep, dropout_p = self.training and self.p or 0 })
  return ctx:transpose(1, 2):reshape(B, T, H)
end

-- dense -> dropout -> LayerNorm(+ residual): BertSelfOutput and BertOutput share it.
local function AddNorm(name)
  local cls = nn.Module:extend(name)
  function cls:__init(c, in_features)
    self.dense = nn.Linear(in_features, c.hidden_size)
    self.LayerNorm = nn.LayerNorm(c.hidden_size, { eps = c.layer_norm_eps })
    self.dropout = nn.Dropout(c.hidden_dropout_prob)
  end
  function cls:forward(h, residual) return self.LayerNorm(self.dropout(self.dense(h)) + residual) end
  return cls
end
M.BertSelfOutput = AddNorm("BertSelfOutput")
M.BertOutput = AddNorm("BertOutput")

local BertAttention = nn.Module:extend("BertAttention")
M.BertAttention = BertAttention

function BertAttention:__init(c)
  self.self = BertSelfAttention(c)
  self.output = M.BertSelfOutput(c, c.hidden_size)
end

function BertAttention:forward(x, keep) return self.output(self.self(x, keep), x) end

---------------------------------------------------------------- layer, encoder, pooler
local BertIntermediate = nn.Module:extend("BertIntermediate")
M.BertIntermediate = BertIntermediate

function BertIntermediate:__init(c)
  if c.hidden_act ~= "gelu" then error(("BertIntermediate: hidden_act '%s' is not supported (gelu only)"):format(tostring(c.hidden_act)), 3) end
  self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
end

function BertIntermediate:forward(x) return F.gelu(self.dense(x)) end

local BertLayer = nn.Module:extend("BertLayer")
M.BertLayer = BertLayer

function BertLayer:__init(c)
  self.attention = BertAttention(c)
  self.intermediate = BertIntermediate(c)
  self.output = M.BertOutput(c, c.intermediate_size)
end

function BertLayer:forward(x, keep)
  local a = self.attention(x, keep)
  return self.output(self.intermediate(a), a)
end

local BertEncoder = nn.Module:extend("BertEncoder")
M.BertEncoder = BertEncoder

function BertEncoder:__init(c)
  local layers = {}
  for i = 1, c.num_hidden_layers do layers[i] = BertLayer(c) end
  self.layer = nn.ModuleList(layers)
end

function BertEncoder:forward(x, keep)
  for _, layer in ipairs(self.layer:children()) do x = layer(x, keep) end
  return x
end

local BertPooler = nn.Module:extend("BertPooler")
M.BertPooler = BertPooler

function BertPooler:__init(c) self.dense = nn.Linear(c.hidden_size, c.hidden_size) end
function BertPooler:forward(hidden) return torch.tanh(self.dense(hidden:select(1, 0))) end

---------------------------------------------------------------- model
local BertModel = nn.Module:extend("BertModel")
M.BertModel = BertModel

local REQUIRED = { "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
  "max_position_embeddings", "type_vocab_size", "layer_norm_eps" }

function BertModel:__init(c)
  if type(c) ~= "table" then error(("bad argument #1 to 'BertModel' (config table expected, got %s)"):format(type(c)), 3) end
  for _, k in ipairs(REQUIRED) do
    if type(c[k]) ~= "number" then error(("BertModel: config.%s must be a number, got %s"):format(k, type(c[k])), 3) end
  end
  local cfg = {}
  for k, v in pairs(c) do cfg[k] = v end
  cfg.hidden_act = cfg.hidden_act or "gelu"
  cfg.hidden_dropout_prob = cfg.hidden_dropout_prob or 0.1
  cfg.attention_probs_dropout_prob = cfg.attention_probs_dropout_prob or 0.1
  cfg.pad_token_id = cfg.pad_token_id or 0
  rawset(self, "config", cfg)
  self.embeddings = BertEmbeddings(cfg)
  self.encoder = BertEncoder(cfg)
  self.pooler = BertPooler(cfg)
  self:reset_parameters()
end

-- transformers' _init_weights: Linear and Embedding N(0, initializer_range), biases 0, the
-- padding row 0, LayerNorm 1 / 0. Loaded weights replace all of it.
function BertModel:reset_parameters()
  local std = self.config.initializer_range or 0.02
  for _, m in ipairs(self:modules()) do
    local name = m._class.__name
    if name == "Linear" or name == "Embedding" then
      nn.init.normal_(m.weight, 0, std)
      if name == "Linear" then nn.init.zeros_(m.bias) end
    elseif name == "LayerNorm" then
      nn.init.ones_(m.weight)
      nn.init.zeros_(m.bias)
    end
  end
  torch.no_grad(function() self.embeddings.word_embeddings.weight:select(0, self.config.pad_token_id):zero_() end)
end

-- (input_ids, attention_mask = ones, token_type_ids = zeros) -> last_hidden_state, pooler_output
function BertModel:forward(input_ids, attention_mask, token_type_ids)
  if not torch.is_tensor(input_ids) or input_ids:dim() ~= 2 then
    error("BertModel: expected input_ids (B, T) int64, got " .. (torch.is_tensor(input_ids) and input_ids:dim() .. "-d tensor" or type(input_ids)), 2)
  end
  local B, T = input_ids:size(0), input_ids:size(1)
  if T > self.config.max_position_embeddings then
    error(("BertModel: %d tokens, past max_position_embeddings %d (truncate the input)"):format(T, self.config.max_position_embeddings), 2)
  end
  attention_mask = attention_mask or torch.ones_like(input_ids)
  token_type_ids = token_type_ids or torch.zeros_like(input_ids)
  local keep = attention_mask:view(B, 1, 1, T):to(torch.bool)
  local hidden = self.encoder(self.embeddings(input_ids, token_type_ids), keep)
  return hidden, self.pooler(hidden)
end

-- Strict keys, as nn.Module's, after dropping a checked embeddings.position_ids (see the header).
function BertModel:load_state_dict(sd, strict)
  local ids = sd["embeddings.position_ids"]
  if ids ~= nil then
    local want = self.embeddings.position_ids
    if not torch.is_tensor(ids) or ids:numel() ~= want:numel() or not torch.equal(ids:view(-1):to(want.dtype), want:view(-1)) then
      error("load_state_dict: embeddings.position_ids is not 0, 1, 2, ..., " .. (want:numel() - 1), 2)
    end
    local copy = {}
    for k, v in pairs(sd) do if k ~= "embeddings.position_ids" then copy[k] = v end end
    sd = copy
  end
  local ok, res = pcall(nn.Module.load_state_dict, self, sd, strict)
  if not ok then error((tostring(res):gsub("^[^\n]-:%d+: ", "")), 2) end
  return res
end

return M
