--[[
  spec/autograd/function_spec.lua — torch.autograd.Function and tensor hooks
  (lua/torch/autograd_function.lua, bindings/lt_function.cpp).

  Covers: a fused x*sigmoid(x) Function matches torch.nn.functional.silu's values and gradients
  (and PyTorch's); a straight-through estimator (round forward, identity backward); ctx fields
  (saved_tensors, needs_input_grad, non-tensor arguments); mark_dirty (in-place) and
  mark_non_differentiable; multiple outputs with one unused; grad_fn naming; a Lua error in
  backward surfacing at backward(); a second backward without retain_graph; torch.autograd.grad
  and create_graph through a Function; nesting (a Function's backward running its own backward,
  run on the engine thread that waits on Lua); x:register_hook (observe, replace, remove, a hook
  that raises); and the guard: an engine run that ltorch did not start (C lt_tensor_backward on
  the Lua thread) reports an error instead of deadlocking.

  Backward always runs the engine on a helper thread (never the Lua thread), so every test here
  exercises Functions and hooks reached from a non-Lua thread.

  Run:  build/ltorch /usr/bin/busted spec/autograd/function_spec.lua
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local C = require("torch._C").C

local function close(a, b, tol)
  return (a - b):abs():max():item() <= (tol or 1e-6)
end

local Swish = torch.autograd.Function("SwishBackward")
function Swish.forward(ctx, x)
  ctx:save_for_backward(x)
  return x * torch.sigmoid(x)
end
function Swish.backward(ctx, g)
  local x = unpack(ctx.saved_tensors)
  local s = torch.sigmoid(x)
  return g * (s * (1 + x * (1 - s)))
end

-- Straight-through estimator: round in forward, pass the gradient through unchanged.
local STE = torch.autograd.Function { name = "RoundSTE",
  forward = function(_, x) return torch.round(x) end,
  backward = function(_, g) return g end }

describe("torch.autograd.Function", function()
  it("fused swish matches silu's values and gradients", function()
    local x = torch.randn(6, 7, { requires_grad = true })
    local y = Swish.apply(x)
    assert.equal("SwishBackward", y.grad_fn:name())
    local w = torch.randn(6, 7)
    ;(y * w):sum():backward()
    local x2 = x:detach():requires_grad_()
    local y2 = F.silu(x2)
    ;(y2 * w):sum():backward()
    assert.is_true(close(y:detach(), y2:detach()))
    assert.is_true(close(x.grad, x2.grad))
  end)

  it("swish gradients match PyTorch's silu", function()
    local pytorch = require "spec.support.pytorch"
    if not pytorch.available() then pending("PyTorch not available") return end
    local vals = { -3.0, -0.5, 0.0, 0.25, 2.0, 5.0 }
    local x = torch.tensor(vals, { dtype = torch.float64, requires_grad = true })
    Swish.apply(x):sum():backward()
    local ref = pytorch.run [[
x = torch.tensor([-3.0, -0.5, 0.0, 0.25, 2.0, 5.0], dtype=torch.float64, requires_grad=True)
torch.nn.functional.silu(x).sum().backward()
print(json.dumps(x.grad.tolist()))]]
    local got = x.grad:tolist()
    for i = 1, #vals do assert.is_true(math.abs(got[i] - ref[i]) < 1e-12) end
  end)

  it("a straight-through estimator rounds forward and passes the gradient through", function()
    local x = torch.tensor({ 0.2, 1.7, -2.4 }, { requires_grad = true })
    local y = STE.apply(x)
    assert.same({ 0, 2, -2 }, y:detach():tolist())
    ;(y * torch.tensor({ 1, 2, 3 })):sum():backward()
    assert.same({ 1, 2, 3 }, x.grad:tolist())
    -- built-in round has zero gradient: the STE is what makes quantisation trainable
    local x2 = x:detach():requires_grad_()
    torch.round(x2):sum():backward()
    assert.same({ 0, 0, 0 }, x2.grad:tolist())
  end)

  it("sets needs_input_grad and passes non-tensor arguments through", function()
    local seen
    local Scale = torch.autograd.Function("Scale")
    function Scale.forward(ctx, x, k, y)
      seen = { ctx.needs_input_grad[1], ctx.needs_input_grad[2], ctx.needs_input_grad[3] }
      ctx.k = k
      return x * k + y
    end
    function Scale.backward(ctx, g) return g * ctx.k, nil, g end
    local x = torch.randn(3, { requires_grad = true })
    local y = torch.randn(3)
    Scale.apply(x, 3, y):sum():backward()
    assert.same({ true, false, false }, seen)
    assert.same({ 3, 3, 3 }, x.grad:tolist())
    -- under no_grad nothing is recorded
    local out = torch.no_grad(function() return Scale.apply(x, 2, y) end)
    assert.is_false(out.requires_grad)
  end)

  it("handles multiple outputs, an unused one getting zeros", function()
    local got
    local Split = torch.autograd.Function("Split")
    function Split.forward(_, x) return x * 2, x * 3 end
    function Split.backward(_, ga, gb)
      got = gb:clone()
      return ga * 2 + gb * 3
    end
    local x = torch.randn(4, { requires_grad = true })
    local a, b = Split.apply(x)
    assert.is_true(b.requires_grad)
    a:sum():backward()
    assert.same({ 0, 0, 0, 0 }, got:tolist())
    assert.same({ 2, 2, 2, 2 }, x.grad:tolist())
  end)

  it("mark_dirty: an in-place Function rebases the input's history", function()
    local AddOne = torch.autograd.Function("AddOneInplace")
    function AddOne.forward(ctx, x)
      x:add_(1)
      ctx:mark_dirty(x)
      return x
    end
    function AddOne.backward(_, g) return g end
    local a = torch.randn(3, { requires_grad = true })
    local b = a * 2
    local c = AddOne.apply(b)
    assert.equal("AddOneInplace", b.grad_fn:name())
    assert.is_true(c:is_same(b) or close(c:detach(), b:detach()))
    c:sum():backward()
    assert.same({ 2, 2, 2 }, a.grad:tolist())
    -- a leaf that requires grad cannot be modified in place
    assert.has_error(function() AddOne.apply(torch.randn(2, { requires_grad = true })) end)
  end)

  it("mark_non_differentiable: that output does not require grad", function()
    local Sort = torch.autograd.Function("SortWithIndex")
    function Sort.forward(ctx, x)
      local v, i = torch.sort(x)
      ctx:mark_non_differentiable(i)
      ctx:save_for_backward(i)
      return v, i
    end
    function Sort.backward(ctx, gv)
      local i = ctx.saved_tensors[1]
      return torch.zeros_like(gv):scatter(0, i, gv)
    end
    local x = torch.tensor({ 3.5, 1.5, 2.5 }, { requires_grad = true })
    local v, i = Sort.apply(x)
    assert.is_true(v.requires_grad)
    assert.is_false(i.requires_grad)
    ;(v * torch.tensor({ 1.0, 2.0, 3.0 })):sum():backward()
    assert.same({ 3, 1, 2 }, x.grad:tolist())
  end)

  it("an error in backward is a Lua error at backward(), with its message", function()
    local Bad = torch.autograd.Function { name = "Bad",
      forward = function(_, x) return x * 2 end,
      backward = function() error("planted failure in backward") end }
    local x = torch.randn(3, { requires_grad = true })
    local ok, err = pcall(function() Bad.apply(x):sum():backward() end)
    assert.is_false(ok)
    assert.matches("planted failure in backward", err)
    -- the engine is usable afterwards
    Swish.apply(x):sum():backward()
    assert.is_not_nil(x.grad)
  end)

  it("a wrongly shaped gradient from backward is an error", function()
    local Bad = torch.autograd.Function { name = "BadShape",
      forward = function(_, x) return x * 2 end,
      backward = function() return torch.ones(7) end }
    local x = torch.randn(3, { requires_grad = true })
    local ok, err = pcall(function() Bad.apply(x):sum():backward() end)
    assert.is_false(ok)
    assert.matches("shape", err)
  end)

  it("a second backward without retain_graph is an error; with it, gradients accumulate", function()
    local x = torch.randn(3, { requires_grad = true })
    local y = Swish.apply(x):sum()
    y:backward({ retain_graph = true })
    local g1 = x.grad:clone()
    y:backward()
    assert.is_true(close(x.grad, g1 * 2))
    assert.has_error(function() y:backward() end)
  end)

  it("works through torch.autograd.grad, with create_graph giving a second derivative", function()
    local x = torch.randn(5, { dtype = torch.float64, requires_grad = true })
    local g = torch.autograd.grad({ Swish.apply(x):sum() }, { x }, { create_graph = true })[1]
    local s = torch.sigmoid(x:detach())
    assert.is_true(close(g:detach(), s * (1 + x:detach() * (1 - s)), 1e-12))
    -- backward of Swish uses differentiable ops, so g has a graph back to x
    local gg = torch.autograd.grad({ g:sum() }, { x })[1]
    local x2 = x:detach():requires_grad_()
    local ref = torch.autograd.grad({ F.silu(x2):sum() }, { x2 }, { create_graph = true })[1]
    local ref2 = torch.autograd.grad({ ref:sum() }, { x2 })[1]
    assert.is_true(close(gg, ref2, 1e-10))
  end)

  it("double backward through a Function whose backward applies a Function", function()
    -- Square's backward uses Double (another Lua Function): with create_graph the first-order
    -- gradient carries Lua nodes, and the second backward runs through them.
    local Double = torch.autograd.Function { name = "Double",
      forward = function(_, t) return t * 2 end, backward = function(_, g) return g * 2 end }
    local Square = torch.autograd.Function("Square")
    function Square.forward(ctx, x) ctx:save_for_backward(x); return x * x end
    function Square.backward(ctx, g) return g * Double.apply(ctx.saved_tensors[1]) end
    local x = torch.randn(4, { dtype = torch.float64, requires_grad = true })
    for _ = 1, 3 do
      local g = torch.autograd.grad({ Square.apply(x):sum() }, { x }, { create_graph = true })[1]
      assert.is_true(close(g:detach(), 2 * x:detach()))
      local gg = torch.autograd.grad({ g:sum() }, { x })[1]
      assert.same({ 2, 2, 2, 2 }, gg:tolist())
      collectgarbage()
    end
  end)

  it("a backward may run its own backward (reentrant, on the waiting engine thread)", function()
    local Inner = torch.autograd.Function("ReentrantSquare")
    function Inner.forward(ctx, x)
      ctx:save_for_backward(x)
      return x * x
    end
    function Inner.backward(ctx, g)
      -- backward runs with grad mode off (create_graph=false), as in PyTorch: record explicitly
      return torch.enable_grad(function()
        local x = ctx.saved_tensors[1]:detach():requires_grad_()
        -- a nested graph that itself contains a Lua Function and a hook
        local hooked = 0
        local y = Swish.apply(x)
        y:register_hook(function() hooked = hooked + 1 end)
        local gx = torch.autograd.grad({ (x * x):sum() + y:sum() * 0 }, { x })[1]
        assert(hooked == 1, "hook in nested backward did not run")
        return g * gx
      end)
    end
    local x = torch.randn(4, { requires_grad = true })
    Inner.apply(x):sum():backward()
    assert.is_true(close(x.grad, 2 * x:detach()))
  end)
end)

describe("Function lifetime", function()
  it("drops Lua contexts once their graphs are used or freed (no leak over many steps)", function()
    local S = debug.getregistry()["ltorch.autograd_function"]
    local function count() local n = 0 for _ in pairs(S.contexts) do n = n + 1 end return n end
    torch.collect()
    require("torch.autograd_function").drain()
    local before = count()
    local x = torch.randn(8, { requires_grad = true })
    for i = 1, 300 do
      local y = Swish.apply(x)
      if i % 3 == 0 then y:sum():backward() end   -- others are dropped without backward
      local h = x:register_hook(function(g) return g end)
      if i % 2 == 0 then (x * 2):sum():backward() end
      h:remove()
    end
    torch.collect()
    require("torch.autograd_function").drain()
    assert.equal(before, count())
  end)
end)

describe("x:register_hook", function()
  it("sees the gradient, may replace it, and can be removed", function()
    local x = torch.randn(3, { requires_grad = true })
    local seen
    local h1 = x:register_hook(function(g) seen = g:clone() end)
    local h2 = x:register_hook(function(g) return g * 10 end)
    ;(x * 2):sum():backward()
    assert.same({ 2, 2, 2 }, seen:tolist())
    assert.same({ 20, 20, 20 }, x.grad:tolist())
    h2:remove()
    h2:remove()  -- idempotent
    x.grad = nil
    ;(x * 2):sum():backward()
    assert.same({ 2, 2, 2 }, x.grad:tolist())
    h1:remove()
  end)

  it("works on intermediate tensors and inside a Function's graph", function()
    local x = torch.randn(3, { requires_grad = true })
    local y = Swish.apply(x)
    y:register_hook(function(g) return g * 0 end)
    y:sum():backward()
    assert.same({ 0, 0, 0 }, x.grad:tolist())
  end)

  it("a hook that raises gives a Lua error at backward()", function()
    local x = torch.randn(3, { requires_grad = true })
    x:register_hook(function() error("planted hook failure") end)
    local ok, err = pcall(function() (x * 3):sum():backward() end)
    assert.is_false(ok)
    assert.matches("planted hook failure", err)
  end)

  it("a hook returning a non-tensor is an error", function()
    local x = torch.randn(3, { requires_grad = true })
    x:register_hook(function() return 42 end)
    assert.has_error(function() (x * 3):sum():backward() end)
  end)

  it("needs a tensor that requires grad", function()
    assert.has_error(function() torch.randn(2):register_hook(function() end) end)
  end)

  it("an engine run not started by ltorch errors instead of deadlocking", function()
    local x = torch.randn(3, { requires_grad = true })
    local y = Swish.apply(x):sum()
    local status = C.lt_tensor_backward(y.h, nil, -1, 0)
    assert.are_not.equal(0, status)
    assert.matches("did not start", require("torch._C").last_error())
  end)
end)
