--[[
  spec/torch/functional_spec.lua — torch.nn.functional (lua/torch/nn/functional.lua) against
  PyTorch.

  Covers: cross_entropy (reductions, ignore_index, label_smoothing, class-probability targets,
  (N, C, d) inputs) and its gradient, nll_loss, mse_loss and its gradient, one_hot, and the
  activations relu, gelu, silu, sigmoid, tanh, leaky_relu, softmax, log_softmax; and bad inputs
  (reduction strings, target dtypes and shapes, options, freed tensors).

  One pytorch.run computes every reference live from the same literal inputs. Tolerance:
  float32, atol 1e-6 + rtol 1e-5.

  Run:  build/ltorch /usr/bin/busted spec/torch/functional_spec.lua
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

-- logits (4, 5), class targets (4,), probability targets (4, 5)
local Lv, Pv = {}, {}
for i = 1, 4 do
  Lv[i], Pv[i] = {}, {}
  for j = 1, 5 do
    Lv[i][j] = math.floor(math.sin(i * 5 + j) * 3000) / 1000
    Pv[i][j] = ((i + j) % 5 + 1) / (5 * 6 / 2)  -- each row: a permutation of 1..5 over 15
  end
end
local Tv = { 4, 0, 2, 2 }
local Tignored = { 4, -100, 2, 0 }

local PY_INPUTS = table.concat({
  "import torch.nn.functional as F",
  "L = torch.tensor(" .. py(Lv) .. ")",
  "P = torch.tensor(" .. py(Pv) .. ")",
  "T = torch.tensor(" .. py(Tv) .. ")",
  "Ti = torch.tensor(" .. py(Tignored) .. ")",
  "def rec(r): return [str(r.dtype), r.tolist()]",
}, "\n") .. "\n"

local function inputs()
  return { L = torch.tensor(Lv, { dtype = torch.float32 }), P = torch.tensor(Pv, { dtype = torch.float32 }),
    T = torch.tensor(Tv), Ti = torch.tensor(Tignored) }
end

local CASES = {
  { function(X) return F.cross_entropy(X.L, X.T) end, "F.cross_entropy(L, T)" },
  { function(X) return F.cross_entropy(X.L, X.T, { reduction = "sum" }) end, "F.cross_entropy(L, T, reduction='sum')" },
  { function(X) return F.cross_entropy(X.L, X.T, { reduction = "none" }) end, "F.cross_entropy(L, T, reduction='none')" },
  { function(X) return F.cross_entropy(X.L, X.T, { ignore_index = 2 }) end, "F.cross_entropy(L, T, ignore_index=2)" },
  { function(X) return F.cross_entropy(X.L, X.Ti) end, "F.cross_entropy(L, Ti)" },
  { function(X) return F.cross_entropy(X.L, X.T, { label_smoothing = 0.1 }) end, "F.cross_entropy(L, T, label_smoothing=0.1)" },
  { function(X) return F.cross_entropy(X.L, X.Ti, { label_smoothing = 0.2, reduction = "none" }) end,
    "F.cross_entropy(L, Ti, label_smoothing=0.2, reduction='none')" },
  { function(X) return F.cross_entropy(X.L, X.P) end, "F.cross_entropy(L, P)" },
  { function(X) return F.cross_entropy(X.L:view(2, 5, 2), X.T:view(2, 2), { reduction = "none" }) end,
    "F.cross_entropy(L.view(2, 5, 2), T.view(2, 2), reduction='none')" },
  { function(X) return F.nll_loss(X.L:log_softmax(1), X.T) end, "F.nll_loss(L.log_softmax(1), T)" },
  { function(X) return F.nll_loss(X.L:log_softmax(1), X.T, { reduction = "none" }) end, "F.nll_loss(L.log_softmax(1), T, reduction='none')" },
  { function(X) return F.nll_loss(X.L, X.T, { reduction = "sum", ignore_index = 4 }) end, "F.nll_loss(L, T, reduction='sum', ignore_index=4)" },
  { function(X) return F.mse_loss(X.L, X.P) end, "F.mse_loss(L, P)" },
  { function(X) return F.mse_loss(X.L, X.P, { reduction = "sum" }) end, "F.mse_loss(L, P, reduction='sum')" },
  { function(X) return F.mse_loss(X.L, X.P, { reduction = "none" }) end, "F.mse_loss(L, P, reduction='none')" },
  { function(X) return F.mse_loss(X.L:sum(1), X.T) end, "F.mse_loss(L.sum(1), T)" },  -- int64 target promotes
  { function(X) return F.one_hot(X.T) end, "F.one_hot(T)" },
  { function(X) return F.one_hot(X.T:view(2, 2), 7) end, "F.one_hot(T.view(2, 2), 7)" },
  { function(X) return F.relu(X.L) end, "F.relu(L)" },
  { function(X) return F.gelu(X.L) end, "F.gelu(L)" },
  { function(X) return F.silu(X.L) end, "F.silu(L)" },
  { function(X) return F.sigmoid(X.L) end, "torch.sigmoid(L)" },
  { function(X) return F.tanh(X.L) end, "torch.tanh(L)" },
  { function(X) return F.leaky_relu(X.L) end, "F.leaky_relu(L)" },
  { function(X) return F.leaky_relu(X.L, 0.3) end, "F.leaky_relu(L, 0.3)" },
  { function(X) return F.softmax(X.L, 1) end, "F.softmax(L, 1)" },
  { function(X) return F.softmax(X.L, { dim = 0 }) end, "F.softmax(L, dim=0)" },
  { function(X) return F.log_softmax(X.L, -1) end, "F.log_softmax(L, -1)" },
}

describe("torch.nn.functional", function()
  local X, ref

  setup(function()
    X = inputs()
    local code = { PY_INPUTS, "out = []" }
    for _, case in ipairs(CASES) do code[#code + 1] = "out.append(rec(" .. case[2] .. "))" end
    code[#code + 1] = table.concat({
      "l = L.clone().requires_grad_()",
      "F.cross_entropy(l, Ti, label_smoothing=0.1).backward()",
      "out.append(['ce grad', l.grad.tolist()])",
      "l = L.clone().requires_grad_()",
      "F.mse_loss(l.tanh(), P, reduction='sum').backward()",
      "out.append(['mse grad', l.grad.tolist()])",
      "print(json.dumps(out))",
    }, "\n")
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, case in ipairs(CASES) do
    it("matches PyTorch: " .. case[2], function()
      local r = case[1](X)
      assert.are.equal(ref[i][1], tostring(r.dtype))
      approx.check(r, ref[i][2])
    end)
  end

  it("cross_entropy's gradient (ignore_index, label_smoothing) matches PyTorch", function()
    local l = X.L:clone():requires_grad_()
    F.cross_entropy(l, X.Ti, { label_smoothing = 0.1 }):backward()
    approx.check(l.grad, ref[#CASES + 1][2])
  end)

  it("mse_loss's gradient matches PyTorch", function()
    local l = X.L:clone():requires_grad_()
    F.mse_loss(l:tanh(), X.P, { reduction = "sum" }):backward()
    approx.check(l.grad, ref[#CASES + 2][2])
  end)
end)

describe("torch.nn.functional with bad inputs", function()
  local logits, target, freed
  before_each(function()
    logits = torch.tensor(Lv, { dtype = torch.float32 })
    target = torch.tensor(Tv)
    freed = torch.ones(4, 5)
    freed:free()
  end)

  it("rejects an unknown reduction", function()
    for _, name in ipairs({ "cross_entropy", "nll_loss", "mse_loss" }) do
      local other = name == "mse_loss" and logits or target
      assert.has_error(function() F[name](logits, other, { reduction = "avg" }) end,
        name .. ": reduction must be 'mean', 'sum' or 'none', got 'avg'")
      assert.has_error(function() F[name](logits, other, { reduction = 1 }) end,
        name .. ": reduction must be the string 'mean', 'sum' or 'none', got number 1")
    end
  end)

  it("names a wrong target dtype", function()
    assert.has_error(function() F.cross_entropy(logits, target:float()) end,
      "cross_entropy: target must be int64 class indices (or floating class probabilities shaped like the input), got torch.float32 of shape [4]")
    assert.has_error(function() F.cross_entropy(logits, target:int()) end,
      "cross_entropy: target must be int64 class indices (or floating class probabilities shaped like the input), got torch.int32 of shape [4]")
    assert.has_error(function() F.nll_loss(logits, logits) end,
      "nll_loss: target must be int64 class indices, got torch.float32 of shape [4, 5]")
  end)

  it("reports shape and range problems", function()
    assert.error_matches(function() F.cross_entropy(logits, torch.tensor({ 0, 1 })) end,
      "cross_entropy: Expected input batch_size (4) to match target batch_size (2)", nil, true)
    assert.error_matches(function() F.cross_entropy(logits, torch.tensor({ 0, 9, 1, 1 })) end, "cross_entropy: Target 9 is out of bounds", nil, true)
    assert.error_matches(function() F.nll_loss(logits, torch.tensor({ 0, 1 })) end,
      "nll_loss: Expected input batch_size (4) to match target batch_size (2)", nil, true)
    assert.error_matches(function() F.mse_loss(logits, torch.ones(3)) end,
      "mse_loss: The size of tensor a (5) must match the size of tensor b (3)", nil, true)
  end)

  it("checks arguments and options", function()
    assert.has_error(function() F.cross_entropy(logits, nil) end, "bad argument #2 to 'cross_entropy' (Tensor expected, got nil)")
    assert.has_error(function() F.nll_loss({}, target) end, "bad argument #1 to 'nll_loss' (Tensor expected, got table)")
    assert.has_error(function() F.mse_loss(logits, 1) end, "bad argument #2 to 'mse_loss' (Tensor expected, got number)")
    -- cross_entropy(input, target, weight, ...): PyTorch's third positional is the weight
    assert.has_error(function() F.cross_entropy(logits, target, "mean") end, "bad argument #3 to 'cross_entropy' (Tensor expected, got string)")
    assert.has_error(function() F.cross_entropy(logits, target, { smoothing = 0.1 }) end,
      "cross_entropy: unexpected keyword argument 'smoothing' (did you mean 'label_smoothing'?)")
    assert.has_error(function() F.cross_entropy(logits, target, { label_smoothing = 2 }) end, "cross_entropy: label_smoothing must be in [0, 1], got 2")
    -- a keyword's position is its parameter's in PyTorch's signature
    assert.has_error(function() F.cross_entropy(logits, target, { label_smoothing = "a" }) end, "bad argument #8 to 'cross_entropy' (number expected, got string)")
    assert.has_error(function() F.nll_loss(logits, target, { ignore_index = 0.5 }) end, "bad argument #5 to 'nll_loss' (integer expected, got 0.5)")
    assert.has_error(function() F.mse_loss(logits, logits, { weight = 1 }) end, "bad argument #6 to 'mse_loss' (Tensor expected, got number)")
    assert.has_error(function() F.mse_loss(logits, logits, { weights = 1 }) end,
      "mse_loss: unexpected keyword argument 'weights' (did you mean 'weight'?)")
    assert.error_matches(function() F.cross_entropy(freed, target) end, "cross_entropy: tensor was freed", nil, true)
    assert.error_matches(function() F.mse_loss(logits, freed) end, "mse_loss: tensor was freed", nil, true)
  end)

  it("checks one_hot's labels and class count", function()
    assert.error_matches(function() F.one_hot(target, 2) end, "one_hot: Class values must be smaller than num_classes", nil, true)
    assert.error_matches(function() F.one_hot(target:float()) end, "one_hot: one_hot is only applicable to index tensor", nil, true)
    assert.error_matches(function() F.one_hot(torch.tensor({ -1 })) end, "one_hot: Class values must be non-negative", nil, true)
    assert.has_error(function() F.one_hot(target, "5") end, "bad argument #2 to 'one_hot' (integer expected, got string)")
    assert.has_error(function() F.one_hot(nil) end, "bad argument #1 to 'one_hot' (Tensor expected, got nil)")
  end)

  it("checks activations' arguments", function()
    for _, name in ipairs({ "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "softmax", "log_softmax" }) do
      assert.has_error(function() F[name]("x") end, "bad argument #1 to '" .. name .. "' (Tensor expected, got string)")
      -- softmax needs its dim; the others take no second argument (one would hand the call to the
      -- generated op surface, whose error differs)
      local dim = name:find("softmax") and 1 or nil
      assert.error_matches(function() F[name](freed, dim) end, name .. ": tensor was freed", nil, true)
    end
    -- no dim: PyTorch's implicit choice (dim 1 of a 2-d input), with its deprecation warning
    local saved, seen = F._warn, {}
    F._warn = function(msg) seen[#seen + 1] = msg end
    local ok, implicit = pcall(F.softmax, logits)
    F._warn = saved
    assert(ok, implicit)
    assert.is_true(torch.equal(implicit, logits:softmax(1)))
    assert.are.same({ "Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an argument." }, seen)
    assert.error_matches(function() F.log_softmax(logits, 2) end, "log_softmax: Dimension out of range", nil, true)
    assert.has_error(function() F.leaky_relu(logits, "0.1") end, "bad argument #2 to 'leaky_relu' (number expected, got string)")
  end)
end)
