--[[
  spec/nn/dropout_spec.lua — nn.Dropout, nn.Dropout1d, nn.Dropout2d (lua/torch/nn/dropout.lua)
  against PyTorch.

  Each case (spec/support/layer_parity.lua) checks state_dict (empty) and repr, then seeds both
  generators the same and runs training steps and an eval step: the masks must be PyTorch's
  (same libtorch generator, same ATen ops, same call order), so outputs and input gradients
  match exactly; eval and p = 0 are the identity, p = 1 zeroes everything. Also in-place
  dropout, the 1/(1-p) scaling of survivors, whole-channel masks, and misuse errors.

  One pytorch.run computes every reference. Tolerance: 0 (bit for bit).

  Run:  build/ltorch /usr/bin/busted spec/nn/dropout_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local EXACT = 0

local CASES = {
  { name = "Dropout()", lua = function() return nn.Dropout() end, py = "nn.Dropout()", inputs = { { 4, 6 } },
    steps = { "train", "train", "eval" } },
  { name = "Dropout(0.2) on 3-D", lua = function() return nn.Dropout(0.2) end, py = "nn.Dropout(0.2)",
    inputs = { { 2, 3, 5 } }, steps = { "train", "eval" } },
  { name = "Dropout p=0", lua = function() return nn.Dropout({ p = 0.0 }) end, py = "nn.Dropout(p=0.0)",
    inputs = { { 3, 4 } } },
  { name = "Dropout p=1", lua = function() return nn.Dropout(1.0) end, py = "nn.Dropout(1.0)", inputs = { { 3, 4 } } },
  { name = "Dropout float64", lua = function() return nn.Dropout(0.3) end, py = "nn.Dropout(0.3)",
    inputs = { { 5, 5 } }, dtype = "float64" },
  { name = "Dropout2d()", lua = function() return nn.Dropout2d() end, py = "nn.Dropout2d()",
    inputs = { { 2, 4, 3, 3 } }, steps = { "train", "train", "eval" } },
  { name = "Dropout1d(0.4) batched", lua = function() return nn.Dropout1d(0.4) end, py = "nn.Dropout1d(0.4)",
    inputs = { { 3, 4, 5 } }, steps = { "train", "eval" } },
  { name = "Dropout1d unbatched", lua = function() return nn.Dropout1d(0.5) end, py = "nn.Dropout1d(0.5)",
    inputs = { { 6, 3 } } },
}

describe("nn dropout layers", function()
  parity.describe_cases(CASES, { float32 = EXACT, float64 = EXACT })

  describe("behaviour", function()
    it("scales survivors by 1/(1-p) and zeroes the rest", function()
      local x = torch.ones(1000)
      local y = nn.Dropout(0.25)(x)
      local kept = 0
      for _, v in ipairs(y:tolist()) do
        assert.is_true(v == 0 or math.abs(v - 1 / 0.75) < 1e-6)
        if v ~= 0 then kept = kept + 1 end
      end
      assert.is_true(kept > 650 and kept < 850, "kept " .. kept)
    end)

    it("returns its input unchanged in eval mode", function()
      local x = torch.randn(3, 4)
      local y = nn.Dropout(0.9):eval()(x)
      assert.are.same(x:tolist(), y:tolist())
    end)

    it("zeroes whole channels in Dropout2d", function()
      local y = nn.Dropout2d(0.5)(torch.ones(4, 8, 3, 3))
      local s = y:sum({ dim = { 2, 3 } }):tolist()
      for _, row in ipairs(s) do
        for _, v in ipairs(row) do assert.is_true(v == 0 or math.abs(v - 18) < 1e-5) end
      end
    end)

    it("works in place when asked", function()
      local x = torch.ones(50)
      local y = nn.Dropout({ p = 0.5, inplace = true })(x)
      assert.are.same(x:tolist(), y:tolist())
      assert.is_true(x:eq(0):any():item())
      local u = torch.ones(3, 20)
      nn.Dropout1d(0.5, true)(u)
      assert.are.same({ 3, 20 }, { unpack(u:size()) })
    end)
  end)

  describe("misuse", function()
    it("rejects p outside [0, 1]", function()
      assert.matches("Dropout: dropout probability has to be between 0 and 1, but got 1.5", err(nn.Dropout, 1.5), 1, true)
      assert.matches("Dropout2d: dropout probability has to be between 0 and 1, but got -0.1", err(nn.Dropout2d, -0.1),
        1, true)
    end)

    it("names the module for wrong dtype and rank", function()
      assert.are.equal("Dropout(p=0.5): expected a floating-point input, got int64 of shape [2, 2]",
        err(nn.Dropout(), torch.zeros(2, 2, { dtype = torch.int64 })))
      assert.are.equal("Dropout1d(p=0.5): expected input of shape (N, C, L) or (C, L), got [2, 3, 4, 5]",
        err(nn.Dropout1d(), torch.randn(2, 3, 4, 5)))
      assert.are.equal("Dropout2d(p=0.5): expected input of shape (N, C, H, W), got [7]",
        err(nn.Dropout2d(), torch.randn(7)))
      assert.are.equal("Dropout(p=0.5): expected a Tensor input, got number", err(nn.Dropout(), 3))
    end)
  end)
end)
