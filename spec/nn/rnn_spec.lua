--[[
  spec/nn/rnn_spec.lua — nn.LSTM, nn.GRU and nn.RNN (lua/torch/nn/rnn.lua) against PyTorch.

  Each case builds the same layer on both sides after the same torch.manual_seed and checks:
  default init bitwise (PyTorch's parameter order), state_dict keys / order / shapes, repr;
  then loads PyTorch's weights, runs identical inputs (drawn in Python from a separate
  generator, so the global RNG stays in step for the dropout case) and compares output,
  h_n / c_n and the gradients of input, h0 / c0 and every parameter under
  loss = sum(out^2) + sum_i i * sum(state_i^2). Cases cover multi-layer, bidirectional,
  batch_first, unbatched input, proj_size, no bias, relu RNN, inter-layer dropout in training
  mode, and variable lengths (`lengths`) against pack_padded_sequence(enforce_sorted=False)
  -> layer -> pad_packed_sequence(total_length=T). Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32, atol 1e-5 + rtol 1e-5 (the
  same libtorch runs the same ops, so results are usually bitwise equal).

  Run:  build/ltorch /usr/bin/busted spec/nn/rnn_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"

local TOL = { atol = 1e-5, rtol = 1e-5 }

-- {name, class, input_size, hidden_size, opts, input shape, hx?, lengths?, train?}
local CASES = {
  { "LSTM seq-first, zero state", "LSTM", 3, 4, {}, { 5, 2, 3 } },
  { "LSTM 2 layers, bidirectional, given (h0, c0)", "LSTM", 3, 4, { num_layers = 2, bidirectional = true }, { 5, 3, 3 }, true },
  { "LSTM batch_first, 2 layers", "LSTM", 3, 4, { batch_first = true, num_layers = 2 }, { 2, 5, 3 }, true },
  { "LSTM bidirectional batch_first with lengths", "LSTM", 3, 4, { bidirectional = true, batch_first = true },
    { 3, 5, 3 }, true, { 3, 5, 1 } },
  { "LSTM 2 layers bidirectional with lengths", "LSTM", 3, 4, { num_layers = 2, bidirectional = true }, { 4, 4, 3 },
    false, { 2, 4, 4, 1 } },
  { "LSTM proj_size", "LSTM", 3, 5, { proj_size = 2 }, { 4, 2, 3 }, true },
  { "LSTM unbatched", "LSTM", 3, 4, {}, { 5, 3 }, true },
  { "LSTM inter-layer dropout (training)", "LSTM", 3, 4, { num_layers = 2, dropout = 0.5 }, { 4, 2, 3 }, false, nil, true },
  { "GRU seq-first", "GRU", 3, 4, {}, { 5, 2, 3 } },
  { "GRU 2 layers bidirectional batch_first", "GRU", 3, 4, { num_layers = 2, bidirectional = true, batch_first = true },
    { 2, 5, 3 }, true },
  { "GRU without bias, with lengths", "GRU", 3, 4, { bias = false }, { 5, 2, 3 }, true, { 5, 2 } },
  { "GRU bidirectional batch_first with lengths", "GRU", 3, 4, { bidirectional = true, batch_first = true }, { 3, 4, 3 },
    false, { 1, 4, 2 } },
  { "GRU unbatched", "GRU", 2, 3, { num_layers = 2 }, { 4, 2 }, true },
  { "RNN relu, 2 layers", "RNN", 3, 4, { nonlinearity = "relu", num_layers = 2 }, { 4, 2, 3 }, true },
  { "RNN tanh bidirectional with lengths", "RNN", 3, 4, { bidirectional = true }, { 4, 3, 3 }, false, { 4, 1, 3 } },
}

local function pykw(opts)
  local keys, parts = {}, {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = opts[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "string" and ("'" .. v .. "'") or approx.py(v))
  end
  return table.concat(parts, ", ")
end

local PY = [==[
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
def L(t): return t.tolist()
def case(seed, cls, args, kw, xs, hx, lengths, train):
    torch.manual_seed(seed)
    m = getattr(torch.nn, cls)(*args, **kw)
    m.train(train)
    sd = m.state_dict()
    r = dict(keys=list(sd.keys()), shapes=[list(v.shape) for v in sd.values()],
             params=[L(v) for v in sd.values()], repr=repr(m))
    g = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn(xs, generator=g).requires_grad_()
    bf = m.batch_first and x.dim() == 3
    lead = [m.num_layers * (2 if m.bidirectional else 1)] + ([x.shape[0 if bf else 1]] if x.dim() == 3 else [])
    states = None
    if hx:
        states = [torch.randn(lead + [m.proj_size or m.hidden_size], generator=g).requires_grad_()]
        if cls == 'LSTM': states.append(torch.randn(lead + [m.hidden_size], generator=g).requires_grad_())
    inp = x
    if lengths is not None:
        inp = pack_padded_sequence(x, torch.tensor(lengths), batch_first=bf, enforce_sorted=False)
    arg = None if states is None else (tuple(states) if cls == 'LSTM' else states[0])
    out, fin = m(inp, arg)
    if lengths is not None:
        out, _ = pad_packed_sequence(out, batch_first=bf, total_length=x.shape[1 if bf else 0])
    fin = list(fin) if cls == 'LSTM' else [fin]
    loss = (out ** 2).sum()
    for i, s in enumerate(fin): loss = loss + (i + 1) * (s ** 2).sum()
    loss.backward()
    r.update(x=L(x), hx=[L(s) for s in states or []], out=L(out), fin=[L(s) for s in fin], gx=L(x.grad),
             ghx=[L(s.grad) for s in states or []], gparams=[L(p.grad) for p in m.parameters()])
    return r
res = []
]==]

local function build(c)
  local cls, isz, hsz, opts = c[2], c[3], c[4], c[5]
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  return nn[cls](isz, hsz, o)
end

local function T(list) return torch.tensor(list, { dtype = torch.float32 }) end

describe("nn.LSTM / nn.GRU / nn.RNN against PyTorch", function()
  local ref
  setup(function()
    local code = { PY }
    for i, c in ipairs(CASES) do
      code[#code + 1] = ("res.append(case(%d, '%s', (%d, %d), dict(%s), %s, %s, %s, %s))"):format(i, c[2], c[3], c[4],
        pykw(c[5]), approx.py(c[6]), c[7] and "True" or "False", c[8] and approx.py(c[8]) or "None",
        c[9] and "True" or "False")
    end
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

    it(c[1] .. ": output, final state and gradients", function()
      local r = ref[i]
      torch.manual_seed(i)   -- the dropout case needs the RNG where PyTorch had it after init
      local m = build(c)
      m:train(c[9] == true)
      local sd = {}
      for k, key in ipairs(r.keys) do sd[key] = T(r.params[k]) end
      m:load_state_dict(sd)
      local x = T(r.x):requires_grad_()
      local states = {}
      for k, s in ipairs(r.hx) do states[k] = T(s):requires_grad_() end
      local hx = nil
      if #states > 0 then hx = c[2] == "LSTM" and states or states[1] end
      local out, h, cn = m(x, hx, { lengths = c[8] })
      local fin = { h, cn }
      approx.check(out, r.out, TOL)
      assert.are.equal(#r.fin, c[2] == "LSTM" and 2 or 1)
      local loss = out:pow(2):sum()
      for k = 1, #r.fin do
        approx.check(fin[k], r.fin[k], TOL)
        loss = loss + fin[k]:pow(2):sum() * k
      end
      loss:backward()
      approx.check(x.grad, r.gx, TOL)
      for k, s in ipairs(states) do approx.check(s.grad, r.ghx[k], TOL) end
      for k, p in ipairs(m:parameters()) do approx.check(p.grad, r.gparams[k], TOL) end
    end)
  end
end)

describe("nn.LSTM / nn.GRU / nn.RNN behaviour", function()
  it("outputs past each length are zero; h_n is the state at the last valid step", function()
    local m = nn.GRU(2, 3, { batch_first = true })
    local x = torch.randn(2, 4, 2)
    local out, h = m(x, { lengths = { 2, 4 } })
    assert.are.equal(0, out[{ 0, "2:" }]:abs():sum():item())
    approx.check(h[{ 0, 0 }], out[{ 0, 1 }]:tolist())
    approx.check(h[{ 0, 1 }], out[{ 1, 3 }]:tolist())
    -- sequence 0 alone, truncated, gives the same result
    local out0, h0 = m(x[{ { 0, 1 }, { 0, 2 } }])
    approx.check(out0[0], out[{ 0, "0:2" }]:tolist(), 1e-6)
    approx.check(h0, h[{ {}, { 0, 1 } }]:tolist(), 1e-6)
  end)

  it("follows :double() (weights are looked up by name at each call)", function()
    local m = nn.LSTM(2, 3):double()
    local out, h, c = m(torch.randn(4, 1, 2, { dtype = torch.float64 }))
    assert.are.equal(torch.float64, out.dtype)
    assert.are.equal(torch.float64, c.dtype)
    assert.are.same({ 1, 1, 3 }, h:size())
  end)

  it("all_weights groups parameters per layer and direction", function()
    local m = nn.GRU(2, 3, { num_layers = 2, bidirectional = true, bias = false })
    local w = m:all_weights()
    assert.are.equal(4, #w)
    assert.are.equal(2, #w[1])
    assert.are.equal(m.weight_hh_l1_reverse, w[4][2])
  end)
end)

describe("nn.LSTM / nn.GRU / nn.RNN misuse", function()
  local function fails(pattern, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. tostring(err))
  end

  it("names the module and the shapes on a wrong input rank or feature size", function()
    local m = nn.LSTM(3, 4)
    fails("LSTM(3, 4): expected a 3-D (batched) or 2-D (unbatched) input, got [2, 5, 3, 1]", m, torch.randn(2, 5, 3, 1))
    fails("LSTM(3, 4): expected a 3-D (batched) or 2-D (unbatched) input, got [3]", m, torch.randn(3))
    fails("LSTM(3, 4): expected input with last dim 3 (input_size), got [5, 2, 6]", m, torch.randn(5, 2, 6))
    fails("GRU(3, 4): expected a Tensor input, got string", nn.GRU(3, 4), "x")
  end)

  it("names the expected and actual h0 / c0 shapes", function()
    local x = torch.randn(5, 2, 3)
    fails("GRU(3, 4): expected h0 of shape [2, 2, 4] (num_layers*num_directions, batch, hidden_size), got [1, 2, 4]",
      nn.GRU(3, 4, { bidirectional = true }), x, torch.zeros(1, 2, 4))
    fails("LSTM(3, 4): expected c0 of shape [1, 2, 4]", nn.LSTM(3, 4), x, { torch.zeros(1, 2, 4), torch.zeros(1, 3, 4) })
    fails("LSTM(3, 5): expected h0 of shape [1, 2, 2] (num_layers*num_directions, batch, proj_size)",
      nn.LSTM(3, 5, { proj_size = 2 }), x, { torch.zeros(1, 2, 5), torch.zeros(1, 2, 5) })
    fails("LSTM(3, 4): expected hx as a table {h0, c0}", nn.LSTM(3, 4), x, torch.zeros(1, 2, 4))
    fails("LSTM(3, 4): expected hx as a table {h0, c0}", nn.LSTM(3, 4), x, { torch.zeros(1, 2, 4) })
    fails("RNN(3, 4): for a 3-D input [5, 2, 3], h0 should be 3-D, got [2, 4]", nn.RNN(3, 4), x, torch.zeros(2, 4))
  end)

  it("checks lengths", function()
    local m, x = nn.GRU(3, 4), torch.randn(5, 2, 3)
    fails("GRU(3, 4): expected 2 lengths (one per batch entry), got [3]", m, x, { lengths = { 1, 2, 3 } })
    fails("GRU(3, 4): lengths must lie in [1, 5] (the padded sequence length), got min 0, max 2", m, x, { lengths = { 0, 2 } })
    fails("GRU(3, 4): lengths must lie in [1, 5]", m, x, nil, { lengths = torch.tensor({ 6, 2 }) })
    fails("GRU(3, 4): lengths needs a batched (3-D) input", m, torch.randn(5, 3), { lengths = { 5 } })
  end)

  it("rejects bad constructor options", function()
    fails("GRU: proj_size argument is only supported for LSTM, not RNN or GRU", nn.GRU, 3, 4, { proj_size = 2 })
    fails("LSTM: proj_size has to be smaller than hidden_size", nn.LSTM, 3, 4, { proj_size = 4 })
    fails("LSTM: dropout should be a number in range [0, 1]", nn.LSTM, 3, 4, { dropout = 1.5 })
    fails("RNN: unknown nonlinearity 'sigmoid'", nn.RNN, 3, 4, { nonlinearity = "sigmoid" })
  end)

  it("validates its constructor arguments as PyTorch does (same cases, same messages)", function()
    local BAD = { { "hidden_size", 0 }, { "num_layers", 0 }, { "bias", "True" }, { "batch_first", 0 },
      { "hidden_size", 2.5 }, { "num_layers", 1.5 }, { "input_size", 0 }, { "dropout", -0.1 }, { "proj_size", -1 },
      { "bidirectional", 1 } }
    local py = { "out = []" }
    for _, c in ipairs(BAD) do
      for _, cls in ipairs({ "RNN", "LSTM", "GRU" }) do
        local v = type(c[2]) == "string" and ("'" .. c[2] .. "'") or tostring(c[2])
        py[#py + 1] = ("kw = dict(input_size=3, hidden_size=4); kw[%q] = %s"):format(c[1], v)
        py[#py + 1] = ("try:\n    m = torch.nn.%s(**kw); out.append(['ok', m.bidirectional])\n"
          .. "except Exception as e:\n    out.append([type(e).__name__, str(e)])"):format(cls)
      end
    end
    py[#py + 1] = "print(json.dumps(out))"
    local ref = pytorch.run(table.concat(py, "\n"))
    local k = 0
    for _, c in ipairs(BAD) do
      for _, cls in ipairs({ "RNN", "LSTM", "GRU" }) do
        k = k + 1
        local ok, m = pcall(nn[cls], { input_size = 3, hidden_size = 4, [c[1]] = c[2] })
        if ref[k][1] == "ok" then
          assert.is_true(ok, tostring(m))
          assert.equals(ref[k][2] ~= false and ref[k][2] ~= 0, m.bidirectional)   -- Python's truth of the value
        else
          assert.is_false(ok, cls .. " " .. c[1] .. "=" .. tostring(c[2]) .. " should fail as in PyTorch")
          assert.equals(cls .. ": " .. ref[k][2], tostring(m))
        end
      end
    end
  end)
end)
