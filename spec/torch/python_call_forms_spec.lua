--[[
  spec/torch/python_call_forms_spec.lua — call forms PyTorch's Python binding accepts that ltorch
  refused (issue #36, op_db replay): Tensor:cfloat() / :cdouble(); torch.cdist's compute_mode by
  name; torch.gradient's spacing as a list of numbers; linspace with 0-dim tensor start / end;
  narrow with a 0-dim tensor start; squeeze with a list of dims; std / var with the unbiased
  boolean alone; empty_strided / empty_permuted with requires_grad=; the 2d / 3d adaptive pools
  with None (false, or a nil hole) in output_size. Values, dtypes and errors are the reference
  PyTorch's (printed by the venv's python for the same inputs).
  Tolerance: 1e-12 absolute in float64 (the same ATen kernels); shapes, dtypes and errors exactly.

  Run:  build/ltorch /usr/bin/busted spec/torch/python_call_forms_spec.lua
]]
local torch = require "torch"
local F = torch.nn.functional

local CDIST_P2 = { { 3.0413812651491097, 5.477225575051661 }, { 18.661457606521523, 20.12461179749811 }, { 2.8722813232690143, 4.58257569495584 } }
local CDIST_P1 = { { 3.5, 8.0 }, { 30.5, 31.0 }, { 4.5, 7.0 } }
local GRAD_LIST = { { { 3.0, 4.5, 6.0 }, { 0.0, -0.5, -0.25 }, { -3.0, -5.5, -6.5 } }, { { 0.47619047619047616, 0.7142857142857143, 0.9523809523809523 }, { 1.9047619047619047, 2.142857142857143, 2.380952380952381 }, { -0.47619047619047616, 0.47619047619047616, 1.4285714285714286 } } }
local GRAD_DIM1 = { { 1.0, 3.0, 5.0 }, { 7.0, 9.0, 11.0 }, { -6.0, 2.0, 10.0 } }
local LINSPACE_TT = { -2.5, -1.125, 0.25, 1.625, 3.0 }
local LINSPACE_ST = { -2, 1, 4 }
local STD_T, STD_F, VAR_T, VAR_F = 5.385164807134504, 5.0771820705759385, 29.0, 25.77777777777778
local VAR_COMPLEX = 58.0 -- torch.float64
local ADAPTIVE_NONE = { { { 1.5, 3.0 }, { 9.0, 13.5 }, { 0.5, 1.5 } } }
local CFLOAT = { { 1.5, 0.0 }, { -2.0, 0.0 } }

local function close(got, want, where)
  where = where or ""
  if type(want) == "table" then
    assert.are.equal(#want, #got, "length" .. where)
    for i = 1, #want do close(got[i], want[i], where .. "[" .. i .. "]") end
  else
    assert.is_true(math.abs(got - want) <= 1e-12, ("%s: %.17g, PyTorch %.17g"):format(where, got, want))
  end
end

-- The error f raises, which must contain `text`.
local function raises(text, f, ...)
  local ok, msg = pcall(f, ...)
  assert.is_false(ok, "no error; expected: " .. text)
  assert.is_truthy(tostring(msg):find(text, 1, true), tostring(msg))
end

local X = { { 1, 2, 4 }, { 7, 11, 16 }, { 1, 0, 3 } }
local Y = { { 0.5, 2, 1 }, { 3, 1, -1 } }
local function shape(t)
  local s, r = t:size(), {}
  for i = 1, #s do r[i] = s[i] end
  return r
end
local function x64() return torch.tensor(X, { dtype = torch.float64 }) end

describe("PyTorch's call forms", function()
  it("Tensor:cfloat() and :cdouble() cast to complex64 and complex128, with a gradient", function()
    local x = torch.tensor({ 1.5, -2 }, { dtype = torch.float32, requires_grad = true })
    local c = x:cfloat()
    assert.are.equal(torch.complex64, c.dtype)
    assert.are.equal(torch.complex128, x:cdouble().dtype)
    assert.are.equal(torch.complex64, torch.tensor({ 1, 2 }):cfloat().dtype)
    close(torch.view_as_real(c):tolist(), CFLOAT)
    c:abs():sum():backward()
    close(x.grad:tolist(), { 1, -1 })
    raises("keyword table expected", function() return x:cfloat(3) end)
  end)

  it("torch.cdist takes compute_mode by torch.cdist's names", function()
    local x, y = x64(), torch.tensor(Y, { dtype = torch.float64 })
    for _, mode in ipairs({ "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist" }) do
      close(torch.cdist(x, y, 2, mode):tolist(), CDIST_P2)
    end
    close(torch.cdist(x, y):tolist(), CDIST_P2)
    close(torch.cdist(x, y, { p = 1, compute_mode = "use_mm_for_euclid_dist" }):tolist(), CDIST_P1)
    raises("bogus is not a valid value for compute_mode", torch.cdist, x, y, 2, "bogus")
  end)

  it("torch.gradient takes spacing as a list of numbers", function()
    local x = x64()
    local g = torch.gradient(x, { spacing = { 2, 2.1 } })
    assert.are.equal(2, #g)
    close({ g[1]:tolist(), g[2]:tolist() }, GRAD_LIST)
    local g1 = torch.gradient(x, { spacing = { 0.5 }, dim = 1, edge_order = 2 })
    assert.are.equal(1, #g1)
    close(g1[1]:tolist(), GRAD_DIM1)
    raises("but got a spacing argument of length 1 and a dim argument of length 2.",
      torch.gradient, x, { spacing = { 0.1 }, dim = { 1, 0 } })
    raises("since dim argument was not given, but got a list of length 1", torch.gradient, x, { spacing = { 0.1 } })
    raises("dim 1 appears multiple times in the list of dims", torch.gradient, x, { spacing = { 0.1, 0.2 }, dim = { 1, 1 } })
  end)

  it("linspace takes 0-dim tensors as start and end", function()
    local t = torch.linspace(torch.tensor(-2.5, { dtype = torch.float32 }), torch.tensor(3), 5, { dtype = torch.float64 })
    assert.are.equal(torch.float64, t.dtype)
    close(t:tolist(), LINSPACE_TT)
    local i = torch.linspace(-2.0, torch.tensor(4), 3, { dtype = torch.int64 })
    assert.are.equal(torch.int64, i.dtype)
    assert.are.same(LINSPACE_ST, i:tolist())
    raises("linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s) and end "
      .. "with 1 dimension(s).", torch.linspace, torch.tensor({ 1, 2 }), torch.tensor({ 1, 2 }), 1)
  end)

  it("narrow takes a 0-dim integral tensor as start", function()
    local y = torch.arange(10)
    assert.are.same({ 2, 3, 4 }, y:narrow(0, torch.tensor(2), 3):tolist())
    assert.are.same({ 7, 8 }, torch.narrow(y, 0, torch.tensor(-3), 2):tolist())
    raises("start must be an 0-dim integral Tensor.", function() return y:narrow(0, torch.tensor(2.0, { dtype = torch.float32 }), 3) end)
    raises("start must be an 0-dim integral Tensor.", function() return y:narrow(0, torch.tensor({ 2 }), 3) end)
  end)

  it("squeeze takes a list of dims", function()
    local x = torch.zeros(5, 1, 5, 1)
    assert.are.same({ 5, 1, 5, 1 }, shape(x:squeeze({})))
    assert.are.same({ 5, 5, 1 }, shape(x:squeeze({ 1 })))
    assert.are.same({ 5, 1, 5 }, shape(torch.squeeze(x, { -1 })))
    assert.are.same({ 5, 5 }, shape(x:squeeze({ 1, 3 })))
    assert.are.same({ 5, 5 }, shape(x:squeeze()))
    raises("dim 1 appears multiple times in the list of dims", function() return x:squeeze({ 1, 1 }) end)
  end)

  it("std and var take the unbiased boolean alone", function()
    local x = x64()
    close(x:std(true):item(), STD_T)
    close(x:std(false):item(), STD_F)
    close(torch.var(x, true):item(), VAR_T)
    close(torch.var(x, false):item(), VAR_F)
    local v = torch.complex(x, x:flip(1)):var(true)
    assert.are.equal(torch.float64, v.dtype)
    close(v:item(), VAR_COMPLEX)
    raises("bad argument #3 to 'std'", function() return x:std(true, 1) end)
  end)

  it("empty_strided and empty_permuted take requires_grad=", function()
    local t = torch.empty_strided({ 2, 3 }, { 1, 2 }, { requires_grad = true, dtype = torch.float64 })
    assert.is_true(t.requires_grad)
    assert.are.same({ 1, 2 }, t:stride())
    assert.is_false(torch.empty_strided({ 5 }, { 4 }, { requires_grad = false, dtype = torch.int64 }).requires_grad)
    local p = torch.empty_permuted({ 1, 3, 5 }, { 0, 2, 1 }, { requires_grad = true })
    assert.is_true(p.requires_grad)
    assert.are.same({ 15, 1, 3 }, p:stride())
    raises("Only Tensors of floating point and complex dtype can require gradients",
      torch.empty_strided, { 2 }, { 1 }, { requires_grad = true, dtype = torch.int64 })
    raises("argument 'requires_grad' must be bool", torch.empty_strided, { 2 }, { 1 }, { requires_grad = 1 })
  end)

  it("the 2d and 3d adaptive pools take None (false or a nil hole) in output_size", function()
    local x = x64():reshape(1, 3, 3)
    close(F.adaptive_avg_pool2d(x, { false, 2 }):tolist(), ADAPTIVE_NONE)
    close(F.adaptive_avg_pool2d(x, { nil, 2 }):tolist(), ADAPTIVE_NONE)
    local z = torch.randn(2, 8, 8, 8)
    assert.are.same({ 2, 8, 5, 8 }, shape(F.adaptive_avg_pool2d(z, { 5, nil })))
    assert.are.same({ 2, 8, 8, 3 }, shape(F.adaptive_max_pool2d(z, { nil, 3 })))
    local y = torch.randn(1, 4, 4, 3, 5)
    assert.are.same({ 1, 4, 4, 3, 5 }, shape(F.adaptive_max_pool3d(y, { false, false, false })))
    assert.are.same({ 1, 4, 4, 2, 5 }, shape(F.adaptive_avg_pool3d(y, { false, 2, false })))
    local out, idx = F.adaptive_max_pool3d(y, { false, false, false }, true)
    assert.are.same({ 1, 4, 4, 3, 5 }, shape(out))
    assert.are.equal(torch.int64, idx.dtype)
    raises("Input dimension should be at least 3", F.adaptive_avg_pool2d, torch.randn(2, 2), { 2, 2 })
    raises("adaptive_max_pool3d(): internal error: output_size.size() must be 3",
      F.adaptive_max_pool3d, torch.randn(1, 2, 3, 4), { output_size = {} })
  end)
end)
