--[[
  torch.nn.attention — nn.MultiheadAttention with PyTorch's parameters, init and maths
  (torch.nn.MultiheadAttention and F.multi_head_attention_forward, PyTorch 2.11):
  https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html

  Shapes (L target length, S source length, N batch, E embed_dim, H num_heads, D = E / H):
    query (L, N, E) | key (S, N, kdim) | value (S, N, vdim); (N, L, E) ... when batch_first;
    unbatched (L, E), (S, kdim), (S, vdim) also work.
    key_padding_mask (N, S) (or (S) unbatched): bool (true = ignore that key) or float (added).
    attn_mask (L, S) or (N*H, L, S): bool (true = may not attend) or float (added).
  forward returns two values: attn_output (L, N, E) and attn_weights (N, L, S) averaged over heads,
  (N, H, L, S) with average_attn_weights = false, nil with need_weights = false.

  The maths is F.multi_head_attention_forward's (lua/torch/nn/functional_mha.lua), as PyTorch's
  module calls it. As in PyTorch 2.x, need_weights = false computes the attention with
  F.scaled_dot_product_attention (masks merged into one float mask); need_weights = true keeps
  the explicit softmax(q k^T / sqrt(D) + mask) v, whose weights it returns. is_causal = true is a
  hint that attn_mask is the causal mask: it requires attn_mask, and when neither weights nor a
  key_padding_mask are asked for, SDPA applies its own causal mask instead of attn_mask (a
  wrong hint gives wrong results, as in PyTorch). Attention dropout only in training mode.

  Parameters (state_dict keys as PyTorch): in_proj_weight (3E, E) (or q_proj_weight (E, E),
  k_proj_weight (E, kdim), v_proj_weight (E, vdim) when kdim/vdim differ from E), in_proj_bias (3E),
  bias_k / bias_v (1, 1, E) with add_bias_kv, out_proj.weight (E, E), out_proj.bias (E).

  Usage:  local mha = nn.MultiheadAttention(64, 8, {dropout = 0.1, batch_first = true})
          local out, weights = mha(x, x, x, {key_padding_mask = pad, need_weights = false})

  PyTorch also has a fused inference fast path (_native_multi_head_attention); this module always
  takes the path above, whose results the fast path matches within float tolerance.
]]
local torch = require "torch"
local module = require "torch.nn.module"
local Linear = require("torch.nn.linear").Linear
local init = require "torch.nn.initializers"
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"
local mha = require "torch.nn.functional_mha"
local release = require "torch.nn._release"

local Module, Parameter = module.Module, module.Parameter
local A = require "torch.nn._fargs"

local M = {}

-- PyTorch names its out_proj class this way (a Linear that dynamic quantization leaves alone);
-- the name shows in repr, so it is kept.
local NonDynamicallyQuantizableLinear = Linear:extend("NonDynamicallyQuantizableLinear")

local MultiheadAttention = Module:extend("MultiheadAttention")
M.MultiheadAttention = MultiheadAttention

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

function MultiheadAttention:__init(embed_dim, num_heads, opts)
  opts = opts or {}
  if type(embed_dim) ~= "number" or type(num_heads) ~= "number" or num_heads < 1 then
    error(("MultiheadAttention: expected embed_dim and num_heads as positive integers, got %s, %s")
      :format(tostring(embed_dim), tostring(num_heads)), 3)
  end
  local head_dim = math.floor(embed_dim / num_heads)
  if head_dim * num_heads ~= embed_dim then
    error(("MultiheadAttention: embed_dim (%d) must be divisible by num_heads (%d)"):format(embed_dim, num_heads), 3)
  end
  local f = { dtype = opts.dtype, device = opts.device }
  self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, head_dim
  self.kdim, self.vdim = opts.kdim or embed_dim, opts.vdim or embed_dim
  self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
  self.dropout = opts.dropout or 0
  self.batch_first = opts.batch_first == true
  self.add_zero_attn = opts.add_zero_attn == true
  local bias = opts.bias ~= false

  -- registration order is PyTorch's, so state_dict keys and init RNG draws line up
  if self._qkv_same_embed_dim then
    self.in_proj_weight = Parameter(torch.empty(3 * embed_dim, embed_dim, f))
  else
    self.q_proj_weight = Parameter(torch.empty(embed_dim, embed_dim, f))
    self.k_proj_weight = Parameter(torch.empty(embed_dim, self.kdim, f))
    self.v_proj_weight = Parameter(torch.empty(embed_dim, self.vdim, f))
  end
  if bias then self.in_proj_bias = Parameter(torch.empty(3 * embed_dim, f)) end
  self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, { bias = bias, dtype = f.dtype, device = f.device })
  if opts.add_bias_kv then
    self.bias_k = Parameter(torch.empty(1, 1, embed_dim, f))
    self.bias_v = Parameter(torch.empty(1, 1, embed_dim, f))
  end
  self:_reset_parameters()
end

-- Xavier-uniform projections, zero biases (out_proj's Linear init draws first, then is zeroed:
-- PyTorch does the same, which keeps the RNG stream identical).
function MultiheadAttention:_reset_parameters()
  if self._qkv_same_embed_dim then
    init.xavier_uniform_(self.in_proj_weight)
  else
    init.xavier_uniform_(self.q_proj_weight)
    init.xavier_uniform_(self.k_proj_weight)
    init.xavier_uniform_(self.v_proj_weight)
  end
  if self.in_proj_bias ~= nil then
    init.constant_(self.in_proj_bias, 0)
    init.constant_(self.out_proj.bias, 0)
  end
  if self.bias_k ~= nil then init.xavier_normal_(self.bias_k) end
  if self.bias_v ~= nil then init.xavier_normal_(self.bias_v) end
end

function MultiheadAttention:_name()
  return ("MultiheadAttention(embed_dim=%d, num_heads=%d)"):format(self.embed_dim, self.num_heads)
end

-- Raises "<name>: <message>" at the user's line (the first caller outside lua/torch/nn/).
function MultiheadAttention:_fail(fmt, ...)
  U.fail((self:_name() .. ": " .. fmt):format(...))
end

local FORWARD_ARGS = { "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights", "is_causal" }

-- Checks ranks, feature sizes and options; returns whether the input is batched.
function MultiheadAttention:_check(query, key, value, opts)
  for _, k in ipairs({ "need_weights", "average_attn_weights", "is_causal" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "boolean" then self:_fail("%s must be a boolean, got %s", k, type(opts[k])) end
  end
  local kpm, attn_mask = opts.key_padding_mask, opts.attn_mask
  local qkv = { query, key, value }
  for i = 1, 3 do
    local t = qkv[i]
    if not torch.is_tensor(t) then self:_fail("expected query, key and value Tensors, argument %d is a %s", i, type(t)) end
  end
  local qd = query:dim()
  if qd ~= 2 and qd ~= 3 then
    self:_fail("expected a 3-D (batched) or 2-D (unbatched) query, got %s", shape(query))
  end
  if key:dim() ~= qd or value:dim() ~= qd then
    self:_fail("query %s is %d-D, so key and value must be too, got key %s and value %s", shape(query), qd,
      shape(key), shape(value))
  end
  if query:size(-1) ~= self.embed_dim then
    self:_fail("expected query with last dim %d (embed_dim), got %s", self.embed_dim, shape(query))
  end
  if key:size(-1) ~= self.kdim or value:size(-1) ~= self.vdim then
    self:_fail("expected key with last dim %d (kdim) and value with last dim %d (vdim), got %s and %s",
      self.kdim, self.vdim, shape(key), shape(value))
  end
  for d = 0, qd - 2 do
    if key:size(d) ~= value:size(d) then self:_fail("key %s and value %s differ in their leading dims", shape(key), shape(value)) end
  end
  local bdim = qd == 2 and -1 or (self.batch_first and 0 or 1)
  if qd == 3 and query:size(bdim) ~= key:size(bdim) then
    self:_fail("query %s and key %s have different batch sizes", shape(query), shape(key))
  end
  if kpm ~= nil and (not torch.is_tensor(kpm) or kpm:dim() ~= qd - 1) then
    self:_fail("expected a %d-D key_padding_mask, got %s", qd - 1, torch.is_tensor(kpm) and shape(kpm) or type(kpm))
  end
  if attn_mask ~= nil and (not torch.is_tensor(attn_mask) or (attn_mask:dim() ~= 2 and attn_mask:dim() ~= 3)) then
    self:_fail("expected a 2-D or 3-D attn_mask, got %s", torch.is_tensor(attn_mask) and shape(attn_mask) or type(attn_mask))
  end
  for name, m in pairs({ key_padding_mask = kpm, attn_mask = attn_mask }) do   -- uint8 is rejected since 2.0
    if m.dtype ~= torch.bool and not m:is_floating_point() then
      self:_fail("only bool and floating types of %s are supported, got %s", name, tostring(m.dtype))
    end
  end
  if opts.is_causal and attn_mask == nil then
    self:_fail("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
      .. "`generate_square_subsequent_mask` to create this mask.")
  end
  return qd == 3
end

--[[ forward(query, key, value, key_padding_mask, need_weights = true, attn_mask,
     average_attn_weights = true, is_causal = false) -> attn_output, attn_weights (nil when
     need_weights = false); the options positionally (PyTorch's order) or in a trailing table. ]]
function MultiheadAttention:forward(query, key, value, ...)
  -- the projections, head views and masks made here are private: released on return when the
  -- module keeps nothing (torch.nn._release), not at the next Lua collection
  return release.privately(self, self._forward_body, self, query, key, value, ...)
end

function MultiheadAttention:_forward_body(query, key, value, ...)
  local opts = U.args(self:_name(), FORWARD_ARGS, ...)
  local batched = self:_check(query, key, value, opts)
  local who = self:_name()
  local attn_mask = opts.attn_mask
  -- both masks become float, -inf where a bool mask is true
  local kpm = F._canonical_mask(opts.key_padding_mask, "key_padding_mask", attn_mask and attn_mask.dtype, "attn_mask",
    query.dtype, who)
  attn_mask = F._canonical_mask(attn_mask, "attn_mask", nil, "", query.dtype, who)
  if batched and self.batch_first then   -- the maths is sequence-first; identity is kept for packing
    local q = query:transpose(1, 0)
    local k = rawequal(key, query) and q or key:transpose(1, 0)
    value = rawequal(value, key) and k or value:transpose(1, 0)
    query, key = q, k
  end
  local same = self._qkv_same_embed_dim
  local out, weights = mha._forward(who, {
    query = query, key = key, value = value, embed_dim_to_check = self.embed_dim, num_heads = self.num_heads,
    in_proj_weight = self.in_proj_weight, in_proj_bias = self.in_proj_bias, bias_k = self.bias_k,
    bias_v = self.bias_v, add_zero_attn = self.add_zero_attn, dropout_p = self.dropout,
    out_proj_weight = self.out_proj.weight, out_proj_bias = self.out_proj.bias, training = self.training,
    key_padding_mask = kpm, need_weights = opts.need_weights ~= false, attn_mask = attn_mask,
    use_separate_proj_weight = not same, q_proj_weight = self.q_proj_weight, k_proj_weight = self.k_proj_weight,
    v_proj_weight = self.v_proj_weight, average_attn_weights = opts.average_attn_weights ~= false,
    is_causal = opts.is_causal == true })
  if batched and self.batch_first then out = out:transpose(1, 0) end
  return out, weights
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.MultiheadAttention, "embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, "
  .. "kdim=None, vdim=None, batch_first=False, device=None, dtype=None")

return M
