--[[
  spec/nn/transformer_decoder_spec.lua — nn.TransformerDecoderLayer, nn.TransformerDecoder and
  nn.Transformer (lua/torch/nn/transformer_decoder.lua) against PyTorch.

  Each case builds the same module on both sides after the same torch.manual_seed and checks the
  default init bitwise (PyTorch's construction order, and nn.Transformer's xavier_uniform_ pass
  over every matrix in parameter order), state_dict keys, order and shapes (and the repr for a
  single layer: PyTorch 2.x prints repeated ModuleList entries as "(0-1): 2 x ...", which
  ModuleList does not do yet); then loads PyTorch's weights, feeds identical inputs (drawn in
  Python from a separate generator) and compares the output and the gradients of tgt, memory
  (src) and every parameter under loss = sum(out * R). Cases: post-norm / pre-norm, relu / gelu,
  batch_first, unbatched, tgt / memory masks and key padding masks (bool and float), the
  tgt_is_causal / memory_is_causal / src_is_causal hints (given, and detected from a causal
  tgt_mask), dropout in training mode. Also generate_square_subsequent_mask and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32, atol 1e-5 + rtol 1e-4 (stacked
  layers; results are usually bitwise equal).

  Run:  build/ltorch /usr/bin/busted spec/nn/transformer_decoder_spec.lua
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

local KPM_T = { { F_, F_, F_, T_ }, { F_, F_, F_, F_ } }          -- (N = 2, T = 4)
local KPM_S = { { F_, F_, F_, F_, T_ }, { F_, F_, T_, T_, F_ } }   -- (N = 2, S = 5)

--[[ {name, kind ("layer" | "decoder" | "transformer"), opts (d_model, nhead, ... as keywords; the
      layer's options for layer / decoder), num_layers (decoder), norm? (decoder), tgt shape,
      memory (or src) shape, forward keywords {key = {values, "bool"|"float"} | boolean}, train} ]]
local CASES = {
  { "layer: post-norm relu, causal bool tgt_mask with tgt_is_causal, bool memory key padding", "layer",
    { d_model = 8, nhead = 2, dim_feedforward = 16, dropout = 0 }, nil, nil, { 4, 2, 8 }, { 5, 2, 8 },
    { tgt_mask = { causal(4), "bool" }, tgt_is_causal = true, memory_key_padding_mask = { KPM_S, "bool" } } },
  { "layer: pre-norm gelu batch_first, float tgt key padding and memory_mask", "layer",
    { d_model = 8, nhead = 2, dim_feedforward = 12, dropout = 0, activation = "gelu", batch_first = true,
      norm_first = true, layer_norm_eps = 1e-6 }, nil, nil, { 2, 4, 8 }, { 2, 5, 8 },
    { tgt_key_padding_mask = { { { 0, 0, -1, NINF }, { 0, 0.5, 0, 0 } }, "float" },
      memory_mask = { wave({ 4, 5 }, 1), "float" } } },
  { "layer: unbatched, memory_is_causal with a causal memory_mask", "layer",
    { d_model = 8, nhead = 4, dim_feedforward = 16, dropout = 0 }, nil, nil, { 4, 8 }, { 4, 8 },
    { memory_mask = { float_causal(4), "float" }, memory_is_causal = true } },
  { "layer: dropout in training mode with tgt_is_causal", "layer", { d_model = 8, nhead = 2, dim_feedforward = 16,
    dropout = 0.2 }, nil, nil, { 4, 2, 8 }, { 3, 2, 8 }, { tgt_mask = { float_causal(4), "float" }, tgt_is_causal = true },
    true },
  { "decoder: 2 layers and a final norm, causal tgt_mask detected, key padding on both", "decoder",
    { d_model = 8, nhead = 2, dim_feedforward = 16, dropout = 0 }, 2, true, { 4, 2, 8 }, { 5, 2, 8 },
    { tgt_mask = { causal(4), "bool" }, tgt_key_padding_mask = { KPM_T, "bool" },
      memory_key_padding_mask = { KPM_S, "bool" } } },
  { "decoder: a wrong tgt_is_causal hint (the float tgt_mask is ignored, as in PyTorch)", "decoder",
    { d_model = 8, nhead = 2, dim_feedforward = 16, dropout = 0, batch_first = true }, 2, false, { 2, 4, 8 }, { 2, 3, 8 },
    { tgt_mask = { wave({ 4, 4 }, 1), "float" }, tgt_is_causal = true } },
  { "transformer: causal tgt_mask, all key padding masks", "transformer",
    { d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 2, dim_feedforward = 16, dropout = 0 }, nil, nil,
    { 4, 2, 8 }, { 5, 2, 8 }, { tgt_mask = { float_causal(4), "float" }, src_key_padding_mask = { KPM_S, "bool" },
      tgt_key_padding_mask = { KPM_T, "bool" }, memory_key_padding_mask = { KPM_S, "bool" } } },
  { "transformer: pre-norm batch_first, src_is_causal and tgt_is_causal, dropout in training mode", "transformer",
    { d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 2, dim_feedforward = 16, dropout = 0.1,
      batch_first = true, norm_first = true }, nil, nil, { 2, 4, 8 }, { 2, 5, 8 },
    { src_mask = { float_causal(5), "float" }, src_is_causal = true, tgt_mask = { causal(4), "bool" },
      tgt_is_causal = true }, true },
  { "layer: bias = false (attention, linears and norms without bias)", "layer",
    { d_model = 8, nhead = 2, dim_feedforward = 16, dropout = 0, bias = false }, nil, nil, { 4, 2, 8 }, { 5, 2, 8 },
    { tgt_mask = { causal(4), "bool" } } },
  { "transformer: bias = false (the final norms without bias too)", "transformer",
    { d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1, dim_feedforward = 16, dropout = 0,
      bias = false }, nil, nil, { 4, 2, 8 }, { 5, 2, 8 }, { tgt_mask = { float_causal(4), "float" } } },
}

local function pyval(v)
  if type(v) == "string" then return "'" .. v .. "'" end
  if type(v) == "boolean" then return v and "True" or "False" end
  if type(v) == "number" and v % 1 ~= 0 then return ("%.17g"):format(v) end
  return approx.py(v)
end

local function pykw(opts)
  local keys, parts = {}, {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = opts[k]
    if type(v) == "table" then
      v = ("torch.tensor(%s%s)"):format(approx.py(v[1]), v[2] == "float" and ", dtype=torch.float32" or "")
    elseif k == "dropout" then
      v = ("%.17g"):format(v) .. (v % 1 == 0 and ".0" or "")
    else
      v = pyval(v)
    end
    parts[#parts + 1] = k .. "=" .. v
  end
  return table.concat(parts, ", ")
end

local PY = [==[
nn = torch.nn
def L(t): return t.tolist()
def build(kind, o, n, norm):
    if kind == 'transformer': return nn.Transformer(**o)
    d, h = o.pop('d_model'), o.pop('nhead')
    m = nn.TransformerDecoderLayer(d, h, **o)
    if kind == 'decoder': m = nn.TransformerDecoder(m, n, norm=nn.LayerNorm(d) if norm else None)
    return m
def case(seed, kind, o, n, norm, ts, ms, fkw, train):
    torch.manual_seed(seed)
    m = build(kind, o, n, norm)
    m.train(train)
    sd = m.state_dict()
    r = dict(keys=list(sd.keys()), shapes=[list(v.shape) for v in sd.values()],
             params=[L(v) for v in sd.values()], repr=repr(m))
    g = torch.Generator().manual_seed(seed + 1000)
    t = torch.randn(ts, generator=g).requires_grad_()
    mem = torch.randn(ms, generator=g).requires_grad_()
    out = m(mem, t, **fkw) if kind == 'transformer' else m(t, mem, **fkw)
    R = torch.randn(out.shape, generator=g)
    (out * R).sum().backward()
    r.update(t=L(t), mem=L(mem), R=L(R), out=L(out), gt=L(t.grad), gm=L(mem.grad),
             gparams=[L(p.grad) for p in m.parameters()])
    return r
res = []
]==]

local function T(list) return torch.tensor(list, { dtype = torch.float32 }) end

local function build(c)
  local o = {}
  for k, v in pairs(c[3]) do o[k] = v end
  if c[2] == "transformer" then return nn.Transformer(o) end
  local d, h = o.d_model, o.nhead
  o.d_model, o.nhead = nil, nil
  local m = nn.TransformerDecoderLayer(d, h, o)
  if c[2] == "decoder" then m = nn.TransformerDecoder(m, c[4], { norm = c[5] and nn.LayerNorm(d) or nil }) end
  return m
end

local function forward_opts(f)
  local o = {}
  for k, v in pairs(f) do
    if type(v) ~= "table" then o[k] = v
    elseif v[2] == "bool" then o[k] = torch.tensor(v[1], { dtype = torch.bool })
    else o[k] = T(v[1]) end
  end
  return o
end

describe("nn.TransformerDecoderLayer / nn.TransformerDecoder / nn.Transformer against PyTorch", function()
  local ref
  local F, warn = torch.nn.functional, nil
  setup(function() warn, F._warn = F._warn, function() end end)   -- mixed mask dtypes warn once, as PyTorch
  teardown(function() F._warn = warn end)
  setup(function()
    local code = { PY }
    for i, c in ipairs(CASES) do
      code[#code + 1] = ("res.append(case(%d, '%s', dict(%s), %s, %s, %s, %s, dict(%s), %s))"):format(i, c[2], pykw(c[3]),
        c[4] or "None", pyval(c[5] == true), approx.py(c[6]), approx.py(c[7]), pykw(c[8]), pyval(c[9] == true))
    end
    code[#code + 1] = "res.append([L(nn.Transformer.generate_square_subsequent_mask(4)), "
      .. "str(nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64).dtype), "
      .. "list(nn.Transformer.generate_square_subsequent_mask(0).shape)])"
    code[#code + 1] = "print(json.dumps(res))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. ": default init (bitwise), state_dict keys/order/shapes", function()
      local r = ref[i]
      torch.manual_seed(i)
      local m = build(c)
      assert.are.same(r.keys, m:state_dict_keys())
      local sd = m:state_dict()
      for k, key in ipairs(r.keys) do
        assert.are.same(r.shapes[k], sd[key]:size())
        approx.check(sd[key], r.params[k], 0)
      end
      if c[2] == "layer" then assert.are.equal(r.repr, tostring(m)) end
    end)

    it(c[1] .. ": output and gradients", function()
      local r = ref[i]
      torch.manual_seed(i)   -- the dropout cases need the RNG where PyTorch had it after init
      local m = build(c)
      m:train(c[9] == true)
      local sd = {}
      for k, key in ipairs(r.keys) do sd[key] = T(r.params[k]) end
      m:load_state_dict(sd)
      local t, mem = T(r.t):requires_grad_(), T(r.mem):requires_grad_()
      local out
      if c[2] == "transformer" then out = m(mem, t, forward_opts(c[8])) else out = m(t, mem, forward_opts(c[8])) end
      approx.check(out, r.out, TOL)
      ;(out * T(r.R)):sum():backward()
      approx.check(t.grad, r.gt, TOL)
      approx.check(mem.grad, r.gm, TOL)
      for n, p in ipairs(m:parameters()) do approx.check(p.grad, r.gparams[n], TOL) end
    end)
  end

  it("nn.Transformer.generate_square_subsequent_mask matches PyTorch's", function()
    local r = ref[#CASES + 1]
    approx.check(nn.Transformer.generate_square_subsequent_mask(4), r[1], 0)
    assert.are.equal(r[2], tostring(nn.Transformer.generate_square_subsequent_mask(3, { dtype = torch.float64 }).dtype))
    assert.are.same(r[3], nn.Transformer.generate_square_subsequent_mask(0):size())
    local model = nn.Transformer({ d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1 })
    approx.check(model:generate_square_subsequent_mask(4), r[1], 0)
  end)
end)

describe("nn.TransformerDecoderLayer / nn.Transformer misuse", function()
  local function fails(pattern, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. tostring(err))
  end

  it("names the module and shapes", function()
    local layer = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16 })
    local x = torch.randn(4, 2, 8)
    fails("TransformerDecoderLayer(d_model=8, nhead=2): expected memory of shape (S, N, 8), (N, S, 8) or (S, 8), got [4, 2, 6]",
      layer, x, torch.randn(4, 2, 6))
    fails("TransformerDecoderLayer(d_model=8, nhead=2): only bool and floating types of tgt_key_padding_mask are supported, got torch.int64",
      layer, x, x, { tgt_key_padding_mask = torch.zeros(2, 4, { dtype = torch.int64 }) })
    fails("MultiheadAttention(embed_dim=8, num_heads=2): Need attn_mask if specifying the is_causal hint", layer, x, x,
      { tgt_is_causal = true })
    fails("TransformerDecoderLayer(d_model=8, nhead=2): unknown option 'is_causal'", layer, x, x, { is_causal = true })
    local model = nn.Transformer({ d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1 })
    fails("Transformer(d_model=8, nhead=2): the batch number of src and tgt must be equal, got src [5, 3, 8] and tgt [4, 2, 8]",
      model, torch.randn(5, 3, 8), x)
    fails("Transformer(d_model=8, nhead=2): expected tgt of shape (S, N, 8), (N, S, 8) or (S, 8), got [4, 2, 4]", model,
      torch.randn(5, 2, 8), torch.randn(4, 2, 4))
  end)

  it("rejects bad constructor arguments", function()
    fails("TransformerDecoderLayer: d_model (10) must be divisible by nhead (4)", nn.TransformerDecoderLayer, 10, 4)
    fails("Transformer: bias must be a boolean, got number", nn.Transformer, { d_model = 8, nhead = 2, bias = 0 })
    fails("TransformerDecoder: decoder_layer must be a Module, got nil", nn.TransformerDecoder, nil, 2)
    fails("Transformer: unexpected keyword argument 'heads' (did you mean 'nhead'?)", nn.Transformer, { heads = 2 })
    fails("generate_square_subsequent_mask: sz must be a non-negative integer, got 2.5",
      nn.Transformer.generate_square_subsequent_mask, 2.5)
  end)

  it("a subclass whose __init forgets the base constructor is an error, as in PyTorch", function()
    local Forgot = nn.Transformer:extend("Forgot")
    function Forgot:__init(d) self.proj = nn.Linear(d, d) end
    fails("Forgot:__init did not call its base class's constructor: call Transformer.__init(self, ...)", Forgot, 8)
    local Calls = nn.Transformer:extend("Calls")
    function Calls:__init(d)
      nn.Transformer.__init(self, { d_model = d, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1 })
      self.proj = nn.Linear(d, d)
    end
    local m = Calls(8)
    assert.are.equal(#nn.Transformer({ d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1 })
      :parameters() + 2, #m:parameters())
    local Inherits = Calls:extend("Inherits")   -- no __init of its own: Calls's runs
    assert.are.equal(#m:parameters(), #Inherits(8):parameters())
  end)
end)
