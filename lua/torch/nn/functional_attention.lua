--[[
  torch.nn.functional_attention — F.scaled_dot_product_attention with PyTorch 2.11's signature
  and checks, and F._canonical_mask, the mask normalisation MultiheadAttention and the
  Transformer layers share (PyTorch's private helper of the same name):
  https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html

  scaled_dot_product_attention(query, key, value, attn_mask = nil, dropout_p = 0, is_causal = false,
      {scale = 1 / sqrt(E), enable_gqa = false})   (every argument after value may be a keyword)
    out = dropout(softmax(query key^T * scale + bias), dropout_p) value
    bias: attn_mask as given when float (added), -inf where a bool attn_mask is false (true =
    may attend: the opposite of MultiheadAttention's masks), -inf above the diagonal with
    is_causal (aligned top-left when L ~= S). Dropout is applied whenever dropout_p > 0, training
    or not, as in PyTorch: modules pass 0 in eval mode.

  Shapes (N... batch dims, Hq / H heads, L target length, S source length, E / Ev head dims):
    query (N..., Hq, L, E) | key (N..., H, S, E) | value (N..., H, S, Ev) -> (N..., Hq, L, Ev);
    batch dims broadcast; attn_mask broadcasts to (N..., Hq, L, S). enable_gqa: H divides Hq
    (grouped-query attention, keys and values repeated over the query heads of a group).

  attn_mask with is_causal = true is an error, as PyTorch documents (its math kernel raises; its
  CPU flash kernel quietly applies both, so ltorch is stricter there). The ATen op picks its
  kernel (flash, efficient, math); all agree within float tolerance.

  Usage:  local F = torch.nn.functional
          local y = F.scaled_dot_product_attention(q, k, v, {is_causal = true, dropout_p = 0.1})
]]
local args = require "torch._args"
local T = require "torch._tensor"
local dtype = require "torch.dtype"

local M = {}

local NAME = "scaled_dot_product_attention"
local BOOL, FLOAT = dtype.resolve("bool"), dtype.resolve("float32")

local function shape(t) return "[" .. table.concat(T.sizes_of(t), ", ") .. "]" end

-- Raises "scaled_dot_product_attention: ..." at `level` (3: the caller of the function calling fail).
local function fail(level, fmt, ...) error((NAME .. ": " .. fmt):format(...), level) end

local aten   -- the ATen op through the generated surface, bound on first use

local POSITIONAL = { "attn_mask", "dropout_p", "is_causal" }
local KEYWORDS = { attn_mask = true, dropout_p = true, is_causal = true, scale = true, enable_gqa = true }

-- Reads (attn_mask, dropout_p, is_causal, {keywords}) into one table, as Python binds them.
local function bind(n, ...)
  local given, opts = { ... }, nil
  local last = given[n]
  if n > 0 and type(last) == "table" and getmetatable(last) == nil then opts, n = last, n - 1 end
  if n > #POSITIONAL then
    error(("%s: takes from 3 to 6 positional arguments but %d were given (scale and enable_gqa are keywords)")
      :format(NAME, n + 3), 3)
  end
  local a = {}
  for i = 1, n do a[POSITIONAL[i]] = given[i] end
  for k, v in pairs(opts or {}) do
    if not KEYWORDS[k] then error(("%s: unknown option '%s'"):format(NAME, tostring(k)), 3) end
    if a[k] ~= nil then error(("%s: got multiple values for argument '%s'"):format(NAME, k), 3) end
    a[k] = v
  end
  return a
end

-- The batch dims (all but the last two) of q, k and v broadcast together; with enable_gqa the
-- key and value heads (dim -3) must divide the query's instead. Returns the output's batch dims.
local function batch_dims(q, k, v, gqa)
  local sq, sk, sv = T.sizes_of(q), T.sizes_of(k), T.sizes_of(v)
  local n = math.max(#sq, #sk, #sv)
  local dims = {}
  for d = n, 3, -1 do   -- the d-th dim from the right
    local a, b, c = sq[#sq - d + 1] or 1, sk[#sk - d + 1] or 1, sv[#sv - d + 1] or 1
    local m = math.max(a, b, c)
    if gqa and d == 3 then
      if a % b ~= 0 or a % c ~= 0 then
        fail(4, "with enable_gqa the key and value heads (dim -3) must divide the query heads, got query %s, key %s and value %s",
          shape(q), shape(k), shape(v))
      end
      m = a
    elseif (a ~= m and a ~= 1) or (b ~= m and b ~= 1) or (c ~= m and c ~= 1) then
      fail(4, "the batch dims of query %s, key %s and value %s do not broadcast (dim %d)%s", shape(q), shape(k),
        shape(v), -d, d == 3 and "; enable_gqa = true allows fewer key/value heads" or "")
    end
    dims[#dims + 1] = m
  end
  return dims
end

-- attn_mask: bool, float32 or query's dtype, broadcastable to the scores (N..., Hq, L, S).
local function check_mask(mask, q, k, scores)
  local dt = T.dtype_of(mask)
  if dt ~= BOOL and dt ~= FLOAT and dt ~= T.dtype_of(q) then
    fail(4, "attn_mask must be bool, float32 or query's dtype (%s), got %s", tostring(T.dtype_of(q)), tostring(dt))
  end
  local sm = T.sizes_of(mask)
  local ok = #sm <= #scores
  for d = 1, #sm do
    local m, want = sm[#sm - d + 1], scores[#scores - d + 1]
    if m ~= 1 and m ~= want then ok = false end
  end
  if not ok then
    fail(4, "attn_mask %s does not broadcast to the scores (N..., Hq, L, S) = [%s] of query %s and key %s", shape(mask),
      table.concat(scores, ", "), shape(q), shape(k))
  end
end

--[[ scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, {scale, enable_gqa})
     -> (N..., Hq, L, Ev) ]]
function M.scaled_dot_product_attention(query, key, value, ...)
  T.handle(NAME, 1, query); T.handle(NAME, 2, key); T.handle(NAME, 3, value)
  local a = bind(select("#", ...), ...)
  local mask, p = a.attn_mask, args.number(NAME, 5, a.dropout_p, 0)
  local causal, gqa = args.boolean(NAME, 6, a.is_causal, false), args.boolean(NAME, 7, a.enable_gqa, false)
  if a.scale ~= nil then args.number(NAME, 7, a.scale) end
  if mask ~= nil then T.handle(NAME, 4, mask) end
  if p < 0 or p > 1 then fail(3, "dropout_p must be in [0, 1], got %s", tostring(p)) end
  local dq, dk, dv = T.dim_of(query), T.dim_of(key), T.dim_of(value)
  local min = gqa and 3 or 2
  if dq < min or dk < min or dv < min then
    fail(3, "expected query, key and value of at least %d dims (%s, L, E), got %s, %s and %s", min,
      gqa and "..., H" or "...", shape(query), shape(key), shape(value))
  end
  local sq, sk, sv = T.sizes_of(query), T.sizes_of(key), T.sizes_of(value)
  if sq[dq] ~= sk[dk] then
    fail(3, "query and key must have the same head dim E (last dim), got query %s and key %s", shape(query), shape(key))
  end
  if sk[dk - 1] ~= sv[dv - 1] then
    fail(3, "key and value must have the same source length S (dim -2), got key %s and value %s", shape(key), shape(value))
  end
  if T.dtype_of(key) ~= T.dtype_of(query) or T.dtype_of(value) ~= T.dtype_of(query) then
    fail(3, "query, key and value must have one dtype, got %s, %s and %s", tostring(T.dtype_of(query)),
      tostring(T.dtype_of(key)), tostring(T.dtype_of(value)))
  end
  local scores = batch_dims(query, key, value, gqa)
  if mask ~= nil then
    if causal then
      fail(3, "attn_mask and is_causal = true cannot both be given: is_causal builds the causal mask itself")
    end
    scores[#scores + 1], scores[#scores + 2] = sq[dq - 1], sk[dk - 1]
    check_mask(mask, query, key, scores)
  end
  aten = aten or require("torch._dispatch").function_for(NAME, "torch.nn.functional." .. NAME)
  local out = aten(query, key, value, mask, p, causal, { scale = a.scale, enable_gqa = gqa })   -- not a tail
  return out   -- call: ATen's errors then name the caller's line
end

---------------------------------------------------------------- masks
-- Replaced by torch.nn.functional with its own warning hook (one place to capture warnings).
function M._warn(msg) require("torch._warnings").warn(msg) end
local warned = {}

--[[ _canonical_mask(mask, mask_name, other_dtype, other_name, target_dtype, who) -> float mask or nil.
     A bool mask (true = masked) becomes 0 / -inf in target_dtype; a float mask is kept; any other
     dtype is an error naming `who` (callers check dtypes first, with their own messages). A dtype
     different from the other mask's warns once, as PyTorch deprecates mixing them. ]]
function M._canonical_mask(mask, mask_name, other_dtype, other_name, target_dtype, who)
  if mask == nil then return nil end
  local dt = T.dtype_of(mask)
  if dt ~= BOOL and not dt.is_floating_point then
    error(("%s: only bool and floating types of %s are supported, got %s"):format(who, mask_name, tostring(dt)), 3)
  end
  if other_dtype ~= nil and other_dtype ~= dt and not warned[mask_name .. other_name] then
    warned[mask_name .. other_name] = true
    M._warn(("Support for mismatched %s and %s is deprecated. Use same type for both instead."):format(mask_name,
      other_name))
  end
  if dt ~= BOOL then return mask end
  return mask:to(target_dtype):masked_fill_(mask, -math.huge)   -- true (1) -> -inf, false (0) stays 0
end

return M
