--[[
  spec/nn/forward_keywords_spec.lua — keyword arguments to a module's forward
  (lua/torch/nn/_forward_keywords.lua, used by Module.__call) against PyTorch: `m({input = x})`
  is PyTorch's m(input=x) for every layer (the names of PyTorch's forward signatures, generated
  into lua/torch/nn/_forward_sig_gen.lua) and a user's forward takes its own parameter names.

  Each case builds the layer here, hands its state dict and inputs to PyTorch, calls it there
  with keywords and here with the keyword table, and compares the outputs (float32, atol 1e-5,
  rtol 1e-5). Misuse (an unknown keyword, a parameter given twice, a missing one) raises here
  where PyTorch raises a TypeError; a table of non-parameter keys stays data (rnn's lengths).

  Run:  build/ltorch /usr/bin/busted spec/nn/forward_keywords_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL = { atol = 1e-5, rtol = 1e-5 }

local function sd_py(m)
  local parts = {}
  for name, t in m:state_dict() do
    parts[#parts + 1] = ("%q: %s"):format(name, approx.py(t))
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function t(...) torch.manual_seed(7) return torch.randn(...) end

-- name, the layer, the Lua call, the PyTorch constructor and call (m, inputs a, b, c).
local CASES = {
  { "Linear(input=)", function() return nn.Linear(3, 2) end, { t(4, 3) },
    function(m, a) return m({ input = a }) end, "nn.Linear(3, 2)", "m(input=a)" },
  { "MSELoss(input=, target=)", function() return nn.MSELoss() end, { t(4, 3), t(4, 3):mul(2) },
    function(m, a, b) return m({ input = a, target = b }) end, "nn.MSELoss()", "m(input=a, target=b)" },
  { "L1Loss(x, target=)", function() return nn.L1Loss() end, { t(4, 3), t(4, 3):mul(2) },
    function(m, a, b) return m(a, { target = b }) end, "nn.L1Loss()", "m(a, target=b)" },
  { "Bilinear(input1=, input2=)", function() return nn.Bilinear(3, 2, 4) end, { t(5, 3), t(5, 2) },
    function(m, a, b) return m({ input2 = b, input1 = a }) end, "nn.Bilinear(3, 2, 4)", "m(input2=b, input1=a)" },
  { "ConvTranspose1d(x, output_size=)", function() return nn.ConvTranspose1d(2, 3, 3, { stride = 2 }) end,
    { t(1, 2, 4) }, function(m, a) return m(a, { output_size = { 10 } }) end,
    "nn.ConvTranspose1d(2, 3, 3, stride=2)", "m(a, output_size=[10])" },
  { "EmbeddingBag(input=, offsets=)", function() return nn.EmbeddingBag(10, 3) end,
    { torch.tensor({ 1, 2, 4, 5, 4, 3 }), torch.tensor({ 0, 2 }) },
    function(m, a, b) return m({ input = a, offsets = b }) end, "nn.EmbeddingBag(10, 3)", "m(input=a, offsets=b)" },
  { "LSTM(input=, hx=)", function() return nn.LSTM(3, 4) end, { t(5, 2, 3), t(1, 2, 4), t(1, 2, 4):mul(3) },
    function(m, a, b, c)
      local out, h, cell = m({ input = a, hx = { b, c } })
      return out, h, cell
    end, "nn.LSTM(3, 4)", "(lambda r: (r[0], r[1][0], r[1][1]))(m(input=a, hx=(b, c)))" },
  { "MultiheadAttention(query=, key=, value=, need_weights=)", function() return nn.MultiheadAttention(4, 2) end,
    { t(3, 2, 4), t(5, 2, 4) }, function(m, a, b)
      local out, w = m({ query = a, key = b, value = b, need_weights = false })
      assert.is_nil(w)
      return out
    end, "nn.MultiheadAttention(4, 2)", "m(query=a, key=b, value=b, need_weights=False)[0]" },
  { "TransformerEncoderLayer(src=, src_mask=)", function() return nn.TransformerEncoderLayer(4, 2, { dropout = 0 }) end,
    { t(3, 2, 4), torch.zeros(3, 3) }, function(m, a, b) return m({ src = a, src_mask = b }) end,
    "nn.TransformerEncoderLayer(4, 2, dropout=0.0)", "m(src=a, src_mask=b)" },
}

describe("nn modules: keyword arguments to forward (PyTorch's m(input=x))", function()
  local results
  setup(function()
    local lines, built = { "import torch.nn as nn", "out = []" }, {}
    for i, c in ipairs(CASES) do
      torch.manual_seed(i)
      local m = c[2]()
      built[i] = m
      local ins = {}
      for j, x in ipairs(c[3]) do ins[j] = approx.py(x) end
      while #ins < 3 do ins[#ins + 1] = "None" end
      lines[#lines + 1] = ("m = %s\nm.load_state_dict(%s)\na, b, c = %s\nr = %s\nr = r if isinstance(r, tuple) else (r,)\n"
        .. "out.append([x.tolist() for x in r])"):format(c[5], sd_py(m), table.concat(ins, ", "), c[6])
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    results = pytorch.run(table.concat(lines, "\n"))
    for i, c in ipairs(CASES) do c.module = built[i] end
  end)

  for i, c in ipairs(CASES) do
    it(c[1] .. " equals PyTorch", function()
      local got = { c[4](c.module, unpack(c[3])) }
      assert.equal(#results[i], #got)
      for j = 1, #got do approx.check(got[j], results[i][j], TOL) end
    end)
  end

  it("a user's forward takes its own parameter names", function()
    local Net = nn.Module:extend("KwNet")
    function Net:__init() self.fc = nn.Linear(3, 2) end
    function Net:forward(x, scale) return self.fc(x) * (scale or 1) end
    local net, x = Net(), t(2, 3)
    assert.is_true(net({ x = x, scale = 2 }):equal(net(x, 2)))
    assert.is_true(net(x, { scale = 3 }):equal(net(x, 3)))
    assert.matches("KwNet.forward: unexpected keyword argument 'scal' %(did you mean 'scale'%?%)", err(net, { x = x, scal = 2 }))
  end)

  it("a table of no parameter names stays data or ltorch's own options", function()
    local Net = nn.Module:extend("DictNet")
    function Net:forward(batch) return batch.a + batch.b end
    assert.equal(3, Net()({ a = torch.tensor(1), b = torch.tensor(2) }):item())
    local rnn = nn.RNN(2, 3, { batch_first = true })
    local out = rnn(t(2, 4, 2), { lengths = torch.tensor({ 4, 2 }) })
    assert.is_not_nil(out)
    assert.equal(4, nn.Sequential(nn.Identity())({ x = 4 }).x)
  end)

  it("misuse raises where PyTorch raises a TypeError", function()
    local ref = pytorch.run [[
import torch.nn as nn
m, x, out = nn.Linear(3, 2), torch.zeros(1, 3), []
for call in (lambda: m(inpt=x), lambda: m(x, input=x), lambda: m(input=x, bias=1), lambda: nn.MSELoss()(input=x)):
    try:
        call(); out.append("ok")
    except TypeError as e:
        out.append(str(e))
print(json.dumps(out))]]
    local m, x = nn.Linear(3, 2), torch.zeros(1, 3)
    assert.matches("unexpected keyword argument 'inpt'", ref[1])
    assert.matches("Linear.forward: unexpected keyword argument 'inpt' %(did you mean 'input'%?%)", err(m, { inpt = x }))
    assert.matches("multiple values for argument 'input'", ref[2])
    assert.matches("Linear.forward: got multiple values for argument 'input'", err(m, x, { input = x }))
    assert.matches("unexpected keyword argument 'bias'", ref[3])
    assert.matches("Linear.forward: unexpected keyword argument 'bias'", err(m, { input = x, bias = 1 }))
    assert.matches("missing 1 required positional argument: 'target'", ref[4])
    assert.matches("MSELoss.forward: missing required argument 'target'", err(nn.MSELoss(), { input = x }))
  end)
end)
