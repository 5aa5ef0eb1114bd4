--[[
  spec/nn/linear_spec.lua — nn.Linear and nn.Identity (lua/torch/nn/linear.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the default init bit for bit (weight from
  kaiming_uniform_(a = sqrt(5)), then bias from U(-1/sqrt(in_features), +)), state_dict keys /
  order / shapes (PyTorch loads ours with strict=True), repr; then loads the same weights into
  both, feeds the same input and compares the output and the gradients of the input, weight and
  bias. Cases: 2-D input, bias = false (positional and keyword), extra leading dims, an
  unbatched 1-D input, built as float64, Identity. Also misuse errors, and F.linear's direct path
  (lt_linear) against the generated op: results, dtypes, gradients and every error's wording.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-5 + rtol 1e-5 (dot
  products); float64 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/linear_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-5, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "Linear(5, 3)", lua = function() return nn.Linear(5, 3) end, py = "nn.Linear(5, 3)",
    inputs = { { 4, 5 } }, steps = { "train", "eval" } },
  { name = "Linear no bias, positional", lua = function() return nn.Linear(4, 2, false) end,
    py = "nn.Linear(4, 2, False)", inputs = { { 3, 4 } } },
  { name = "Linear no bias, keywords", lua = function() return nn.Linear { in_features = 6, out_features = 2, bias = false } end,
    py = "nn.Linear(in_features=6, out_features=2, bias=False)", inputs = { { 2, 6 } } },
  { name = "Linear leading dims", lua = function() return nn.Linear(3, 4) end, py = "nn.Linear(3, 4)",
    inputs = { { 2, 5, 3 } } },
  { name = "Linear unbatched", lua = function() return nn.Linear(3, 2) end, py = "nn.Linear(3, 2)",
    inputs = { { 3 } } },
  { name = "Linear built as float64", lua = function() return nn.Linear(7, 3, { dtype = torch.float64 }) end,
    py = "nn.Linear(7, 3, dtype=torch.float64)", inputs = { { 2, 7 } }, dtype = "float64" },
  { name = "Linear(0, 3): zero-element weight left alone", lua = function() return nn.Linear(0, 3) end,
    py = "nn.Linear(0, 3)", inputs = { { 2, 0 } } },
  { name = "Identity", lua = function() return nn.Identity() end, py = "nn.Identity()", inputs = { { 2, 3 } } },
}

describe("nn.Linear", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and the shape for a wrong feature count or a 0-d input", function()
      local fc = nn.Linear(3, 2)
      assert.matches("Linear%(3%->2%): expected input with last dim 3, got %[4, 5%]", err(fc, torch.randn(4, 5)))
      assert.matches("Linear%(3%->2%): expected input with last dim 3, got %[%]", err(fc, torch.tensor(1.0)))
      assert.matches("Linear%(3%->2%): expected a Tensor input, got table", err(fc, { 1, 2, 3 }))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("Linear: missing required argument 'out_features'", err(nn.Linear, 3))
      assert.matches("Linear: expected in_features and out_features as integers", err(nn.Linear, 3, "2"))
      assert.matches("Linear: unexpected keyword argument 'bais' %(did you mean 'bias'%?%)",
        err(nn.Linear, 3, 2, { bais = false }))
      assert.matches("Linear: got multiple values for argument 'bias'", err(nn.Linear, 3, 2, false, { bias = true }))
    end)
  end)
end)

describe("torch.nn.functional.linear's direct path (lt_linear)", function()
  local F = nn.functional
  local generic = require("torch._dispatch").function_for("linear", "torch.nn.functional.linear")
  local x, w, b = torch.randn(2, 8), torch.randn(4, 8), torch.randn(4)

  it("gives the generated op's results, dtypes and gradients", function()
    local inputs = { { x, w, b }, { x, w }, { x[1], w, b }, { x:expand(3, 2, 8), w, b }, { x:double(), w:double() },
      { x:long(), w:long(), b:long() } }
    for i, a in ipairs(inputs) do
      local fast, slow = F.linear(a[1], a[2], a[3]), generic(a[1], a[2], a[3])
      assert.are.equal(slow.dtype, fast.dtype, "case " .. i)
      assert.is_true(fast:equal(slow), "case " .. i)
    end
    local wg, bg = w:clone():requires_grad_(), b:clone():requires_grad_()
    local y = F.linear(x, wg, bg)
    assert.are.equal("AddmmBackward0", y.grad_fn:name())
    y:sum():backward()
    local gw, gb = wg.grad:clone(), bg.grad:clone()
    wg.grad, bg.grad = nil, nil
    generic(x, wg, bg):sum():backward()
    assert.is_true(gw:equal(wg.grad) and gb:equal(bg.grad))
    assert.is_false(torch.no_grad(function() return F.linear(x, wg, bg) end).requires_grad)
  end)

  it("words every error as the generated op does, and leaves keywords and extra arguments to it", function()
    local freed = torch.randn(4)
    freed:free()
    local bad = {
      { x, torch.randn(4, 7), b }, { x, w, torch.randn(5) }, { x, w:double(), b }, { x, torch.tensor(2.0) },
      { x, w, freed }, { x, 3 }, { x, w, b, 5 },
    }
    for i, a in ipairs(bad) do
      local fast, slow = err(F.linear, unpack(a, 1, table.maxn(a))), err(generic, unpack(a, 1, table.maxn(a)))
      assert.is_truthy(fast, "case " .. i)
      assert.are.equal(slow, fast, "case " .. i)
    end
    assert.matches("^torch.nn.functional.linear: mat1 and mat2 shapes cannot be multiplied %(2x8 and 7x4%)",
      err(F.linear, x, torch.randn(4, 7)))
    assert.is_true(F.linear(x, w, { bias = b }):equal(generic(x, w, b)))
  end)
end)
