--[[
  spec/nn/distance_spec.lua — nn.CosineSimilarity and nn.PairwiseDistance
  (lua/torch/nn/distance.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks state_dict (empty), the repr, and the output
  and both inputs' gradients on identical inputs. Cases cover defaults, positional and keyword
  forms, other dims and norms, keepdim, broadcasting inputs and float64. Also misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5, float64
  1e-12 (same libtorch kernels; observed bit-identical on CPU).

  Run:  build/ltorch /usr/bin/busted spec/nn/distance_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local CASES = {
  { name = "CosineSimilarity()", lua = function() return nn.CosineSimilarity() end, py = "nn.CosineSimilarity()",
    inputs = { { 4, 5 }, { 4, 5 } } },
  { name = "CosineSimilarity(0, 1e-6)", lua = function() return nn.CosineSimilarity(0, 1e-6) end,
    py = "nn.CosineSimilarity(0, 1e-6)", inputs = { { 4, 3, 2 }, { 4, 3, 2 } } },
  { name = "CosineSimilarity(dim=-1) broadcast", lua = function() return nn.CosineSimilarity({ dim = -1 }) end,
    py = "nn.CosineSimilarity(dim=-1)", inputs = { { 3, 1, 4 }, { 2, 4 } } },
  { name = "CosineSimilarity(eps=0.5) float64", lua = function() return nn.CosineSimilarity({ eps = 0.5 }) end,
    py = "nn.CosineSimilarity(eps=0.5)", inputs = { { 2, 3 }, { 2, 3 } }, dtype = "float64" },
  { name = "PairwiseDistance()", lua = function() return nn.PairwiseDistance() end, py = "nn.PairwiseDistance()",
    inputs = { { 4, 5 }, { 4, 5 } } },
  { name = "PairwiseDistance(1.0)", lua = function() return nn.PairwiseDistance(1.0) end, py = "nn.PairwiseDistance(1.0)",
    inputs = { { 3, 6 }, { 3, 6 } } },
  { name = "PairwiseDistance(p=3.0, eps=1e-3, keepdim=True)",
    lua = function() return nn.PairwiseDistance({ p = 3.0, eps = 1e-3, keepdim = true }) end,
    py = "nn.PairwiseDistance(p=3.0, eps=1e-3, keepdim=True)", inputs = { { 3, 4 }, { 3, 4 } } },
  { name = "PairwiseDistance(inf) broadcast", lua = function() return nn.PairwiseDistance(math.huge) end,
    py = "nn.PairwiseDistance(float('inf'))", inputs = { { 3, 4 }, { 1, 4 } } },
  { name = "PairwiseDistance 1-D float64", lua = function() return nn.PairwiseDistance(2.0, 1e-6, true) end,
    py = "nn.PairwiseDistance(2.0, 1e-6, True)", inputs = { { 5 }, { 5 } }, dtype = "float64" },
}

describe("nn distance layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("checks the settings", function()
      assert.matches("CosineSimilarity: dim must be an integer, got 1.5", err(nn.CosineSimilarity, 1.5), 1, true)
      assert.matches("CosineSimilarity: eps must be a number, got string", err(nn.CosineSimilarity, 1, "x"), 1, true)
      assert.matches("PairwiseDistance: p must be a number, got string", err(nn.PairwiseDistance, "2"), 1, true)
      assert.matches("PairwiseDistance: keepdim must be a boolean, got number", err(nn.PairwiseDistance, 2.0, 1e-6, 1),
        1, true)
      assert.matches("PairwiseDistance: unexpected keyword argument 'norm'", err(nn.PairwiseDistance, { norm = 2.0 }),
        1, true)
    end)

    it("checks the inputs", function()
      assert.matches("CosineSimilarity: expected Tensor inputs x1 and x2, got nil for x2",
        err(nn.CosineSimilarity(), torch.randn(2, 3)), 1, true)
      assert.matches("PairwiseDistance: expected Tensor inputs x1 and x2, got number for x1",
        err(nn.PairwiseDistance(), 1, torch.randn(2)), 1, true)
      local ok, msg = pcall(function() local y = nn.CosineSimilarity()(torch.randn(2, 3), torch.randn(2, 4)) return y end)
      assert.is_false(ok)
      assert.matches("distance_spec%.lua:%d+: .*must match the size", msg)
    end)
  end)
end)
