--[[
  spec/autograd/gradcheck_spec.lua — torch.autograd.gradcheck and gradgradcheck
  (lua/torch/gradcheck.lua): float64 central finite differences against the autograd Jacobian.

  Covers: passes on a correct custom Function (fused swish) and on built-in ops with two inputs
  and two outputs; on a planted wrong backward raises by default, as PyTorch does (and returns
  false plus a message naming the mismatch with raise_exception = false); rejects float32 inputs
  and calls without any input requiring grad; gradgradcheck passes on built-in ops and on a
  Function whose backward is differentiable, and catches a Function whose backward is right but
  whose second derivative is wrong (it detaches inside backward); gradcheck of a function that
  differentiates inside itself.

  Run:  build/ltorch /usr/bin/busted spec/autograd/gradcheck_spec.lua
]]
local torch = require "torch"

local f64 = torch.float64
local function leaf(...)
  local shape = { ... }
  shape[#shape + 1] = { dtype = f64, requires_grad = true }
  return torch.randn(unpack(shape))
end

local Swish = torch.autograd.Function("SwishBackward")
function Swish.forward(ctx, x)
  ctx:save_for_backward(x)
  return x * torch.sigmoid(x)
end
function Swish.backward(ctx, g)
  local x = ctx.saved_tensors[1]
  local s = torch.sigmoid(x)
  return g * (s * (1 + x * (1 - s)))
end

-- The planted bug: forgets the x*(1-s) term.
local WrongSwish = torch.autograd.Function("WrongSwishBackward")
WrongSwish.forward = Swish.forward
function WrongSwish.backward(ctx, g)
  return g * torch.sigmoid(ctx.saved_tensors[1])
end

describe("torch.autograd.gradcheck", function()
  it("passes on a correct custom Function", function()
    assert.is_true(torch.autograd.gradcheck(Swish.apply, { leaf(3, 4) }))
  end)

  it("passes on built-in ops with several inputs and outputs", function()
    local function f(a, b) return a:matmul(b), torch.tanh(a):sum() * b end
    assert.is_true(torch.autograd.gradcheck(f, { leaf(2, 3), leaf(3, 2) }))
  end)

  it("raises on a planted wrong backward by default, blaming the caller", function()
    local ok, err = pcall(torch.autograd.gradcheck, WrongSwish.apply, { leaf(5) })
    assert.is_false(ok)
    assert.matches("gradcheck: Jacobian mismatch", err)
    local line = debug.getinfo(1, "l").currentline
    local _, blamed = pcall(function() torch.autograd.gradcheck(WrongSwish.apply, { leaf(5) }) end)
    assert.matches("gradcheck_spec.lua:" .. (line + 1) .. ":", blamed)
  end)

  it("returns false and a message with raise_exception = false", function()
    local ok, msg = torch.autograd.gradcheck(WrongSwish.apply, { leaf(5) }, { raise_exception = false })
    assert.is_false(ok)
    assert.matches("Jacobian mismatch", msg)
  end)

  it("wants float64 inputs and something to check", function()
    local opts = { raise_exception = false }
    local ok, msg = torch.autograd.gradcheck(Swish.apply, { torch.randn(3, { requires_grad = true }) }, opts)
    assert.is_false(ok)
    assert.matches("float64", msg)
    ok = torch.autograd.gradcheck(Swish.apply, { torch.randn(3, { dtype = f64 }) }, opts)
    assert.is_false(ok)
    assert.has_error(function() torch.autograd.gradcheck(Swish.apply, { torch.randn(3, { dtype = f64 }) }) end)
  end)

  it("checks a function that differentiates inside itself", function()
    local function dcube(x)  -- d/dx sum(x^3) = 3x^2, itself differentiable
      return torch.autograd.grad({ (x ^ 3):sum() }, { x }, { create_graph = true })[1]
    end
    assert.is_true(torch.autograd.gradcheck(dcube, { leaf(4) }))
  end)
end)

-- Right first derivative, wrong second: backward detaches x, so d(backward)/dx is lost.
local DetachedSquare = torch.autograd.Function("DetachedSquareBackward")
function DetachedSquare.forward(ctx, x)
  ctx:save_for_backward(x)
  return x * x
end
function DetachedSquare.backward(ctx, g)
  return g * 2 * ctx.saved_tensors[1]:detach()
end

describe("torch.autograd.gradgradcheck", function()
  it("passes on built-in ops", function()
    local function f(a, b) return torch.tanh(a):matmul(b) * a:sum() end
    assert.is_true(torch.autograd.gradgradcheck(f, { leaf(2, 3), leaf(3, 2) }))
  end)

  it("passes on a Function whose backward is differentiable", function()
    assert.is_true(torch.autograd.gradgradcheck(Swish.apply, { leaf(3) }))
  end)

  it("takes grad_outputs", function()
    local g = torch.randn(3, { dtype = f64, requires_grad = true })
    assert.is_true(torch.autograd.gradgradcheck(function(x) return x:sin() * x end, { leaf(3) }, { g }))
  end)

  it("catches a wrong second derivative that gradcheck cannot see", function()
    assert.is_true(torch.autograd.gradcheck(DetachedSquare.apply, { leaf(3) }))
    local ok, err = pcall(torch.autograd.gradgradcheck, DetachedSquare.apply, { leaf(3) })
    assert.is_false(ok)
    assert.matches("gradcheck: ", err)
    local r, msg = torch.autograd.gradgradcheck(DetachedSquare.apply, { leaf(3) }, nil, { raise_exception = false })
    assert.is_false(r)
    assert.is_string(msg)
  end)
end)
