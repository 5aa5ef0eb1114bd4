--[[
  spec/nn/transformer_spec.lua — nn.TransformerEncoderLayer and nn.TransformerEncoder
  (lua/torch/nn/transformer.lua) against PyTorch.

  Each case builds the same module on both sides after the same torch.manual_seed and checks:
  default init bitwise (self_attn, linear1, linear2, norms drawn in PyTorch's order; clones equal
  to the template), state_dict keys ("layers.0.self_attn.in_proj_weight", ...), order and
  shapes, repr; then loads PyTorch's weights, feeds identical inputs (drawn in Python from a
  separate generator, so the global RNG stays in step for the dropout cases) and compares the
  output and the gradients of src and every parameter under loss = sum(out * R) (R random: a
  sum of squares after LayerNorm would be nearly constant). Cases: post-norm / pre-norm
  (norm_first), relu / gelu, batch_first, unbatched, bool / float src_mask and
  src_key_padding_mask, layer_norm_eps, PyTorch's defaults (dim_feedforward 2048) in eval
  mode, dropout in training mode, bias = false (PyTorch's keys: no bias entries), TransformerEncoder with and without a final norm; the
  is_causal hint (layer: with the causal mask, with key padding; encoder: true, false, nil =
  detected from a causal bool mask, and a wrong hint PyTorch follows). Also deep copy
  independence, a Module activation's repr, positional arguments, and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32, atol 1e-5 + rtol 1e-4 (two
  or three stacked layers; results are usually bitwise equal).

  Run:  build/ltorch /usr/bin/busted spec/nn/transformer_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local inputs = require "spec.support.attention_inputs"
local causal, float_causal, wave = inputs.causal, inputs.float_causal, inputs.wave

local TOL = { atol = 1e-5, rtol = 1e-4 }
local F_, T_ = false, true
local NINF = -math.huge

local KPM3 = { { F_, F_, F_, F_, T_ }, { F_, F_, F_, T_, T_ }, { F_, F_, F_, F_, F_ } }

--[[ {name, "layer" | "encoder", d_model, nhead, layer opts, num_layers, final norm?, src shape,
      src_mask {values, "bool"|"float"}, src_key_padding_mask {...}, train, is_causal} ]]
local CASES = {
  { "layer: post-norm relu, causal bool src_mask, bool key padding", "layer", 16, 4, { dim_feedforward = 32, dropout = 0 },
    nil, false, { 5, 3, 16 }, { causal(5), "bool" }, { KPM3, "bool" } },
  { "layer: pre-norm gelu batch_first, layer_norm_eps, float key padding", "layer", 16, 4,
    { dim_feedforward = 24, dropout = 0, activation = "gelu", batch_first = true, norm_first = true, layer_norm_eps = 1e-6 },
    nil, false, { 2, 4, 16 }, nil, { { { 0, 0, NINF, 0.25 }, { 0, -1, 0, NINF } }, "float" } },
  { "layer: unbatched with a float src_mask", "layer", 8, 2, { dim_feedforward = 16, dropout = 0 }, nil, false, { 4, 8 },
    { wave({ 4, 4 }, 1), "float" } },
  { "layer: PyTorch's defaults in eval mode", "layer", 8, 2, {}, nil, false, { 3, 2, 8 } },
  { "layer: dropout in training mode", "layer", 8, 2, { dim_feedforward = 16, dropout = 0.2 }, nil, false, { 4, 2, 8 },
    nil, nil, true },
  { "encoder: 2 layers and a final LayerNorm, float mask and bool key padding", "encoder", 16, 4,
    { dim_feedforward = 32, dropout = 0 }, 2, true, { 5, 3, 16 }, { wave({ 5, 5 }, 2), "float" }, { KPM3, "bool" } },
  { "encoder: 3 pre-norm batch_first layers, dropout in training mode", "encoder", 8, 2,
    { dim_feedforward = 16, dropout = 0.1, batch_first = true, norm_first = true }, 3, false, { 2, 5, 8 },
    { causal(5), "bool" }, nil, true },
  { "layer: is_causal with the causal float mask, pre-norm batch_first", "layer", 8, 2,
    { dim_feedforward = 16, dropout = 0, batch_first = true, norm_first = true }, nil, false, { 2, 5, 8 },
    { float_causal(5), "float" }, nil, false, true },
  { "layer: is_causal with the causal bool mask and bool key padding (merged mask)", "layer", 16, 4,
    { dim_feedforward = 32, dropout = 0 }, nil, false, { 5, 3, 16 }, { causal(5), "bool" }, { KPM3, "bool" }, false, true },
  { "encoder: is_causal = true with the float causal mask, dropout in training mode", "encoder", 8, 2,
    { dim_feedforward = 16, dropout = 0.1 }, 2, true, { 4, 2, 8 }, { float_causal(4), "float" }, nil, true, true },
  { "encoder: is_causal = false with the causal mask", "encoder", 8, 2, { dim_feedforward = 16, dropout = 0 }, 2, false,
    { 4, 2, 8 }, { float_causal(4), "float" }, nil, false, false },
  { "encoder: a wrong is_causal hint (float mask ignored, as in PyTorch)", "encoder", 8, 2,
    { dim_feedforward = 16, dropout = 0 }, 2, false, { 4, 8 }, { wave({ 4, 4 }, 1), "float" }, nil, false, true },
  { "layer: bias = false (no bias in attention, linears or norms)", "layer", 8, 2, { bias = false }, nil, false, { 3, 2, 8 },
    { causal(3), "bool" } },
  { "layer: bias = false, pre-norm gelu batch_first", "layer", 8, 2,
    { dim_feedforward = 16, dropout = 0, bias = false, norm_first = true, activation = "gelu", batch_first = true },
    nil, false, { 2, 4, 8 } },
  { "encoder: 2 bias = false layers and a final LayerNorm", "encoder", 16, 4,
    { dim_feedforward = 32, dropout = 0, bias = false }, 2, true, { 5, 3, 16 }, nil, { KPM3, "bool" } },
}

local function pykw(opts)
  local keys, parts = {}, {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = opts[k]
    local pv = type(v) == "string" and ("'" .. v .. "'") or approx.py(v)
    if k == "dropout" and v % 1 == 0 then pv = pv .. ".0" end   -- a float in Python, as in the repr
    parts[#parts + 1] = k .. "=" .. pv
  end
  return table.concat(parts, ", ")
end

local function pymask(m)
  if m == nil then return "None" end
  return ("torch.tensor(%s%s)"):format(approx.py(m[1]), m[2] == "float" and ", dtype=torch.float32" or "")
end

local PY = [==[
nn = torch.nn
def L(t): return t.tolist()
def case(seed, kind, d, h, kw, n, norm, xs, mask, kpm, train, ic):
    torch.manual_seed(seed)
    m = nn.TransformerEncoderLayer(d, h, **kw)
    if kind == 'encoder':
        m = nn.TransformerEncoder(m, n, norm=nn.LayerNorm(d) if norm else None)
    m.train(train)
    sd = m.state_dict()
    r = dict(keys=list(sd.keys()), shapes=[list(v.shape) for v in sd.values()],
             params=[L(v) for v in sd.values()], repr=repr(m))
    g = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn(xs, generator=g).requires_grad_()
    if kind == 'layer': out = m(x, src_mask=mask, src_key_padding_mask=kpm, is_causal=bool(ic))
    else: out = m(x, mask=mask, src_key_padding_mask=kpm, is_causal=ic)
    R = torch.randn(out.shape, generator=g)
    (out * R).sum().backward()
    r.update(x=L(x), R=L(R), out=L(out), gx=L(x.grad), gparams=[L(p.grad) for p in m.parameters()])
    return r
res = []
]==]

local function T(list) return torch.tensor(list, { dtype = torch.float32 }) end

local function mask(m)
  if m == nil then return nil end
  if m[2] == "bool" then return torch.tensor(m[1], { dtype = torch.bool }) end
  return T(m[1])
end

local function build(c)
  local opts = {}
  for k, v in pairs(c[5]) do opts[k] = v end
  local m = nn.TransformerEncoderLayer(c[3], c[4], opts)
  if c[2] == "encoder" then m = nn.TransformerEncoder(m, c[6], { norm = c[7] and nn.LayerNorm(c[3]) or nil }) end
  return m
end

describe("nn.TransformerEncoderLayer / nn.TransformerEncoder against PyTorch", function()
  local ref
  local F, warn = torch.nn.functional, nil
  -- PyTorch warns about a bool key padding mask with a float mask; so do we, once (silenced here)
  setup(function() warn, F._warn = F._warn, function() end end)
  teardown(function() F._warn = warn end)
  setup(function()
    local code = { PY }
    for i, c in ipairs(CASES) do
      code[#code + 1] = ("res.append(case(%d, '%s', %d, %d, dict(%s), %s, %s, %s, %s, %s, %s, %s))"):format(i, c[2],
        c[3], c[4], pykw(c[5]), c[6] or "None", c[7] and "True" or "False", approx.py(c[8]), pymask(c[9]), pymask(c[10]),
        c[11] and "True" or "False", c[12] == nil and "None" or (c[12] and "True" or "False"))
    end
    code[#code + 1] = "res.append(repr(nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU())))"
    code[#code + 1] = "print(json.dumps(res))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. ": default init (bitwise), state_dict keys/order/shapes and repr", function()
      local r = ref[i]
      torch.manual_seed(i)
      local m = build(c)
      assert.are.same(r.keys, m:state_dict_keys())
      local sd = m:state_dict()
      for k, key in ipairs(r.keys) do
        assert.are.same(r.shapes[k], sd[key]:size())
        approx.check(sd[key], r.params[k], 0)
      end
      assert.are.equal(r.repr, tostring(m))
    end)

    it(c[1] .. ": output and gradients", function()
      local r = ref[i]
      torch.manual_seed(i)   -- the dropout cases need the RNG where PyTorch had it after init
      local m = build(c)
      m:train(c[11] == true)
      local sd = {}
      for k, key in ipairs(r.keys) do sd[key] = T(r.params[k]) end
      m:load_state_dict(sd)
      local x = T(r.x):requires_grad_()
      local key = c[2] == "layer" and "src_mask" or "mask"
      local out = m(x, { [key] = mask(c[9]), src_key_padding_mask = mask(c[10]), is_causal = c[12] })
      approx.check(out, r.out, TOL)
      local loss = (out * T(r.R)):sum()
      loss:backward()
      approx.check(x.grad, r.gx, TOL)
      for n, p in ipairs(m:parameters()) do approx.check(p.grad, r.gparams[n], TOL) end
    end)
  end

  it("a Module activation is a child named activation, printed as PyTorch prints it", function()
    local m = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, activation = nn.GELU() })
    assert.are.equal(ref[#CASES + 1], tostring(m))
  end)
end)

describe("nn.TransformerEncoder behaviour", function()
  it("clones are independent deep copies of the template", function()
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
    layer.linear2.bias.requires_grad = false
    local enc = nn.TransformerEncoder(layer, 2)
    local a, b = enc.layers:get(0), enc.layers:get(1)
    assert.is_true(a.self_attn.in_proj_weight:equal(layer.self_attn.in_proj_weight))
    assert.is_false(rawequal(a.self_attn.in_proj_weight, b.self_attn.in_proj_weight))
    assert.is_false(b.linear2.bias.requires_grad)
    assert.is_true(a.linear1.weight.is_leaf and a.linear1.weight.requires_grad)
    torch.no_grad(function() a.linear1.weight:fill_(3) end)
    assert.are.equal(0, b.linear1.weight:eq(3):sum():item())
    assert.are.equal(0, layer.linear1.weight:eq(3):sum():item())
    assert.are.equal(2 * #layer:parameters(), #enc:parameters())
    a:eval()
    assert.is_true(b.training)
  end)

  it("takes the mask positionally too, as PyTorch does", function()
    local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, dropout = 0 }), 2)
    local x, m = torch.randn(4, 2, 8), torch.tensor(causal(4), { dtype = torch.bool })
    approx.check(enc(x, m), enc(x, { mask = m }):tolist(), 0)
    local layer = enc.layers:get(0)
    approx.check(layer(x, m), layer(x, { src_mask = m }):tolist(), 0)
    local kpm = torch.zeros(2, 4, { dtype = torch.bool })
    approx.check(layer(x, m, kpm, true), layer(x, { src_mask = m, src_key_padding_mask = kpm, is_causal = true }):tolist(), 0)
    approx.check(enc(x, m, nil, true), enc(x, { mask = m, is_causal = true }):tolist(), 0)
  end)
end)

describe("nn.TransformerEncoderLayer / nn.TransformerEncoder misuse", function()
  local function fails(pattern, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. tostring(err))
  end

  it("names the module and shapes on a wrong rank or d_model", function()
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
    fails("TransformerEncoderLayer(d_model=8, nhead=2): expected src of shape (S, N, 8), (N, S, 8) or (S, 8), got [4, 2, 6]",
      layer, torch.randn(4, 2, 6))
    fails("TransformerEncoderLayer(d_model=8, nhead=2): expected src of shape (S, N, 8), (N, S, 8) or (S, 8), got [8]",
      layer, torch.randn(8))
    local enc = nn.TransformerEncoder(layer, 2)
    fails("TransformerEncoder(num_layers=2, d_model=8): expected src of shape (S, N, 8), (N, S, 8) or (S, 8), got [1, 4, 2, 8]",
      enc, torch.randn(1, 4, 2, 8))
    fails("TransformerEncoder(num_layers=2, d_model=8): only bool and floating types of src_key_padding_mask are supported, got torch.int64",
      enc, torch.randn(4, 2, 8), { src_key_padding_mask = torch.zeros(2, 4, { dtype = torch.int64 }) })
    fails("MultiheadAttention(embed_dim=8, num_heads=2): the 2-D attn_mask is [3, 3], but should be [4, 4] (L, S)",
      enc, torch.randn(4, 2, 8), torch.zeros(3, 3))
  end)

  it("requires a mask with the is_causal hint and rejects unknown options", function()
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
    fails("MultiheadAttention(embed_dim=8, num_heads=2): Need attn_mask if specifying the is_causal hint", layer,
      torch.randn(4, 2, 8), { is_causal = true })
    fails("TransformerEncoderLayer(d_model=8, nhead=2): unknown option 'mask'", layer, torch.randn(4, 2, 8),
      { mask = torch.zeros(4, 4) })
    fails("TransformerEncoder(num_layers=2, d_model=8): unknown option 'src_mask'", nn.TransformerEncoder(layer, 2),
      torch.randn(4, 2, 8), { src_mask = torch.zeros(4, 4) })
    fails("TransformerEncoderLayer(d_model=8, nhead=2): only bool and floating types of src_mask are supported, got torch.int64",
      layer, torch.randn(4, 2, 8), torch.zeros(4, 4, { dtype = torch.int64 }))
  end)

  it("rejects bad constructor arguments", function()
    fails("TransformerEncoderLayer: d_model (10) must be divisible by nhead (4)", nn.TransformerEncoderLayer, 10, 4)
    fails("TransformerEncoderLayer: activation should be relu/gelu, a function or a Module, not tanh",
      nn.TransformerEncoderLayer, 8, 2, { activation = "tanh" })
    fails("TransformerEncoder: encoder_layer must be a Module, got nil", nn.TransformerEncoder, nil, 2)
    fails("TransformerEncoder: num_layers must be a non-negative integer, got 1.5", nn.TransformerEncoder,
      nn.TransformerEncoderLayer(8, 2), 1.5)
    fails("TransformerEncoderLayer: bias must be a boolean, got string", nn.TransformerEncoderLayer, 8, 2,
      { bias = "False" })
  end)
end)
