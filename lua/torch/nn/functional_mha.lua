--[[
  torch.nn.functional_mha — F.multi_head_attention_forward, the maths of nn.MultiheadAttention,
  with PyTorch 2.11's signature (torch.nn.functional.multi_head_attention_forward):
  https://pytorch.org/docs/stable/generated/torch.nn.functional.multi_head_attention_forward.html

  Shapes (L target length, S source length, N batch, E embed_dim, H num_heads, D = E / H):
    query (L, N, E) | key (S, N, E or kdim) | value (S, N, E or vdim), sequence first (the module
    transposes batch_first inputs); unbatched (L, E), (S, kdim), (S, vdim) also work.
    key_padding_mask (N, S) (or (S)): bool (true = ignore that key) or float (added).
    attn_mask (L, S) or (N*H, L, S): bool (true = may not attend) or float (added).
    static_k / static_v (N*H, S', D): keys and values used as given, after no projection.
  Returns attn_output (L, N, E) and attn_weights (N, L, S) averaged over heads, (N, H, L, S) with
  average_attn_weights = false, nil with need_weights = false.

  The steps, as PyTorch's: in-projection (packed in_proj_weight, or q/k/v_proj_weight with
  use_separate_proj_weight); bias_k / bias_v appended to every sequence; heads become batch
  entries; add_zero_attn appends an all-zero key and value; key_padding_mask merged into attn_mask;
  then with need_weights softmax(q k^T / sqrt(D) + mask) v (the weights returned), without it
  F.scaled_dot_product_attention (is_causal with neither weights nor a key_padding_mask lets SDPA
  build the causal mask: a wrong hint gives wrong results, as in PyTorch). Dropout only when
  training; the out-projection last.

  Usage (nn.MultiheadAttention calls M._forward with its name, so its errors name the module):
      local out, w = F.multi_head_attention_forward(q, k, v, 8, 2, w_in, b_in, nil, nil, false, 0.0,
                                                    w_out, b_out, {training = false})
]]
local torch = require "torch"
local attention = require "torch.nn.functional_attention"
local A = require "torch.nn._fargs"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

local function linear(x, w, b) return torch.nn.functional.linear(x, w, b) end

-- The in-projection: q (L, N, E), k (S, N, E), v (S, N, E). Packed weights are applied in one
-- matmul where query, key and value are the same tensor (self-attention), in two where key and
-- value are (encoder-decoder), as PyTorch groups them.
local function in_projection(a, E)
  local query, key, value = a.query, a.key, a.value
  if not a.use_separate_proj_weight then
    local w, b = a.in_proj_weight, a.in_proj_bias
    if rawequal(key, value) and rawequal(query, key) then
      local qkv = linear(query, w, b):chunk(3, -1)
      return qkv[1], qkv[2], qkv[3]
    elseif rawequal(key, value) then
      local ws = w:split({ E, 2 * E })
      local bs = b and b:split({ E, 2 * E }) or {}
      local kv = linear(key, ws[2], bs[2]):chunk(2, -1)
      return linear(query, ws[1], bs[1]), kv[1], kv[2]
    end
    local ws = w:chunk(3)
    local bs = b and b:chunk(3) or {}
    return linear(query, ws[1], bs[1]), linear(key, ws[2], bs[2]), linear(value, ws[3], bs[3])
  end
  local bs = a.in_proj_bias and a.in_proj_bias:chunk(3) or {}
  return linear(query, a.q_proj_weight, bs[1]), linear(key, a.k_proj_weight, bs[2]), linear(value, a.v_proj_weight, bs[3])
end

-- attn_mask (L, S) or (N*H, L, S) -> (1, L, S) or (N*H, L, S), shapes checked.
local function attn_mask_3d(fail, attn_mask, tgt_len, src_len, bsz, H)
  if attn_mask:dim() == 2 then
    if attn_mask:size(0) ~= tgt_len or attn_mask:size(1) ~= src_len then
      fail("the 2-D attn_mask is %s, but should be [%d, %d] (L, S)", shape(attn_mask), tgt_len, src_len)
    end
    return attn_mask:unsqueeze(0)
  end
  if attn_mask:dim() ~= 3 then fail("attn_mask's dimension %d is not supported", attn_mask:dim()) end
  if attn_mask:size(0) ~= bsz * H or attn_mask:size(1) ~= tgt_len or attn_mask:size(2) ~= src_len then
    fail("the 3-D attn_mask is %s, but should be [%d, %d, %d] (N*num_heads, L, S)", shape(attn_mask), bsz * H,
      tgt_len, src_len)
  end
  return attn_mask
end

-- (len, N, E) projected keys or values -> (N*H, len, D), or the static ones after their checks.
local function heads(fail, x, static, name, bsz, H, D)
  if static == nil then return x:contiguous():view(x:size(0), bsz * H, D):transpose(0, 1) end
  if static:dim() ~= 3 or static:size(0) ~= bsz * H or static:size(2) ~= D then
    fail("expecting static_%s of shape [%d, S, %d] (N*num_heads, S, head_dim), but got %s", name, bsz * H, D,
      shape(static))
  end
  return static
end

-- Appends one column to the masks that exist (a key or value was appended).
local function pad_masks(attn_mask, kpm)
  local F = torch.nn.functional
  return attn_mask and F.pad(attn_mask, { 0, 1 }), kpm and F.pad(kpm, { 0, 1 })
end

-- The weights path: softmax(q k^T / sqrt(D) + mask) v; returns (L, N, E) and (N, H, L, S).
local function explicit(a, q, k, v, attn_mask, dropout_p, sizes)
  local tgt_len, bsz, H, E, src_len = sizes.L, sizes.N, sizes.H, sizes.E, k:size(1)
  local q_scaled = q * math.sqrt(1 / q:size(2))
  local weights
  if attn_mask ~= nil then
    weights = torch.baddbmm(attn_mask, q_scaled, k:transpose(-2, -1))
  else
    weights = torch.bmm(q_scaled, k:transpose(-2, -1))
  end
  weights = weights:softmax(-1)
  if dropout_p > 0 then weights = torch.nn.functional.dropout(weights, dropout_p, true) end
  local out = torch.bmm(weights, v):transpose(0, 1):contiguous():view(tgt_len * bsz, E)   -- (L*N, E)
  out = linear(out, a.out_proj_weight, a.out_proj_bias)
  return out:view(tgt_len, bsz, out:size(1)), weights:view(bsz, H, tgt_len, src_len)
end

-- The SDPA path; returns (L, N, E).
local function fused(a, q, k, v, attn_mask, dropout_p, is_causal, sizes)
  local tgt_len, bsz, H, E, D, src_len = sizes.L, sizes.N, sizes.H, sizes.E, sizes.D, k:size(1)
  if attn_mask ~= nil then   -- (1, L, S) -> (1, 1, L, S); (N*H, 1|L, S) -> (N, H, 1|L, S)
    attn_mask = attn_mask:size(0) == 1 and attn_mask:unsqueeze(0) or attn_mask:view(bsz, H, -1, src_len)
  end
  local out = attention.scaled_dot_product_attention(q:view(bsz, H, tgt_len, D), k:view(bsz, H, src_len, D),
    v:view(bsz, H, src_len, D), attn_mask, dropout_p, is_causal)                         -- (N, H, L, D)
  out = out:permute(2, 0, 1, 3):contiguous():view(bsz * tgt_len, E)                      -- (L*N, E)
  out = linear(out, a.out_proj_weight, a.out_proj_bias)
  return out:view(tgt_len, bsz, out:size(1))
end

-- Ranks of the inputs and masks; true when batched.
local function check_ranks(fail, a)
  local qd = a.query:dim()
  if qd ~= 2 and qd ~= 3 then fail("query should be unbatched 2D or batched 3D tensor but received %d-D query tensor", qd) end
  if a.key:dim() ~= qd or a.value:dim() ~= qd then
    fail("For %s query, expected key and value to be %s. Got key %s and value %s", qd == 3 and "batched (3-D)" or
      "unbatched (2-D)", qd == 3 and "3-D" or "2-D", shape(a.key), shape(a.value))
  end
  if a.key_padding_mask ~= nil and a.key_padding_mask:dim() ~= qd - 1 then
    fail("For %s query, expected key_padding_mask to be None or %d-D but found %d-D tensor instead",
      qd == 3 and "batched (3-D)" or "unbatched (2-D)", qd - 1, a.key_padding_mask:dim())
  end
  return qd == 3
end

--[[ The whole computation for bound arguments `a` (the names of PyTorch's signature); `who`
     prefixes every error. ]]
function M._forward(who, a)
  local function fail(fmt, ...) A.fail(who .. ": " .. fmt, ...) end
  local batched = check_ranks(fail, a)
  local query, key, value, kpm = a.query, a.key, a.value, a.key_padding_mask
  if not batched then
    -- a batch of one: separate views, as PyTorch's unsqueeze makes (so the projection is never packed)
    query, key, value = query:unsqueeze(1), key:unsqueeze(1), value:unsqueeze(1)
    if kpm ~= nil then kpm = kpm:unsqueeze(0) end
  end
  a = setmetatable({ query = query, key = key, value = value }, { __index = a })
  local tgt_len, bsz, E = query:size(0), query:size(1), query:size(2)
  local H = a.num_heads
  if E ~= a.embed_dim_to_check then fail("was expecting embedding dimension of %d, but got %d", a.embed_dim_to_check, E) end
  local D = math.floor(E / H)
  if D * H ~= E then fail("embed_dim %d not divisible by num_heads %d", E, H) end
  local attn_mask, is_causal, need_weights = a.attn_mask, a.is_causal, a.need_weights
  kpm = attention._canonical_mask(kpm, "key_padding_mask", attn_mask and attn_mask.dtype, "attn_mask", query.dtype, who)
  if is_causal and attn_mask == nil then
    fail("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
      .. "`generate_square_subsequent_mask` to create this mask.")
  end
  if is_causal and kpm == nil and not need_weights then
    attn_mask = nil          -- SDPA builds the causal mask from the hint
  else
    attn_mask = attention._canonical_mask(attn_mask, "attn_mask", nil, "", query.dtype, who)
    if kpm ~= nil then is_causal = false end   -- the merged mask is no longer causal
  end
  local q, k, v = in_projection(a, E)
  if attn_mask ~= nil then attn_mask = attn_mask_3d(fail, attn_mask, tgt_len, key:size(0), bsz, H) end
  if a.bias_k ~= nil and a.bias_v ~= nil then   -- one learned key/value appended to every sequence
    if a.static_k ~= nil or a.static_v ~= nil then fail("bias cannot be added to static key and value") end
    k = torch.cat({ k, a.bias_k["repeat"](a.bias_k, 1, bsz, 1) })   -- PyTorch's bias_k.repeat(1, bsz, 1):
    v = torch.cat({ v, a.bias_v["repeat"](a.bias_v, 1, bsz, 1) })   -- [1, 1, E] or a 1-D [E] alike
    attn_mask, kpm = pad_masks(attn_mask, kpm)
  elseif (a.bias_k == nil) ~= (a.bias_v == nil) then
    fail("bias_k and bias_v must be given together")
  end
  q = q:contiguous():view(tgt_len, bsz * H, D):transpose(0, 1)   -- (N*H, L, D)
  k = heads(fail, k, a.static_k, "k", bsz, H, D)
  v = heads(fail, v, a.static_v, "v", bsz, H, D)
  if a.add_zero_attn then   -- one all-zero key/value appended
    k = torch.cat({ k, torch.zeros(bsz * H, 1, D, { dtype = k.dtype, device = k.device }) }, 1)
    v = torch.cat({ v, torch.zeros(bsz * H, 1, D, { dtype = v.dtype, device = v.device }) }, 1)
    attn_mask, kpm = pad_masks(attn_mask, kpm)
  end
  local src_len = k:size(1)
  if kpm ~= nil then   -- (N, S) -> (N*H, 1, S), added to attn_mask
    if kpm:size(0) ~= bsz or kpm:size(1) ~= src_len then
      fail("expected key_padding_mask of shape [%d, %d] (N, S), got %s", bsz, src_len, shape(kpm))
    end
    kpm = kpm:view(bsz, 1, 1, src_len):expand(-1, H, -1, -1):reshape(bsz * H, 1, src_len)
    attn_mask = attn_mask == nil and kpm or attn_mask + kpm
  end
  local dropout_p = a.training and a.dropout_p or 0
  local sizes = { L = tgt_len, N = bsz, H = H, E = E, D = D }
  if not need_weights then
    local out = fused(a, q, k, v, attn_mask, dropout_p, is_causal, sizes)
    return batched and out or out:squeeze(1), nil
  end
  local out, weights = explicit(a, q, k, v, attn_mask, dropout_p, sizes)
  if a.average_attn_weights then weights = weights:mean(1) end
  if not batched then return out:squeeze(1), weights:squeeze(0) end
  return out, weights
end

A.definer(M)("multi_head_attention_forward", "query, key, value, embed_dim_to_check, num_heads, in_proj_weight, "
  .. "in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, "
  .. "key_padding_mask=None, need_weights=True, attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None, "
  .. "k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True, is_causal=False",
  function(name, _, a)
    for _, k in ipairs({ "query", "key", "value" }) do
      if not torch.is_tensor(a[k]) then A.fail("%s: %s must be a Tensor, got %s", name, k, type(a[k])) end
    end
    if a.use_separate_proj_weight and (a.q_proj_weight == nil or a.k_proj_weight == nil or a.v_proj_weight == nil) then
      A.fail("%s: use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight is None", name)
    elseif not a.use_separate_proj_weight and a.in_proj_weight == nil then
      A.fail("%s: use_separate_proj_weight is False but in_proj_weight is None", name)
    end
    return M._forward(name, a)
  end)

return M
