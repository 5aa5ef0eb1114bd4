--[[
  model.lua — a small byte-level language model (a GPT-like Transformer with a causal mask).
  new(config) -> nn.Module;  model(ids) -> next-byte logits
  Shapes: B batch, T <= config.context, E config.d_model, V = 256 (bytes are the tokens).
      ids (B, T) int64 -> byte embedding + learned positions                  (B, T, E)
      -> TransformerEncoder, pre-norm, causal mask (position t sees 0..t)     (B, T, E)
      -> LayerNorm -> Linear(E, 256) logits                                    (B, T, 256)
  Its Linear layers named linear1 / linear2 (each layer's feed-forward) and head are the
  default LoRA targets (config.targets).
]]
local torch = require "torch"
local nn = torch.nn

local M = { VOCAB = 256 }

local CharLM = nn.Module:extend("CharLM")

function CharLM:__init(c)
  self.embed = nn.Embedding(M.VOCAB, c.d_model)
  self.pos = nn.Embedding(c.context, c.d_model)
  self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(c.d_model, c.heads,
    { dim_feedforward = 4 * c.d_model, dropout = 0.0, batch_first = true, norm_first = true }), c.layers)
  self.norm = nn.LayerNorm(c.d_model)
  self.head = nn.Linear(c.d_model, M.VOCAB)
end

function CharLM:forward(ids)
  local T = ids:size(1)
  local causal = torch.ones(T, T, { dtype = torch.bool, device = ids.device }):triu(1)   -- true: may not attend
  local h = self.embed(ids) + self.pos(torch.arange(T, { device = ids.device }))
  return self.head(self.norm(self.encoder(h, { mask = causal })))
end

function M.new(config) return CharLM(config) end

-- The head's bias from a text's byte frequencies (add-one smoothed log prior): training then
-- starts at the text's unigram loss instead of spending its first steps learning it (ltorch
-- doctor's output_bias check). bytes: a 1-D integer tensor of byte values.
function M.init_head_bias(model, bytes)
  local counts = torch.bincount(bytes:to(torch.int64):view(-1), { minlength = M.VOCAB }):double() + 1
  torch.no_grad(function() model.head.bias:copy_((counts / counts:sum()):log()) end)
end

return M
