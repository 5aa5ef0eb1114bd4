--[[
  spec/nn/parametrize_spec.lua — nn.utils.parametrize (lua/torch/nn/parametrize.lua) and
  nn.utils.parametrizations (parametrizations.lua) against PyTorch: module.weight computed from
  module.parametrizations.weight.original(s) on access, state dict keys, reprs, values, gradients
  to the originals, assignment through right_inverse, chaining, removal (leave_parametrized
  true and false), caching, buffers, loading a hook-form weight_norm state dict, misuse errors;
  and that a module never parametrized keeps the plain attribute lookup.

  Modules and inputs are made under the same seed on both sides. Tolerance: float32, atol 1e-6
  + rtol 1e-5 (float64 matrices: atol 1e-10) for values through matrix functions; bit-exact for
  the originals and the random draws.

  Run:  build/ltorch /usr/bin/busted spec/nn/parametrize_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parametrize = nn.utils.parametrize
local PZ = nn.utils.parametrizations
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL = { atol = 1e-6, rtol = 1e-5 }

local function keys(sd)
  local out = {}
  for k in sd do out[#out + 1] = k end
  return out
end
local function names(list)
  local out = {}
  for _, nv in ipairs(list) do out[#out + 1] = nv[1] end
  return out
end

-- PyTorch's tutorial parametrization: a symmetric matrix from the upper triangle.
local Symmetric = nn.Module:extend("Symmetric")
function Symmetric:forward(x) return x:triu() + x:triu(1).mT end
function Symmetric:right_inverse(a) return a:triu() end

-- Scales by 2 (no right_inverse).
local Double = nn.Module:extend("Double")
function Double:forward(x) return x * 2 end

local PY_CLASSES = [[
import torch.nn.utils.parametrize as P
import torch.nn.utils.parametrizations as PZ
nn = torch.nn
class Symmetric(nn.Module):
    def forward(self, x): return x.triu() + x.triu(1).mT
    def right_inverse(self, a): return a.triu()
class Double(nn.Module):
    def forward(self, x): return x * 2
out = {}
def keys(m): return list(m.state_dict().keys())
def flat(t): return t.detach().flatten().tolist()
]]

describe("nn.utils.parametrizations against PyTorch", function()
  local ref
  setup(function()
    ref = pytorch.run(PY_CLASSES .. [[
torch.manual_seed(0)
m = PZ.weight_norm(nn.Linear(4, 3))
x = torch.randn(5, 4)
y = m(x); (y * y).sum().backward()
pw = m.parametrizations.weight
out['wn'] = [repr(m), keys(m), [n for n, _ in m.named_parameters()], flat(pw.original0), flat(pw.original1),
             flat(y), flat(pw.original0.grad), flat(pw.original1.grad), flat(m.weight)]
torch.manual_seed(1)
s = PZ.spectral_norm(nn.Linear(4, 3))
p = s.parametrizations.weight
out['sn_init'] = [keys(s), flat(p[0]._u), flat(p[0]._v)]
x = torch.randn(5, 4)
y1 = s(x); y2 = s(x); (y2 * y2).sum().backward()
s.eval(); y3 = s(x)
out['sn'] = [flat(y1), flat(y2), flat(p.original.grad), flat(y3), flat(p[0]._u), flat(p[0]._v)]
torch.manual_seed(2)
c = PZ.spectral_norm(nn.ConvTranspose1d(2, 3, 2))
out['snt'] = [flat(c.parametrizations.weight[0]._u), flat(c.parametrizations.weight[0]._v)]
orth = []
for i, (shape, omap, triv) in enumerate([((3, 3), None, True), ((2, 4), None, True), ((5, 3), None, True),
        ((3, 3), 'cayley', True), ((4, 2), 'matrix_exp', True), ((2, 3), 'householder', False),
        ((3, 3), 'cayley', False)]):
    torch.manual_seed(10 + i)
    lin = nn.Linear(shape[1], shape[0])
    PZ.orthogonal(lin, orthogonal_map=omap, use_trivialization=triv)
    x = torch.randn(2, shape[1])
    y = lin(x); y.sum().backward()
    orth.append([keys(lin), flat(lin.weight), flat(y), flat(lin.parametrizations.weight.original.grad)])
out['orth'] = orth
torch.manual_seed(20)
lin = PZ.orthogonal(nn.Linear(3, 3).double())
q = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64))[0]
lin.weight = q
out['orth_assign'] = [flat(lin.weight), flat(q)]
print(json.dumps(out))]])
  end)

  it("weight_norm: repr, keys, originals, outputs and gradients to original0 / original1", function()
    torch.manual_seed(0)
    local m = PZ.weight_norm(nn.Linear(4, 3))
    local x = torch.randn(5, 4)
    local y = m(x)
    local loss = (y * y):sum()
    loss:backward()
    local pw = m.parametrizations.weight
    assert.are.equal(ref.wn[1], tostring(m))
    assert.are.same(ref.wn[2], keys(m:state_dict()))
    assert.are.same(ref.wn[3], names(m:named_parameters()))
    approx.check(pw.original0:flatten(), ref.wn[4], 0)
    approx.check(pw.original1:flatten(), ref.wn[5], 0)
    approx.check(y:flatten(), ref.wn[6], TOL)
    approx.check(pw.original0.grad:flatten(), ref.wn[7], TOL)
    approx.check(pw.original1.grad:flatten(), ref.wn[8], TOL)
    approx.check(m.weight:flatten(), ref.wn[9], TOL)
    assert.is_true(parametrize.is_parametrized(m))
    assert.is_true(parametrize.is_parametrized(m, "weight"))
    assert.is_false(parametrize.is_parametrized(m, "bias"))
  end)

  it("spectral_norm: u and v after registration, the power method per training access, eval", function()
    torch.manual_seed(1)
    local s = PZ.spectral_norm(nn.Linear(4, 3))
    local p = s.parametrizations.weight
    assert.are.same(ref.sn_init[1], keys(s:state_dict()))
    approx.check(p[0]._u:flatten(), ref.sn_init[2], TOL)
    approx.check(p[0]._v:flatten(), ref.sn_init[3], TOL)
    local x = torch.randn(5, 4)
    local y1 = s(x)
    local y2 = s(x)
    local loss = (y2 * y2):sum()
    loss:backward()
    s:eval()
    local y3 = s(x)
    for i, got in ipairs({ y1, y2, p.original.grad, y3, p[0]._u, p[0]._v }) do
      approx.check(got:flatten(), ref.sn[i], TOL)
    end
    torch.manual_seed(2)
    local c = PZ.spectral_norm(nn.ConvTranspose1d(2, 3, 2))
    approx.check(c.parametrizations.weight[0]._u, ref.snt[1], TOL)
    approx.check(c.parametrizations.weight[0]._v, ref.snt[2], TOL)
  end)

  local ORTH = { { { 3, 3 } }, { { 2, 4 } }, { { 5, 3 } }, { { 3, 3 }, "cayley" }, { { 4, 2 }, "matrix_exp" },
    { { 2, 3 }, "householder", false }, { { 3, 3 }, "cayley", false } }
  for i, case in ipairs(ORTH) do
    it(("orthogonal of a [%d, %d] weight, map %s%s: weight, output and gradient are PyTorch's")
      :format(case[1][1], case[1][2], case[2] or "default", case[3] == false and ", no trivialization" or ""), function()
      torch.manual_seed(10 + i - 1)
      local lin = nn.Linear(case[1][2], case[1][1])
      PZ.orthogonal(lin, { orthogonal_map = case[2], use_trivialization = case[3] ~= false })
      local x = torch.randn(2, case[1][2])
      local y = lin(x)
      y:sum():backward()
      local want = ref.orth[i]
      assert.are.same(want[1], keys(lin:state_dict()))
      approx.check(lin.weight:flatten(), want[2], TOL)
      approx.check(y:flatten(), want[3], TOL)
      approx.check(lin.parametrizations.weight.original.grad:flatten(), want[4], { atol = 1e-5, rtol = 1e-4 })
      local w = lin.weight
      local gram = case[1][1] <= case[1][2] and w:matmul(w.mT) or w.mT:matmul(w)
      approx.check(gram, torch.eye(gram:size(0)):tolist(), 1e-5)
    end)
  end

  it("assigning to an orthogonal weight goes through right_inverse", function()
    torch.manual_seed(20)
    local lin = PZ.orthogonal(nn.Linear(3, 3):double())
    local q = torch.linalg.qr(torch.randn(3, 3, { dtype = torch.float64 }))
    lin.weight = q
    approx.check(lin.weight:flatten(), ref.orth_assign[1], 1e-10)
    approx.check(q:flatten(), ref.orth_assign[2], 0)
    approx.check(lin.weight, q:tolist(), 1e-10)
  end)
end)

describe("nn.utils.parametrize against PyTorch", function()
  local ref
  setup(function()
    ref = pytorch.run(PY_CLASSES .. [[
torch.manual_seed(0)
m = nn.Linear(3, 3)
P.register_parametrization(m, 'weight', Symmetric())
out['sym'] = [repr(m), keys(m), flat(m.parametrizations.weight.original), flat(m.weight)]
P.register_parametrization(m, 'weight', Double())
x = torch.randn(2, 3)
y = m(x); y.sum().backward()
out['chain'] = [repr(m), keys(m), flat(m.weight), flat(y), flat(m.parametrizations.weight.original.grad)]
P.remove_parametrizations(m, 'weight')
out['removed'] = [repr(m), keys(m), flat(m.weight), type(m.weight).__name__]
torch.manual_seed(0)
m = nn.Linear(3, 3)
P.register_parametrization(m, 'weight', Symmetric())
a = torch.arange(9.0).reshape(3, 3)
m.weight = a
out['assign'] = [flat(m.parametrizations.weight.original), flat(m.weight)]
P.remove_parametrizations(m, 'weight', leave_parametrized=False)
out['left'] = [keys(m), flat(m.weight)]
bn = nn.BatchNorm1d(3)
P.register_parametrization(bn, 'running_var', Double())
out['buffer'] = [keys(bn), [n for n, _ in bn.named_buffers()], flat(bn.running_var)]
torch.manual_seed(3)
old = torch.nn.utils.weight_norm(nn.Linear(3, 2))
new = PZ.weight_norm(nn.Linear(3, 2))
r = new.load_state_dict(old.state_dict())
out['compat'] = [list(r.missing_keys), list(r.unexpected_keys), flat(new.weight), flat(old.weight_g), flat(old.weight_v)]
print(json.dumps(out))]])
  end)

  it("register_parametrization with a user Module (and right_inverse) moves the weight to original", function()
    torch.manual_seed(0)
    local m = nn.Linear(3, 3)
    assert.are.equal(m, parametrize.register_parametrization(m, "weight", Symmetric()))
    assert.are.equal(ref.sym[1], tostring(m))
    assert.are.same(ref.sym[2], keys(m:state_dict()))
    approx.check(m.parametrizations.weight.original:flatten(), ref.sym[3], 0)
    approx.check(m.weight:flatten(), ref.sym[4], 0)
    assert.is_true(nn.is_parameter(m.parametrizations.weight.original))
  end)

  it("chains parametrizations, the gradient reaching the original; removal restores the class", function()
    torch.manual_seed(0)
    local m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Double())
    local x = torch.randn(2, 3)
    local y = m(x)
    y:sum():backward()
    assert.are.equal(ref.chain[1], tostring(m))
    assert.are.same(ref.chain[2], keys(m:state_dict()))
    approx.check(m.weight:flatten(), ref.chain[3], 0)
    approx.check(y:flatten(), ref.chain[4], TOL)
    approx.check(m.parametrizations.weight.original.grad:flatten(), ref.chain[5], TOL)
    parametrize.remove_parametrizations(m, "weight")
    assert.are.equal(ref.removed[1], tostring(m))
    assert.are.same(ref.removed[2], keys(m:state_dict()))
    approx.check(m.weight:flatten(), ref.removed[3], 0)
    assert.are.equal("Parameter", ref.removed[4])
    assert.is_true(nn.is_parameter(m.weight))
    assert.are.equal(nn.Linear.__instance_mt, getmetatable(m))
    assert.is_false(parametrize.is_parametrized(m))
  end)

  it("assignment sets the original through right_inverse; leave_parametrized=false keeps the original", function()
    torch.manual_seed(0)
    local m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    m.weight = torch.arange(9, { dtype = torch.float32 }):reshape(3, 3)
    approx.check(m.parametrizations.weight.original:flatten(), ref.assign[1], 0)
    approx.check(m.weight:flatten(), ref.assign[2], 0)
    parametrize.remove_parametrizations(m, "weight", { leave_parametrized = false })
    assert.are.same(ref.left[1], keys(m:state_dict()))
    approx.check(m.weight:flatten(), ref.left[2], 0)
  end)

  it("parametrizes a buffer (it stays a buffer)", function()
    local bn = nn.BatchNorm1d(3)
    parametrize.register_parametrization(bn, "running_var", Double())
    assert.are.same(ref.buffer[1], keys(bn:state_dict()))
    assert.are.same(ref.buffer[2], names(bn:named_buffers()))
    approx.check(bn.running_var, ref.buffer[3], 0)
  end)

  it("weight_norm loads a state dict saved from the hook form (weight_g / weight_v)", function()
    torch.manual_seed(3)
    local old = nn.utils.weight_norm(nn.Linear(3, 2))
    local new = PZ.weight_norm(nn.Linear(3, 2))
    local sd = old:state_dict()
    local r = new:load_state_dict(sd)
    assert.are.same(ref.compat[1], r.missing_keys)
    assert.are.same(ref.compat[2], r.unexpected_keys)
    approx.check(new.weight:flatten(), ref.compat[3], TOL)
    assert.is_not_nil(sd.weight_g)   -- the caller's table is left as it was
  end)

  it("cached computes each parametrized tensor once inside, every access outside", function()
    local calls = 0
    local Counting = nn.Module:extend("Counting")
    function Counting:forward(x) calls = calls + 1; return x * 1 end
    local m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Counting())
    calls = 0
    local a, b = parametrize.cached(function() return m.weight, m.weight end)
    assert.are.equal(1, calls)
    assert.are.equal(a, b)
    local _ = m.weight
    _ = m.weight
    assert.are.equal(3, calls)
  end)

  it("an optimizer trains the originals through the parametrization", function()
    torch.manual_seed(0)
    local m = PZ.weight_norm(nn.Linear(3, 1))
    local opt = torch.optim.SGD(m:parameters(), 0.1)
    local x, t = torch.randn(8, 3), torch.randn(8, 1)
    local first
    for step = 1, 20 do
      opt:zero_grad()
      local loss = ((m(x) - t) ^ 2):mean()
      loss:backward()
      opt:step()
      if step == 1 then first = loss:item() end
      if step == 20 then assert.is_true(loss:item() < first) end
    end
  end)

  it("a module never parametrized keeps the plain attribute lookup", function()
    local lin = nn.Linear(2, 2)
    assert.are.equal(nn.Linear.__instance_mt, getmetatable(lin))
    parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    assert.are.equal(nn.Linear.__instance_mt, getmetatable(nn.Linear(2, 2)))
  end)

  it("raises on misuse", function()
    local m = nn.Linear(3, 2)
    assert.matches("does not have a parameter, a buffer, or a parametrized element with name 'wieght'",
      err(parametrize.register_parametrization, m, "wieght", Double()))
    local Shrink = nn.Module:extend("Shrink")
    function Shrink:forward(x) return x:narrow(0, 0, 1) end
    assert.matches("may not change the shape of the tensor", err(parametrize.register_parametrization, m, "weight", Shrink()))
    assert.matches("Module Linear does not have a parametrization on weight", err(parametrize.remove_parametrizations, m, "weight"))
    parametrize.register_parametrization(m, "weight", Double())
    assert.matches("does not implement right_inverse", err(function() m.weight = torch.zeros(2, 3) end))
    local w = PZ.weight_norm(nn.Linear(3, 2))
    assert.matches("Cannot leave unparametrized", err(parametrize.remove_parametrizations, w, "weight", false))
    assert.matches("orthogonal_map has to be one of", err(PZ.orthogonal, nn.Linear(2, 2), "weight", "qr"))
    assert.matches("Expected a matrix or batch of matrices", err(PZ.orthogonal, nn.Linear(2, 2), "bias"))
    assert.matches("has no parameter or buffer with name 'weigth'", err(PZ.spectral_norm, nn.Linear(2, 2), "weigth"))
    assert.matches("register_parametrization: unexpected keyword argument 'unsave'",
      err(parametrize.register_parametrization, nn.Linear(2, 2), "weight", Double(), { unsave = true }))
    local o = PZ.orthogonal(nn.Linear(2, 2), { use_trivialization = false })
    assert.matches("NotImplementedError: It is not possible to assign", err(function() o.weight = torch.eye(2) end))
  end)
end)
