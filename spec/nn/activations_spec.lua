--[[
  spec/nn/activations_spec.lua — the activation modules, Flatten and Identity
  (lua/torch/nn/activations.lua, linear.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the (empty) state_dict, the repr string, and
  forward outputs and input gradients on identical inputs. One pytorch.run computes every
  reference. Tolerance: 1e-6 absolute + 1e-5 relative (float32; most are bit-identical since
  both sides run the same libtorch kernels).

  Run:  build/ltorch /usr/bin/busted spec/nn/activations_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"

local TOL = { atol = 1e-6, rtol = 1e-5 }

local CASES = {
  { name = "ReLU", lua = function() return nn.ReLU() end, py = "nn.ReLU()", inputs = { { 3, 4 } } },
  { name = "GELU", lua = function() return nn.GELU() end, py = "nn.GELU()", inputs = { { 3, 4 } } },
  { name = "GELU tanh", lua = function() return nn.GELU({ approximate = "tanh" }) end,
    py = "nn.GELU(approximate='tanh')", inputs = { { 3, 4 } } },
  { name = "SiLU", lua = function() return nn.SiLU() end, py = "nn.SiLU()", inputs = { { 3, 4 } } },
  { name = "Tanh", lua = function() return nn.Tanh() end, py = "nn.Tanh()", inputs = { { 3, 4 } } },
  { name = "Sigmoid", lua = function() return nn.Sigmoid() end, py = "nn.Sigmoid()", inputs = { { 3, 4 } } },
  { name = "LeakyReLU", lua = function() return nn.LeakyReLU(0.2) end, py = "nn.LeakyReLU(0.2)", inputs = { { 3, 4 } } },
  { name = "ELU", lua = function() return nn.ELU(0.5) end, py = "nn.ELU(0.5)", inputs = { { 3, 4 } } },
  { name = "Softmax", lua = function() return nn.Softmax(1) end, py = "nn.Softmax(1)", inputs = { { 3, 4 } } },
  { name = "LogSoftmax", lua = function() return nn.LogSoftmax(-1) end, py = "nn.LogSoftmax(-1)", inputs = { { 2, 3, 4 } } },
  { name = "Flatten", lua = function() return nn.Flatten() end, py = "nn.Flatten()", inputs = { { 2, 3, 4 } } },
  { name = "Flatten(0, 1)", lua = function() return nn.Flatten(0, 1) end, py = "nn.Flatten(0, 1)", inputs = { { 2, 3, 4 } } },
  { name = "Identity", lua = function() return nn.Identity() end, py = "nn.Identity()", inputs = { { 3, 4 } } },
}

describe("nn activation modules", function()
  local R
  setup(function() R = parity.run(CASES) end)

  for _, case in ipairs(CASES) do
    describe(case.name, function()
      it("has PyTorch's (empty) state_dict and repr", function()
        parity.check_keys(R[case.name].lua, R[case.name].py)
        assert.are.equal(R[case.name].py.repr, R[case.name].lua.repr)
      end)
      it("gives PyTorch's outputs and input gradients", function()
        parity.check_forward(R[case.name].lua, R[case.name].py, TOL)
      end)
    end)
  end

  it("rejects a missing dim for Softmax, naming the module", function()
    assert.error_matches(function() nn.Softmax() end, "Softmax: dim is required", nil, true)
  end)
end)
