--[[
  spec/nn/rnn_cell_spec.lua — nn.RNNCell, nn.LSTMCell, nn.GRUCell (lua/torch/nn/rnn_cell.lua)
  against PyTorch.

  Each layer_parity case checks the default init bit for bit (weight_ih, weight_hh, bias_ih,
  bias_hh from U(-1/sqrt(H), 1/sqrt(H)) in that order), state_dict keys (PyTorch loads ours with
  strict=True), repr, then the output and the gradients of the input, the given hidden state and
  every parameter. LSTMCell with a given (h, c) pair is compared in its own pytorch.run (the pair
  is the Lua table {h, c}); also misuse errors.

  Tolerance: float32 atol 1e-5 + rtol 1e-5, float64 1e-12 (same libtorch kernels; the margin
  covers thread-count differences).

  Run:  build/ltorch /usr/bin/busted spec/nn/rnn_cell_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-5, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "RNNCell(3, 4)", lua = function() return nn.RNNCell(3, 4) end, py = "nn.RNNCell(3, 4)",
    inputs = { { 2, 3 } } },
  { name = "RNNCell relu, no bias, given h", lua = function() return nn.RNNCell(3, 4, false, "relu") end,
    py = "nn.RNNCell(3, 4, False, 'relu')", inputs = { { 2, 3 }, { 2, 4 } } },
  { name = "RNNCell unbatched", lua = function() return nn.RNNCell(3, 5, { nonlinearity = "relu" }) end,
    py = "nn.RNNCell(3, 5, nonlinearity='relu')", inputs = { { 3 }, { 5 } } },
  { name = "GRUCell(3, 4)", lua = function() return nn.GRUCell(3, 4) end, py = "nn.GRUCell(3, 4)",
    inputs = { { 2, 3 } } },
  { name = "GRUCell given h, float64", lua = function() return nn.GRUCell(4, 3, { dtype = torch.float64 }) end,
    py = "nn.GRUCell(4, 3, dtype=torch.float64)", inputs = { { 5, 4 }, { 5, 3 } }, dtype = "float64" },
  { name = "GRUCell unbatched, no bias", lua = function() return nn.GRUCell(2, 3, { bias = false }) end,
    py = "nn.GRUCell(2, 3, bias=False)", inputs = { { 2 }, { 3 } } },
  { name = "LSTMCell(3, 4)", lua = function() return nn.LSTMCell(3, 4) end, py = "nn.LSTMCell(3, 4)",
    inputs = { { 2, 3 } } },
  { name = "LSTMCell unbatched, no bias", lua = function() return nn.LSTMCell(3, 2, false) end,
    py = "nn.LSTMCell(3, 2, False)", inputs = { { 3 } } },
}

describe("nn.RNNCell / nn.LSTMCell / nn.GRUCell", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  it("LSTMCell takes hx as {h, c} and returns h', c' like PyTorch's (h_1, c_1), with gradients", function()
    local ref = pytorch.run [[
torch.manual_seed(5)
m = nn_cell = torch.nn.LSTMCell(3, 4)
g = torch.Generator().manual_seed(1)
x = torch.randn(2, 3, generator=g, dtype=torch.float64).requires_grad_()
h = torch.randn(2, 4, generator=g, dtype=torch.float64).requires_grad_()
c = torch.randn(2, 4, generator=g, dtype=torch.float64).requires_grad_()
m.double()
h1, c1 = m(x, (h, c))
h2, c2 = m(x, (h1, c1))
(h2.sum() * 2 + c2.sum()).backward()
print(json.dumps({'x': x.tolist(), 'h': h.tolist(), 'c': c.tolist(), 'h2': h2.tolist(), 'c2': c2.tolist(),
  'gx': x.grad.tolist(), 'gh': h.grad.tolist(), 'gc': c.grad.tolist(), 'gw': m.weight_hh.grad.tolist()}))
]]
    torch.manual_seed(5)
    local m = nn.LSTMCell(3, 4):double()
    local function leaf(v) return torch.tensor(v, { dtype = torch.float64, requires_grad = true }) end
    local x, h, c = leaf(ref.x), leaf(ref.h), leaf(ref.c)
    local h1, c1 = m(x, { h, c })
    local h2, c2 = m(x, { h1, c1 })
    local loss = h2:sum() * 2 + c2:sum()
    loss:backward()
    approx.check(h2:tolist(), ref.h2, TOL64)
    approx.check(c2:tolist(), ref.c2, TOL64)
    approx.check(x.grad:tolist(), ref.gx, TOL64)
    approx.check(h.grad:tolist(), ref.gh, TOL64)
    approx.check(c.grad:tolist(), ref.gc, TOL64)
    approx.check(m.weight_hh.grad:tolist(), ref.gw, TOL64)
  end)

  it("RNNCellBase binds PyTorch's signature (num_chunks sizes the weights)", function()
    local b = nn.RNNCellBase(3, 4, true, 2)
    assert.are.same({ 8, 3 }, b.weight_ih:size())
    assert.are.same({ "weight_ih", "weight_hh", "bias_ih", "bias_hh" }, b:state_dict_keys())
    assert.matches("RNNCellBase: missing required argument 'num_chunks'", err(nn.RNNCellBase, 3, 4, true))
  end)

  describe("misuse", function()
    it("names the cell and the problem", function()
      local c = nn.LSTMCell(3, 4)
      assert.matches("LSTMCell: Expected input to be 1D or 2D, got 3D instead", err(c, torch.randn(1, 2, 3)))
      assert.matches("LSTMCell: expected input with last dim 3 %(input_size%), got %[2, 5%]", err(c, torch.randn(2, 5)))
      assert.matches("LSTMCell: expected hx as a table {h, c} of two Tensors, got a Tensor",
        err(c, torch.randn(2, 3), torch.randn(2, 4)))
      assert.matches("LSTMCell: expected hx%[1%] of shape %[2, 4%] %(batch, hidden_size%), got %[2, 3%]",
        err(c, torch.randn(2, 3), { torch.randn(2, 4), torch.randn(2, 3) }))
      assert.matches("GRUCell: Expected hidden to be 1D or 2D, got 3D instead",
        err(nn.GRUCell(3, 4), torch.randn(2, 3), torch.randn(1, 2, 4)))
      assert.matches("RNNCell: expected hidden of shape %[2, 4%]", err(nn.RNNCell(3, 4), torch.randn(2, 3), torch.randn(3, 4)))
      assert.matches("RNNCell: Unknown nonlinearity: sigmoid", err(nn.RNNCell, 3, 4, { nonlinearity = "sigmoid" }))
      assert.matches("GRUCell: unexpected keyword argument 'bais'", err(nn.GRUCell, 3, 4, { bais = false }))
    end)

    it("blames the caller's line", function()
      local ok, msg = pcall(function() local y = nn.GRUCell(3, 4)(torch.randn(2, 7)); return y end)
      assert.is_false(ok)
      assert.matches("rnn_cell_spec%.lua:%d+: GRUCell: expected input with last dim 3", msg)
    end)
  end)
end)
