--[[
  spec/nn/shape_modules_spec.lua — Unflatten, Fold, Unfold (lua/torch/nn/shape.lua) and
  PixelShuffle, PixelUnshuffle, ChannelShuffle, Upsample, UpsamplingNearest2d,
  UpsamplingBilinear2d (lua/torch/nn/vision.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks state_dict (empty), the repr, and outputs and
  input gradients on identical inputs. Cases cover positional and keyword forms, int and table
  sizes, negative dims, unbatched inputs, every Upsample mode with size, scale_factor (a number
  and a table), align_corners and recompute_scale_factor, and float64. Also Fold undoing Unfold
  (overlaps summed), and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5, float64
  1e-12 (same libtorch kernels; observed bit-identical on CPU).

  Run:  build/ltorch /usr/bin/busted spec/nn/shape_modules_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  -- Unflatten
  { name = "Unflatten(1, (2, 3))", lua = function() return nn.Unflatten(1, { 2, 3 }) end,
    py = "nn.Unflatten(1, (2, 3))", inputs = { { 4, 6, 2 } } },
  { name = "Unflatten(dim=-1, unflattened_size=(2, -1))",
    lua = function() return nn.Unflatten({ dim = -1, unflattened_size = { 2, -1 } }) end,
    py = "nn.Unflatten(dim=-1, unflattened_size=(2, -1))", inputs = { { 3, 8 } } },
  { name = "Unflatten torch.Size", lua = function() return nn.Unflatten(0, torch.zeros(2, 2):size()) end,
    py = "nn.Unflatten(0, torch.Size([2, 2]))", inputs = { { 4, 3 } } },
  -- PixelShuffle, PixelUnshuffle, ChannelShuffle
  { name = "PixelShuffle(2)", lua = function() return nn.PixelShuffle(2) end, py = "nn.PixelShuffle(2)",
    inputs = { { 2, 8, 3, 2 } } },
  { name = "PixelShuffle(upscale_factor=3) unbatched", lua = function() return nn.PixelShuffle({ upscale_factor = 3 }) end,
    py = "nn.PixelShuffle(upscale_factor=3)", inputs = { { 9, 2, 2 } } },
  { name = "PixelUnshuffle(2)", lua = function() return nn.PixelUnshuffle(2) end, py = "nn.PixelUnshuffle(2)",
    inputs = { { 2, 2, 4, 6 } } },
  { name = "PixelUnshuffle(downscale_factor=3) float64", lua = function() return nn.PixelUnshuffle({ downscale_factor = 3 })
    end, py = "nn.PixelUnshuffle(downscale_factor=3)", inputs = { { 1, 1, 3, 6 } }, dtype = "float64" },
  { name = "ChannelShuffle(2)", lua = function() return nn.ChannelShuffle(2) end, py = "nn.ChannelShuffle(2)",
    inputs = { { 2, 6, 2, 2 } } },
  { name = "ChannelShuffle(groups=3) 3-D", lua = function() return nn.ChannelShuffle({ groups = 3 }) end,
    py = "nn.ChannelShuffle(groups=3)", inputs = { { 2, 6, 3 } } },
  -- Unfold, Fold
  { name = "Unfold(3)", lua = function() return nn.Unfold(3) end, py = "nn.Unfold(3)", inputs = { { 2, 2, 5, 5 } } },
  { name = "Unfold tuples, keywords", lua = function() return nn.Unfold({ 2, 3 }, { dilation = { 1, 2 }, padding = 1,
      stride = { 2, 1 } }) end, py = "nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
    inputs = { { 1, 3, 6, 7 } } },
  { name = "Unfold positional, unbatched", lua = function() return nn.Unfold(2, 1, 0, 2) end,
    py = "nn.Unfold(2, 1, 0, 2)", inputs = { { 2, 4, 4 } } },
  { name = "Fold(4, 2)", lua = function() return nn.Fold(4, 2) end, py = "nn.Fold(4, 2)", inputs = { { 2, 8, 9 } } },
  { name = "Fold keywords, tuples", lua = function() return nn.Fold({ output_size = { 4, 5 }, kernel_size = { 2, 3 },
      stride = 2, padding = { 1, 1 } }) end,
    py = "nn.Fold(output_size=(4, 5), kernel_size=(2, 3), stride=2, padding=(1, 1))", inputs = { { 2, 6, 9 } } },
  { name = "Fold float64 unbatched", lua = function() return nn.Fold(3, 2, 1, 0, 1) end, py = "nn.Fold(3, 2, 1, 0, 1)",
    inputs = { { 8, 4 } }, dtype = "float64" },
  -- Upsample
  { name = "Upsample(scale_factor=2)", lua = function() return nn.Upsample({ scale_factor = 2 }) end,
    py = "nn.Upsample(scale_factor=2)", inputs = { { 1, 2, 3, 3 } } },
  { name = "Upsample(size=5) 1-D", lua = function() return nn.Upsample(5) end, py = "nn.Upsample(5)",
    inputs = { { 2, 2, 3 } } },
  { name = "Upsample size table, bilinear", lua = function() return nn.Upsample({ 4, 6 }, nil, "bilinear") end,
    py = "nn.Upsample((4, 6), None, 'bilinear')", inputs = { { 1, 2, 3, 3 } } },
  { name = "Upsample bilinear align_corners", lua = function() return nn.Upsample({ scale_factor = 1.5, mode = "bilinear",
      align_corners = true }) end, py = "nn.Upsample(scale_factor=1.5, mode='bilinear', align_corners=True)",
    inputs = { { 2, 1, 4, 4 } } },
  { name = "Upsample linear scale table", lua = function() return nn.Upsample({ scale_factor = { 2.5 }, mode = "linear" }) end,
    py = "nn.Upsample(scale_factor=(2.5,), mode='linear')", inputs = { { 2, 2, 4 } } },
  { name = "Upsample trilinear recompute", lua = function() return nn.Upsample({ scale_factor = { 1.5, 2, 1.7 },
      mode = "trilinear", recompute_scale_factor = true }) end,
    py = "nn.Upsample(scale_factor=(1.5, 2, 1.7), mode='trilinear', recompute_scale_factor=True)",
    inputs = { { 1, 1, 2, 3, 3 } } },
  { name = "Upsample bicubic float64", lua = function() return nn.Upsample({ size = { 5, 4 }, mode = "bicubic" }) end,
    py = "nn.Upsample(size=(5, 4), mode='bicubic')", inputs = { { 1, 2, 3, 3 } }, dtype = "float64" },
  { name = "Upsample nearest-exact", lua = function() return nn.Upsample({ scale_factor = 1.5, mode = "nearest-exact" }) end,
    py = "nn.Upsample(scale_factor=1.5, mode='nearest-exact')", inputs = { { 1, 2, 4, 4 } } },
  { name = "Upsample area", lua = function() return nn.Upsample({ size = 2, mode = "area" }) end,
    py = "nn.Upsample(size=2, mode='area')", inputs = { { 1, 2, 5, 5 } } },
  { name = "UpsamplingNearest2d(scale_factor=2)", lua = function() return nn.UpsamplingNearest2d({ scale_factor = 2 }) end,
    py = "nn.UpsamplingNearest2d(scale_factor=2)", inputs = { { 2, 2, 2, 3 } } },
  { name = "UpsamplingNearest2d((3, 5))", lua = function() return nn.UpsamplingNearest2d({ 3, 5 }) end,
    py = "nn.UpsamplingNearest2d((3, 5))", inputs = { { 1, 2, 2, 3 } } },
  { name = "UpsamplingBilinear2d(scale_factor=2)", lua = function() return nn.UpsamplingBilinear2d(nil, 2) end,
    py = "nn.UpsamplingBilinear2d(None, 2)", inputs = { { 1, 2, 3, 3 } } },
  { name = "UpsamplingBilinear2d(size=(4, 5))", lua = function() return nn.UpsamplingBilinear2d({ size = { 4, 5 } }) end,
    py = "nn.UpsamplingBilinear2d(size=(4, 5))", inputs = { { 2, 1, 3, 3 } } },
}

describe("nn shape and vision layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  it("Fold undoes Unfold, summing overlaps", function()
    local x = torch.randn(2, 3, 5, 6)
    local cols = nn.Unfold(2, { stride = 1 })(x)
    local back = nn.Fold({ 5, 6 }, 2)(cols)
    local counts = nn.Fold({ 5, 6 }, 2)(nn.Unfold(2)(torch.ones(2, 3, 5, 6)))
    assert.is_true((back / counts):allclose(x, { rtol = 1e-5, atol = 1e-6 }))
  end)

  describe("misuse", function()
    it("Unflatten checks its arguments as PyTorch does", function()
      assert.matches("Unflatten: unflattened_size must be tuple of ints, but found element of type string at pos 1",
        err(nn.Unflatten, 1, { 2, "3" }), 1, true)
      assert.matches("Unflatten: unflattened_size must be a tuple of ints, but found type number", err(nn.Unflatten, 1, 6),
        1, true)
      assert.matches("Unflatten: a string dim (named dimensions) is not supported", err(nn.Unflatten, "C", { { "a", 2 } }),
        1, true)
      assert.matches("Unflatten: missing required argument 'unflattened_size'", err(nn.Unflatten, 1), 1, true)
      assert.matches("Unflatten: .*unflatten", err(nn.Unflatten(1, { 2, 2 }), torch.randn(2, 6)))
    end)

    it("the shuffles take one positive integer", function()
      assert.matches("PixelShuffle: upscale_factor must be an integer, got 1.5", err(nn.PixelShuffle, 1.5), 1, true)
      assert.matches("PixelUnshuffle: downscale_factor must be positive, got 0", err(nn.PixelUnshuffle, 0), 1, true)
      assert.matches("ChannelShuffle: missing required argument 'groups'", err(nn.ChannelShuffle), 1, true)
      assert.matches("pixel_shuffle expects its input's 'channel' dimension to be divisible",
        err(nn.PixelShuffle(2), torch.randn(1, 3, 2, 2)), 1, true)
    end)

    it("Fold and Unfold check their sizes", function()
      assert.matches("Unfold: kernel_size must be an integer or a table of integers, got 2.5", err(nn.Unfold, 2.5),
        1, true)
      assert.matches("Fold: stride must be an integer or a table of integers", err(nn.Fold, 4, 2, { stride = "1" }), 1, true)
      assert.matches("Fold: missing required argument 'kernel_size'", err(nn.Fold, 4), 1, true)
      assert.matches("Unfold: expected a Tensor input, got nil", err(nn.Unfold(2)), 1, true)
    end)

    it("Upsample checks its settings and input", function()
      assert.matches("Upsample: size must be an integer or a table of integers", err(nn.Upsample, 2.5), 1, true)
      assert.matches("Upsample: scale_factor must be a number or a table of numbers",
        err(nn.Upsample, { scale_factor = "2" }), 1, true)
      assert.matches("Upsample: align_corners must be a boolean or nil, got number",
        err(nn.Upsample, { scale_factor = 2, align_corners = 1 }), 1, true)
      assert.matches("either size or scale_factor should be defined", err(nn.Upsample(), torch.randn(1, 1, 2, 2)), 1, true)
      assert.matches("align_corners option can only be set with the interpolating modes",
        err(nn.Upsample({ scale_factor = 2, align_corners = true }), torch.randn(1, 1, 2, 2)), 1, true)
      assert.matches("UpsamplingBilinear2d: takes at most 2 positional arguments",
        err(nn.UpsamplingBilinear2d, 2, nil, "nearest"), 1, true)
    end)

    it("blames the caller's line", function()
      local ok, msg = pcall(function() local m = nn.PixelShuffle(-1) return m end)
      assert.is_false(ok)
      assert.matches("shape_modules_spec%.lua:%d+: PixelShuffle", msg)
      ok, msg = pcall(function() local y = nn.Upsample(3)(torch.randn(2)) return y end)
      assert.is_false(ok)
      assert.matches("shape_modules_spec%.lua:%d+: ", msg)
    end)
  end)
end)
