--[[
  spec/nn/pooling_spec.lua — nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d
  (lua/torch/nn/pooling.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the (empty) state_dict and the repr (sizes
  printed as given: `kernel_size=2` or `kernel_size=(3, 2)`, stride defaulting to the kernel),
  then feeds the same input to both and compares the output (and MaxPool2d's indices with
  return_indices) and the input gradient. Cases cover stride, padding, dilation, ceil_mode,
  count_include_pad, divisor_override, unbatched input, float64, adaptive sizes with a kept
  (None) dim. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5; float64
  1e-12. Observed on
  CPU: bit-identical (same libtorch, same kernels); the margin covers thread-count differences.

  Run:  build/ltorch /usr/bin/busted spec/nn/pooling_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "MaxPool2d(2)", lua = function() return nn.MaxPool2d(2) end, py = "nn.MaxPool2d(2)",
    inputs = { { 2, 3, 6, 6 } } },
  { name = "MaxPool2d(3, 2, 1)", lua = function() return nn.MaxPool2d(3, 2, 1) end, py = "nn.MaxPool2d(3, 2, 1)",
    inputs = { { 1, 2, 7, 7 } } },
  { name = "MaxPool2d tuples, dilation, ceil_mode",
    lua = function() return nn.MaxPool2d({ 3, 2 }, { stride = { 2, 1 }, dilation = { 1, 2 }, ceil_mode = true }) end,
    py = "nn.MaxPool2d((3, 2), stride=(2, 1), dilation=(1, 2), ceil_mode=True)", inputs = { { 1, 2, 8, 7 } } },
  { name = "MaxPool2d return_indices", lua = function() return nn.MaxPool2d(2, { return_indices = true }) end,
    py = "nn.MaxPool2d(2, return_indices=True)", inputs = { { 2, 2, 4, 5 } } },
  { name = "MaxPool2d unbatched, float64", lua = function() return nn.MaxPool2d(2, 1) end, py = "nn.MaxPool2d(2, 1)",
    inputs = { { 3, 4, 4 } }, dtype = "float64" },
  { name = "AvgPool2d(2)", lua = function() return nn.AvgPool2d(2) end, py = "nn.AvgPool2d(2)",
    inputs = { { 2, 3, 6, 6 } } },
  { name = "AvgPool2d(3, 2, 1)", lua = function() return nn.AvgPool2d(3, 2, 1) end, py = "nn.AvgPool2d(3, 2, 1)",
    inputs = { { 1, 2, 7, 7 } } },
  { name = "AvgPool2d ceil_mode, count_include_pad=False",
    lua = function() return nn.AvgPool2d({ 3, 2 }, { stride = 2, padding = 1, ceil_mode = true, count_include_pad = false }) end,
    py = "nn.AvgPool2d((3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
    inputs = { { 1, 2, 6, 7 } } },
  { name = "AvgPool2d divisor_override", lua = function() return nn.AvgPool2d(2, { divisor_override = 3 }) end,
    py = "nn.AvgPool2d(2, divisor_override=3)", inputs = { { 3, 4, 4 } } },
  { name = "AdaptiveAvgPool2d(1)", lua = function() return nn.AdaptiveAvgPool2d(1) end, py = "nn.AdaptiveAvgPool2d(1)",
    inputs = { { 2, 3, 5, 5 } } },
  { name = "AdaptiveAvgPool2d({3, 2})", lua = function() return nn.AdaptiveAvgPool2d({ 3, 2 }) end,
    py = "nn.AdaptiveAvgPool2d((3, 2))", inputs = { { 2, 3, 7, 5 } } },
  { name = "AdaptiveAvgPool2d({None, 2})", lua = function() return nn.AdaptiveAvgPool2d({ false, 2 }) end,
    py = "nn.AdaptiveAvgPool2d((None, 2))", inputs = { { 1, 2, 3, 5 } } },
  { name = "AdaptiveAvgPool2d unbatched, float64", lua = function() return nn.AdaptiveAvgPool2d(3) end,
    py = "nn.AdaptiveAvgPool2d(3)", inputs = { { 2, 7, 4 } }, dtype = "float64" },
}

describe("nn pooling layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and the shape for a wrong rank", function()
      assert.are.equal("MaxPool2d(kernel_size=2): expected input of shape (N, C, H, W) or (C, H, W), got [4, 4]",
        err(nn.MaxPool2d(2), torch.randn(4, 4)))
      assert.are.equal("AvgPool2d(kernel_size=(2, 3)): expected input of shape (N, C, H, W) or (C, H, W), got [1, 1, 1, 4, 4]",
        err(nn.AvgPool2d({ 2, 3 }), torch.randn(1, 1, 1, 4, 4)))
      assert.are.equal("AdaptiveAvgPool2d(output_size=(None, 2)): expected input of shape (N, C, H, W) or (C, H, W), got [5]",
        err(nn.AdaptiveAvgPool2d({ false, 2 }), torch.randn(5)))
    end)

    it("names the module for libtorch's size and dtype errors", function()
      assert.matches("^MaxPool2d%(kernel_size=5%): .*Output size is too small", err(nn.MaxPool2d(5), torch.randn(1, 3, 3)))
      assert.matches("^MaxPool2d%(kernel_size=2%): .*\"max_pool2d\" not implemented for 'Bool'",
        err(nn.MaxPool2d(2), torch.zeros(1, 4, 4, { dtype = torch.bool })))
      assert.matches("^MaxPool2d%(kernel_size=5%): .*Output size is too small",
        err(nn.MaxPool2d(5, { return_indices = true }), torch.randn(1, 3, 3)))
    end)

    it("takes integer inputs where libtorch has the kernel, as PyTorch 2.11", function()
      -- max_pool2d and avg_pool2d have integer CPU kernels (1.13 had none for max_pool2d)
      local x = torch.arange(16):reshape({ 1, 4, 4 })
      local y, idx = nn.MaxPool2d(2, { return_indices = true })(x)
      assert.are.equal(torch.int64, y.dtype)
      assert.are.same({ { { 5, 7 }, { 13, 15 } } }, y:tolist())
      assert.are.same({ { { 5, 7 }, { 13, 15 } } }, idx:tolist())
      assert.are.same({ { { 2, 4 }, { 10, 12 } } }, nn.AvgPool2d(2)(x):tolist())
      assert.matches("^AdaptiveAvgPool2d%(output_size=2%): .*not implemented for 'Long'",
        err(nn.AdaptiveAvgPool2d(2), x))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("MaxPool2d: kernel_size must be an integer or a table of 2 integers, got %(2, 2, 2%)",
        err(nn.MaxPool2d, { 2, 2, 2 }))
      assert.matches("AvgPool2d: unexpected keyword argument 'strid' %(did you mean 'stride'%?%)", err(nn.AvgPool2d, 2, { strid = 1 }))
      assert.matches("divisor_override must be a positive integer", err(nn.AvgPool2d, 2, { divisor_override = 0 }))
      assert.matches("AdaptiveAvgPool2d: output_size must be", err(nn.AdaptiveAvgPool2d, "big"))
    end)
  end)
end)
