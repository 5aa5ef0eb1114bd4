--[[
  spec/nn/bilinear_spec.lua — nn.Bilinear (lua/torch/nn/bilinear.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the default init bit for bit (weight then
  bias from U(-1/sqrt(in1_features), +)), state_dict keys / order / shapes (PyTorch loads ours
  with strict=True), repr; then loads the same weights into both, feeds the same two inputs and
  compares the output and the gradients of both inputs, weight and bias. Cases: 2-D inputs,
  bias = false, extra leading dims, built as float64. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-5 + rtol 1e-5 (sums of
  in1 * in2 products); float64 1e-12. Observed on
  CPU: bit-identical (same libtorch, same kernels); the margin covers thread-count differences.

  Run:  build/ltorch /usr/bin/busted spec/nn/bilinear_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-5, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "Bilinear(3, 4, 5)", lua = function() return nn.Bilinear(3, 4, 5) end, py = "nn.Bilinear(3, 4, 5)",
    inputs = { { 2, 3 }, { 2, 4 } } },
  { name = "Bilinear no bias", lua = function() return nn.Bilinear(2, 3, 2, false) end, py = "nn.Bilinear(2, 3, 2, False)",
    inputs = { { 3, 2 }, { 3, 3 } } },
  { name = "Bilinear leading dims", lua = function() return nn.Bilinear(4, 2, 3) end, py = "nn.Bilinear(4, 2, 3)",
    inputs = { { 2, 3, 4 }, { 2, 3, 2 } } },
  { name = "Bilinear built as float64", lua = function() return nn.Bilinear(5, 3, 2, { dtype = torch.float64 }) end,
    py = "nn.Bilinear(5, 3, 2, dtype=torch.float64)", inputs = { { 4, 5 }, { 4, 3 } }, dtype = "float64" },
}

describe("nn.Bilinear", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and both shapes", function()
      local bl = nn.Bilinear(3, 4, 5)
      assert.are.equal("Bilinear(3, 4 -> 5): expected inputs of shapes (*, 3) and (*, 4) with the same leading dims, "
        .. "got [2, 4] and [2, 3]", err(bl, torch.randn(2, 4), torch.randn(2, 3)))
      assert.are.equal("Bilinear(3, 4 -> 5): expected inputs of shapes (*, 3) and (*, 4) with the same leading dims, "
        .. "got [2, 3] and [3, 4]", err(bl, torch.randn(2, 3), torch.randn(3, 4)))
      assert.are.equal("Bilinear(3, 4 -> 5): expected a floating-point input, got int64 of shape [2, 3]",
        err(bl, torch.zeros(2, 3, { dtype = torch.int64 }), torch.randn(2, 4)))
      -- libtorch's own check (PyTorch 2.11 raises the same text), with the module in front
      assert.matches("^Bilinear%(3, 4 %-> 5%): .*All tensors must have the same dtype, got input1: double, "
        .. "input2: double, weight: float, bias: float$", err(bl, torch.zeros(2, 3, { dtype = torch.float64 }),
        torch.zeros(2, 4, { dtype = torch.float64 })))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("Bilinear: missing required argument 'out_features'", err(nn.Bilinear, 3, 4))
      assert.matches("Bilinear: expected in1_features, in2_features, out_features as integers", err(nn.Bilinear, 3, 4, "5"))
      assert.matches("Bilinear: unexpected keyword argument 'bais' %(did you mean 'bias'%?%)",
        err(nn.Bilinear, 3, 4, 5, { bais = false }))
    end)
  end)
end)
