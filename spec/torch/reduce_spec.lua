--[[
  spec/torch/reduce_spec.lua — reductions and combining ops (lua/torch/_ops_reduce.lua) against
  PyTorch.

  Covers: sum/mean/prod/amax/amin/all/any/logsumexp with dim/keepdim/dtype given positionally and
  as a keyword table; max/min whole, along a dim (two values) and against a tensor; argmax/argmin;
  var/std (unbiased, correction, keepdim); norm (p = 1, 2, inf, "fro", dims); cumsum; sort,
  argsort, topk; matmul (1-d, 2-d, batched), mm, bmm, addmm, outer, dot; cat, stack, `..`;
  index_select, gather, scatter, masked_select, nonzero; softmax/log_softmax; and bad inputs.

  Each case is a Lua function plus the same expression in Python; one pytorch.run computes every
  reference (dtype and values; ops returning (values, indices) give both) live. Tolerance:
  float32, atol 1e-5 + rtol 1e-5 (accumulation order may differ).

  Run:  build/ltorch /usr/bin/busted spec/torch/reduce_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local TOL = { atol = 1e-5, rtol = 1e-5 }

-- Inputs, stated once. Y's values are distinct, so sorts and arg-reductions have one answer.
local Yv = {}
for r = 1, 3 do
  Yv[r] = {}
  for c = 1, 4 do Yv[r][c] = math.floor(math.sin(((r - 1) * 4 + c) * 1.7) * 1000) / 1000 end
end
local Lv = { { 3, 1, 2, 4 }, { 0, 5, 4, 1 }, { 2, 2, 0, 7 } }  -- int64 (3, 4), with zeros
local Gv = { { 0, 3 }, { 1, 1 }, { 2, 0 } }                     -- int64 gather/scatter index

local PY_INPUTS = table.concat({
  "f = torch.float32",
  "X = torch.arange(12, dtype=f).view(3, 4)",
  "Y = torch.tensor(" .. py(Yv) .. ", dtype=f)",
  "L = torch.tensor(" .. py(Lv) .. ")",
  "G = torch.tensor(" .. py(Gv) .. ")",
  "M = Y > 0",
  "V = torch.tensor([1., 2., 3., 4.])",
  "W = torch.arange(20, dtype=f).view(4, 5) / 10",
  "Bt = torch.arange(24, dtype=f).view(2, 3, 4) / 10",
  "def rec(r):",
  "    if isinstance(r, tuple): return [rec(v) for v in r]",
  "    return [str(r.dtype), r.tolist()]",
}, "\n") .. "\n"

local function inputs()
  local f = { dtype = torch.float32 }
  local X = { X = torch.arange(12, f):view(3, 4), Y = torch.tensor(Yv, f), L = torch.tensor(Lv), G = torch.tensor(Gv),
    V = torch.tensor({ 1, 2, 3, 4 }, f), W = torch.arange(20, f):view(4, 5) / 10, Bt = torch.arange(24, f):view(2, 3, 4) / 10 }
  X.M = X.Y:gt(0)
  return X
end

-- { Lua function of the inputs (a table when the op returns two tensors), the same in Python }
local CASES = {
  { function(X) return X.X:sum() end, "X.sum()" },
  { function(X) return X.X:sum(0) end, "X.sum(0)" },
  { function(X) return torch.sum(X.X, -1) end, "X.sum(-1)" },
  { function(X) return X.X:sum({ 0, 1 }) end, "X.sum((0, 1))" },
  { function(X) return X.X:sum(1, true) end, "X.sum(1, True)" },
  { function(X) return X.X:sum(nil, true) end, "X.sum(None, True)" },
  { function(X) return X.X:sum({ dim = 1, keepdim = true }) end, "X.sum(dim=1, keepdim=True)" },
  { function(X) return X.X:sum(1, false, { dtype = torch.float64 }) end, "X.sum(1, False, dtype=torch.float64)" },
  { function(X) return X.X:sum({ dim = 0, dtype = torch.float64 }) end, "X.sum(dim=0, dtype=torch.float64)" },
  { function(X) return torch.sum(X.X, { dtype = "float64" }) end, "X.sum(dtype=torch.float64)" },
  { function(X) return X.L:sum(1) end, "L.sum(1)" },
  { function(X) return X.X:mean() end, "X.mean()" },
  { function(X) return X.X:mean(1) end, "X.mean(1)" },
  { function(X) return X.X:mean({ 0, 1 }, true) end, "X.mean((0, 1), True)" },
  { function(X) return torch.mean(X.X, { dim = 0, keepdim = true }) end, "X.mean(dim=0, keepdim=True)" },
  { function(X) return X.L:mean({ dtype = torch.float32 }) end, "L.mean(dtype=torch.float32)" },
  { function(X) return X.Y:prod() end, "Y.prod()" },
  { function(X) return X.Y:prod(1) end, "Y.prod(1)" },
  { function(X) return X.L:prod({ dim = 0, keepdim = true }) end, "L.prod(dim=0, keepdim=True)" },
  { function(X) return X.Y:amax() end, "Y.amax()" },
  { function(X) return X.Y:amax(1) end, "Y.amax(1)" },
  { function(X) return torch.amin(X.Y, { 0, 1 }) end, "Y.amin((0, 1))" },
  { function(X) return X.Y:amin({ dim = 0, keepdim = true }) end, "Y.amin(dim=0, keepdim=True)" },
  { function(X) return X.M:all() end, "M.all()" },
  { function(X) return X.M:any(1) end, "M.any(1)" },
  { function(X) return X.M:all({ dim = 0, keepdim = true }) end, "M.all(dim=0, keepdim=True)" },
  { function(X) return X.L:any(0, true) end, "L.any(0, True)" },
  { function(X) return X.Y:logsumexp(1) end, "Y.logsumexp(1)" },
  { function(X) return X.Y:logsumexp({ 0, 1 }) end, "Y.logsumexp((0, 1))" },
  { function(X) return X.Y:logsumexp({ dim = 1, keepdim = true }) end, "Y.logsumexp(dim=1, keepdim=True)" },
  { function(X) return X.Y:max() end, "Y.max()" },
  { function(X) return X.Y:min() end, "Y.min()" },
  { function(X) return { X.Y:max(1) } end, "Y.max(1)" },
  { function(X) return { torch.min(X.Y, 0, true) } end, "Y.min(0, True)" },
  { function(X) return { X.Y:max({ dim = -1, keepdim = true }) } end, "Y.max(dim=-1, keepdim=True)" },
  { function(X) return X.Y:max(torch.zeros(4)) end, "Y.max(torch.zeros(4))" },
  { function(X) return X.Y:min(torch.zeros(3, 1)) end, "Y.min(torch.zeros(3, 1))" },
  { function(X) return X.Y:argmax() end, "Y.argmax()" },
  { function(X) return X.Y:argmax(1) end, "Y.argmax(1)" },
  { function(X) return X.Y:argmin({ dim = 0, keepdim = true }) end, "Y.argmin(dim=0, keepdim=True)" },
  { function(X) return torch.argmin(X.Y, 1, true) end, "Y.argmin(1, True)" },
  { function(X) return X.X:var() end, "X.var()" },
  { function(X) return X.X:var(1) end, "X.var(1)" },
  { function(X) return X.X:var(1, false) end, "X.var(1, False)" },
  { function(X) return X.X:std(0, true, true) end, "X.std(0, True, True)" },
  { function(X) return X.X:std({ dim = 1, correction = 0 }) end, "X.std(dim=1, correction=0)" },
  { function(X) return torch.var(X.X, { dim = { 0, 1 }, correction = 2, keepdim = true }) end, "X.var(dim=(0, 1), correction=2, keepdim=True)" },
  { function(X) return X.X:std({ unbiased = false }) end, "X.std(unbiased=False)" },
  { function(X) return X.Y:norm() end, "Y.norm()" },
  { function(X) return X.Y:norm(1) end, "Y.norm(1)" },
  { function(X) return X.Y:norm(2, 1) end, "Y.norm(2, 1)" },
  { function(X) return X.Y:norm("inf") end, "Y.norm(float('inf'))" },
  { function(X) return X.Y:norm(math.huge, 0) end, "Y.norm(float('inf'), 0)" },
  { function(X) return X.Y:norm("fro") end, "Y.norm('fro')" },
  { function(X) return X.Y:norm({ p = 1, dim = 1, keepdim = true }) end, "Y.norm(p=1, dim=1, keepdim=True)" },
  { function(X) return torch.norm(X.Y, { p = "fro", dim = { 0, 1 } }) end, "Y.norm(p='fro', dim=(0, 1))" },
  { function(X) return X.Y:norm(3, 1) end, "Y.norm(3, 1)" },
  { function(X) return X.X:cumsum(0) end, "X.cumsum(0)" },
  { function(X) return torch.cumsum(X.X, { dim = -1 }) end, "X.cumsum(-1)" },
  { function(X) return X.L:cumsum(1) end, "L.cumsum(1)" },
  { function(X) return { X.Y:sort() } end, "Y.sort()" },
  { function(X) return { X.Y:sort(0) } end, "Y.sort(0)" },
  { function(X) return { torch.sort(X.Y, 1, true) } end, "Y.sort(1, True)" },
  { function(X) return { X.Y:sort({ dim = 0, descending = true }) } end, "Y.sort(dim=0, descending=True)" },
  { function(X) return X.Y:argsort(1) end, "Y.argsort(1)" },
  { function(X) return torch.argsort(X.Y, { dim = 0, descending = true }) end, "Y.argsort(dim=0, descending=True)" },
  { function(X) return { X.Y:topk(2) } end, "Y.topk(2)" },
  { function(X) return { X.Y:topk(2, 0) } end, "Y.topk(2, 0)" },
  { function(X) return { X.Y:topk(1, 1, false) } end, "Y.topk(1, 1, False)" },
  { function(X) return { torch.topk(X.Y, 3, { dim = 1, largest = false }) } end, "Y.topk(3, dim=1, largest=False)" },
  { function(X) return X.V:matmul(X.V) end, "V.matmul(V)" },
  { function(X) return X.X:matmul(X.V) end, "X.matmul(V)" },
  { function(X) return X.V:matmul(X.W) end, "V.matmul(W)" },
  { function(X) return torch.matmul(X.X, X.W) end, "X.matmul(W)" },
  { function(X) return X.Bt:matmul(X.W) end, "Bt.matmul(W)" },
  { function(X) return X.Bt:matmul(X.Bt:transpose(1, 2)) end, "Bt.matmul(Bt.transpose(1, 2))" },
  { function(X) return X.X:mm(X.W) end, "X.mm(W)" },
  { function(X) return torch.bmm(X.Bt, X.Bt:transpose(1, 2)) end, "torch.bmm(Bt, Bt.transpose(1, 2))" },
  { function(X) return torch.addmm(X.W[0], X.X, X.W) end, "torch.addmm(W[0], X, W)" },
  { function(X) return X.W[0]:addmm(X.X, X.W, { beta = 0.5, alpha = 2 }) end, "W[0].addmm(X, W, beta=0.5, alpha=2)" },
  { function(X) return X.V:outer(X.W[1]) end, "V.outer(W[1])" },
  { function(X) return torch.dot(X.V, X.V) end, "torch.dot(V, V)" },
  { function(X) return torch.cat({ X.X, X.Y }) end, "torch.cat([X, Y])" },
  { function(X) return torch.cat({ X.X, X.Y, X.X }, 1) end, "torch.cat([X, Y, X], 1)" },
  { function(X) return torch.cat({ X.X, X.L }, -1) end, "torch.cat([X, L], -1)" },
  { function(X) return X.X .. X.Y end, "torch.cat([X, Y], 0)" },
  { function(X) return torch.stack({ X.X, X.Y }) end, "torch.stack([X, Y])" },
  { function(X) return torch.stack({ X.X, X.Y }, 1) end, "torch.stack([X, Y], 1)" },
  { function(X) return torch.stack({ X.X, X.Y }, -1) end, "torch.stack([X, Y], -1)" },
  { function(X) return X.Y:index_select(1, torch.tensor({ 2, 0 })) end, "Y.index_select(1, torch.tensor([2, 0]))" },
  { function(X) return torch.index_select(X.L, 0, torch.tensor({ 2, 2, 1 })) end, "L.index_select(0, torch.tensor([2, 2, 1]))" },
  { function(X) return X.Y:gather(1, X.G) end, "Y.gather(1, G)" },
  { function(X) return torch.zeros(3, 4):scatter(1, X.G, X.Y) end, "torch.zeros(3, 4).scatter(1, G, Y)" },
  { function(X) return X.Y:masked_select(X.M) end, "Y.masked_select(M)" },
  { function(X) return X.X:masked_select(torch.tensor({ true, false, false, true })) end, "X.masked_select(torch.tensor([True, False, False, True]))" },
  { function(X) return X.M:nonzero() end, "M.nonzero()" },
  { function(X) return torch.nonzero(X.L) end, "L.nonzero()" },
  { function(X) return X.Y:softmax(1) end, "Y.softmax(1)" },
  { function(X) return torch.softmax(X.Y, { dim = 0 }) end, "torch.softmax(Y, 0)" },
  { function(X) return X.Y:log_softmax(-1) end, "Y.log_softmax(-1)" },
  { function(X) return torch.log_softmax(X.Y, 0) end, "torch.log_softmax(Y, 0)" },
}

local function check(r, expected)
  if type(r) == "table" then
    assert.are.equal(#expected, #r)
    for i = 1, #r do check(r[i], expected[i]) end
    return
  end
  assert.are.equal(expected[1], tostring(r.dtype))
  approx.check(r, expected[2], TOL)
end

describe("torch reductions and combining ops", function()
  local X, ref

  setup(function()
    X = inputs()
    local code = { PY_INPUTS, "out = []" }
    for _, case in ipairs(CASES) do code[#code + 1] = "out.append(rec(" .. case[2] .. "))" end
    code[#code + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, case in ipairs(CASES) do
    it("matches PyTorch: " .. case[2], function() check(case[1](X), ref[i]) end)
  end

  it("returns exactly two values from max/min along a dim, sort and topk", function()
    assert.are.equal(2, select("#", X.Y:max(0)))
    assert.are.equal(2, select("#", X.Y:min({ dim = 1 })))
    assert.are.equal(2, select("#", X.Y:sort()))
    assert.are.equal(2, select("#", X.Y:topk(1)))
    assert.are.equal(1, select("#", X.Y:max()))
  end)
end)

describe("torch reductions with bad inputs", function()
  local x, freed
  before_each(function()
    x = torch.arange(12, { dtype = torch.float32 }):view(3, 4)
    freed = torch.ones(3, 4)
    freed:free()
  end)

  it("every op names a missing self and a freed tensor", function()
    for _, name in ipairs({ "sum", "mean", "prod", "amax", "amin", "all", "any", "logsumexp", "max", "min", "argmax",
      "argmin", "var", "std", "norm", "cumsum", "sort", "argsort", "topk", "nonzero", "softmax", "log_softmax" }) do
      assert.has_error(function() torch[name](nil, 0) end, "bad argument #1 to '" .. name .. "' (Tensor expected, got nil)")
      assert.error_matches(function() torch[name](freed, 0) end, name .. ": tensor was freed", nil, true)
    end
  end)

  it("rejects bad dims: out of range, wrong type, bad keepdim and dtype", function()
    for _, name in ipairs({ "sum", "mean", "amax", "logsumexp", "max", "argmax", "var", "cumsum", "sort", "softmax" }) do
      assert.error_matches(function() x[name](x, 5) end,
        name .. ": Dimension out of range (expected to be in range of [-2, 1], but got 5)", nil, true)
    end
    assert.has_error(function() x:sum("a") end, "bad argument #1 to 'sum' (dim (integer or table of integers) expected, got string)")
    assert.has_error(function() x:mean({ dim = { 0, 0.5 } }) end, "bad argument #1 to 'mean' (integer expected, got 0.5)")
    assert.has_error(function() x:sum(0, "yes") end, "bad argument #2 to 'sum' (boolean expected, got string)")
    assert.error_matches(function() x:sum({ dtype = "float99" }) end, "sum: unknown dtype 'float99'", nil, true)
    assert.has_error(function() x:max(0.5) end, "bad argument #2 to 'max' (integer expected, got 0.5)")
    assert.has_error(function() x:max(0, 1) end, "bad argument #3 to 'max' (boolean expected, got number)")
    assert.has_error(function() x:cumsum() end, "bad argument #2 to 'cumsum' (integer expected, got nil)")
    assert.has_error(function() x:var({ correction = 0.5 }) end, "bad argument #3 to 'var' (integer expected, got 0.5)")
    assert.error_matches(function() x:norm("nux") end, "Order nux not supported", nil, true)
    assert.has_error(function() x:softmax() end, "softmax: dim is required (implicit dim choice is deprecated in PyTorch)")
    assert.error_matches(function() x:prod({ 0, 1 }) end, "prod: reduces one dim at a time, got 2", nil, true)
  end)

  it("reports dtype problems and empty reductions in libtorch's words", function()
    local ints = torch.arange(4)
    assert.error_matches(function() ints:mean() end, "mean: mean(): could not infer output dtype", nil, true)
    assert.error_matches(function() ints:var() end, "var: std and var only support floating point and complex dtypes", nil, true)
    assert.error_matches(function() ints:norm() end, "norm: norm(): input dtype should be either floating point or complex", nil, true)
    assert.error_matches(function() torch.zeros(0):max() end, "amax: amax(): Expected reduction dim to be specified for input.numel() == 0", nil, true)
    assert.error_matches(function() torch.zeros(0, 3):max(0) end, "max: max(): Expected reduction dim 0 to have non-zero size", nil, true)
  end)

  it("checks sort and topk arguments", function()
    assert.error_matches(function() x:topk(5) end, "topk: selected index k out of range", nil, true)
    assert.has_error(function() x:topk(1.5) end, "bad argument #2 to 'topk' (integer expected, got 1.5)")
    assert.has_error(function() x:topk(1, 0, "yes") end, "bad argument #4 to 'topk' (boolean expected, got string)")
    assert.has_error(function() x:sort(0, 1) end, "bad argument #3 to 'sort' (boolean expected, got number)")
  end)

  it("checks matmul family shapes, dtypes and arguments", function()
    for _, name in ipairs({ "matmul", "mm", "bmm", "outer", "dot" }) do
      assert.has_error(function() torch[name](x, 3) end, "bad argument #2 to '" .. name .. "' (Tensor expected, got number)")
      assert.error_matches(function() torch[name](x, freed) end, name .. ": tensor was freed", nil, true)
    end
    assert.error_matches(function() x:mm(x) end, "mm: mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)", nil, true)
    assert.error_matches(function() x:matmul(torch.ones(3)) end, "matmul: size mismatch", nil, true)
    assert.error_matches(function() x:bmm(x) end, "bmm: batch1 must be a 3D tensor", nil, true)
    assert.error_matches(function() torch.dot(torch.ones(3), torch.ones(3, { dtype = torch.float64 })) end,
      "dot: dot : expected both vectors to have same dtype, but found Float and Double", nil, true)
    assert.error_matches(function() x:mm(torch.ones(4, 2, { dtype = torch.float64 })) end, "mm: expected", nil, true)
    assert.error_matches(function() torch.addmm(torch.ones(3), x, torch.ones(3, 3)) end, "addmm: mat1 and mat2 shapes cannot be multiplied", nil, true)
    assert.has_error(function() torch.addmm(torch.ones(3), x, torch.ones(4, 3), { beta = "a" }) end,
      "bad argument #4 to 'addmm' (number expected, got string)")
  end)

  it("checks cat and stack lists", function()
    assert.has_error(function() torch.cat(x) end, "bad argument #1 to 'cat' (table of Tensors expected, got Tensor)")
    assert.has_error(function() torch.cat({}) end, "cat: expected a non-empty table of Tensors")
    assert.has_error(function() torch.stack({ x, 3 }) end, "bad argument #1 to 'stack' (Tensor expected at position 2, got number)")
    assert.has_error(function() return 1 .. x end, "bad argument #1 to 'cat' (Tensor expected at position 1, got number)")
    assert.error_matches(function() torch.cat({ x, torch.ones(2) }) end, "cat: Tensors must have same number of dimensions: got 2 and 1", nil, true)
    assert.error_matches(function() torch.stack({ x, torch.ones(2, 2) }) end, "stack: stack expects each tensor to be equal size", nil, true)
    assert.error_matches(function() torch.cat({ x, x }, 2) end, "cat: Dimension out of range", nil, true)
    assert.error_matches(function() torch.cat({ x, freed }) end, "cat: tensor was freed", nil, true)
    assert.has_error(function() torch.cat({ x, x }, "0") end, "bad argument #2 to 'cat' (integer expected, got string)")
  end)

  it("checks index tensors of gathers and masks", function()
    assert.error_matches(function() x:index_select(0, torch.tensor({ 0.5 })) end, "index_select(): Expected dtype int32 or int64 for index", nil, true)
    assert.error_matches(function() x:index_select(0, torch.tensor({ 5 })) end, "index_select: index out of range in self", nil, true)
    assert.has_error(function() x:index_select(0, { 0 }) end, "bad argument #3 to 'index_select' (Tensor expected, got table)")
    assert.error_matches(function() x:gather(1, torch.tensor({ { 5 } })) end, "gather: index 5 is out of bounds for dimension 1 with size 4", nil, true)
    -- libtorch 2.11 takes an int32 index as PyTorch 2.11 does (1.13 wanted int64); a float one is an error
    assert.are.same({ { 1 } }, x:gather(1, torch.tensor({ { 1 } }, { dtype = torch.int32 })):tolist())
    assert.error_matches(function() x:gather(1, torch.tensor({ { 1.5 } })) end, "gather: gather(): Expected dtype int32/int64 for index", nil, true)
    assert.error_matches(function() x:scatter(0, torch.tensor({ { 0 } }), torch.ones(1, 1, { dtype = torch.float64 })) end,
      "scatter: scatter(): Expected self.dtype to be equal to src.dtype", nil, true)
    -- a number value is PyTorch's scatter.value (handed to the generated op); a string is not
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, torch.tensor({ { 9, 2, 3 }, { 4, 5, 6 } }):scatter(0, torch.tensor({ { 0 } }), 1):tolist())
    assert.has_error(function() x:scatter(0, torch.tensor({ { 0 } }), "1") end, "bad argument #4 to 'scatter' (Tensor expected, got string)")
    assert.error_matches(function() x:masked_select(torch.ones(3, 4)) end, "masked_select: masked_select: expected BoolTensor for mask", nil, true)
    assert.error_matches(function() x:masked_select(torch.ones(5):gt(0)) end, "masked_select: The size of tensor a (5) must match the size of tensor b (4)", nil, true)
  end)
end)
