--[[
  spec/nn/dropout_extra_spec.lua — nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout
  (lua/torch/nn/dropout.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks state_dict (empty) and repr, then runs eval
  steps (the identity) and training steps after the same seed on both sides: the masks come from
  the same libtorch generator through the same ATen ops, so outputs and input gradients match
  bit for bit. Also statistical and shape checks in training (Dropout3d zeroes whole channels and
  scales survivors by 1/(1-p); AlphaDropout keeps a standard normal input's mean and variance;
  FeatureAlphaDropout sets whole channels to one value), in-place Dropout3d, the `inplace`
  setting AlphaDropout keeps but (as PyTorch's) does not act on, and misuse errors.

  One pytorch.run computes every reference. Tolerance: 0 (bit for bit).

  Run:  build/ltorch /usr/bin/busted spec/nn/dropout_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local EXACT = 0

local CASES = {
  { name = "Dropout3d() eval", lua = function() return nn.Dropout3d() end, py = "nn.Dropout3d()",
    inputs = { { 2, 3, 2, 2, 2 } }, steps = { "eval" } },
  { name = "Dropout3d() train", lua = function() return nn.Dropout3d() end, py = "nn.Dropout3d()",
    inputs = { { 2, 4, 2, 3, 2 } }, steps = { "train", "train", "eval" } },
  { name = "Dropout3d(p=0.25) unbatched", lua = function() return nn.Dropout3d({ p = 0.25 }) end,
    py = "nn.Dropout3d(p=0.25)", inputs = { { 5, 2, 2, 3 } }, steps = { "train", "eval" } },
  { name = "Dropout3d(0.5, True) after Softsign", lua = function() return nn.Sequential(nn.Softsign(),
      nn.Dropout3d(0.5, true)) end, py = "nn.Sequential(nn.Softsign(), nn.Dropout3d(0.5, True))",
    inputs = { { 2, 4, 2, 2, 2 } }, steps = { "train", "eval" } },
  { name = "AlphaDropout() eval", lua = function() return nn.AlphaDropout() end, py = "nn.AlphaDropout()",
    inputs = { { 4, 6 } }, steps = { "eval" } },
  { name = "AlphaDropout(0.2) train", lua = function() return nn.AlphaDropout(0.2) end, py = "nn.AlphaDropout(0.2)",
    inputs = { { 4, 6 } }, steps = { "train", "train", "eval" } },
  { name = "AlphaDropout(p=0.3, inplace=True) float64", lua = function() return nn.AlphaDropout({ p = 0.3,
      inplace = true }) end, py = "nn.AlphaDropout(p=0.3, inplace=True)", inputs = { { 5, 5 } },
    steps = { "train", "eval" }, dtype = "float64" },
  { name = "FeatureAlphaDropout() eval", lua = function() return nn.FeatureAlphaDropout() end,
    py = "nn.FeatureAlphaDropout()", inputs = { { 2, 3, 4 } }, steps = { "eval" } },
  { name = "FeatureAlphaDropout(0.4) train", lua = function() return nn.FeatureAlphaDropout(0.4) end,
    py = "nn.FeatureAlphaDropout(0.4)", inputs = { { 3, 5, 2, 2 } }, steps = { "train", "train", "eval" } },
}

local function mean_std(t)
  local m = t:mean():item()
  return m, ((t - m) ^ 2):mean():sqrt():item()
end

describe("nn dropout layers (issue #24)", function()
  parity.describe_cases(CASES, { float32 = EXACT, float64 = EXACT })

  describe("training", function()
    it("Dropout3d zeroes whole channels and scales survivors by 1/(1-p)", function()
      local y = nn.Dropout3d(0.25)(torch.ones(8, 16, 2, 3, 2))
      assert.are.same({ 8, 16, 2, 3, 2 }, y:size())
      local kept = 0
      for _, chan in ipairs(y:flatten(2):flatten(0, 1):tolist()) do
        assert.is_true(chan[1] == 0 or math.abs(chan[1] - 1 / 0.75) < 1e-6)
        for _, v in ipairs(chan) do assert.are.equal(chan[1], v) end
      end
      local per_channel = y:sum({ dim = { 2, 3, 4 } }):flatten():tolist()
      for _, s in ipairs(per_channel) do
        assert.is_true(s == 0 or math.abs(s - 12 / 0.75) < 1e-4)
        if s ~= 0 then kept = kept + 1 end
      end
      assert.is_true(kept > 70 and kept < 118, "kept " .. kept .. " of 128 channels")
    end)

    it("Dropout3d works in place when asked, batched and unbatched", function()
      local x = torch.ones(2, 8, 2, 2, 2)
      local y = nn.Dropout3d(0.5, true)(x)
      assert.are.equal(x:data_ptr(), y:data_ptr())
      assert.is_true(x:eq(0):any():item())
      local u = torch.ones(8, 2, 2, 2)
      local v = nn.Dropout3d({ p = 0.5, inplace = true })(u)
      assert.are.same({ 8, 2, 2, 2 }, u:size())
      assert.are.same({ 8, 2, 2, 2 }, v:size())
      assert.is_true(u:equal(v))
    end)

    it("AlphaDropout keeps the mean and variance of a standard normal input", function()
      local x = torch.randn(200000)
      local y = nn.AlphaDropout(0.3)(x)
      assert.are.same({ 200000 }, y:size())
      local m, s = mean_std(y)
      assert.is_true(math.abs(m) < 0.02, "mean " .. m)
      assert.is_true(math.abs(s - 1) < 0.02, "std " .. s)
      assert.is_false(y:equal(x))
    end)

    it("AlphaDropout leaves its input alone even with inplace=True, as PyTorch's", function()
      local x = torch.randn(50)
      local before = x:clone()
      local y = nn.AlphaDropout(0.5, true)(x)
      assert.is_true(x:equal(before))
      assert.is_false(y:equal(x))
      assert.are.equal("AlphaDropout(p=0.5, inplace=True)", tostring(nn.AlphaDropout(0.5, true)))
    end)

    it("FeatureAlphaDropout sets dropped channels to a single value", function()
      local x = torch.randn(4, 32, 3, 3)
      local y = nn.FeatureAlphaDropout(0.5)(x)
      assert.are.same({ 4, 32, 3, 3 }, y:size())
      -- a dropped channel holds one value; a kept one is an affine map of x (not constant)
      local dropped = 0
      for _, chan in ipairs(y:flatten(2):flatten(0, 1):tolist()) do
        local same = true
        for _, v in ipairs(chan) do if math.abs(v - chan[1]) > 1e-6 then same = false end end
        if same then dropped = dropped + 1 end
      end
      assert.is_true(dropped > 30 and dropped < 98, "dropped " .. dropped .. " of 128 channels")
    end)

    it("is the identity in eval mode", function()
      local x = torch.randn(2, 3, 2, 2, 2)
      for _, m in ipairs({ nn.Dropout3d(0.9), nn.AlphaDropout(0.9), nn.FeatureAlphaDropout(0.9) }) do
        assert.is_true(m:eval()(x):equal(x))
      end
    end)
  end)

  describe("misuse", function()
    it("rejects p outside [0, 1] and a non-boolean inplace", function()
      assert.matches("Dropout3d: dropout probability has to be between 0 and 1, but got 1.5", err(nn.Dropout3d, 1.5),
        1, true)
      assert.matches("AlphaDropout: dropout probability has to be between 0 and 1, but got -0.1",
        err(nn.AlphaDropout, -0.1), 1, true)
      assert.matches("FeatureAlphaDropout: inplace must be a boolean, got string",
        err(nn.FeatureAlphaDropout, 0.5, "yes"), 1, true)
      assert.matches("AlphaDropout: unexpected keyword argument 'q'", err(nn.AlphaDropout, { q = 0.1 }), 1, true)
    end)

    it("names the module for a wrong input", function()
      assert.are.equal("Dropout3d(p=0.5): expected a floating-point input, got int64 of shape [2, 2, 2, 2]",
        err(nn.Dropout3d(), torch.zeros(2, 2, 2, 2, { dtype = torch.int64 })))
      assert.are.equal("AlphaDropout(p=0.5): expected a Tensor input, got number", err(nn.AlphaDropout(), 3))
      assert.are.equal("FeatureAlphaDropout(p=0.5): expected a Tensor input, got nil", err(nn.FeatureAlphaDropout()))
    end)
  end)
end)
