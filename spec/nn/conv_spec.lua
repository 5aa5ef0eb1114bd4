--[[
  spec/nn/conv_spec.lua — nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d (lua/torch/nn/conv.lua)
  against PyTorch.

  Each case builds the module on both sides after the same torch.manual_seed and checks
  (spec/support/layer_parity.lua): the default init bit for bit (kaiming_uniform_(a = sqrt(5))
  then the bias, same draws), state_dict keys / order / shapes (PyTorch loads ours with
  strict=True), repr; then loads the same weights into both, feeds the same inputs, and compares
  the output and the gradients of input, weight and bias. Cases cover int and table sizes,
  stride / padding / dilation / groups, bias = false, padding "same" (even kernel: asymmetric)
  and "valid", padding_mode reflect / replicate / circular, unbatched input, float64,
  ConvTranspose2d with output_padding, groups, dilation and output_size. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5; float64
  atol 1e-12 + rtol 1e-12. Observed on
  CPU: bit-identical (same libtorch, same kernels); the margin covers thread-count differences.

  Run:  build/ltorch /usr/bin/busted spec/nn/conv_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "Conv2d(1, 6, 5)", lua = function() return nn.Conv2d(1, 6, 5) end, py = "nn.Conv2d(1, 6, 5)",
    inputs = { { 2, 1, 8, 8 } } },
  { name = "Conv2d positional stride and padding", lua = function() return nn.Conv2d(3, 4, 3, 2, 1) end,
    py = "nn.Conv2d(3, 4, 3, 2, 1)", inputs = { { 2, 3, 7, 7 } } },
  { name = "Conv2d tuples, dilation, groups, no bias",
    lua = function() return nn.Conv2d(4, 6, { 3, 2 }, { stride = { 1, 2 }, padding = { 2, 1 }, dilation = { 2, 1 },
      groups = 2, bias = false }) end,
    py = "nn.Conv2d(4, 6, (3, 2), stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=2, bias=False)",
    inputs = { { 2, 4, 6, 7 } } },
  { name = "Conv2d padding same, even kernel", lua = function() return nn.Conv2d(2, 3, { 4, 3 }, { padding = "same",
      dilation = { 1, 2 } }) end,
    py = "nn.Conv2d(2, 3, (4, 3), padding='same', dilation=(1, 2))", inputs = { { 2, 2, 6, 7 } } },
  { name = "Conv2d padding valid", lua = function() return nn.Conv2d(2, 3, 3, { padding = "valid" }) end,
    py = "nn.Conv2d(2, 3, 3, padding='valid')", inputs = { { 1, 2, 5, 5 } } },
  { name = "Conv2d reflect", lua = function() return nn.Conv2d(2, 3, 3, { padding = { 1, 2 }, padding_mode = "reflect" }) end,
    py = "nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode='reflect')", inputs = { { 2, 2, 5, 6 } } },
  { name = "Conv2d replicate", lua = function() return nn.Conv2d(2, 2, 3, { padding = 1, padding_mode = "replicate" }) end,
    py = "nn.Conv2d(2, 2, 3, padding=1, padding_mode='replicate')", inputs = { { 1, 2, 4, 4 } } },
  { name = "Conv2d circular same", lua = function() return nn.Conv2d(2, 2, { 2, 3 }, { padding = "same",
      padding_mode = "circular" }) end,
    py = "nn.Conv2d(2, 2, (2, 3), padding='same', padding_mode='circular')", inputs = { { 1, 2, 4, 5 } } },
  { name = "Conv2d unbatched", lua = function() return nn.Conv2d(3, 2, 3, { padding = 1 }) end,
    py = "nn.Conv2d(3, 2, 3, padding=1)", inputs = { { 3, 5, 5 } } },
  { name = "Conv2d float64", lua = function() return nn.Conv2d(2, 3, 3) end, py = "nn.Conv2d(2, 3, 3)",
    inputs = { { 2, 2, 5, 5 } }, dtype = "float64" },
  { name = "Conv2d built as float64", lua = function() return nn.Conv2d(4, 5, { 3, 2 }, { dtype = torch.float64 }) end,
    py = "nn.Conv2d(4, 5, (3, 2), dtype=torch.float64)", inputs = { { 1, 4, 4, 4 } }, dtype = "float64" },
  { name = "Conv1d(3, 5, 3)", lua = function() return nn.Conv1d(3, 5, 3) end, py = "nn.Conv1d(3, 5, 3)",
    inputs = { { 2, 3, 10 } } },
  { name = "Conv1d stride, padding, dilation, depthwise", lua = function() return nn.Conv1d(4, 4, 3, 2, 2, 2, 4) end,
    py = "nn.Conv1d(4, 4, 3, 2, 2, 2, 4)", inputs = { { 2, 4, 11 } } },
  { name = "Conv1d same reflect, no bias", lua = function() return nn.Conv1d(2, 3, 4, { padding = "same",
      padding_mode = "reflect", bias = false }) end,
    py = "nn.Conv1d(2, 3, 4, padding='same', padding_mode='reflect', bias=False)", inputs = { { 3, 2, 9 } } },
  { name = "ConvTranspose2d(3, 2, 3)", lua = function() return nn.ConvTranspose2d(3, 2, 3) end,
    py = "nn.ConvTranspose2d(3, 2, 3)", inputs = { { 2, 3, 4, 4 } } },
  { name = "ConvTranspose2d stride, output_padding, groups, dilation",
    lua = function() return nn.ConvTranspose2d(4, 6, { 3, 2 }, { stride = 2, padding = 1, output_padding = 1, groups = 2,
      dilation = { 1, 2 } }) end,
    py = "nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))",
    inputs = { { 2, 4, 3, 4 } } },
  { name = "ConvTranspose2d output_size", lua = function() return nn.ConvTranspose2d(2, 3, 3, { stride = 2, padding = 1 }) end,
    py = "nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)", inputs = { { 1, 2, 4, 4 } },
    lua_kw = { output_size = { 8, 8 } }, py_kw = "output_size=[8, 8]" },
  { name = "ConvTranspose2d unbatched, no bias", lua = function() return nn.ConvTranspose2d(2, 2, 2, 2, 0, 0, 1, false) end,
    py = "nn.ConvTranspose2d(2, 2, 2, 2, 0, 0, 1, False)", inputs = { { 2, 3, 3 } } },
}

describe("nn conv layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("names the module and the shapes for a wrong channel count or rank", function()
      local conv = nn.Conv2d(3, 16, 3)
      assert.are.equal("Conv2d(3, 16, kernel_size=(3, 3)): expected input of shape (N, 3, H, W) or (3, H, W), "
        .. "got [8, 1, 28, 28]", err(conv, torch.randn(8, 1, 28, 28)))
      assert.matches("Conv2d%(3, 16, kernel_size=%(3, 3%)%): expected input of shape .* got %[28, 28%]",
        err(conv, torch.randn(28, 28)))
      assert.matches("Conv1d%(2, 4, kernel_size=%(3,%)%): expected input of shape %(N, 2, L%) or %(2, L%), got %[4, 3, 9%]",
        err(nn.Conv1d(2, 4, 3), torch.randn(4, 3, 9)))
      assert.matches("ConvTranspose2d%(4, 2, kernel_size=%(3, 3%)%): expected input of shape %(N, 4, H, W%)",
        err(nn.ConvTranspose2d(4, 2, 3), torch.randn(1, 2, 5, 5)))
    end)

    it("names the module for a wrong dtype", function()
      local conv = nn.Conv2d(1, 2, 3)
      assert.matches("Conv2d%(1, 2, kernel_size=%(3, 3%)%): expected a floating%-point input, got int64 of shape %[1, 1, 5, 5%]",
        err(conv, torch.zeros(1, 1, 5, 5, { dtype = torch.int64 })))
      assert.matches("Conv2d%(1, 2, kernel_size=%(3, 3%)%): .*[Dd]ouble",
        err(conv, torch.zeros(1, 1, 5, 5, { dtype = torch.float64 })))
      assert.matches("Conv2d(1, 2, kernel_size=(3, 3)): expected a Tensor input, got table", err(conv, { 1, 2 }), 1, true)
    end)

    it("passes libtorch's size errors on with the module's name", function()
      assert.matches("Conv2d%(1, 2, kernel_size=%(5, 5%)%): .*Kernel size can't be greater than actual input size",
        err(nn.Conv2d(1, 2, 5), torch.randn(1, 1, 3, 3)))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("in_channels must be divisible by groups", err(nn.Conv2d, 3, 4, 3, { groups = 2 }))
      assert.matches("out_channels must be divisible by groups", err(nn.Conv2d, 4, 3, 3, { groups = 2 }))
      assert.matches("invalid padding string 'full'", err(nn.Conv2d, 1, 1, 3, { padding = "full" }))
      assert.matches("padding='same' is not supported for strided convolutions",
        err(nn.Conv2d, 1, 1, 3, { padding = "same", stride = 2 }))
      assert.matches("padding_mode must be one of", err(nn.Conv2d, 1, 1, 3, { padding_mode = "mirror" }))
      assert.matches("only \"zeros\" padding mode", err(nn.ConvTranspose2d, 1, 1, 3, { padding_mode = "reflect" }))
      assert.matches("Conv2d: unexpected keyword argument 'paddin' %(did you mean 'padding'%?%)", err(nn.Conv2d, 1, 1, 3, { paddin = 1 }))
      assert.matches("kernel_size must be an integer or a table of 2 integers", err(nn.Conv2d, 1, 1, { 3, 3, 3 }))
      assert.matches("in_channels and out_channels must be positive integers", err(nn.Conv1d, 0, 1, 3))
    end)

    it("checks ConvTranspose2d's output_size", function()
      local up = nn.ConvTranspose2d(2, 3, 3, { stride = 2, padding = 1 })
      assert.matches("requested an output size of %(10, 10%), but valid sizes range from %(7, 7%) to %(8, 8%)",
        err(up, torch.randn(1, 2, 4, 4), { output_size = { 10, 10 } }))
      assert.are.same({ 1, 3, 7, 8 }, { unpack(up(torch.randn(1, 2, 4, 4), { output_size = { 1, 3, 7, 8 } }):size()) })
    end)
  end)
end)
