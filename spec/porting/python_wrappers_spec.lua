--[[
  spec/porting/python_wrappers_spec.lua — calls whose PyTorch form comes from a Python wrapper
  (lua/torch/_python_defaults.lua), against PyTorch on the same inputs: the *tensors functions
  called with separate tensors (einsum, broadcast_tensors, block_diag, cartesian_prod, meshgrid,
  chain_matmul, atleast_*), tensordot's dims=int / pair of lists, norm(p='nuc' / 'fro', dtype=),
  nonzero(as_tuple=True). Before, each refused PyTorch's form ("argument 'tensors' must be table
  of Tensors", "number expected, got string", "unexpected keyword 'as_tuple'").

  Run:  build/ltorch /usr/bin/busted spec/porting/python_wrappers_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL = { atol = 1e-12, rtol = 1e-12 }

-- Fixed float64 values of a shape, the same on both sides.
local function vals(shape, seed)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local v = {}
  for i = 1, n do v[i] = math.floor(math.sin(seed * 1.7 + i * 0.61) * 1000) / 256 end
  return torch.tensor(v, { dtype = torch.float64 }):reshape(shape)
end

local PY = [==[
def vals(shape, seed):
    import math
    n = math.prod(shape)
    return torch.tensor([math.floor(math.sin(seed * 1.7 + i * 0.61) * 1000) / 256 for i in range(1, n + 1)],
                        dtype=torch.float64).reshape(shape)
L = lambda t: t.tolist()
a, b, c = vals([2, 3], 1), vals([3, 4], 2), vals([4, 2], 3)
m = vals([3, 3], 4)
z = torch.tensor([[0, 1, 0], [2, 0, 3]])
print(json.dumps({
  "einsum": L(torch.einsum("ij,jk->ik", a, b)),
  "einsum3": L(torch.einsum("ij,jk,kl->il", a, b, c)),
  "broadcast": [L(t) for t in torch.broadcast_tensors(vals([2, 1], 5), vals([3], 6))],
  "block_diag": L(torch.block_diag(vals([2, 2], 7), vals([1, 3], 8))),
  "cartesian": L(torch.cartesian_prod(vals([2], 9), vals([3], 10))),
  "meshgrid_xy": [L(t) for t in torch.meshgrid(vals([2], 11), vals([3], 12), indexing="xy")],
  "chain": L(torch.chain_matmul(a, b, c)),
  "atleast_2d": [list(t.shape) for t in torch.atleast_2d(vals([3], 13), vals([2, 2, 2], 14))],
  "tensordot2": L(torch.tensordot(vals([2, 3, 4], 15), vals([3, 4, 2], 16), 2)),
  "tensordot_pairs": L(torch.tensordot(vals([2, 3, 4], 15), vals([4, 3, 2], 17), dims=([1, 2], [1, 0]))),
  "tensordot0": list(torch.tensordot(a, b, dims=0).shape),
  "nuc": torch.norm(m, "nuc").item(),
  "nuc_batched": L(torch.norm(vals([2, 3, 3], 18), p="nuc", dim=(1, 2))),
  "fro": torch.norm(m, "fro").item(),
  "fro_dim": L(torch.norm(m, "fro", dim=1, keepdim=True)),
  "norm_dtype": [torch.norm(m.float(), 2, dtype=torch.float64).item(), str(torch.norm(m.float(), 2, dtype=torch.float64).dtype)],
  "nonzero_tuple": [L(t) for t in torch.nonzero(z, as_tuple=True)],
  "nonzero": L(z.nonzero(as_tuple=False)),
}))
]==]

describe("PyTorch's Python-wrapper forms", function()
  local ref
  setup(function() ref = pytorch.run(PY) end)
  local a, b, c = vals({ 2, 3 }, 1), vals({ 3, 4 }, 2), vals({ 4, 2 }, 3)
  local m = vals({ 3, 3 }, 4)
  local function lists(ts)
    local out = {}
    for i, t in ipairs(ts) do out[i] = t:tolist() end
    return out
  end

  it("einsum takes the operands as separate arguments or as a list", function()
    approx.check(torch.einsum("ij,jk->ik", a, b):tolist(), ref.einsum, TOL)
    approx.check(torch.einsum("ij,jk->ik", { a, b }):tolist(), ref.einsum, TOL)
    approx.check(torch.einsum("ij,jk,kl->il", a, b, c):tolist(), ref.einsum3, TOL)
  end)

  it("broadcast_tensors, block_diag, cartesian_prod, meshgrid, chain_matmul take *tensors", function()
    approx.check(lists(torch.broadcast_tensors(vals({ 2, 1 }, 5), vals({ 3 }, 6))), ref.broadcast, TOL)
    approx.check(torch.block_diag(vals({ 2, 2 }, 7), vals({ 1, 3 }, 8)):tolist(), ref.block_diag, TOL)
    approx.check(torch.cartesian_prod(vals({ 2 }, 9), vals({ 3 }, 10)):tolist(), ref.cartesian, TOL)
    approx.check(lists(torch.meshgrid(vals({ 2 }, 11), vals({ 3 }, 12), { indexing = "xy" })), ref.meshgrid_xy, TOL)
    approx.check(torch.chain_matmul(a, b, c):tolist(), ref.chain, TOL)
    approx.check(torch.block_diag({ vals({ 2, 2 }, 7), vals({ 1, 3 }, 8) }):tolist(), ref.block_diag, TOL)
  end)

  it("atleast_2d of one tensor is a tensor, of several a list", function()
    assert.are.same({ 1, 3 }, torch.atleast_2d(vals({ 3 }, 13)):size())
    local both = torch.atleast_2d(vals({ 3 }, 13), vals({ 2, 2, 2 }, 14))
    assert.are.same(ref.atleast_2d, { both[1]:size(), both[2]:size() })
  end)

  it("tensordot takes dims as an integer or a pair of lists", function()
    approx.check(torch.tensordot(vals({ 2, 3, 4 }, 15), vals({ 3, 4, 2 }, 16), 2):tolist(), ref.tensordot2, TOL)
    approx.check(torch.tensordot(vals({ 2, 3, 4 }, 15), vals({ 4, 3, 2 }, 17), { dims = { { 1, 2 }, { 1, 0 } } }):tolist(),
      ref.tensordot_pairs, TOL)
    assert.are.same(ref.tensordot0, torch.tensordot(a, b, { dims = 0 }):size())
    assert.matches("tensordot expects dims >= 0, but got dims=-1", err(torch.tensordot, a, b, -1), 1, true)
    -- the fuzzer's hang: dims = inf looped for ever building the dim lists
    assert.matches("dims=inf is more than the dims of a (2) or b (2)", err(torch.tensordot, a, b, math.huge), 1, true)
    assert.matches("dims=3 is more than the dims of a (2) or b (2)", err(torch.tensordot, a, b, 3), 1, true)
    assert.matches("bad argument #1 to 'tensordot' (Tensor expected, got number)",
      err(torch.tensordot, 1e308, b, math.huge), 1, true)
    assert.matches("python_wrappers_spec.lua:%d+: tensordot", err(function() local r = torch.tensordot(a, b, -1); return r end))
  end)

  it("norm takes p = 'nuc' and 'fro', and dtype=", function()
    approx.check(torch.norm(m, "nuc"):item(), ref.nuc, TOL)
    approx.check(torch.norm(vals({ 2, 3, 3 }, 18), { p = "nuc", dim = { 1, 2 } }):tolist(), ref.nuc_batched, TOL)
    approx.check(m:norm("fro"):item(), ref.fro, TOL)
    approx.check(torch.norm(m, "fro", { dim = 1, keepdim = true }):tolist(), ref.fro_dim, TOL)
    local d = torch.norm(m:float(), 2, { dtype = torch.float64 })
    approx.check(d:item(), ref.norm_dtype[1], { atol = 1e-5, rtol = 1e-6 })
    assert.are.equal(ref.norm_dtype[2], tostring(d.dtype))
    assert.matches("Order nux not supported", err(torch.norm, m, "nux"), 1, true)
  end)

  it("nonzero(as_tuple = true) gives one index tensor per dim", function()
    local z = torch.tensor({ { 0, 1, 0 }, { 2, 0, 3 } })
    assert.are.same(ref.nonzero_tuple, lists(torch.nonzero(z, { as_tuple = true })))
    assert.are.same(ref.nonzero, z:nonzero({ as_tuple = false }):tolist())
    assert.are.same(ref.nonzero_tuple, lists(z:nonzero({ as_tuple = true })))
  end)
end)
