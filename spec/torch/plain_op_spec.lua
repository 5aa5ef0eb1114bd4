--[[
  spec/torch/plain_op_spec.lua — the bindings' PlainOp fast path (bindings/lt_internal.hpp)
  changes speed, never meaning.

  Out-of-place elementwise math and matmul/mm skip libtorch's autograd dispatch when none of
  their inputs has autograd metadata. These specs pin what must not change: results equal to
  the ordinary path, history recorded as soon as any input requires grad (either side, scalar
  on either side), in-place ops and views still tracked by version counters (the classic
  "modified by an inplace operation" error still fires on a plain tensor saved for backward),
  and gradients flowing through a fast-path result that a later op combines with a leaf.

  Run:  build/ltorch /usr/bin/busted spec/torch/plain_op_spec.lua
]]
local torch = require "torch"

describe("PlainOp fast path", function()
  it("gives plain results with the same values as the tracked path", function()
    torch.manual_seed(0)
    local a, b = torch.randn(4, 5), torch.randn(4, 5)
    local m = torch.randn(5, 3)
    local fast = { a + b, a * b, a - b, a / b, -a, a:exp(), a:tanh(), 2 - a, a ^ 2, a:matmul(m), a:mm(m) }
    local ta, tb, tm = a:clone():requires_grad_(), b:clone():requires_grad_(), m:clone():requires_grad_()
    local tracked = { ta + tb, ta * tb, ta - tb, ta / tb, -ta, ta:exp(), ta:tanh(), 2 - ta, ta ^ 2,
      ta:matmul(tm), ta:mm(tm) }
    for i = 1, #fast do
      assert.is_false(fast[i].requires_grad, "result " .. i .. " of plain inputs requires grad")
      assert.is_nil(fast[i].grad_fn)
      assert.is_true(tracked[i].requires_grad, "result " .. i .. " of tracked inputs")
      assert.is_true(fast[i]:equal(tracked[i]:detach()), "result " .. i .. " differs")
    end
  end)

  it("records history when either input requires grad", function()
    local w = torch.ones(3, { requires_grad = true })
    local x = torch.full({ 3 }, 2, { dtype = torch.float32 })
    assert.are.equal("MulBackward0", (x * w).grad_fn:name())
    assert.are.equal("MulBackward0", (w * x).grad_fn:name())
    assert.is_truthy((1 - w).grad_fn)
    assert.is_truthy((w / 2).grad_fn)
    local m = torch.ones(3, 3, { requires_grad = true })
    assert.is_truthy((x:view(1, 3):matmul(m)).grad_fn)
    assert.is_truthy((m:mm(torch.ones(3, 2))).grad_fn)
  end)

  it("an in-place change to a plain tensor saved for backward is still caught", function()
    local w = torch.ones(3, { requires_grad = true })
    local x = torch.full({ 3 }, 2, { dtype = torch.float32 })
    local y = (w * x):sum()   -- saves x for MulBackward0
    x:mul_(3)                 -- in-place ops keep the autograd path: x's version moves on
    assert.has_error(function() y:backward() end)
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("modified by an inplace operation", 1, true), tostring(err))
  end)

  it("a view of a plain tensor shares its version counter", function()
    local w = torch.ones(3, { requires_grad = true })
    local base = torch.full({ 2, 3 }, 2, { dtype = torch.float32 })
    local row = base[1]
    local y = (w * row):sum()
    base:add_(1)              -- changes row through its base
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("modified by an inplace operation", 1, true), tostring(err))
  end)

  it("gradients flow through a fast-path result combined with a leaf later", function()
    local f32 = { dtype = torch.float32 }
    local a = torch.tensor({ 1, 2, 3 }, f32)
    local plain = a * a + 1         -- fast path: {2, 5, 10}
    local w = torch.ones(3, { requires_grad = true })
    local z = (plain * w):sum()
    z:backward()
    assert.is_true(w.grad:equal(torch.tensor({ 2, 5, 10 }, f32)))
    local acc = torch.zeros(3)
    acc:add_(w)                     -- in-place with a tracked operand: acc joins the graph
    assert.is_true(acc.requires_grad)
    local v = torch.ones(1, 2):matmul(torch.ones(2, 3))
    v:mul_(w)                       -- in-place on a fast-path matmul result
    v:sum():backward()
    assert.is_true(w.grad:equal(torch.tensor({ 4, 7, 12 }, f32)))
  end)

  it("the fast path still reports bad inputs", function()
    local ok, err = pcall(function() return torch.ones(2, 3) + torch.ones(4) end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("size of tensor", 1, true), tostring(err))
    ok, err = pcall(function() return torch.ones(2, 3):matmul(torch.ones(2, 3)) end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("cannot be multiplied", 1, true), tostring(err))
  end)
end)
