--[[
  spec/nn/normalization_extra_spec.lua — BatchNorm3d, InstanceNorm1d/2d/3d
  (lua/torch/nn/normalization.lua), RMSNorm, LocalResponseNorm and CrossMapLRN2d
  (lua/torch/nn/normalization_extra.lua) against PyTorch.

  Each case builds the module on both sides after the same torch.manual_seed and checks
  (spec/support/layer_parity.lua): the default init bit for bit, state_dict keys / order / shapes
  (running_mean, running_var, num_batches_tracked where tracked; PyTorch loads ours with
  strict=True), repr; then the same weights and inputs through a sequence of train / eval steps,
  comparing every output, the input and parameter gradients and the buffers at the end (running
  statistics updated in training, used in eval; momentum None). CrossMapLRN2d is compared with
  PyTorch's own Function, hand-written backward included. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-5 + rtol 1e-5 (the
  statistics reduce in a different order with another thread count); float64 atol 1e-12 + rtol 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/normalization_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-5, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local TTE = { "train", "train", "eval" }

local CASES = {
  -- BatchNorm3d
  { name = "BatchNorm3d(3)", lua = function() return nn.BatchNorm3d(3) end, py = "nn.BatchNorm3d(3)",
    inputs = { { 2, 3, 3, 2, 3 } }, steps = TTE },
  { name = "BatchNorm3d momentum None, no affine", lua = function() return nn.BatchNorm3d(2, 1e-3, false, false) end,
    py = "nn.BatchNorm3d(2, 1e-3, None, False)", inputs = { { 2, 2, 2, 2, 3 } }, steps = TTE },
  { name = "BatchNorm3d no running stats, float64",
    lua = function() return nn.BatchNorm3d(2, { track_running_stats = false, dtype = torch.float64 }) end,
    py = "nn.BatchNorm3d(2, track_running_stats=False, dtype=torch.float64)", inputs = { { 2, 2, 2, 3, 2 } },
    steps = { "train", "eval" }, dtype = "float64" },
  -- InstanceNorm
  { name = "InstanceNorm1d(3)", lua = function() return nn.InstanceNorm1d(3) end, py = "nn.InstanceNorm1d(3)",
    inputs = { { 2, 3, 6 } }, steps = { "train", "eval" } },
  { name = "InstanceNorm1d affine, tracked", lua = function() return nn.InstanceNorm1d(3, 1e-5, 0.2, true, true) end,
    py = "nn.InstanceNorm1d(3, 1e-5, 0.2, True, True)", inputs = { { 2, 3, 5 } }, steps = TTE },
  { name = "InstanceNorm1d unbatched, tracked",
    lua = function() return nn.InstanceNorm1d(2, { track_running_stats = true }) end,
    py = "nn.InstanceNorm1d(2, track_running_stats=True)", inputs = { { 2, 7 } }, steps = TTE },
  { name = "InstanceNorm2d affine", lua = function() return nn.InstanceNorm2d(3, { affine = true }) end,
    py = "nn.InstanceNorm2d(3, affine=True)", inputs = { { 2, 3, 4, 3 } } },
  { name = "InstanceNorm2d momentum None, tracked",
    lua = function() return nn.InstanceNorm2d(2, { momentum = false, track_running_stats = true }) end,
    py = "nn.InstanceNorm2d(2, momentum=None, track_running_stats=True)", inputs = { { 2, 2, 3, 3 } }, steps = TTE },
  { name = "InstanceNorm3d affine, tracked, float64",
    lua = function() return nn.InstanceNorm3d(2, { affine = true, track_running_stats = true, eps = 1e-3 }) end,
    py = "nn.InstanceNorm3d(2, affine=True, track_running_stats=True, eps=1e-3)", inputs = { { 2, 2, 2, 3, 2 } },
    steps = TTE, dtype = "float64" },
  { name = "InstanceNorm3d unbatched", lua = function() return nn.InstanceNorm3d(2) end, py = "nn.InstanceNorm3d(2)",
    inputs = { { 2, 2, 3, 2 } } },
  -- RMSNorm
  { name = "RMSNorm(5)", lua = function() return nn.RMSNorm(5) end, py = "nn.RMSNorm(5)", inputs = { { 3, 5 } } },
  { name = "RMSNorm({2, 3}, eps, no affine)", lua = function() return nn.RMSNorm({ 2, 3 }, 1e-6, false) end,
    py = "nn.RMSNorm((2, 3), 1e-6, False)", inputs = { { 4, 2, 3 } } },
  { name = "RMSNorm keyword eps, float64", lua = function() return nn.RMSNorm({ 4 }, { eps = 1e-3, dtype = torch.float64 }) end,
    py = "nn.RMSNorm([4], eps=1e-3, dtype=torch.float64)", inputs = { { 2, 3, 4 } }, dtype = "float64" },
  -- LocalResponseNorm, CrossMapLRN2d
  { name = "LocalResponseNorm(3), 3-D", lua = function() return nn.LocalResponseNorm(3) end,
    py = "nn.LocalResponseNorm(3)", inputs = { { 2, 5, 4 } } },
  { name = "LocalResponseNorm positional, 4-D", lua = function() return nn.LocalResponseNorm(2, 1e-2, 0.5, 2.5) end,
    py = "nn.LocalResponseNorm(2, 1e-2, 0.5, 2.5)", inputs = { { 2, 4, 3, 3 } } },
  { name = "LocalResponseNorm keyword, 5-D, float64", lua = function() return nn.LocalResponseNorm(4, { beta = 0.9 }) end,
    py = "nn.LocalResponseNorm(4, beta=0.9)", inputs = { { 1, 5, 2, 2, 3 } }, dtype = "float64" },
  { name = "CrossMapLRN2d(3)", lua = function() return nn.CrossMapLRN2d(3) end, py = "nn.CrossMapLRN2d(3)",
    inputs = { { 2, 4, 3, 3 } } },
  -- k: float in PyTorch's signature, so the Lua 2 prints as the float 2.0 (see spec/nn/repr_spec.lua)
  { name = "CrossMapLRN2d(5, ...) wide window", lua = function() return nn.CrossMapLRN2d(5, 1e-1, 0.6, 2) end,
    py = "nn.CrossMapLRN2d(5, 1e-1, 0.6, 2.0)", inputs = { { 2, 7, 2, 3 } } },
  { name = "CrossMapLRN2d(4) keyword, float64", lua = function() return nn.CrossMapLRN2d(4, { alpha = 0.5 }) end,
    py = "nn.CrossMapLRN2d(4, alpha=0.5)", inputs = { { 1, 6, 2, 2 } }, dtype = "float64" },
}

describe("nn BatchNorm3d, InstanceNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and the expected input", function()
      assert.are.equal("BatchNorm3d(3): expected input of shape (N, 3, D, H, W), got [2, 3, 4, 4]",
        err(nn.BatchNorm3d(3), torch.randn(2, 3, 4, 4)))
      assert.are.equal("InstanceNorm2d(3): expected 3D or 4D input (got 2D input)", err(nn.InstanceNorm2d(3), torch.randn(3, 4)))
      assert.are.equal("InstanceNorm1d(3): expected input's size at dim=1 to match num_features (3), but got: 4.",
        err(nn.InstanceNorm1d(3, { affine = true }), torch.randn(2, 4, 5)))
      assert.matches("InstanceNorm1d%(3%): .*Expected more than 1 spatial element when training",
        err(nn.InstanceNorm1d(3), torch.randn(2, 3, 1)))
      assert.are.equal("RMSNorm((2, 3)): expected input of shape (*, 2, 3), got [3, 2]", err(nn.RMSNorm({ 2, 3 }), torch.randn(3, 2)))
      assert.are.equal("CrossMapLRN2d(3): Expected input to be 4D, got 3D instead.", err(nn.CrossMapLRN2d(3), torch.randn(2, 3, 3)))
      assert.matches("LocalResponseNorm%(3%): .*Expected 3D or higher dimensionality input %(got 2 dimensions%)",
        err(nn.LocalResponseNorm(3), torch.randn(2, 3)))
      assert.matches("LocalResponseNorm%(3%): expected a floating%-point input, got int64",
        err(nn.LocalResponseNorm(3), torch.zeros(1, 2, 3, { dtype = torch.int64 })))
    end)

    it("warns when a non-affine InstanceNorm sees another channel count, as PyTorch", function()
      local A = require "torch.nn._fargs"
      local saved, got = A.warn, nil
      A.warn = function(msg) got = msg end
      local y = nn.InstanceNorm1d(3)(torch.randn(2, 4, 5))
      A.warn = saved
      assert.are.same({ 2, 4, 5 }, { unpack(y:size()) })
      assert.matches("input's size at dim=1 does not match num_features", got)
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("BatchNorm3d: num_features must be a positive integer", err(nn.BatchNorm3d, 0))
      assert.matches("InstanceNorm3d: unexpected keyword argument 'afine' %(did you mean 'affine'%?%)",
        err(nn.InstanceNorm3d, 2, { afine = true }))
      assert.matches("RMSNorm: eps must be a number or nil", err(nn.RMSNorm, 4, "small"))
      assert.matches("RMSNorm: normalized_shape must be", err(nn.RMSNorm, { 2, -1 }))
      assert.matches("LocalResponseNorm: size must be a positive integer", err(nn.LocalResponseNorm, 0))
      assert.matches("CrossMapLRN2d: got multiple values for argument 'alpha'", err(nn.CrossMapLRN2d, 3, 1e-3, { alpha = 1 }))
      assert.matches("LocalResponseNorm: missing required argument 'size'", err(nn.LocalResponseNorm))
    end)
  end)
end)
