--[[
  spec/nn/activations_extra_spec.lua — the activation modules added for issue #24 (CELU, GLU,
  Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LogSigmoid, Mish, PReLU, RReLU, ReLU6, SELU,
  Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold) and `inplace=True` on
  the older ones (ReLU, SiLU, LeakyReLU, ELU), lua/torch/nn/activations.lua, against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the default init bit for bit (PReLU's weight),
  state_dict keys, the repr, and outputs and gradients on identical inputs; cases use positional
  and keyword constructor forms. An in-place module runs after nn.Softsign in a Sequential, on
  both sides, so that it works on a non-leaf tensor as autograd requires (its backward goes
  through the in-place op). RReLU runs in eval mode (the mean slope) and in training mode (the
  same seed gives PyTorch's slopes: same generator, same ATen op). Also: in-place modules
  overwrite their input, RReLU's training slopes lie in [lower, upper], and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5, float64
  1e-12 (both sides run the same libtorch kernels; observed bit-identical on CPU).

  Run:  build/ltorch /usr/bin/busted spec/nn/activations_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local X = { { 3, 4 } }
local CASES = {}

-- add(name, lua constructor, python constructor[, extra case fields])
local function add(name, lua, py, extra)
  local case = { name = name, lua = lua, py = py, inputs = X }
  for k, v in pairs(extra or {}) do case[k] = v end
  CASES[#CASES + 1] = case
end

-- The module after nn.Softsign (a non-leaf input for an in-place op).
local function inplace(name, lua, py, extra)
  add(name, function() return nn.Sequential(nn.Softsign(), lua()) end, "nn.Sequential(nn.Softsign(), " .. py .. ")",
    extra)
end

-- older modules, now honouring inplace
inplace("ReLU(True)", function() return nn.ReLU(true) end, "nn.ReLU(True)")
inplace("SiLU(inplace=True)", function() return nn.SiLU({ inplace = true }) end, "nn.SiLU(inplace=True)")
inplace("LeakyReLU(0.2, inplace=True)", function() return nn.LeakyReLU(0.2, { inplace = true }) end,
  "nn.LeakyReLU(0.2, inplace=True)")
inplace("ELU(inplace=True)", function() return nn.ELU({ inplace = true }) end, "nn.ELU(inplace=True)")
add("ELU()", function() return nn.ELU() end, "nn.ELU()")
add("LeakyReLU(negative_slope=0.25)", function() return nn.LeakyReLU({ negative_slope = 0.25 }) end,
  "nn.LeakyReLU(negative_slope=0.25)")

-- CELU, SELU, Mish, Hardsigmoid, Hardswish, ReLU6
add("CELU()", function() return nn.CELU() end, "nn.CELU()")
add("CELU(0.5)", function() return nn.CELU(0.5) end, "nn.CELU(0.5)")
inplace("CELU(alpha=1.5, inplace=True)", function() return nn.CELU({ alpha = 1.5, inplace = true }) end,
  "nn.CELU(alpha=1.5, inplace=True)")
add("SELU()", function() return nn.SELU() end, "nn.SELU()")
inplace("SELU(True)", function() return nn.SELU(true) end, "nn.SELU(True)")
add("Mish()", function() return nn.Mish() end, "nn.Mish()")
inplace("Mish(inplace=True)", function() return nn.Mish({ inplace = true }) end, "nn.Mish(inplace=True)")
add("Hardsigmoid()", function() return nn.Hardsigmoid() end, "nn.Hardsigmoid()", { inputs = { { 4, 8 } } })
inplace("Hardsigmoid(True)", function() return nn.Hardsigmoid(true) end, "nn.Hardsigmoid(True)")
add("Hardswish()", function() return nn.Hardswish() end, "nn.Hardswish()", { inputs = { { 4, 8 } } })
inplace("Hardswish(inplace=True)", function() return nn.Hardswish({ inplace = true }) end, "nn.Hardswish(inplace=True)")
add("ReLU6()", function() return nn.ReLU6() end, "nn.ReLU6()", { inputs = { { 4, 8 } } })
inplace("ReLU6(True)", function() return nn.ReLU6(true) end, "nn.ReLU6(True)")

-- Hardtanh, Threshold
add("Hardtanh()", function() return nn.Hardtanh() end, "nn.Hardtanh()")
add("Hardtanh(-0.5, 1.5)", function() return nn.Hardtanh(-0.5, 1.5) end, "nn.Hardtanh(-0.5, 1.5)")
inplace("Hardtanh(min_val=-0.25, max_val=0.5, inplace=True)",
  function() return nn.Hardtanh({ min_val = -0.25, max_val = 0.5, inplace = true }) end,
  "nn.Hardtanh(min_val=-0.25, max_val=0.5, inplace=True)")
add("Hardtanh(min_value=-0.5) (deprecated spelling)", function() return nn.Hardtanh({ min_value = -0.5 }) end,
  "nn.Hardtanh(min_value=-0.5)")
add("Threshold(0.1, 20.0)", function() return nn.Threshold(0.1, 20.0) end, "nn.Threshold(0.1, 20.0)")
inplace("Threshold(threshold=-0.5, value=0.25, inplace=True)",
  function() return nn.Threshold({ threshold = -0.5, value = 0.25, inplace = true }) end,
  "nn.Threshold(threshold=-0.5, value=0.25, inplace=True)")

-- shrinks, Softplus, Softsign, Tanhshrink, LogSigmoid
add("Hardshrink()", function() return nn.Hardshrink() end, "nn.Hardshrink()")
add("Hardshrink(lambd=0.75)", function() return nn.Hardshrink({ lambd = 0.75 }) end, "nn.Hardshrink(lambd=0.75)")
add("Softshrink()", function() return nn.Softshrink() end, "nn.Softshrink()")
add("Softshrink(0.25)", function() return nn.Softshrink(0.25) end, "nn.Softshrink(0.25)")
add("Softplus()", function() return nn.Softplus() end, "nn.Softplus()")
add("Softplus(2.0, 1.5)", function() return nn.Softplus(2.0, 1.5) end, "nn.Softplus(2.0, 1.5)")
add("Softplus(beta=0.5) float64", function() return nn.Softplus({ beta = 0.5 }) end, "nn.Softplus(beta=0.5)",
  { dtype = "float64" })
add("Softsign()", function() return nn.Softsign() end, "nn.Softsign()")
add("Tanhshrink()", function() return nn.Tanhshrink() end, "nn.Tanhshrink()")
add("LogSigmoid()", function() return nn.LogSigmoid() end, "nn.LogSigmoid()")

-- GLU, Softmin, Softmax2d
add("GLU()", function() return nn.GLU() end, "nn.GLU()", { inputs = { { 3, 6 } } })
add("GLU(0)", function() return nn.GLU(0) end, "nn.GLU(0)", { inputs = { { 4, 3 } } })
add("GLU(dim=1) float64", function() return nn.GLU({ dim = 1 }) end, "nn.GLU(dim=1)", { inputs = { { 2, 4, 3 } },
  dtype = "float64" })
add("Softmin(1)", function() return nn.Softmin(1) end, "nn.Softmin(1)")
add("Softmin(dim=0)", function() return nn.Softmin({ dim = 0 }) end, "nn.Softmin(dim=0)", { inputs = { { 3, 4, 2 } } })
add("Softmin() (implicit dim, deprecated)", function() return nn.Softmin() end, "nn.Softmin()")
add("Softmax2d() batched", function() return nn.Softmax2d() end, "nn.Softmax2d()", { inputs = { { 2, 3, 2, 4 } } })
add("Softmax2d() unbatched", function() return nn.Softmax2d() end, "nn.Softmax2d()", { inputs = { { 3, 2, 4 } } })

-- PReLU: a learnt weight
add("PReLU()", function() return nn.PReLU() end, "nn.PReLU()", { inputs = { { 2, 3, 4 } } })
add("PReLU(3)", function() return nn.PReLU(3) end, "nn.PReLU(3)", { inputs = { { 2, 3, 4 } } })
add("PReLU(num_parameters=4, init=0.1)", function() return nn.PReLU({ num_parameters = 4, init = 0.1 }) end,
  "nn.PReLU(num_parameters=4, init=0.1)", { inputs = { { 2, 4 } } })
add("PReLU(2, dtype=float64)", function() return nn.PReLU(2, { dtype = torch.float64 }) end,
  "nn.PReLU(2, dtype=torch.float64)", { inputs = { { 3, 2, 2 } }, dtype = "float64" })

-- RReLU: eval (mean slope) and training (random slopes from the seeded generator)
add("RReLU() eval", function() return nn.RReLU() end, "nn.RReLU()", { steps = { "eval" } })
add("RReLU(0.1, 0.3) eval", function() return nn.RReLU(0.1, 0.3) end, "nn.RReLU(0.1, 0.3)", { steps = { "eval" } })
add("RReLU() train then eval", function() return nn.RReLU() end, "nn.RReLU()", { steps = { "train", "eval" } })
inplace("RReLU(lower=0.2, upper=0.5, inplace=True) eval",
  function() return nn.RReLU({ lower = 0.2, upper = 0.5, inplace = true }) end,
  "nn.RReLU(lower=0.2, upper=0.5, inplace=True)", { steps = { "eval" } })

describe("nn activation modules (issue #24)", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("inplace=True", function()
    local MODULES = {
      ReLU = function() return nn.ReLU(true) end, SiLU = function() return nn.SiLU(true) end,
      LeakyReLU = function() return nn.LeakyReLU(0.1, true) end, ELU = function() return nn.ELU(1.0, true) end,
      CELU = function() return nn.CELU(1.0, true) end, SELU = function() return nn.SELU(true) end,
      Mish = function() return nn.Mish(true) end, Hardsigmoid = function() return nn.Hardsigmoid(true) end,
      Hardswish = function() return nn.Hardswish(true) end, ReLU6 = function() return nn.ReLU6(true) end,
      Hardtanh = function() return nn.Hardtanh(-0.5, 0.5, true) end,
      Threshold = function() return nn.Threshold(0.1, 2.0, true) end,
      RReLU = function() return nn.RReLU(0.1, 0.3, true):eval() end,
    }
    for name, make in pairs(MODULES) do
      it(name .. " overwrites its input with the out-of-place result", function()
        local x = torch.randn(4, 5)
        local m = make()
        m.inplace = false
        local want = m(x:clone())
        m.inplace = true
        local y = m(x)
        assert.are.equal(x:data_ptr(), y:data_ptr())
        assert.is_true(x:equal(want))
      end)
    end

    it("prints inplace=True as PyTorch does", function()
      assert.are.equal("ReLU(inplace=True)", tostring(nn.ReLU(true)))
      assert.are.equal("ReLU()", tostring(nn.ReLU()))
    end)
  end)

  describe("RReLU in training", function()
    it("draws one slope per element in [lower, upper] and leaves positives alone", function()
      local x = -torch.rand(2000) - 0.5
      local y = nn.RReLU(0.1, 0.3)(x)
      local slopes = (y / x):tolist()
      local lo, hi = math.huge, -math.huge
      for _, s in ipairs(slopes) do lo, hi = math.min(lo, s), math.max(hi, s) end
      assert.is_true(lo >= 0.1 - 1e-6 and hi <= 0.3 + 1e-6, ("slopes in [%g, %g]"):format(lo, hi))
      assert.is_true(hi - lo > 0.15, "slopes should spread over [lower, upper]")
      local p = torch.rand(100) + 0.1
      assert.is_true(nn.RReLU()(p):equal(p))
      assert.are.same({ 3, 4, 5 }, nn.RReLU()(torch.randn(3, 4, 5)):size())
    end)
  end)

  describe("misuse", function()
    it("names the missing or mistyped argument", function()
      assert.matches("Threshold: missing required argument 'threshold'", err(nn.Threshold), 1, true)
      assert.matches("bad argument #1 to 'ELU' (number expected, got string)", err(nn.ELU, "a"), 1, true)
      assert.matches("bad argument #1 to 'ReLU' (boolean expected, got number)", err(nn.ReLU, 1), 1, true)
      assert.matches("bad argument #1 to 'GLU' (integer expected, got 1.5)", err(nn.GLU, 1.5), 1, true)
      assert.matches("bad argument #2 to 'PReLU' (number expected, got string)", err(nn.PReLU, 1, "x"), 1, true)
      assert.matches("Softplus: unexpected keyword argument 'betta' (did you mean 'beta'?)",
        err(nn.Softplus, { betta = 2.0 }), 1, true)
      assert.matches("Tanh: takes at most 0 positional arguments but 1 were given", err(nn.Tanh, 1), 1, true)
      assert.matches("LogSigmoid: takes at most 0 positional arguments", err(nn.LogSigmoid, true), 1, true)
    end)

    it("rejects bad settings as PyTorch does", function()
      assert.matches("Hardtanh: max_val (-1.0) must be greater than min_val (1.0)", err(nn.Hardtanh, 1.0, -1.0), 1, true)
      assert.matches("PReLU: num_parameters must be positive, got 0", err(nn.PReLU, 0), 1, true)
    end)

    it("rejects bad inputs, naming the module", function()
      assert.matches("Softmax2d: expected input to be 3D or 4D, got 2D instead", err(nn.Softmax2d(), torch.randn(2, 3)),
        1, true)
      assert.matches("ReLU: expected a Tensor input, got string", err(nn.ReLU(), "x"), 1, true)
      assert.matches("PReLU: expected a Tensor input, got nil", err(nn.PReLU()), 1, true)
      assert.matches("Halving dimension must be even", err(nn.GLU(), torch.randn(2, 3)), 1, true)
      assert.matches("Mismatch of parameter numbers and input channel size", err(nn.PReLU(3), torch.randn(2, 4)), 1, true)
    end)

    it("blames the caller's line", function()
      local ok, msg = pcall(function() local m = nn.Hardtanh(2.0, 1.0) return m end)
      assert.is_false(ok)
      assert.matches("activations_extra_spec%.lua:%d+: Hardtanh", msg)
      ok, msg = pcall(function() local y = nn.Softmax2d()(torch.randn(2)) return y end)
      assert.is_false(ok)
      assert.matches("activations_extra_spec%.lua:%d+: Softmax2d", msg)
    end)
  end)
end)
