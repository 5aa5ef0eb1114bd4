--[[
  spec/autograd/gradcheck_spec.lua — torch.autograd.gradcheck (lua/torch/autograd_function.lua):
  float64 central finite differences against the autograd Jacobian.

  Covers: passes on a correct custom Function (fused swish) and on built-in ops with two inputs
  and two outputs; fails on a planted wrong backward (returns false plus a message naming the
  mismatch, or raises with raise_exception); rejects float32 inputs and calls without any input
  requiring grad.

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

  it("fails on a planted wrong backward, with a message", function()
    local ok, msg = torch.autograd.gradcheck(WrongSwish.apply, { leaf(5) })
    assert.is_false(ok)
    assert.matches("Jacobian mismatch", msg)
  end)

  it("raises on a wrong backward with raise_exception", function()
    assert.has_error(function()
      torch.autograd.gradcheck(WrongSwish.apply, { leaf(5) }, { raise_exception = true })
    end)
  end)

  it("wants float64 inputs and something to check", function()
    local ok, msg = torch.autograd.gradcheck(Swish.apply, { torch.randn(3, { requires_grad = true }) })
    assert.is_false(ok)
    assert.matches("float64", msg)
    ok = torch.autograd.gradcheck(Swish.apply, { torch.randn(3, { dtype = f64 }) })
    assert.is_false(ok)
  end)
end)
