--[[
  spec/torch/tensor_properties_spec.lua — PyTorch's Tensor attributes read as values, not methods
  (lua/torch/_tensor_properties.lua): x.mT, x.H, x.mH, x.real, x.imag, x.nbytes, x.output_nr,
  x.retains_grad, x.is_cpu, x.is_meta, ... Each is compared with PyTorch on the same tensor, and
  each is checked to be a value: before, x.mT and x.retains_grad found ATen's methods and gave
  functions (a silent difference: `if x.retains_grad then` was always true).

  Run:  build/ltorch /usr/bin/busted spec/torch/tensor_properties_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

-- A 2x2x3 complex tensor from fixed values, on both sides.
local RE = { 1, -2, 3.5, 0.25, 4, -1, 2, 2, -3, 0.5, 1.5, -0.75 }
local IM = { 0.5, 1, -1, 2, 0, -2.5, 1.25, -0.5, 3, 1, -1, 0.125 }
local function complex_x()
  return torch.complex(torch.tensor(RE):reshape(2, 2, 3), torch.tensor(IM):reshape(2, 2, 3))
end

-- [re..., im...] of a complex tensor, the values of a real one.
local function parts(t)
  if t.dtype.is_complex then
    t = t:resolve_conj()
    return { torch.view_as_real(t):select(-1, 0):flatten():tolist(), torch.view_as_real(t):select(-1, 1):flatten():tolist() }
  end
  return { t:flatten():tolist() }
end

describe("Tensor attributes PyTorch reads without a call", function()
  local ref
  setup(function()
    ref = pytorch.run(([[
x = torch.complex(torch.tensor(%s).reshape(2, 2, 3), torch.tensor(%s).reshape(2, 2, 3))
m = x[0]
def parts(t):
    if t.is_complex():
        return [torch.view_as_real(t.resolve_conj())[..., 0].flatten().tolist(), torch.view_as_real(t.resolve_conj())[..., 1].flatten().tolist()]
    return [t.flatten().tolist()]
r = torch.randn(2, 3, requires_grad=True)
y = r * 2
y.retain_grad()
a, b = torch.randn(4).sort()
print(json.dumps({"mT": [list(x.mT.shape), parts(x.mT)], "mH": [list(x.mH.shape), parts(x.mH)],
  "H": [list(m.H.shape), parts(m.H)], "real": parts(x.real), "imag": parts(x.imag),
  "nbytes": [x.nbytes, r.nbytes], "retains_grad": [y.retains_grad, r.retains_grad],
  "output_nr": [a.output_nr, b.output_nr, r.output_nr], "is_cpu": r.is_cpu, "is_meta": r.is_meta}))
]]):format(approx.py(RE), approx.py(IM)))
  end)

  it("x.mT, x.mH and x.H are PyTorch's tensors", function()
    local x = complex_x()
    for _, k in ipairs({ "mT", "mH" }) do
      assert.is_true(torch.is_tensor(x[k]), k)
      assert.are.same(ref[k][1], x[k]:size())
      assert.are.same(ref[k][2], parts(x[k]))
    end
    local m = x[0]
    assert.are.same(ref.H[1], m.H:size())
    assert.are.same(ref.H[2], parts(m.H))
  end)

  it("x.real and x.imag are PyTorch's parts", function()
    local x = complex_x()
    assert.are.same(ref.real, parts(x.real))
    assert.are.same(ref.imag, parts(x.imag))
  end)

  it("x.nbytes, x.output_nr, x.retains_grad, x.is_cpu, x.is_meta are values", function()
    local r = torch.randn(2, 3, { requires_grad = true })
    local y = r * 2
    y:retain_grad()
    local _, b = torch.randn(4):sort()
    local a = torch.randn(4):sort()
    assert.are.same(ref.nbytes, { complex_x().nbytes, r.nbytes })
    assert.are.same(ref.retains_grad, { y.retains_grad, r.retains_grad })
    assert.are.same(ref.output_nr, { a.output_nr, b.output_nr, r.output_nr })
    assert.are.equal(ref.is_cpu, r.is_cpu)
    assert.are.equal(ref.is_meta, r.is_meta)
  end)

  it("raises PyTorch's errors: mT below 2 dims, imag of a real tensor, H of a 3-D tensor", function()
    assert.matches("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.",
      err(function() return torch.randn(3).mT end), 1, true)
    assert.matches("imag is not implemented for tensors with non-complex dtypes.",
      err(function() return torch.randn(3).imag end), 1, true)
    assert.matches("tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor.",
      err(function() return torch.randn(2, 2, 2).H end), 1, true)
  end)

  it("calling one as a method is an error, as in Python", function()
    local x = torch.randn(2, 3)
    assert.matches("attempt to call method 'nbytes' (a number value)", err(function() return x:nbytes() end), 1, true)
    assert.matches("write x.mT, not x:mT()", err(function() return x:mT() end), 1, true)
  end)
end)
