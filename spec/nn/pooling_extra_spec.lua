--[[
  spec/nn/pooling_extra_spec.lua — MaxPool1d/3d, AvgPool1d/3d, LPPool1d/2d/3d
  (lua/torch/nn/pooling.lua), AdaptiveAvgPool1d/3d, AdaptiveMaxPool1d/2d/3d
  (lua/torch/nn/pooling_adaptive.lua), MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d
  (lua/torch/nn/pooling_unpool.lua) and F.fractional_max_pool{2,3}d(_with_indices)
  (lua/torch/nn/functional_pooling.lua) against PyTorch.

  Each case builds the module on both sides and checks (spec/support/layer_parity.lua): state_dict
  keys (FractionalMaxPool's _random_samples buffer when given), repr, and the outputs (indices
  too, for return_indices) and input gradients on the same inputs. Cases cover int and table
  sizes, stride / padding / dilation / ceil_mode / count_include_pad / divisor_override, kept
  (None) adaptive dims, unbatched input, float64, MaxUnpool with output_size, and
  FractionalMaxPool with given _random_samples and with samples drawn by torch.rand after the
  same seed (the draws must be PyTorch's). Also misuse errors.

  One pytorch.run computes every module reference. Tolerance: float32 atol 1e-6 + rtol 1e-5;
  float64 atol 1e-12 + rtol 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/pooling_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional
local parity = require "spec.support.layer_parity"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

-- Deterministic samples in [0, 1) of the given shape, exact in float32.
local function samples(shape, seed)
  local v = parity.values(shape, seed)
  local function fix(t)
    for i, e in ipairs(t) do
      if type(e) == "table" then fix(e) else t[i] = math.abs(e) / 2.0001 end
    end
    return t
  end
  return fix(v)
end
local S2 = samples({ 2, 2, 2 }, 5)
local S3 = samples({ 1, 2, 3 }, 9)

local CASES = {
  -- MaxPool1d, MaxPool3d
  { name = "MaxPool1d(3)", lua = function() return nn.MaxPool1d(3) end, py = "nn.MaxPool1d(3)", inputs = { { 2, 3, 10 } } },
  { name = "MaxPool1d stride, padding, dilation, ceil_mode", lua = function() return nn.MaxPool1d(3, 2, 1, 2, false, true) end,
    py = "nn.MaxPool1d(3, 2, 1, 2, False, True)", inputs = { { 1, 2, 11 } } },
  { name = "MaxPool1d return_indices, unbatched", lua = function() return nn.MaxPool1d(2, { return_indices = true }) end,
    py = "nn.MaxPool1d(2, return_indices=True)", inputs = { { 3, 8 } } },
  { name = "MaxPool3d(2)", lua = function() return nn.MaxPool3d(2) end, py = "nn.MaxPool3d(2)",
    inputs = { { 2, 2, 4, 4, 4 } } },
  { name = "MaxPool3d tuples, dilation, ceil_mode, indices",
    lua = function() return nn.MaxPool3d({ 2, 3, 2 }, { stride = { 1, 2, 2 }, padding = { 1, 1, 0 }, dilation = { 1, 1, 2 },
      ceil_mode = true, return_indices = true }) end,
    py = "nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(1, 1, 2), ceil_mode=True, "
      .. "return_indices=True)", inputs = { { 1, 2, 4, 5, 6 } } },
  { name = "MaxPool3d unbatched, float64", lua = function() return nn.MaxPool3d(2, 1) end, py = "nn.MaxPool3d(2, 1)",
    inputs = { { 2, 3, 3, 3 } }, dtype = "float64" },
  -- AvgPool1d, AvgPool3d
  { name = "AvgPool1d(3, 2, 1)", lua = function() return nn.AvgPool1d(3, 2, 1) end, py = "nn.AvgPool1d(3, 2, 1)",
    inputs = { { 2, 3, 9 } } },
  { name = "AvgPool1d ceil_mode, count_include_pad=False, unbatched",
    lua = function() return nn.AvgPool1d(3, { stride = 2, padding = 1, ceil_mode = true, count_include_pad = false }) end,
    py = "nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)", inputs = { { 2, 8 } } },
  { name = "AvgPool3d(2)", lua = function() return nn.AvgPool3d(2) end, py = "nn.AvgPool3d(2)",
    inputs = { { 1, 2, 4, 4, 4 } } },
  { name = "AvgPool3d tuples, padding, ceil_mode, divisor_override",
    lua = function() return nn.AvgPool3d({ 3, 2, 2 }, { 2, 1, 2 }, 1, true, false, 5) end,
    py = "nn.AvgPool3d((3, 2, 2), (2, 1, 2), 1, True, False, 5)", inputs = { { 2, 1, 5, 4, 5 } } },
  { name = "AvgPool3d unbatched, float64", lua = function() return nn.AvgPool3d(2, { stride = 1 }) end,
    py = "nn.AvgPool3d(2, stride=1)", inputs = { { 2, 3, 3, 3 } }, dtype = "float64" },
  -- LPPool
  -- norm_type: float in PyTorch's signature, so a Lua 2 prints as the float 2.0 (spec/nn/repr_spec.lua)
  { name = "LPPool1d(2, 3)", lua = function() return nn.LPPool1d(2, 3) end, py = "nn.LPPool1d(2.0, 3)",
    inputs = { { 2, 3, 9 } } },
  { name = "LPPool1d stride, ceil_mode", lua = function() return nn.LPPool1d(1, 3, { stride = 2, ceil_mode = true }) end,
    py = "nn.LPPool1d(1.0, 3, stride=2, ceil_mode=True)", inputs = { { 1, 2, 8 } } },
  { name = "LPPool2d(3, {3, 2}, 2)", lua = function() return nn.LPPool2d(3, { 3, 2 }, 2) end,
    py = "nn.LPPool2d(3.0, (3, 2), 2)", inputs = { { 1, 2, 7, 6 } } },
  { name = "LPPool3d(2, 2) float64", lua = function() return nn.LPPool3d(2, 2) end, py = "nn.LPPool3d(2.0, 2)",
    inputs = { { 1, 2, 4, 4, 4 } }, dtype = "float64" },
  -- Adaptive pools
  { name = "AdaptiveAvgPool1d(3)", lua = function() return nn.AdaptiveAvgPool1d(3) end, py = "nn.AdaptiveAvgPool1d(3)",
    inputs = { { 2, 3, 7 } } },
  { name = "AdaptiveAvgPool3d({2, None, 3})", lua = function() return nn.AdaptiveAvgPool3d({ 2, false, 3 }) end,
    py = "nn.AdaptiveAvgPool3d((2, None, 3))", inputs = { { 1, 2, 5, 3, 7 } } },
  { name = "AdaptiveAvgPool3d unbatched, float64", lua = function() return nn.AdaptiveAvgPool3d(2) end,
    py = "nn.AdaptiveAvgPool3d(2)", inputs = { { 2, 3, 5, 4 } }, dtype = "float64" },
  { name = "AdaptiveMaxPool1d return_indices", lua = function() return nn.AdaptiveMaxPool1d(3, true) end,
    py = "nn.AdaptiveMaxPool1d(3, True)", inputs = { { 2, 3, 8 } } },
  { name = "AdaptiveMaxPool2d({None, 2})", lua = function() return nn.AdaptiveMaxPool2d({ false, 2 }) end,
    py = "nn.AdaptiveMaxPool2d((None, 2))", inputs = { { 1, 2, 3, 5 } } },
  { name = "AdaptiveMaxPool2d unbatched", lua = function() return nn.AdaptiveMaxPool2d(3) end,
    py = "nn.AdaptiveMaxPool2d(3)", inputs = { { 2, 7, 5 } } },
  { name = "AdaptiveMaxPool3d keyword return_indices",
    lua = function() return nn.AdaptiveMaxPool3d({ 2, 1, 2 }, { return_indices = true }) end,
    py = "nn.AdaptiveMaxPool3d((2, 1, 2), return_indices=True)", inputs = { { 1, 2, 4, 3, 5 } } },
  -- MaxUnpool: indices are distinct positions of the unpooled planes
  { name = "MaxUnpool1d(2)", lua = function() return nn.MaxUnpool1d(2) end, py = "nn.MaxUnpool1d(2)",
    inputs = { { 1, 2, 4 }, { shape = { 1, 2, 4 }, int = 8 } } },
  { name = "MaxUnpool2d(2, 2) output_size", lua = function() return nn.MaxUnpool2d(2, 2) end,
    py = "nn.MaxUnpool2d(2, 2)", inputs = { { 1, 2, 3, 3 }, { shape = { 1, 2, 3, 3 }, int = 36 } },
    lua_kw = { output_size = { 7, 7 } }, py_kw = "output_size=[7, 7]" },
  { name = "MaxUnpool3d stride, padding", lua = function() return nn.MaxUnpool3d({ 2, 2, 3 }, { stride = 2, padding = { 0, 1, 0 } }) end,
    py = "nn.MaxUnpool3d((2, 2, 3), stride=2, padding=(0, 1, 0))",
    inputs = { { 1, 1, 2, 3, 2 }, { shape = { 1, 1, 2, 3, 2 }, int = 60 } } },
  -- FractionalMaxPool
  { name = "FractionalMaxPool2d output_size, _random_samples",
    lua = function() return nn.FractionalMaxPool2d(3, { output_size = 4, _random_samples = torch.tensor(S2) }) end,
    py = "nn.FractionalMaxPool2d(3, output_size=4, _random_samples=torch.tensor(" .. approx.py(S2) .. "))",
    inputs = { { 2, 2, 7, 8 } } },
  { name = "FractionalMaxPool2d output_ratio, return_indices, drawn samples",
    lua = function() return nn.FractionalMaxPool2d({ 2, 3 }, { output_ratio = { 0.5, 0.6 }, return_indices = true }) end,
    py = "nn.FractionalMaxPool2d((2, 3), output_ratio=(0.5, 0.6), return_indices=True)", inputs = { { 2, 3, 8, 9 } },
    steps = { "train", "eval" } },
  { name = "FractionalMaxPool2d unbatched float64, drawn samples",
    lua = function() return nn.FractionalMaxPool2d(2, 3) end, py = "nn.FractionalMaxPool2d(2, 3)",
    inputs = { { 2, 6, 5 } }, dtype = "float64" },
  { name = "FractionalMaxPool3d output_size, _random_samples",
    lua = function() return nn.FractionalMaxPool3d(2, { 3, 2, 3 }, nil, true, torch.tensor(S3)) end,
    py = "nn.FractionalMaxPool3d(2, (3, 2, 3), None, True, torch.tensor(" .. approx.py(S3) .. "))",
    inputs = { { 1, 2, 5, 4, 6 } } },
  { name = "FractionalMaxPool3d output_ratio, drawn samples",
    lua = function() return nn.FractionalMaxPool3d({ 2, 2, 1 }, { output_ratio = 0.5 }) end,
    py = "nn.FractionalMaxPool3d((2, 2, 1), output_ratio=0.5)", inputs = { { 2, 2, 4, 6, 4 } } },
}

describe("nn pooling layers (1d, 3d, adaptive, LP, unpool, fractional)", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("F.fractional_max_pool2d/3d", function()
    local x2, x3 = parity.values({ 2, 2, 7, 8 }, 3), parity.values({ 1, 2, 5, 4, 6 }, 4)
    local R
    setup(function()
      R = pytorch.run(([[
import torch.nn.functional as F
x2, x3 = torch.tensor(%s), torch.tensor(%s)
s2, s3 = torch.tensor(%s), torch.tensor(%s)
o, i = F.fractional_max_pool2d_with_indices(x2, 3, output_ratio=(0.5, 0.5), _random_samples=s2)
o3 = F.fractional_max_pool3d(x3, (2, 2, 2), output_size=(3, 2, 3), _random_samples=s3)
o4, i4 = F.fractional_max_pool3d_with_indices(x3, 2, (2, 2, 3), None, False, s3)
print(json.dumps({'o': o.tolist(), 'i': i.tolist(), 'o3': o3.tolist(), 'o4': o4.tolist(), 'i4': i4.tolist()}))
]]):format(approx.py(x2), approx.py(x3), approx.py(S2), approx.py(S3)))
    end)

    it("match PyTorch's values and indices for given samples, in every argument form", function()
      local t2, t3 = torch.tensor(x2), torch.tensor(x3)
      local s2, s3 = torch.tensor(S2), torch.tensor(S3)
      local o, i = F.fractional_max_pool2d_with_indices(t2, 3, { output_ratio = 0.5, _random_samples = s2 })
      approx.check(o:tolist(), R.o, 0)
      assert.are.same(R.i, i:tolist())
      local o3 = F.fractional_max_pool3d(t3, { 2, 2, 2 }, { output_size = { 3, 2, 3 }, _random_samples = s3 })
      assert.is_true(torch.is_tensor(o3))
      approx.check(o3:tolist(), R.o3, 0)
      local o4, i4 = F.fractional_max_pool3d_with_indices(t3, 2, { 2, 2, 3 }, nil, false, s3)
      approx.check(o4:tolist(), R.o4, 0)
      assert.are.same(R.i4, i4:tolist())
      local _, i5 = F.fractional_max_pool2d(t2, 3, { output_size = { 3, 4 }, return_indices = true })
      assert.are.equal(torch.int64, i5.dtype)
    end)

    it("raise PyTorch's errors", function()
      local x = torch.randn(1, 1, 6, 6)
      assert.matches("fractional_max_pool2d requires specifying either an output_size or an output_ratio",
        err(F.fractional_max_pool2d, x, 2))
      assert.matches("fractional_max_pool2d_with_indices: unexpected keyword argument 'output_sizes'",
        err(F.fractional_max_pool2d_with_indices, x, 2, { output_sizes = 3 }))
      assert.matches("fractional_max_pool3d: missing required argument 'kernel_size'", err(F.fractional_max_pool3d, x))
    end)
  end)

  describe("misuse", function()
    it("names the module and the expected shapes for a wrong input rank", function()
      assert.are.equal("MaxPool1d(kernel_size=2): expected input of shape (N, C, L) or (C, L), got [1, 2, 4, 4]",
        err(nn.MaxPool1d(2), torch.randn(1, 2, 4, 4)))
      assert.are.equal("AvgPool3d(kernel_size=(2, 2, 1)): expected input of shape (N, C, D, H, W) or (C, D, H, W), "
        .. "got [4, 4]", err(nn.AvgPool3d({ 2, 2, 1 }), torch.randn(4, 4)))
      assert.are.equal("AdaptiveMaxPool3d(output_size=(None, 2, 2)): expected input of shape (N, C, D, H, W) or "
        .. "(C, D, H, W), got [3]", err(nn.AdaptiveMaxPool3d({ false, 2, 2 }), torch.randn(3)))
      assert.are.equal("MaxUnpool2d(kernel_size=(2, 2)): expected input of shape (N, C, H, W) or (C, H, W), got [2]",
        err(nn.MaxUnpool2d(2), torch.randn(2), torch.zeros(2)))
      assert.are.equal("LPPool2d(kernel_size=2): expected a Tensor input, got table", err(nn.LPPool2d(2, 2), { 1 }))
    end)

    it("passes libtorch's errors on with the module's name", function()
      assert.matches("^MaxPool3d%(kernel_size=4%): .*", err(nn.MaxPool3d(4), torch.randn(1, 1, 3, 3, 3)))
      assert.matches("^MaxUnpool1d%(kernel_size=%(2,%)%): .*invalid output_size", err(nn.MaxUnpool1d(2),
        torch.randn(1, 1, 3), torch.zeros(1, 1, 3, { dtype = torch.int64 }), { output_size = { 12 } }))
      assert.matches("^FractionalMaxPool2d%(kernel_size=%(4, 4%)%): .*", err(nn.FractionalMaxPool2d(4, 4),
        torch.randn(1, 1, 5, 5)))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("MaxPool3d: kernel_size must be an integer or a table of 3 integers, got %(2, 2%)",
        err(nn.MaxPool3d, { 2, 2 }))
      assert.matches("AvgPool1d: unexpected keyword argument 'divisor_override'",
        err(nn.AvgPool1d, 2, { divisor_override = 2 }))
      assert.matches("AvgPool3d: divisor_override must be a positive integer", err(nn.AvgPool3d, 2, { divisor_override = 0 }))
      assert.matches("LPPool1d: missing required argument 'kernel_size'", err(nn.LPPool1d, 2))
      assert.matches("AdaptiveAvgPool1d: output_size must be an integer or a table of 1 integers, got %(None,%)",
        err(nn.AdaptiveAvgPool1d, { false }))
      assert.matches("AdaptiveMaxPool2d: return_indices must be a boolean", err(nn.AdaptiveMaxPool2d, 2, "yes"))
      assert.matches("MaxUnpool3d: got multiple values for argument 'stride'", err(nn.MaxUnpool3d, 2, 2, { stride = 1 }))
      assert.matches("FractionalMaxPool2d requires specifying either an output size, or a pooling ratio",
        err(nn.FractionalMaxPool2d, 2))
      assert.matches("FractionalMaxPool3d: only one of output_size and output_ratio may be specified",
        err(nn.FractionalMaxPool3d, 2, 3, 0.5))
      assert.matches("FractionalMaxPool2d: output_ratio must be between 0 and 1 %(got 1.5%)",
        err(nn.FractionalMaxPool2d, 2, { output_ratio = 1.5 }))
      assert.matches("FractionalMaxPool3d: kernel_size must greater than 0, but got 0", err(nn.FractionalMaxPool3d, 0, 2))
    end)
  end)
end)
