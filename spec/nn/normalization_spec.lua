--[[
  spec/nn/normalization_spec.lua — nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm
  (lua/torch/nn/normalization.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the default init bit for bit, state_dict
  keys / order / shapes / dtypes (running_mean, running_var, num_batches_tracked; PyTorch loads
  ours with strict=True), repr; then loads the same weights into both and runs several steps —
  BatchNorm: three training steps on different batches (running stats updated with momentum,
  or as a cumulative average for momentum = None), then eval (running stats used) — comparing
  every output, the input gradients, the accumulated parameter gradients and the buffers at
  the end. Also track_running_stats = false (batch stats in eval too), affine = false, float64,
  and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-5 + rtol 1e-5 (the
  normalised outputs are O(1) and the variance update divides by n - 1); float64 1e-12. Observed on
  CPU: bit-identical (same libtorch, same kernels); the margin covers thread-count differences.

  Run:  build/ltorch /usr/bin/busted spec/nn/normalization_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-5, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }
local TRAIN3_EVAL = { "train", "train", "train", "eval" }

local CASES = {
  { name = "BatchNorm1d(4) on (N, C)", lua = function() return nn.BatchNorm1d(4) end, py = "nn.BatchNorm1d(4)",
    inputs = { { 6, 4 } }, steps = TRAIN3_EVAL },
  { name = "BatchNorm1d momentum=None on (N, C, L)", lua = function() return nn.BatchNorm1d(3, { momentum = false }) end,
    py = "nn.BatchNorm1d(3, momentum=None)", inputs = { { 4, 3, 5 } }, steps = TRAIN3_EVAL },
  { name = "BatchNorm1d eps, momentum, affine=False", lua = function() return nn.BatchNorm1d(3, 1e-3, 0.3, false) end,
    py = "nn.BatchNorm1d(3, 1e-3, 0.3, False)", inputs = { { 5, 3 } }, steps = TRAIN3_EVAL },
  { name = "BatchNorm2d(3)", lua = function() return nn.BatchNorm2d(3) end, py = "nn.BatchNorm2d(3)",
    inputs = { { 4, 3, 3, 4 } }, steps = TRAIN3_EVAL },
  { name = "BatchNorm2d track_running_stats=False", lua = function() return nn.BatchNorm2d(2, { track_running_stats = false }) end,
    py = "nn.BatchNorm2d(2, track_running_stats=False)", inputs = { { 3, 2, 2, 3 } }, steps = { "train", "eval" } },
  { name = "BatchNorm2d float64", lua = function() return nn.BatchNorm2d(2, { momentum = 0.5 }) end,
    py = "nn.BatchNorm2d(2, momentum=0.5)", inputs = { { 3, 2, 2, 2 } }, steps = TRAIN3_EVAL, dtype = "float64" },
  { name = "BatchNorm2d eval first (running stats from init)", lua = function() return nn.BatchNorm2d(2) end,
    py = "nn.BatchNorm2d(2)", inputs = { { 1, 2, 1, 1 } }, steps = { "eval" } },
  { name = "LayerNorm(5)", lua = function() return nn.LayerNorm(5) end, py = "nn.LayerNorm(5)",
    inputs = { { 3, 5 } } },
  { name = "LayerNorm({4, 5})", lua = function() return nn.LayerNorm({ 4, 5 }) end, py = "nn.LayerNorm([4, 5])",
    inputs = { { 2, 3, 4, 5 } } },
  { name = "LayerNorm eps, no affine", lua = function() return nn.LayerNorm(6, { eps = 1e-3, elementwise_affine = false }) end,
    py = "nn.LayerNorm(6, eps=1e-3, elementwise_affine=False)", inputs = { { 2, 6 } }, steps = { "train", "eval" } },
  { name = "LayerNorm float64", lua = function() return nn.LayerNorm({ 3 }) end, py = "nn.LayerNorm((3,))",
    inputs = { { 4, 3 } }, dtype = "float64" },
  { name = "GroupNorm(2, 4)", lua = function() return nn.GroupNorm(2, 4) end, py = "nn.GroupNorm(2, 4)",
    inputs = { { 3, 4, 5 } } },
  { name = "GroupNorm eps, no affine, 4-D", lua = function() return nn.GroupNorm(3, 6, 1e-3, false) end,
    py = "nn.GroupNorm(3, 6, 1e-3, False)", inputs = { { 2, 6, 2, 3 } } },
  { name = "GroupNorm(1, 4) on (N, C)", lua = function() return nn.GroupNorm(1, 4) end, py = "nn.GroupNorm(1, 4)",
    inputs = { { 2, 4 } }, steps = { "train", "eval" } },
}

describe("nn normalization layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("BatchNorm details", function()
    it("counts batches in num_batches_tracked (int64) only while training", function()
      local bn = nn.BatchNorm1d(2)
      bn(torch.randn(4, 2)); bn(torch.randn(4, 2))
      bn:eval(); bn(torch.randn(4, 2))
      assert.are.equal(2, bn.num_batches_tracked:item())
      assert.are.equal(torch.int64, bn.num_batches_tracked.dtype)
      assert.are.equal(0, bn.num_batches_tracked:dim())
    end)

    it("resets running stats", function()
      local bn = nn.BatchNorm1d(2)
      bn(torch.randn(4, 2) * 3 + 1)
      bn:reset_running_stats()
      assert.are.same({ 0, 0 }, bn.running_mean:tolist())
      assert.are.same({ 1, 1 }, bn.running_var:tolist())
      assert.are.equal(0, bn.num_batches_tracked:item())
    end)

    it("does not track gradients into the buffers", function()
      local bn = nn.BatchNorm2d(2)
      bn(torch.randn(2, 2, 3, 3, { requires_grad = true })):sum():backward()
      assert.is_false(bn.running_mean.requires_grad)
      assert.is_nil(bn.running_mean.grad)
    end)
  end)

  describe("misuse", function()
    it("names the module and the shapes for wrong channels or rank", function()
      assert.are.equal("BatchNorm2d(16): expected input of shape (N, 16, H, W), got [8, 3, 5, 5]",
        err(nn.BatchNorm2d(16), torch.randn(8, 3, 5, 5)))
      assert.are.equal("BatchNorm2d(16): expected input of shape (N, 16, H, W), got [8, 16]",
        err(nn.BatchNorm2d(16), torch.randn(8, 16)))
      assert.are.equal("BatchNorm1d(4): expected input of shape (N, 4) or (N, 4, L), got [2, 3, 4, 5]",
        err(nn.BatchNorm1d(4), torch.randn(2, 3, 4, 5)))
      assert.are.equal("LayerNorm((4, 5)): expected input of shape (*, 4, 5), got [2, 5, 4]",
        err(nn.LayerNorm({ 4, 5 }), torch.randn(2, 5, 4)))
      assert.are.equal("GroupNorm(2, 4): expected input of shape (N, 4, *), got [2, 6, 3]",
        err(nn.GroupNorm(2, 4), torch.randn(2, 6, 3)))
    end)

    it("refuses one value per channel in training, as PyTorch", function()
      assert.matches("BatchNorm1d%(3%): expected more than 1 value per channel when training, got input of shape %[1, 3%]",
        err(nn.BatchNorm1d(3), torch.randn(1, 3)))
      assert.are.same({ 1, 3 }, { unpack(nn.BatchNorm1d(3):eval()(torch.randn(1, 3)):size()) })
    end)

    it("names the module for a wrong dtype", function()
      assert.matches("BatchNorm1d(3): expected a floating-point input, got int64 of shape [2, 3]",
        err(nn.BatchNorm1d(3), torch.zeros(2, 3, { dtype = torch.int64 })), 1, true)
      assert.matches("LayerNorm((3,)): expected a floating-point input, got int64 of shape [2, 3]",
        err(nn.LayerNorm(3), torch.zeros(2, 3, { dtype = torch.int64 })), 1, true)
      assert.are.equal("BatchNorm1d(3): expected input of dtype float32 (the module's), got float64 of shape [2, 3]",
        err(nn.BatchNorm1d(3), torch.zeros(2, 3, { dtype = torch.float64 })))
      -- libtorch's own check (PyTorch 2.11 raises the same text), with the module in front
      assert.matches("^LayerNorm%(%(3,%)%): .*mixed dtype %(CPU%): all inputs must share same datatype%.$",
        err(nn.LayerNorm(3), torch.zeros(2, 3, { dtype = torch.float64 })))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("num_channels %(6%) must be divisible by num_groups %(4%)", err(nn.GroupNorm, 4, 6))
      assert.matches("num_features must be a positive integer", err(nn.BatchNorm2d, 0))
      assert.matches("BatchNorm2d: unexpected keyword argument 'afine' %(did you mean 'affine'%?%)", err(nn.BatchNorm2d, 3, { afine = false }))
      assert.matches("normalized_shape must be a positive integer", err(nn.LayerNorm, { 3, "x" }))
    end)
  end)
end)

describe("BatchNorm eps", function()
  it("is accepted by the constructor and refused by forward when <= 0, as PyTorch does", function()
    local pytorch = require "spec.support.pytorch"
    local ref = pytorch.run([[
out = []
for eps in (-1, 0):
    m = torch.nn.BatchNorm1d(3, eps=eps)
    try:
        m(torch.randn(4, 3)); out.append('ok')
    except ValueError as e:
        out.append(str(e))
print(json.dumps(out))]])
    for i, eps in ipairs({ -1, 0 }) do
      local m = nn.BatchNorm1d(3, { eps = eps })
      assert.equals(eps, m.eps)
      assert.matches(ref[i], err(m, torch.randn(4, 3)), 1, true)
      assert.matches(ref[i], err(nn.functional.batch_norm, torch.randn(4, 3), torch.zeros(3), torch.ones(3),
        { eps = eps, training = true }), 1, true)
    end
  end)
end)
