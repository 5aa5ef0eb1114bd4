--[[
  spec/nn/sparse_spec.lua — nn.Embedding and nn.Embedding.from_pretrained
  (lua/torch/nn/sparse.lua) against PyTorch.

  Each case (spec/support/layer_parity.lua) checks the default init bit for bit (N(0, 1) draws,
  padding row zeroed), state_dict keys / shapes (PyTorch loads ours with strict=True), repr;
  then loads the same weight into both, looks up the same int64 indices and compares the output
  and the weight gradient (none into padding_idx's row; scaled by inverse frequency with
  scale_grad_by_freq; rows renormalised in place with max_norm). Also from_pretrained (frozen
  and not), float64, and misuse errors.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5; float64
  1e-12. Observed on
  CPU: bit-identical (same libtorch, same kernels); the margin covers thread-count differences.

  Run:  build/ltorch /usr/bin/busted spec/nn/sparse_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err
local approx = require "spec.support.approx"

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

local PRE = parity.values({ 5, 3 }, 42)

local CASES = {
  { name = "Embedding(10, 3)", lua = function() return nn.Embedding(10, 3) end, py = "nn.Embedding(10, 3)",
    inputs = { { shape = { 2, 4 }, int = 10 } }, steps = { "train", "train" } },
  { name = "Embedding padding_idx=0", lua = function() return nn.Embedding(6, 4, 0) end,
    py = "nn.Embedding(6, 4, 0)", inputs = { { shape = { 3, 5 }, int = 6 } } },
  { name = "Embedding padding_idx=-1", lua = function() return nn.Embedding(7, 2, { padding_idx = -1 }) end,
    py = "nn.Embedding(7, 2, padding_idx=-1)", inputs = { { shape = { 9 }, int = 7 } } },
  { name = "Embedding max_norm", lua = function() return nn.Embedding(5, 3, { max_norm = 1.0 }) end,
    py = "nn.Embedding(5, 3, max_norm=1.0)", inputs = { { shape = { 4 }, int = 5 } } },
  { name = "Embedding max_norm, norm_type=1, scale_grad_by_freq",
    lua = function() return nn.Embedding(5, 3, { max_norm = 2.5, norm_type = 1.0, scale_grad_by_freq = true }) end,
    py = "nn.Embedding(5, 3, max_norm=2.5, norm_type=1.0, scale_grad_by_freq=True)",
    inputs = { { shape = { 2, 6 }, int = 5 } } },
  { name = "Embedding float64", lua = function() return nn.Embedding(4, 3) end, py = "nn.Embedding(4, 3)",
    inputs = { { shape = { 5 }, int = 4 } }, dtype = "float64" },
  { name = "Embedding.from_pretrained", lua = function() return nn.Embedding.from_pretrained(torch.tensor(PRE)) end,
    py = "nn.Embedding.from_pretrained(torch.tensor(" .. approx.py(PRE) .. "))",
    inputs = { { shape = { 2, 2 }, int = 5 } } },
  { name = "Embedding.from_pretrained freeze=false, padding_idx",
    lua = function() return nn.Embedding.from_pretrained(torch.tensor(PRE), { freeze = false, padding_idx = 2 }) end,
    py = "nn.Embedding.from_pretrained(torch.tensor(" .. approx.py(PRE) .. "), freeze=False, padding_idx=2)",
    inputs = { { shape = { 6 }, int = 5 } } },
}

describe("nn.Embedding", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("padding_idx", function()
    it("starts as a zero row and gets no gradient", function()
      local emb = nn.Embedding(5, 3, { padding_idx = 1 })
      assert.are.same({ 0, 0, 0 }, emb.weight[1]:tolist())
      emb(torch.tensor({ 1, 2, 1, 4 })):sum():backward()
      assert.are.same({ 0, 0, 0 }, emb.weight.grad[1]:tolist())
      assert.are.same({ 1, 1, 1 }, emb.weight.grad[2]:tolist())
    end)
  end)

  describe("from_pretrained", function()
    it("shares the given tensor's storage and freezes by default", function()
      local w = torch.zeros(3, 2)
      local emb = nn.Embedding.from_pretrained(w)
      assert.is_false(emb.weight.requires_grad)
      assert.is_false(w.requires_grad)
      w:fill_(7)
      assert.are.same({ { 7, 7 } }, emb(torch.tensor({ 2 })):tolist())
    end)
  end)

  describe("misuse", function()
    it("names the module for wrong index dtype or range", function()
      local emb = nn.Embedding(10, 3)
      assert.are.equal("Embedding(10, 3): expected int64 or int32 indices, got float32 of shape [2, 2]",
        err(emb, torch.zeros(2, 2)))
      assert.matches("Embedding%(10, 3%): .*index out of range", err(emb, torch.tensor({ 3, 10 })))
      assert.are.equal("Embedding(10, 3): expected a Tensor of indices, got table", err(emb, { 1, 2 }))
    end)

    it("rejects bad constructor arguments", function()
      assert.matches("padding_idx must be within num_embeddings %(4%), got 4", err(nn.Embedding, 4, 2, { padding_idx = 4 }))
      assert.matches("padding_idx must be within num_embeddings %(4%), got %-5", err(nn.Embedding, 4, 2, -5))
      assert.matches("embedding_dim must be a non%-negative integer", err(nn.Embedding, 4, 2.5))
      assert.matches("Embedding: missing required argument 'embedding_dim'", err(nn.Embedding, 4))
      assert.matches("embeddings must be a 2%-D Tensor, got %[3%]", err(nn.Embedding.from_pretrained, torch.zeros(3)))
    end)
  end)
end)
