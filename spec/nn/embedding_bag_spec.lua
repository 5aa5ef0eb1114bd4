--[[
  spec/nn/embedding_bag_spec.lua — nn.EmbeddingBag (lua/torch/nn/sparse.lua) and
  F.embedding_bag (lua/torch/nn/functional_pooling.lua) against PyTorch.

  Each case builds the module on both sides after the same torch.manual_seed and checks
  (spec/support/layer_parity.lua): the default init bit for bit (N(0, 1), padding_idx row
  zeroed), state_dict keys, repr; then the same weights and indices, comparing the output and the
  weight gradient. Cases cover modes sum / mean / max, 2-D input (fixed-length bags), 1-D input
  with offsets (an empty bag included), include_last_offset, padding_idx (negative too),
  per_sample_weights, max_norm (renormalises the weight in place), scale_grad_by_freq, positional
  and keyword constructor forms, float64. Also from_pretrained, the functional form (input and
  per_sample_weights gradients) and misuse errors.

  One pytorch.run computes every layer reference. Tolerance: float32 atol 1e-6 + rtol 1e-5;
  float64 atol 1e-12 + rtol 1e-12.

  Run:  build/ltorch /usr/bin/busted spec/nn/embedding_bag_spec.lua
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

local function long(v) return torch.tensor(v, { dtype = torch.int64 }) end
local PSW = { { 0.5, -1.0, 2.0, 0.25 }, { 1.5, 0.75, -0.5, 1.0 }, { 0.125, 1.0, -2.0, 0.5 } }

local CASES = {
  { name = "EmbeddingBag(10, 3), 2-D input", lua = function() return nn.EmbeddingBag(10, 3) end,
    py = "nn.EmbeddingBag(10, 3)", inputs = { { shape = { 3, 4 }, int = 9 } } },
  { name = "EmbeddingBag sum, offsets with an empty bag", lua = function() return nn.EmbeddingBag(10, 3, { mode = "sum" }) end,
    py = "nn.EmbeddingBag(10, 3, mode='sum')", inputs = { { shape = { 8 }, int = 9 } },
    lua_kw = { offsets = long({ 0, 3, 3, 6 }) }, py_kw = "offsets=torch.tensor([0, 3, 3, 6])" },
  { name = "EmbeddingBag max, include_last_offset",
    lua = function() return nn.EmbeddingBag(9, 4, { mode = "max", include_last_offset = true }) end,
    py = "nn.EmbeddingBag(9, 4, mode='max', include_last_offset=True)", inputs = { { shape = { 8 }, int = 9 } },
    lua_kw = { offsets = long({ 0, 2, 5, 8 }) }, py_kw = "offsets=torch.tensor([0, 2, 5, 8])" },
  { name = "EmbeddingBag mean, padding_idx", lua = function() return nn.EmbeddingBag(10, 3, { padding_idx = 2 }) end,
    py = "nn.EmbeddingBag(10, 3, padding_idx=2)", inputs = { { shape = { 4, 3 }, int = 9 } } },
  { name = "EmbeddingBag sum, negative padding_idx", lua = function() return nn.EmbeddingBag(9, 2, { mode = "sum",
      padding_idx = -4 }) end,
    py = "nn.EmbeddingBag(9, 2, mode='sum', padding_idx=-4)", inputs = { { shape = { 3, 4 }, int = 9 } } },
  { name = "EmbeddingBag sum, per_sample_weights", lua = function() return nn.EmbeddingBag(10, 3, nil, 2.0, false, "sum") end,
    py = "nn.EmbeddingBag(10, 3, None, 2.0, False, 'sum')", inputs = { { shape = { 3, 4 }, int = 9 } },
    lua_kw = { per_sample_weights = torch.tensor(PSW) }, py_kw = "per_sample_weights=torch.tensor(" .. approx.py(PSW) .. ")" },
  { name = "EmbeddingBag max_norm, norm_type", lua = function() return nn.EmbeddingBag(10, 3, { max_norm = 1.0,
      norm_type = 1.5 }) end,
    py = "nn.EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.5)", inputs = { { shape = { 2, 5 }, int = 9 } },
    steps = { "train", "train" } },
  { name = "EmbeddingBag scale_grad_by_freq, float64",
    lua = function() return nn.EmbeddingBag(9, 3, { mode = "sum", scale_grad_by_freq = true, dtype = torch.float64 }) end,
    py = "nn.EmbeddingBag(9, 3, mode='sum', scale_grad_by_freq=True, dtype=torch.float64)",
    inputs = { { shape = { 3, 5 }, int = 9 } }, dtype = "float64" },
}

describe("nn.EmbeddingBag", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("from_pretrained and F.embedding_bag", function()
    local W = parity.values({ 6, 3 }, 7)
    local R
    setup(function()
      R = pytorch.run(([[
import torch.nn as nn
import torch.nn.functional as F
w = torch.tensor(%s)
bag = nn.EmbeddingBag.from_pretrained(w, mode='sum', padding_idx=1)
ids, offs = torch.tensor([0, 1, 2, 5, 1, 3]), torch.tensor([0, 2, 4])
y1 = bag(ids, offs)
bag2 = nn.EmbeddingBag.from_pretrained(w, False, mode='max')
wf = w.clone().requires_grad_(True)
psw = torch.tensor([0.5, 1.0, -1.5, 2.0, 0.25, 1.0], requires_grad=True)
y2 = F.embedding_bag(ids, wf, offs, mode='sum', per_sample_weights=psw)
(y2 * torch.linspace(-1, 1, y2.numel()).view_as(y2)).sum().backward()
y3 = F.embedding_bag(ids.view(2, 3), w, mode='max')
print(json.dumps({'repr': repr(bag), 'y1': y1.tolist(), 'grad1': bag.weight.requires_grad,
  'grad2': bag2.weight.requires_grad, 'y2': y2.tolist(), 'gw': wf.grad.tolist(), 'gp': psw.grad.tolist(),
  'y3': y3.tolist()}))
]]):format(approx.py(W)))
    end)

    it("from_pretrained wraps the weight, frozen by default, as PyTorch", function()
      local w = torch.tensor(W)
      local bag = nn.EmbeddingBag.from_pretrained(w, { mode = "sum", padding_idx = 1 })
      assert.are.equal(R.repr, tostring(bag))
      assert.are.equal(R.grad1, bag.weight.requires_grad)
      approx.check(bag(long({ 0, 1, 2, 5, 1, 3 }), long({ 0, 2, 4 })):tolist(), R.y1, TOL32)
      assert.are.equal(R.grad2, nn.EmbeddingBag.from_pretrained(w, false, { mode = "max" }).weight.requires_grad)
    end)

    it("F.embedding_bag matches PyTorch, gradients of weight and per_sample_weights included", function()
      local w = torch.tensor(W, { requires_grad = true })
      local psw = torch.tensor({ 0.5, 1.0, -1.5, 2.0, 0.25, 1.0 }, { requires_grad = true })
      local ids = long({ 0, 1, 2, 5, 1, 3 })
      local y2 = F.embedding_bag(ids, w, long({ 0, 2, 4 }), { mode = "sum", per_sample_weights = psw })
      ;(y2 * torch.linspace(-1, 1, y2:numel()):view_as(y2)):sum():backward()
      approx.check(y2:tolist(), R.y2, TOL32)
      approx.check(w.grad:tolist(), R.gw, TOL32)
      approx.check(psw.grad:tolist(), R.gp, TOL32)
      approx.check(F.embedding_bag(ids:view(2, 3), torch.tensor(W), { mode = "max" }):tolist(), R.y3, TOL32)
    end)
  end)

  describe("misuse", function()
    local ids = long({ 1, 2, 3, 4 })
    it("raises PyTorch's errors, named after the module", function()
      local bag = nn.EmbeddingBag(10, 3)
      assert.matches("^EmbeddingBag%(10, 3%): embedding_bag: offsets has to be a 1D Tensor but got None", err(bag, ids))
      assert.matches("if input is 2D, then offsets has to be None", err(bag, ids:view(2, 2), long({ 0, 1 })))
      assert.matches("input has to be 1D or 2D Tensor, but got Tensor of dimension 3", err(bag, ids:view(1, 2, 2)))
      assert.matches("per_sample_weights was not None. per_sample_weights is only supported for mode='sum'",
        err(bag, ids:view(2, 2), { per_sample_weights = torch.ones(2, 2) }))
      assert.matches("If per_sample_weights %(%[3%]%) is not None, then it must have the same shape as the input %(%[4%]%)",
        err(nn.EmbeddingBag(10, 3, { mode = "sum" }), ids, long({ 0 }), torch.ones(3)))
      assert.matches("mode has to be one of sum, mean or max", err(nn.EmbeddingBag(10, 3, { mode = "min" }), ids:view(2, 2)))
      assert.matches("max mode does not support scaling the gradient by the frequency",
        err(nn.EmbeddingBag(10, 3, { mode = "max", scale_grad_by_freq = true }), ids:view(2, 2)))
      assert.matches("^EmbeddingBag%(10, 3%): expected int64 or int32 indices, got float32", err(bag, torch.zeros(2, 2)))
      assert.matches("^EmbeddingBag%(4, 3%): .*takes value 7 which is not in the valid range", err(nn.EmbeddingBag(4, 3), long({ { 1, 7 } })))
      assert.matches("EmbeddingBag.forward: unexpected keyword argument 'offset' %(did you mean 'offsets'%?%)",
        err(bag, ids, { offset = long({ 0 }) }))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("EmbeddingBag: padding_idx must be within num_embeddings %(5%), got 5", err(nn.EmbeddingBag, 5, 2,
        { padding_idx = 5 }))
      assert.matches("EmbeddingBag: Shape of weight does not match num_embeddings and embedding_dim",
        err(nn.EmbeddingBag, 5, 2, { _weight = torch.zeros(4, 2) }))
      assert.matches("EmbeddingBag: num_embeddings must be a non%-negative integer", err(nn.EmbeddingBag, -1, 2))
      assert.matches("EmbeddingBag: unexpected keyword argument 'modes'", err(nn.EmbeddingBag, 5, 2, { modes = "sum" }))
      assert.matches("Embeddings parameter is expected to be 2%-dimensional", err(nn.EmbeddingBag.from_pretrained, torch.zeros(3)))
    end)
  end)
end)
