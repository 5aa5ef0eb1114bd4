--[[
  spec/torch/linalg_python_spec.lua — torch.lu / x:lu, torch.svd_lowrank and torch.pca_lowrank
  (lua/torch/_linalg_python.lua) against PyTorch 2.11 on the same inputs and seeds: the same
  factors (svd_lowrank and pca_lowrank draw the same random matrix under the same seed), the same
  number of results, and errors for bad input at the caller's line.

  Run:  build/ltorch /usr/bin/busted spec/torch/linalg_python_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local A = { { 2, -1, 0, 3 }, { 1, 4, -2, 0.5 }, { -3, 0.25, 5, 1 }, { 0.5, 2, 1, -1 } }
local SINGULAR = { { 1, 2 }, { 2, 4 } }
local TOL = 1e-5   -- float32 factors: the same kernels, a few ulps at most

local function close(want, got, what)
  local g = got:flatten():tolist()
  local flat = {}
  local function walk(v) if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else flat[#flat + 1] = v end end
  walk(want)
  assert.equals(#flat, #g, what .. ": element count")
  for i = 1, #flat do
    assert.is_true(math.abs(flat[i] - g[i]) <= TOL * math.max(1, math.abs(flat[i])),
      ("%s[%d]: PyTorch %s, ltorch %s"):format(what, i, flat[i], g[i]))
  end
end

describe("torch.lu, torch.svd_lowrank, torch.pca_lowrank", function()
  local ref
  setup(function()
    ref = pytorch.run(([[
import warnings
warnings.simplefilter("ignore")
A = torch.tensor(%s, dtype=torch.float32)
S = torch.tensor(%s, dtype=torch.float32)
LU, piv = torch.lu(A)
LU2, piv2, info2 = torch.lu(S, get_infos=True)
LU3, piv3 = A.lu(pivot=True)
torch.manual_seed(3)
B = torch.randn(6, 4)
torch.manual_seed(7)
U, Sv, V = torch.svd_lowrank(B, q=3, niter=2)
torch.manual_seed(7)
Uw, Sw, Vw = torch.svd_lowrank(B.T, q=2)
torch.manual_seed(11)
Up, Sp, Vp = torch.pca_lowrank(B, q=2)
torch.manual_seed(11)
Un, Sn, Vn = torch.pca_lowrank(B, q=3, center=False, niter=1)
print(json.dumps({"lu": [LU.tolist(), piv.tolist()], "lu_infos": [LU2.tolist(), piv2.tolist(), info2.tolist()],
  "lu_method": [LU3.tolist(), piv3.tolist()],
  "svd": [U.tolist(), Sv.tolist(), V.tolist()], "svd_wide": [Uw.tolist(), Sw.tolist(), Vw.tolist()],
  "pca": [Up.tolist(), Sp.tolist(), Vp.tolist()], "pca_nocenter": [Un.tolist(), Sn.tolist(), Vn.tolist()]}))
]]):format(require("cjson").encode(A), require("cjson").encode(SINGULAR)))
  end)

  it("torch.lu gives PyTorch's LU and pivots, and infos when asked", function()
    local LU, piv, extra = torch.lu(torch.tensor(A, { dtype = torch.float32 }))
    assert.is_nil(extra)
    close(ref.lu[1], LU, "LU"); assert.same(ref.lu[2], piv:tolist())
    local LU2, piv2, info2 = torch.lu(torch.tensor(SINGULAR, { dtype = torch.float32 }), { get_infos = true })
    close(ref.lu_infos[1], LU2, "LU (singular)"); assert.same(ref.lu_infos[2], piv2:tolist())
    assert.equals(ref.lu_infos[3], info2:item())
    local LU3, piv3 = torch.tensor(A, { dtype = torch.float32 }):lu({ pivot = true })
    close(ref.lu_method[1], LU3, "x:lu()"); assert.same(ref.lu_method[2], piv3:tolist())
  end)

  it("torch.lu fills out tensors", function()
    local o1, o2 = torch.empty(0), torch.empty(0, { dtype = torch.int32 })
    local r1, r2 = torch.lu(torch.tensor(A, { dtype = torch.float32 }), { out = { o1, o2 } })
    assert.is_true(r1:is_same(o1)); assert.is_true(r2:is_same(o2))
    close(ref.lu[1], o1, "out LU"); assert.same(ref.lu[2], o2:tolist())
  end)

  it("svd_lowrank and pca_lowrank return PyTorch's factors under the same seed", function()
    torch.manual_seed(3)
    local B = torch.randn(6, 4)
    local function check(name, ...)
      local got = { ... }
      assert.equals(3, #got)
      for i = 1, 3 do close(ref[name][i], got[i], name .. "[" .. i .. "]") end
    end
    torch.manual_seed(7); check("svd", torch.svd_lowrank(B, { q = 3, niter = 2 }))
    torch.manual_seed(7); check("svd_wide", torch.svd_lowrank(B.T, { q = 2 }))
    torch.manual_seed(11); check("pca", torch.pca_lowrank(B, { q = 2 }))
    torch.manual_seed(11); check("pca_nocenter", torch.pca_lowrank(B, { q = 3, center = false, niter = 1 }))
  end)

  it("rejects bad input at the caller's line", function()
    local x = torch.tensor(A, { dtype = torch.float32 })
    assert.matches("linalg_python_spec.lua:%d+: lu%(%): argument 'get_infos' must be bool",
      err(function() local r = torch.lu(x, { get_infos = 1 }); return r end))
    assert.matches("linalg_python_spec.lua:%d+: .*2 or more dimensions", err(function() local r = torch.lu(torch.ones(3)); return r end))
    assert.matches("expected a list of 3 elements but got 2",
      err(function() local r = torch.lu(x, { get_infos = true, out = { torch.empty(0), torch.empty(0) } }); return r end))
    assert.matches("q%(=5%) must be non%-negative integer and not greater than min%(m, n%)=4",
      err(function() local r = torch.pca_lowrank(x, { q = 5 }); return r end))
    assert.matches("expected a matrix", err(function() local r = torch.svd_lowrank(torch.ones(3)); return r end))
    assert.matches("argument 'A' must be Tensor", err(function() local r = torch.svd_lowrank(A); return r end))
  end)
end)
