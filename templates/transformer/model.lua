--[[
  model.lua — a Transformer encoder that classifies token sequences.
  new(config, vocab_size, num_classes) -> nn.Module;  model(ids, mask) -> logits (B, K)
  Shapes: B batch, T sequence length (<= config.max_len), E config.d_model, K classes.
      ids (B, T) int64, mask (B, T) bool (true on real tokens, false on padding)
      -> token embedding (padding_idx 0) + learned position embedding       (B, T, E)
      -> TransformerEncoder (self-attention ignores padded keys)            (B, T, E)
      -> LayerNorm -> mean over the real tokens only                        (B, E)
      -> Linear(E, K) logits (no softmax: CrossEntropyLoss takes logits)
  Edit this file to change the architecture; keep the forward(ids, mask) signature.
]]
local torch = require "torch"
local nn = torch.nn

local Encoder = nn.Module:extend("EncoderClassifier")

function Encoder:__init(c, vocab_size, num_classes)
  self.embed = nn.Embedding(vocab_size, c.d_model, { padding_idx = 0 })
  self.pos = nn.Embedding(c.max_len, c.d_model)
  local layer = nn.TransformerEncoderLayer(c.d_model, c.heads,
    { dim_feedforward = c.ff, dropout = c.dropout, batch_first = true })
  self.encoder = nn.TransformerEncoder(layer, c.layers)
  self.norm = nn.LayerNorm(c.d_model)
  self.head = nn.Linear(c.d_model, num_classes)
end

function Encoder:forward(ids, mask)
  local T = ids:size(1)
  local h = self.embed(ids) + self.pos(torch.arange(T, { device = ids.device }))   -- (B, T, E)
  h = self.encoder(h, { src_key_padding_mask = mask:logical_not() })           -- true = ignore
  h = self.norm(h)
  local m = mask:unsqueeze(2):to(h.dtype)                                       -- (B, T, 1)
  local pooled = (h * m):sum(1) / m:sum(1):clamp({ min = 1 })                   -- (B, E)
  return self.head(pooled)
end

return { new = function(config, vocab_size, num_classes) return Encoder(config, vocab_size, num_classes) end }
