--[[
  spec/nn/attention_spec.lua — nn.MultiheadAttention (lua/torch/nn/attention.lua) against PyTorch.

  Each case builds the same module on both sides after the same torch.manual_seed and checks:
  default init bitwise (out_proj's Linear init draws before xavier_uniform_, as in PyTorch),
  state_dict keys / order / shapes, repr; then loads PyTorch's weights, feeds identical inputs
  (drawn in Python from a separate generator, so the global RNG stays in step for the dropout
  case) and compares attn_output, attn_weights and the gradients of query / key / value and
  every parameter under loss = sum(out^2) + sum(weights^2). Cases: self-attention (one tensor
  for q, k, v), encoder-decoder (k is v), three distinct inputs, batch_first, unbatched, bool /
  float / 3-D attn_mask, bool / float key_padding_mask, average_attn_weights = false,
  need_weights = false, kdim / vdim, bias = false, add_bias_kv + add_zero_attn, attention
  dropout in training mode; with need_weights = false (PyTorch 2.x's scaled_dot_product_attention
  path) merged masks, bias_kv / zero_attn, dropout (same RNG stream) and the is_causal hint
  (with the causal mask, with a key padding mask, with weights, and a wrong hint that PyTorch
  follows). Also need_weights = false against true, the positional forward, and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32, atol 1e-5 + rtol 1e-5.

  Run:  build/ltorch /usr/bin/busted spec/nn/attention_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local inputs = require "spec.support.attention_inputs"
local causal, wave = inputs.causal, inputs.wave

local TOL = { atol = 1e-5, rtol = 1e-5 }
local F_, T_ = false, true
local NINF = -math.huge

--[[ {name, E, H, ctor opts, q shape, k shape | "q", v shape | "q" | "k",
      {key_padding_mask = {values, "bool"|"float"}, attn_mask = {...}, need_weights =, average_attn_weights =}, train} ]]
local KPM3 = { { F_, F_, F_, F_, T_ }, { F_, F_, F_, T_, T_ }, { F_, F_, F_, F_, F_ } }
local CASES = {
  { "self-attention, sequence-first", 8, 2, {}, { 5, 3, 8 }, "q", "q", {} },
  { "self-attention batch_first, causal bool attn_mask and bool key_padding_mask", 8, 2, { batch_first = true },
    { 3, 5, 8 }, "q", "q", { attn_mask = { causal(5), "bool" }, key_padding_mask = { KPM3, "bool" } } },
  { "encoder-decoder (key is value), float attn_mask, per-head weights", 8, 4, {}, { 4, 2, 8 }, { 6, 2, 8 }, "k",
    { attn_mask = { wave({ 4, 6 }, 2), "float" }, average_attn_weights = false } },
  { "distinct q, k, v, 3-D float attn_mask and bool key_padding_mask", 6, 2, {}, { 3, 2, 6 }, { 4, 2, 6 }, { 4, 2, 6 },
    { attn_mask = { wave({ 4, 3, 4 }, 1), "float" }, key_padding_mask = { { { F_, F_, T_, F_ }, { F_, F_, F_, T_ } }, "bool" } } },
  { "kdim / vdim, no bias, batch_first", 8, 2, { kdim = 3, vdim = 5, bias = false, batch_first = true },
    { 2, 4, 8 }, { 2, 6, 3 }, { 2, 6, 5 }, {} },
  { "add_bias_kv and add_zero_attn with both masks", 8, 2, { add_bias_kv = true, add_zero_attn = true },
    { 5, 3, 8 }, "q", "q", { attn_mask = { causal(5), "bool" }, key_padding_mask = { KPM3, "bool" } } },
  { "unbatched with a float key_padding_mask", 8, 2, {}, { 4, 8 }, { 5, 8 }, "k",
    { key_padding_mask = { { 0, NINF, 0, 0.5, -1 }, "float" } } },
  { "need_weights = false", 8, 2, { batch_first = true }, { 2, 3, 8 }, "q", "q", { need_weights = false } },
  { "attention dropout in training mode", 8, 2, { dropout = 0.3 }, { 4, 2, 8 }, "q", "q", {}, true },
  -- need_weights = false: the scaled_dot_product_attention path
  { "SDPA path: float 3-D attn_mask, float key_padding_mask, add_bias_kv and add_zero_attn", 6, 2,
    { add_bias_kv = true, add_zero_attn = true }, { 3, 2, 6 }, { 4, 2, 6 }, "k",
    { attn_mask = { wave({ 4, 3, 4 }, 1), "float" }, key_padding_mask = { { { 0, 0, NINF, 0 }, { 0, -1, 0, 0 } }, "float" },
      need_weights = false } },
  { "SDPA path: attention dropout in training mode", 8, 2, { dropout = 0.3, batch_first = true }, { 2, 4, 8 }, "q", "q",
    { need_weights = false }, true },
  { "is_causal hint with the causal mask, need_weights = false (SDPA builds the mask)", 8, 2, { batch_first = true },
    { 3, 5, 8 }, "q", "q", { attn_mask = { causal(5), "bool" }, is_causal = true, need_weights = false } },
  { "is_causal hint with a key_padding_mask (the merged mask is used)", 8, 2, {}, { 5, 3, 8 }, "q", "q",
    { attn_mask = { causal(5), "bool" }, key_padding_mask = { KPM3, "bool" }, is_causal = true, need_weights = false } },
  { "is_causal hint with need_weights = true (attn_mask is used)", 8, 4, {}, { 5, 2, 8 }, "q", "q",
    { attn_mask = { causal(5), "bool" }, is_causal = true, average_attn_weights = false } },
  { "a wrong is_causal hint: the float attn_mask is ignored, as in PyTorch", 8, 2, {}, { 4, 2, 8 }, "q", "q",
    { attn_mask = { wave({ 4, 4 }, 2), "float" }, is_causal = true, need_weights = false } },
}

local function pykw(opts)
  local keys, parts = {}, {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. approx.py(opts[k]) end
  return table.concat(parts, ", ")
end

local function pymask(m)
  if m == nil then return "None" end
  return ("torch.tensor(%s%s)"):format(approx.py(m[1]), m[2] == "float" and ", dtype=torch.float32" or "")
end

local PY = [==[
def L(t): return None if t is None else t.tolist()
def case(seed, E, H, kw, qs, ks, vs, kpm, am, fkw, train):
    torch.manual_seed(seed)
    m = torch.nn.MultiheadAttention(E, H, **kw)
    m.train(train)
    sd = m.state_dict()
    r = dict(keys=list(sd.keys()), shapes=[list(v.shape) for v in sd.values()],
             params=[L(v) for v in sd.values()], repr=repr(m))
    g = torch.Generator().manual_seed(seed + 1000)
    q = torch.randn(qs, generator=g).requires_grad_()
    k = q if ks == 'q' else torch.randn(ks, generator=g).requires_grad_()
    v = q if vs == 'q' else k if vs == 'k' else torch.randn(vs, generator=g).requires_grad_()
    if kpm is not None: fkw['key_padding_mask'] = kpm
    if am is not None: fkw['attn_mask'] = am
    out, w = m(q, k, v, **fkw)
    loss = (out ** 2).sum() + (0 if w is None else (w ** 2).sum())
    loss.backward()
    r.update(q=L(q), k=L(k), v=L(v), out=L(out), w=L(w), gq=L(q.grad), gk=L(k.grad), gv=L(v.grad),
             gparams=[L(p.grad) for p in m.parameters()])
    return r
res = []
]==]

local function T(list) return torch.tensor(list, { dtype = torch.float32 }) end

local function mask(m)
  if m == nil then return nil end
  if m[2] == "bool" then return torch.tensor(m[1], { dtype = torch.bool }) end
  return T(m[1])
end

describe("nn.MultiheadAttention against PyTorch", function()
  local ref
  local F, warn = torch.nn.functional, nil
  -- PyTorch warns about a bool key_padding_mask with a float attn_mask; so do we, once (silenced here)
  setup(function() warn, F._warn = F._warn, function() end end)
  teardown(function() F._warn = warn end)
  setup(function()
    local code = { PY }
    for i, c in ipairs(CASES) do
      local f = c[8]
      local fkw = {}
      if f.need_weights ~= nil then fkw.need_weights = f.need_weights end
      if f.average_attn_weights ~= nil then fkw.average_attn_weights = f.average_attn_weights end
      if f.is_causal ~= nil then fkw.is_causal = f.is_causal end
      local function shp(s) return type(s) == "string" and ("'" .. s .. "'") or approx.py(s) end
      code[#code + 1] = ("res.append(case(%d, %d, %d, dict(%s), %s, %s, %s, %s, %s, dict(%s), %s))"):format(i, c[2], c[3],
        pykw(c[4]), shp(c[5]), shp(c[6]), shp(c[7]), pymask(f.key_padding_mask), pymask(f.attn_mask), pykw(fkw),
        c[9] and "True" or "False")
    end
    code[#code + 1] = "print(json.dumps(res))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. ": default init (bitwise), state_dict keys/order/shapes and repr", function()
      local r = ref[i]
      torch.manual_seed(i)
      local m = nn.MultiheadAttention(c[2], c[3], c[4])
      assert.are.same(r.keys, m:state_dict_keys())
      local sd = m:state_dict()
      for k, key in ipairs(r.keys) do
        assert.are.same(r.shapes[k], sd[key]:size())
        approx.check(sd[key], r.params[k], 0)
      end
      assert.are.equal(r.repr, tostring(m))
    end)

    it(c[1] .. ": outputs, weights and gradients", function()
      local r = ref[i]
      torch.manual_seed(i)   -- the dropout case needs the RNG where PyTorch had it after init
      local m = nn.MultiheadAttention(c[2], c[3], c[4])
      m:train(c[9] == true)
      local sd = {}
      for k, key in ipairs(r.keys) do sd[key] = T(r.params[k]) end
      m:load_state_dict(sd)
      local q = T(r.q):requires_grad_()
      local k = c[6] == "q" and q or T(r.k):requires_grad_()
      local v = c[7] == "q" and q or c[7] == "k" and k or T(r.v):requires_grad_()
      local f = c[8]
      local out, w = m(q, k, v, { key_padding_mask = mask(f.key_padding_mask), attn_mask = mask(f.attn_mask),
        need_weights = f.need_weights, average_attn_weights = f.average_attn_weights, is_causal = f.is_causal })
      approx.check(out, r.out, TOL)
      local loss = out:pow(2):sum()
      if r.w == nil or r.w == require("cjson").null then
        assert.is_nil(w)
      else
        approx.check(w, r.w, TOL)
        loss = loss + w:pow(2):sum()
      end
      loss:backward()
      approx.check(q.grad, r.gq, TOL)
      approx.check(k.grad, r.gk, TOL)
      approx.check(v.grad, r.gv, TOL)
      for n, p in ipairs(m:parameters()) do approx.check(p.grad, r.gparams[n], TOL) end
    end)
  end
end)

describe("nn.MultiheadAttention behaviour", function()
  local function masks(L, N)
    local kpm = torch.zeros(N, L, { dtype = torch.bool })
    kpm[0][L - 1] = true
    return torch.tensor(causal(L), { dtype = torch.bool }), kpm
  end

  it("need_weights = false (SDPA) gives need_weights = true's output (atol 1e-6 + rtol 1e-5)", function()
    torch.manual_seed(3)
    local m = nn.MultiheadAttention(8, 2)
    local x, y = torch.randn(5, 3, 8), torch.randn(6, 3, 8)
    local am, kpm = masks(5, 3)
    for _, opts in ipairs({ {}, { attn_mask = am }, { attn_mask = am, key_padding_mask = kpm },
      { attn_mask = am, is_causal = true }, { key_padding_mask = kpm } }) do
      local with = m(x, x, x, opts)
      opts.need_weights = false
      local without, w = m(x, x, x, opts)
      assert.is_nil(w)
      approx.check(without, with:tolist(), { atol = 1e-6, rtol = 1e-5 })
    end
    local kv_mask = torch.zeros(3, 6, { dtype = torch.bool })
    kv_mask[1][2] = true
    approx.check(m(x, y, y, { key_padding_mask = kv_mask, need_weights = false }),
      m(x, y, y, { key_padding_mask = kv_mask }):tolist(), { atol = 1e-6, rtol = 1e-5 })
  end)

  it("takes the options positionally, in PyTorch's order", function()
    local m = nn.MultiheadAttention(8, 2)
    local x = torch.randn(5, 3, 8)
    local am, kpm = masks(5, 3)
    local a, wa = m(x, x, x, kpm, true, am, false, true)
    local b, wb = m(x, x, x, { key_padding_mask = kpm, attn_mask = am, average_attn_weights = false, is_causal = true })
    approx.check(a, b:tolist(), 0)
    approx.check(wa, wb:tolist(), 0)
  end)
end)

describe("nn.MultiheadAttention misuse", function()
  local function fails(pattern, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. tostring(err))
  end
  local NAME = "MultiheadAttention(embed_dim=8, num_heads=2): "

  it("names the module and shapes on a wrong rank or embed dim", function()
    local m, x = nn.MultiheadAttention(8, 2), torch.randn(5, 3, 8)
    local x4 = torch.randn(5, 3, 8, 1)
    fails(NAME .. "expected a 3-D (batched) or 2-D (unbatched) query, got [5, 3, 8, 1]", m, x4, x4, x4)
    fails(NAME .. "expected a 3-D (batched) or 2-D (unbatched) query, got [8]", m, torch.randn(8), x, x)
    fails(NAME .. "expected query with last dim 8 (embed_dim), got [5, 3, 6]", m, torch.randn(5, 3, 6), x, x)
    fails(NAME .. "query [5, 3, 8] is 3-D, so key and value must be too, got key [5, 8] and value [5, 3, 8]", m, x,
      torch.randn(5, 8), x)
    fails(NAME .. "expected key with last dim 8 (kdim) and value with last dim 8 (vdim), got [5, 3, 4] and [5, 3, 8]",
      m, x, torch.randn(5, 3, 4), x)
    fails(NAME .. "key [5, 3, 8] and value [6, 3, 8] differ in their leading dims", m, x, x, torch.randn(6, 3, 8))
    fails(NAME .. "query [5, 3, 8] and key [5, 2, 8] have different batch sizes", m, x, torch.randn(5, 2, 8),
      torch.randn(5, 2, 8))
    fails(NAME .. "expected query, key and value Tensors, argument 3 is a nil", m, x, x)
  end)

  it("names the expected mask shapes", function()
    local m, x = nn.MultiheadAttention(8, 2), torch.randn(5, 3, 8)
    fails(NAME .. "the 2-D attn_mask is [5, 4], but should be [5, 5] (L, S)", m, x, x, x,
      { attn_mask = torch.zeros(5, 4) })
    fails(NAME .. "the 3-D attn_mask is [3, 5, 5], but should be [6, 5, 5] (N*num_heads, L, S)", m, x, x, x,
      { attn_mask = torch.zeros(3, 5, 5) })
    fails(NAME .. "expected a 2-D or 3-D attn_mask, got [5]", m, x, x, x, { attn_mask = torch.zeros(5) })
    fails(NAME .. "expected key_padding_mask of shape [3, 5] (N, S), got [3, 4]", m, x, x, x,
      { key_padding_mask = torch.zeros(3, 4, { dtype = torch.bool }) })
    fails(NAME .. "expected a 2-D key_padding_mask, got [3]", m, x, x, x,
      { key_padding_mask = torch.zeros(3, { dtype = torch.bool }) })
    fails(NAME .. "only bool and floating types of key_padding_mask are supported, got torch.int64", m, x, x, x,
      { key_padding_mask = torch.zeros(3, 5, { dtype = torch.int64 }) })
  end)

  it("requires attn_mask with the is_causal hint, and boolean flags", function()
    local m, x = nn.MultiheadAttention(8, 2), torch.randn(5, 3, 8)
    fails(NAME .. "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
      .. "`generate_square_subsequent_mask` to create this mask.", m, x, x, x, { is_causal = true })
    fails(NAME .. "Need attn_mask if specifying the is_causal hint", m, x, x, x, { is_causal = true, need_weights = false })
    fails(NAME .. "is_causal must be a boolean, got number", m, x, x, x, { attn_mask = torch.zeros(5, 5), is_causal = 1 })
    fails(NAME .. "unknown option 'causal'", m, x, x, x, { causal = true })
  end)

  it("rejects uint8 and integer attn_masks, as PyTorch 2.x does", function()
    local m, x = nn.MultiheadAttention(8, 2), torch.randn(5, 3, 8)
    fails(NAME .. "only bool and floating types of attn_mask are supported, got torch.uint8", m, x, x, x,
      { attn_mask = torch.zeros(5, 5, { dtype = torch.uint8 }) })
    fails(NAME .. "only bool and floating types of attn_mask are supported, got torch.int64", m, x, x, x,
      { attn_mask = torch.zeros(5, 5, { dtype = torch.int64 }) })
  end)

  it("blames the caller's line", function()
    local m, x = nn.MultiheadAttention(8, 2), torch.randn(5, 3, 8)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() local y = m(x, x, x, { is_causal = true }); return y end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("attention_spec.lua:" .. line .. ": ", 1, true), tostring(err))
  end)

  it("rejects an embed_dim that num_heads does not divide", function()
    fails("MultiheadAttention: embed_dim (10) must be divisible by num_heads (4)", nn.MultiheadAttention, 10, 4)
  end)
end)
