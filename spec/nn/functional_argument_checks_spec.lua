--[[
  spec/nn/functional_argument_checks_spec.lua — torch.nn.functional checks that PyTorch 2.11 makes
  in Python before reaching ATen, with its messages: hardtanh's min_val > max_val and
  triplet_margin_loss's margin <= 0 (ValueErrors there); and multi_head_attention_forward with a
  1-D bias_k / bias_v ([E], which PyTorch's bias_k.repeat(1, bsz, 1) takes as [1, bsz, E]):
  output and attention weights against the venv's PyTorch on the same inputs, float64,
  tolerance 1e-12 absolute (the same ATen calls).

  Run:  build/ltorch /usr/bin/busted spec/nn/functional_argument_checks_spec.lua
]]
local torch = require "torch"
local F = require("torch.nn").functional
local pytorch = require "spec.support.pytorch"

local function close(a, b)
  assert.equal(tostring(a.shape), tostring(b.shape))
  local d = (a - b):abs():max():item()
  assert(d <= 1e-12, "max abs difference " .. d)
end

describe("nn.functional argument checks", function()
  it("hardtanh refuses min_val > max_val as PyTorch does", function()
    local x = torch.tensor({ -2, 0, 2 }, { dtype = torch.float64 })
    assert.has_error(function() F.hardtanh(x, 0.5, -0.5) end, "hardtanh: min_val cannot be greater than max_val")
    assert.has_error(function() F.hardtanh(x, { min_val = 0.5, max_val = -0.5 }) end,
      "hardtanh: min_val cannot be greater than max_val")
    assert.same({ 0.5, 0.5, 0.5 }, F.hardtanh(x, 0.5, 0.5):tolist())   -- equal bounds are fine
  end)

  it("triplet_margin_loss refuses margin <= 0 as PyTorch does", function()
    local a, p, n = torch.ones(2, 3), torch.zeros(2, 3), torch.full({ 2, 3 }, 2.0)
    assert.has_error(function() F.triplet_margin_loss(a, p, n, { margin = -1.0 }) end,
      "triplet_margin_loss: margin must be greater than 0, got -1")
    assert.has_error(function() F.triplet_margin_loss(a, p, n, { margin = 0 }) end,
      "triplet_margin_loss: margin must be greater than 0, got 0")
    assert.is_true(F.triplet_margin_loss(a, p, n, { margin = 0.5 }):item() > 0)
  end)

  it("multi_head_attention_forward takes a 1-D bias_k / bias_v as PyTorch does", function()
    local ref = pytorch.run [[
def s(n, *shape, k=1.0):
    return (torch.arange(n, dtype=torch.float64) * k).sin().reshape(*shape)
L, N, E, H = 3, 2, 4, 2
q, kk, v = s(L*N*E, L, N, E), s(L*N*E, L, N, E, k=0.7), s(L*N*E, L, N, E, k=1.3)
out, w = torch.nn.functional.multi_head_attention_forward(q, kk, v, E, H, s(3*E*E, 3*E, E, k=0.3), s(3*E, 3*E, k=0.9),
    s(E, E, k=1.7), s(E, E, k=2.1), False, 0.0, s(E*E, E, E, k=0.5), s(E, E, k=1.1), training=False)
print(json.dumps({"out": out.tolist(), "w": w.tolist()}))
]]
    local function s(n, shape, k)
      return (torch.arange(n, { dtype = torch.float64 }) * (k or 1.0)):sin():reshape(shape)
    end
    local L, N, E, H = 3, 2, 4, 2
    local out, w = F.multi_head_attention_forward(s(L * N * E, { L, N, E }), s(L * N * E, { L, N, E }, 0.7),
      s(L * N * E, { L, N, E }, 1.3), E, H, s(3 * E * E, { 3 * E, E }, 0.3), s(3 * E, { 3 * E }, 0.9),
      s(E, { E }, 1.7), s(E, { E }, 2.1), false, 0.0, s(E * E, { E, E }, 0.5), s(E, { E }, 1.1), { training = false })
    close(out, torch.tensor(ref.out, { dtype = torch.float64 }))
    close(w, torch.tensor(ref.w, { dtype = torch.float64 }))
  end)
end)
