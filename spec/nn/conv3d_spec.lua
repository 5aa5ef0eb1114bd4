--[[
  spec/nn/conv3d_spec.lua — nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose3d
  (lua/torch/nn/conv.lua) against PyTorch.

  Each case builds the module on both sides after the same torch.manual_seed and checks
  (spec/support/layer_parity.lua): the default init bit for bit (kaiming_uniform_(a = sqrt(5))
  then the bias, same draws), state_dict keys / order / shapes (PyTorch loads ours with
  strict=True), repr; then loads the same weights into both, feeds the same inputs, and compares
  the output and the gradients of input, weight and bias. Cases cover int and table sizes,
  stride / padding / dilation / groups, bias = false, padding "same" and "valid", padding_mode
  reflect / replicate / circular, keyword and positional forms, unbatched input, float64, and the
  transposed convolutions' output_padding and output_size. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5; float64
  atol 1e-12 + rtol 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/conv3d_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "Conv3d(2, 3, 3)", lua = function() return nn.Conv3d(2, 3, 3) end, py = "nn.Conv3d(2, 3, 3)",
    inputs = { { 2, 2, 5, 5, 5 } } },
  { name = "Conv3d positional stride, padding, dilation, groups",
    lua = function() return nn.Conv3d(4, 6, 3, 2, 1, 1, 2) end, py = "nn.Conv3d(4, 6, 3, 2, 1, 1, 2)",
    inputs = { { 1, 4, 5, 6, 5 } } },
  { name = "Conv3d tuples, no bias", lua = function() return nn.Conv3d(2, 4, { 3, 2, 1 }, { stride = { 1, 2, 1 },
      padding = { 1, 0, 2 }, dilation = { 2, 1, 1 }, bias = false }) end,
    py = "nn.Conv3d(2, 4, (3, 2, 1), stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), bias=False)",
    inputs = { { 2, 2, 6, 5, 4 } } },
  { name = "Conv3d padding same, even kernel", lua = function() return nn.Conv3d(2, 2, { 2, 3, 4 }, { padding = "same" }) end,
    py = "nn.Conv3d(2, 2, (2, 3, 4), padding='same')", inputs = { { 1, 2, 4, 5, 6 } } },
  { name = "Conv3d padding valid", lua = function() return nn.Conv3d(1, 2, 2, { padding = "valid" }) end,
    py = "nn.Conv3d(1, 2, 2, padding='valid')", inputs = { { 1, 1, 3, 3, 3 } } },
  { name = "Conv3d reflect", lua = function() return nn.Conv3d(2, 2, 3, { padding = 1, padding_mode = "reflect" }) end,
    py = "nn.Conv3d(2, 2, 3, padding=1, padding_mode='reflect')", inputs = { { 1, 2, 4, 4, 4 } } },
  { name = "Conv3d replicate", lua = function() return nn.Conv3d(2, 2, 3, { padding = { 1, 0, 1 },
      padding_mode = "replicate" }) end,
    py = "nn.Conv3d(2, 2, 3, padding=(1, 0, 1), padding_mode='replicate')", inputs = { { 1, 2, 4, 4, 4 } } },
  { name = "Conv3d circular", lua = function() return nn.Conv3d(1, 2, 3, { padding = 1, padding_mode = "circular" }) end,
    py = "nn.Conv3d(1, 2, 3, padding=1, padding_mode='circular')", inputs = { { 2, 1, 3, 4, 3 } } },
  { name = "Conv3d unbatched", lua = function() return nn.Conv3d(3, 2, 2) end, py = "nn.Conv3d(3, 2, 2)",
    inputs = { { 3, 3, 3, 3 } } },
  { name = "Conv3d float64", lua = function() return nn.Conv3d(2, 2, 2, { dtype = torch.float64 }) end,
    py = "nn.Conv3d(2, 2, 2, dtype=torch.float64)", inputs = { { 1, 2, 3, 3, 3 } }, dtype = "float64" },
  { name = "ConvTranspose1d(3, 2, 3)", lua = function() return nn.ConvTranspose1d(3, 2, 3) end,
    py = "nn.ConvTranspose1d(3, 2, 3)", inputs = { { 2, 3, 6 } } },
  { name = "ConvTranspose1d stride, output_padding, groups, dilation, no bias",
    lua = function() return nn.ConvTranspose1d(4, 6, 3, { stride = 3, padding = 1, output_padding = 2, groups = 2,
      dilation = 2, bias = false }) end,
    py = "nn.ConvTranspose1d(4, 6, 3, stride=3, padding=1, output_padding=2, groups=2, dilation=2, bias=False)",
    inputs = { { 2, 4, 5 } } },
  { name = "ConvTranspose1d output_size", lua = function() return nn.ConvTranspose1d(2, 3, 3, 2, 1) end,
    py = "nn.ConvTranspose1d(2, 3, 3, 2, 1)", inputs = { { 1, 2, 5 } },
    lua_kw = { output_size = { 10 } }, py_kw = "output_size=[10]" },
  { name = "ConvTranspose1d unbatched, float64", lua = function() return nn.ConvTranspose1d(2, 2, 2, 2) end,
    py = "nn.ConvTranspose1d(2, 2, 2, 2)", inputs = { { 2, 4 } }, dtype = "float64" },
  { name = "ConvTranspose3d(2, 3, 3)", lua = function() return nn.ConvTranspose3d(2, 3, 3) end,
    py = "nn.ConvTranspose3d(2, 3, 3)", inputs = { { 1, 2, 3, 3, 3 } } },
  { name = "ConvTranspose3d tuples, output_padding, groups, dilation",
    lua = function() return nn.ConvTranspose3d(4, 2, { 3, 2, 2 }, { stride = { 2, 2, 1 }, padding = { 1, 0, 0 },
      output_padding = { 1, 1, 0 }, groups = 2, dilation = { 1, 1, 2 } }) end,
    py = "nn.ConvTranspose3d(4, 2, (3, 2, 2), stride=(2, 2, 1), padding=(1, 0, 0), output_padding=(1, 1, 0), "
      .. "groups=2, dilation=(1, 1, 2))",
    inputs = { { 2, 4, 3, 2, 3 } } },
  { name = "ConvTranspose3d output_size with N and C", lua = function() return nn.ConvTranspose3d(2, 2, 3, 2, 1) end,
    py = "nn.ConvTranspose3d(2, 2, 3, 2, 1)", inputs = { { 1, 2, 3, 3, 3 } },
    lua_kw = { output_size = { 1, 2, 6, 5, 6 } }, py_kw = "output_size=[1, 2, 6, 5, 6]" },
  { name = "ConvTranspose3d unbatched, no bias", lua = function() return nn.ConvTranspose3d(2, 1, 2, { bias = false }) end,
    py = "nn.ConvTranspose3d(2, 1, 2, bias=False)", inputs = { { 2, 2, 3, 2 } } },
}

describe("nn Conv3d, ConvTranspose1d, ConvTranspose3d", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and the shapes for a wrong channel count or rank", function()
      assert.are.equal("Conv3d(3, 4, kernel_size=(3, 3, 3)): expected input of shape (N, 3, D, H, W) or "
        .. "(3, D, H, W), got [2, 3, 5, 5]", err(nn.Conv3d(3, 4, 3), torch.randn(2, 3, 5, 5)))
      assert.are.equal("ConvTranspose1d(2, 4, kernel_size=(3,)): expected input of shape (N, 2, L) or (2, L), "
        .. "got [1, 3, 5]", err(nn.ConvTranspose1d(2, 4, 3), torch.randn(1, 3, 5)))
      assert.matches("ConvTranspose3d%(2, 2, kernel_size=%(2, 2, 2%)%): expected a floating%-point input, got int64",
        err(nn.ConvTranspose3d(2, 2, 2), torch.zeros(1, 2, 3, 3, 3, { dtype = torch.int64 })))
    end)

    it("passes libtorch's size errors on with the module's name", function()
      assert.matches("^Conv3d%(1, 1, kernel_size=%(4, 4, 4%)%): .*Kernel size can't be greater than actual input size",
        err(nn.Conv3d(1, 1, 4), torch.randn(1, 1, 3, 3, 3)))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("Conv3d: kernel_size must be an integer or a table of 3 integers", err(nn.Conv3d, 1, 1, { 3, 3 }))
      assert.matches("in_channels must be divisible by groups", err(nn.Conv3d, 3, 4, 3, { groups = 2 }))
      assert.matches("padding='same' is not supported for strided convolutions",
        err(nn.Conv3d, 1, 1, 3, { padding = "same", stride = 2 }))
      assert.matches("ConvTranspose1d: invalid padding string 'same'", err(nn.ConvTranspose1d, 1, 1, 3, { padding = "same" }))
      assert.matches("ConvTranspose3d: only \"zeros\" padding mode", err(nn.ConvTranspose3d, 1, 1, 3, { padding_mode = "circular" }))
      assert.matches("ConvTranspose1d: unexpected keyword argument 'output_pad' %(did you mean 'output_padding'%?%)",
        err(nn.ConvTranspose1d, 1, 1, 3, { output_pad = 1 }))
      assert.matches("Conv3d: got multiple values for argument 'stride'", err(nn.Conv3d, 1, 1, 3, 2, { stride = 2 }))
      assert.matches("ConvTranspose3d: missing required argument 'kernel_size'", err(nn.ConvTranspose3d, 1, 1))
    end)

    it("checks the transposed convolutions' output_size", function()
      local up = nn.ConvTranspose1d(2, 3, 3, { stride = 2, padding = 1 })
      assert.matches("requested an output size of %(12,%), but valid sizes range from %(9,%) to %(10,%)",
        err(up, torch.randn(1, 2, 5), { output_size = { 12 } }))
      assert.matches("output_size must have 1 or 3 elements %(got 2%)", err(up, torch.randn(1, 2, 5), { 9, 9 }))
      assert.are.same({ 1, 3, 10 }, { unpack(up(torch.randn(1, 2, 5), { 10 }):size()) })
      local up3 = nn.ConvTranspose3d(1, 1, 2, 2)
      assert.are.same({ 1, 1, 5, 4, 5 }, { unpack(up3(torch.randn(1, 1, 2, 2, 2), { output_size = { 5, 4, 5 } }):size()) })
    end)
  end)
end)
