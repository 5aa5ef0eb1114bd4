--[[
  spec/nn/adaptive_softmax_spec.lua — nn.AdaptiveLogSoftmaxWithLoss (lua/torch/nn/adaptive.lua)
  against PyTorch.

  layer_parity cases check the default init bit for bit (head, then each cluster's two Linears),
  state_dict keys (head.weight, tail.0.0.weight, ...; PyTorch loads ours with strict=True),
  repr, and forward's (output, loss) — two results here — with the gradients of the input and
  every parameter, for targets in the shortlist and in every cluster. log_prob and predict are
  compared in their own pytorch.run (predict on rows inside and outside the shortlist). Also
  misuse errors.

  Tolerance: float32 atol 1e-5 + rtol 1e-5, float64 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/adaptive_softmax_spec.lua
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
  { name = "ASM(16, 10, {3, 6})", lua = function() return nn.AdaptiveLogSoftmaxWithLoss(16, 10, { 3, 6 }) end,
    py = "nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6])", inputs = { { 7, 16 }, { shape = { 7 }, int = 10 } } },
  { name = "ASM head_bias, div_value 2", lua = function()
      return nn.AdaptiveLogSoftmaxWithLoss(8, 12, { 2, 5, 9 }, { div_value = 2.0, head_bias = true })
    end, py = "nn.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5, 9], div_value=2.0, head_bias=True)",
    inputs = { { 9, 8 }, { shape = { 9 }, int = 12 } } },
  { name = "ASM unbatched, float64", lua = function()
      return nn.AdaptiveLogSoftmaxWithLoss(6, 5, { 2 }, { dtype = torch.float64 })
    end, py = "nn.AdaptiveLogSoftmaxWithLoss(6, 5, [2], dtype=torch.float64)",
    inputs = { { 6 }, { shape = {}, int = 5 } }, dtype = "float64" },
}

describe("nn.AdaptiveLogSoftmaxWithLoss", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  it("log_prob and predict match PyTorch", function()
    local x = parity.values({ 6, 8 }, 17)
    local ref = pytorch.run(([[
torch.manual_seed(4)
m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 9, [2, 4], div_value=2.0).double()
x = torch.tensor(%s, dtype=torch.float64, requires_grad=True)
lp = m.log_prob(x)
(lp * torch.linspace(-1, 1, lp.numel(), dtype=torch.float64).view_as(lp)).sum().backward()
with torch.no_grad():
    m.head.weight[0].mul_(0.0)        # row 0 of the head never wins: some rows leave the shortlist
print(json.dumps({'lp': lp.tolist(), 'gx': x.grad.tolist(), 'pred': m.predict(x.detach()).tolist(),
  'pred_first': m.predict(x.detach()[:1]).tolist(), 'pred_last': m.predict(x.detach()[3:]).tolist()}))
]]):format(approx.py(x)))
    assert.are.same({ 0, 0, 0, 1, 3, 3 }, ref.pred)   -- the rows mix shortlist and cluster classes
    torch.manual_seed(4)
    local m = nn.AdaptiveLogSoftmaxWithLoss(8, 9, { 2, 4 }, { div_value = 2.0 }):double()
    local xt = torch.tensor(x, { dtype = torch.float64, requires_grad = true })
    local lp = m:log_prob(xt)
    local loss = (lp * torch.linspace(-1, 1, lp:numel(), { dtype = torch.float64 }):view_as(lp)):sum()
    loss:backward()
    approx.check(lp, ref.lp, TOL64)
    approx.check(xt.grad, ref.gx, TOL64)
    torch.no_grad(function() m.head.weight:select(0, 0):mul_(0.0) end)
    assert.are.same(ref.pred, m:predict(xt:detach()):tolist())
    assert.are.same(ref.pred_first, m:predict(xt:detach():narrow(0, 0, 1)):tolist())   -- all in the shortlist
    assert.are.same(ref.pred_last, m:predict(xt:detach():narrow(0, 3, 3)):tolist())    -- none in it
  end)

  describe("misuse", function()
    it("checks cutoffs, shapes and targets with PyTorch's messages", function()
      local msg = "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
        .. "where each value is between 1 and n_classes%-1"
      assert.matches(msg, err(nn.AdaptiveLogSoftmaxWithLoss, 8, 10, { 6, 3 }))
      assert.matches(msg, err(nn.AdaptiveLogSoftmaxWithLoss, 8, 10, { 3, 10 }))
      assert.matches(msg, err(nn.AdaptiveLogSoftmaxWithLoss, 8, 10, { 3, 3 }))
      assert.matches("cutoffs should be a sequence of length larger than 0", err(nn.AdaptiveLogSoftmaxWithLoss, 8, 10, {}))
      assert.matches("missing required argument 'cutoffs'", err(nn.AdaptiveLogSoftmaxWithLoss, 8, 10))
      local m = nn.AdaptiveLogSoftmaxWithLoss(16, 10, { 3 })
      assert.matches("Input and target should have the same size in the batch dimension",
        err(m, torch.randn(3, 16), torch.tensor({ 1, 2 })))
      assert.matches("1D target tensor expects 2D input tensors, but found inputs with size %[3, 2, 16%]",
        err(m, torch.randn(3, 2, 16), torch.tensor({ 1, 2, 3 })))
      assert.matches("0D or 1D target tensor expected, multi%-target not supported",
        err(m, torch.randn(2, 16), torch.tensor({ { 1 }, { 2 } })))
      assert.matches("Target values should be in %[0, 9%], but values in range %[1, 12%] were found",
        err(m, torch.randn(2, 16), torch.tensor({ 1, 12 })))
      assert.matches("expected input with last dim 16 %(in_features%), got %[2, 5%]", err(m, torch.randn(2, 5), torch.tensor({ 1, 2 })))
    end)
  end)
end)
