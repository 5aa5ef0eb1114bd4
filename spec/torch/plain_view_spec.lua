--[[
  spec/torch/plain_view_spec.lua — views of tensors without autograd metadata skip libtorch's
  Autograd kernel (bindings/lt_internal.hpp, PlainView) and are still real views, as in PyTorch.

  Checked, for x[3], x:select, narrow, view, transpose, unsqueeze and x[{1, {2, 5}}] of a plain
  tensor: the result shares the base's version counter (a tensor saved for backward through the
  view, then the base written in place: backward raises, as PyTorch does); copying a tensor that
  requires grad into the view gives the base CopySlices history and the gradient flows to the
  source; a view of a tensor that requires grad still gets its backward node. Each expected
  behaviour was read from PyTorch 2.11 on the same calls.

  Run:  build/ltorch /usr/bin/busted spec/torch/plain_view_spec.lua
]]
local torch = require "torch"

local VIEWS = {
  ["x[3]"] = function(x) return x[3] end,
  ["x:select(0, 3)"] = function(x) return x:select(0, 3) end,
  ["x:narrow(0, 3, 1)"] = function(x) return x:narrow(0, 3, 1):squeeze(0) end,
  ["x:view(-1)"] = function(x) return x:view(-1):narrow(0, 24, 8) end,
  ["x:t()"] = function(x) return x:t():select(1, 3) end,
  ["x:unsqueeze(0)"] = function(x) return x:unsqueeze(0)[0][3] end,
  ["x[{3, {0, 8}}]"] = function(x) return x[{ 3, { 0, 8 } }] end,
}

describe("views of a tensor without autograd metadata", function()
  for name, make in pairs(VIEWS) do
    it(name .. " shares the base's version counter: an in-place write after a save is caught", function()
      local big = torch.randn(16, 8)
      local v = make(big)
      local w = torch.randn(8, { requires_grad = true })
      local z = (w * v):sum()   -- mul saves v for w's gradient
      big:add_(1)
      local ok, err = pcall(function() z:backward() end)
      assert.is_false(ok)
      assert.matches("modified by an inplace operation", tostring(err), 1, true)
    end)

    it(name .. " takes history when a tensor that requires grad is copied into it", function()
      local big = torch.zeros(16, 8)
      local v = make(big)
      local w = torch.randn(8, { requires_grad = true })
      v:copy_(w)
      assert.is_true(big.requires_grad)
      assert.is_true(v.requires_grad)
      assert.are.equal("torch::autograd::CopySlices", big.grad_fn:name())
      big:sum():backward()
      assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, w.grad:tolist())
    end)
  end

  it("a view of a tensor that requires grad still records its backward node", function()
    local x = torch.randn(4, 3, { requires_grad = true })
    assert.are.equal("SelectBackward0", x[1].grad_fn:name())
    assert.are.equal("TBackward0", x:t().grad_fn:name())
    local y = x * 2   -- not a leaf: its view's history goes through the mul
    y[1]:sum():backward()
    assert.are.same({ { 0, 0, 0 }, { 2, 2, 2 }, { 0, 0, 0 }, { 0, 0, 0 } }, x.grad:tolist())
  end)

  it("a view made under no_grad of a plain tensor is still a view (writes reach the base)", function()
    local big = torch.zeros(4, 3)
    local v = torch.no_grad(function() return big[2] end)
    v:fill_(5)
    assert.are.same({ 0, 0, 0 }, big[1]:tolist())
    assert.are.same({ 5, 5, 5 }, big[2]:tolist())
  end)
end)
