--[[
  spec/nn/sdpa_spec.lua — F.scaled_dot_product_attention (lua/torch/nn/functional_attention.lua)
  against PyTorch, and its misuse errors.

  Each case draws query, key, value (and the output weights R) in Python from a seeded
  generator, runs PyTorch's F.scaled_dot_product_attention, then loss = sum(out * R) backward;
  ltorch gets the same inputs and must give the same output and gradients of q, k and v. Cases:
  no mask, bool mask (broadcast over batch and heads, one fully masked row), float mask, is_causal
  square and L < S, scale, enable_gqa (grouped-query heads), a value head dim unlike the query's,
  broadcast batch dims, float64, dropout with a seeded global RNG, arguments positionally.
  Tolerance: atol 1e-5 + rtol 1e-5 (float32); results are usually bitwise equal (same ATen op).
  The errors must name the problem and blame the caller's line.

  One pytorch.run computes every reference.

  Run:  build/ltorch /usr/bin/busted spec/nn/sdpa_spec.lua
]]
local torch = require "torch"
local F = torch.nn.functional
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local inputs = require "spec.support.attention_inputs"
local wave = inputs.wave

local TOL = { atol = 1e-5, rtol = 1e-5 }

-- SDPA's bool masks: true = may attend. Row 2 of this one attends nowhere.
local function pattern_mask(L, S, dead_row)
  local m = {}
  for i = 1, L do
    m[i] = {}
    for j = 1, S do m[i][j] = i ~= dead_row and (i + j) % 3 ~= 0 end
  end
  return m
end

--[[ {name, q shape, k shape, v shape, mask {values, "bool"|"float"} | nil, keywords, opts}
     opts: dtype ("float32" default), dropout_seed (torch.manual_seed before the call),
     positional (pass mask, dropout_p, is_causal positionally and scale / enable_gqa as keywords) ]]
local CASES = {
  { "no mask", { 2, 3, 4, 8 }, { 2, 3, 5, 8 }, { 2, 3, 5, 8 }, nil, {} },
  { "bool mask broadcast over batch and heads", { 2, 3, 4, 8 }, { 2, 3, 5, 8 }, { 2, 3, 5, 8 },
    { pattern_mask(4, 5), "bool" }, {} },
  { "bool mask with a fully masked row", { 1, 2, 4, 8 }, { 1, 2, 4, 8 }, { 1, 2, 4, 8 },
    { pattern_mask(4, 4, 2), "bool" }, {} },
  { "float mask (N, 1, L, S)", { 2, 3, 4, 8 }, { 2, 3, 5, 8 }, { 2, 3, 5, 8 }, { wave({ 2, 1, 4, 5 }, 2), "float" }, {} },
  { "is_causal, L = S", { 2, 2, 5, 8 }, { 2, 2, 5, 8 }, { 2, 2, 5, 8 }, nil, { is_causal = true } },
  { "is_causal, L < S (aligned top-left)", { 2, 2, 3, 8 }, { 2, 2, 5, 8 }, { 2, 2, 5, 8 }, nil, { is_causal = true } },
  { "scale", { 2, 3, 4, 8 }, { 2, 3, 4, 8 }, { 2, 3, 4, 8 }, nil, { scale = 0.3 } },
  { "enable_gqa: 6 query heads over 2 key/value heads, causal", { 2, 6, 4, 8 }, { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, nil,
    { enable_gqa = true, is_causal = true } },
  { "enable_gqa with a float mask and scale", { 1, 4, 3, 8 }, { 1, 1, 5, 8 }, { 1, 1, 5, 8 }, { wave({ 3, 5 }, 1), "float" },
    { enable_gqa = true, scale = 0.5 } },
  { "value head dim 6, unlike the query's 8; 3-D inputs", { 3, 4, 8 }, { 3, 5, 8 }, { 3, 5, 6 }, nil, {} },
  { "key and value batch dims broadcast", { 2, 3, 4, 8 }, { 1, 3, 5, 8 }, { 1, 3, 5, 8 }, nil, {} },
  { "float64 with a float64 mask", { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, { wave({ 4, 4 }, 1), "float" }, {},
    { dtype = "float64" } },
  { "dropout_p = 0.3 with a seeded global RNG", { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, nil, { dropout_p = 0.3 },
    { dropout_seed = 7 } },
  { "arguments positionally: mask, dropout_p, is_causal, then {scale}", { 2, 2, 4, 8 }, { 2, 2, 4, 8 }, { 2, 2, 4, 8 },
    { wave({ 4, 4 }, 1), "float" }, { dropout_p = 0.0, is_causal = false, scale = 0.25 }, { positional = true } },
}

local PY = [==[
import torch.nn.functional as F
def L(t): return t.tolist()
def case(seed, qs, ks, vs, mask, mkind, kw, dtype, dropout_seed):
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(qs, generator=g, dtype=dt).requires_grad_()
    k = torch.randn(ks, generator=g, dtype=dt).requires_grad_()
    v = torch.randn(vs, generator=g, dtype=dt).requires_grad_()
    m = None if mask is None else torch.tensor(mask, dtype=torch.bool if mkind == 'bool' else dt)
    if dropout_seed is not None: torch.manual_seed(dropout_seed)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
    R = torch.randn(out.shape, generator=g, dtype=dt)
    (out * R).sum().backward()
    return dict(q=L(q), k=L(k), v=L(v), R=L(R), out=L(out), gq=L(q.grad), gk=L(k.grad), gv=L(v.grad))
res = []
]==]

local function pykw(kw)
  local keys, parts = {}, {}
  for k in pairs(kw) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = kw[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "number" and ("%.17g"):format(v) or approx.py(v))
  end
  return table.concat(parts, ", ")
end

describe("F.scaled_dot_product_attention against PyTorch", function()
  local ref
  setup(function()
    local code = { PY }
    for i, c in ipairs(CASES) do
      local o = c[7] or {}
      code[#code + 1] = ("res.append(case(%d, %s, %s, %s, %s, %s, dict(%s), '%s', %s))"):format(i, approx.py(c[2]),
        approx.py(c[3]), approx.py(c[4]), c[5] and approx.py(c[5][1]) or "None", c[5] and ("'" .. c[5][2] .. "'") or "None",
        pykw(c[6]), o.dtype or "float32", o.dropout_seed or "None")
    end
    code[#code + 1] = "print(json.dumps(res))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. ": output and gradients of q, k, v", function()
      local r, o = ref[i], c[7] or {}
      local dt = torch[o.dtype or "float32"]
      local function T(list) return torch.tensor(list, { dtype = dt }) end
      local q, k, v = T(r.q):requires_grad_(), T(r.k):requires_grad_(), T(r.v):requires_grad_()
      local mask
      if c[5] then mask = c[5][2] == "bool" and torch.tensor(c[5][1], { dtype = torch.bool }) or T(c[5][1]) end
      if o.dropout_seed then torch.manual_seed(o.dropout_seed) end
      local out
      if o.positional then
        out = F.scaled_dot_product_attention(q, k, v, mask, c[6].dropout_p, c[6].is_causal, { scale = c[6].scale })
      else
        local kw = { attn_mask = mask }
        for key, val in pairs(c[6]) do kw[key] = val end
        out = F.scaled_dot_product_attention(q, k, v, kw)
      end
      approx.check(out, r.out, TOL)
      ;(out * T(r.R)):sum():backward()
      approx.check(q.grad, r.gq, TOL)
      approx.check(k.grad, r.gk, TOL)
      approx.check(v.grad, r.gv, TOL)
    end)
  end
end)

describe("F.scaled_dot_product_attention misuse", function()
  -- fn is a one-line function calling F.scaled_dot_product_attention (not as a tail call): the
  -- error must carry the pattern and name that line.
  local function rejects(pattern, fn)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    err = tostring(err)
    assert.is_truthy(err:find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. err)
    local line = debug.getinfo(fn, "S").linedefined
    assert.is_truthy(err:find("sdpa_spec.lua:" .. line .. ": ", 1, true), "expected the error at line " .. line .. ": " .. err)
  end
  local sdpa = F.scaled_dot_product_attention
  local q = torch.randn(2, 3, 4, 8)
  local N = "scaled_dot_product_attention: "

  it("rejects attn_mask together with is_causal", function()
    local m = torch.zeros(4, 4)
    rejects(N .. "attn_mask and is_causal = true cannot both be given", function() local _ = sdpa(q, q, q, m, 0, true) end)
    rejects(N .. "attn_mask and is_causal = true cannot both be given",
      function() local _ = sdpa(q, q, q, { attn_mask = m, is_causal = true }) end)
  end)

  it("names wrong ranks and mismatched dims", function()
    local v1 = torch.randn(8)
    rejects(N .. "expected query, key and value of at least 2 dims (..., L, E), got [8], [8] and [8]",
      function() local _ = sdpa(v1, v1, v1) end)
    rejects(N .. "expected query, key and value of at least 3 dims (..., H, L, E), got [4, 8], [4, 8] and [4, 8]",
      function() local _ = sdpa(q[1][1], q[1][1], q[1][1], { enable_gqa = true }) end)
    rejects(N .. "query and key must have the same head dim E (last dim), got query [2, 3, 4, 8] and key [2, 3, 4, 7]",
      function() local _ = sdpa(q, torch.randn(2, 3, 4, 7), q) end)
    rejects(N .. "key and value must have the same source length S (dim -2), got key [2, 3, 4, 8] and value [2, 3, 5, 8]",
      function() local _ = sdpa(q, q, torch.randn(2, 3, 5, 8)) end)
    local kv = torch.randn(2, 2, 4, 8)
    rejects(N .. "the batch dims of query [2, 3, 4, 8], key [2, 2, 4, 8] and value [2, 2, 4, 8] do not broadcast (dim -3)",
      function() local _ = sdpa(q, kv, kv) end)
    rejects(N .. "with enable_gqa the key and value heads (dim -3) must divide the query heads",
      function() local _ = sdpa(q, kv, kv, { enable_gqa = true }) end)
    rejects(N .. "attn_mask [3, 4] does not broadcast to the scores (N..., Hq, L, S) = [2, 3, 4, 4]",
      function() local _ = sdpa(q, q, q, torch.zeros(3, 4)) end)
    rejects(N .. "attn_mask [1, 1, 1, 4, 4] does not broadcast",
      function() local _ = sdpa(q, q, q, torch.zeros(1, 1, 1, 4, 4)) end)
  end)

  it("names bad dtypes and values", function()
    rejects(N .. "attn_mask must be bool, float32 or query's dtype (torch.float32), got torch.int64",
      function() local _ = sdpa(q, q, q, torch.zeros(4, 4, { dtype = torch.int64 })) end)
    rejects(N .. "query, key and value must have one dtype, got torch.float32, torch.float32 and torch.float64",
      function() local _ = sdpa(q, q, q:double()) end)
    rejects(N .. "dropout_p must be in [0, 1], got 1.5", function() local _ = sdpa(q, q, q, nil, 1.5) end)
    rejects("bad argument #6 to 'scaled_dot_product_attention' (boolean expected, got string)",
      function() local _ = sdpa(q, q, q, { is_causal = "yes" }) end)
    rejects("bad argument #3 to 'scaled_dot_product_attention' (Tensor expected, got number)",
      function() local _ = sdpa(q, q, 3) end)
  end)

  it("names bad argument lists", function()
    rejects(N .. "takes from 3 to 6 positional arguments but 7 were given (scale and enable_gqa are keywords)",
      function() local _ = sdpa(q, q, q, nil, 0, false, 0.5) end)
    rejects(N .. "unknown option 'causal'", function() local _ = sdpa(q, q, q, { causal = true }) end)
    rejects(N .. "got multiple values for argument 'attn_mask'",
      function() local _ = sdpa(q, q, q, torch.zeros(4, 4), { attn_mask = torch.zeros(4, 4) }) end)
  end)

  it("a libtorch failure is prefixed and blamed on the caller too", function()
    local qi = torch.ones(2, 3, 4, 8, { dtype = torch.int64 })
    rejects("torch.nn.functional.scaled_dot_product_attention: ", function() local _ = sdpa(qi, qi, qi) end)
  end)
end)
