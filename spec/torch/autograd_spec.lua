--[[
  spec/torch/autograd_spec.lua — gradients and grad modes (lua/torch/autograd.lua).

  Covers: requires_grad (option, property, requires_grad_()), backward on a scalar and with a
  gradient for a non-scalar, accumulation over two backward calls, `x.grad = nil`, retain_grad,
  grad_fn (name, tostring "<MulBackward0>", nil on leaves), is_leaf, detach; torch.no_grad,
  enable_grad, set_grad_enabled, inference_mode (values returned, mode restored even on error);
  torch.autograd.grad (create_graph for a second derivative, allow_unused, grad_outputs);
  anomaly detection; backward twice; the done-means check (x*x):sum():backward() gives 2*x;
  gradients of a small network (tanh(x@w+b) -> cross_entropy, plus softmax/std/norm terms)
  against PyTorch on the same inputs (tolerance atol 1e-6 + rtol 1e-5); and bad inputs.

  Run:  build/ltorch /usr/bin/busted spec/torch/autograd_spec.lua
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local f32 = torch.float32
local function leaf(values) return torch.tensor(values, { dtype = f32, requires_grad = true }) end

describe("torch.autograd basics", function()
  it("reads a storage-less zero gradient (sgn's on a real input) as PyTorch: zeros in print and arithmetic, tolist refused", function()
    local x = torch.randn(3, { dtype = torch.float64, requires_grad = true })
    ;(torch.sgn(x) * 2):sum():backward()
    assert.are.equal("tensor([0., 0., 0.], dtype=torch.float64)", tostring(x.grad))
    assert.are.same({ 1, 1, 1 }, (x.grad + 1):tolist())
    assert.are.equal(0, x.grad:sum():item())
    local g = x.grad
    local ok, err = pcall(function() local v = g:tolist(); return v end)
    assert.is_false(ok)
    assert.matches("autograd_spec.lua:%d+: tolist%(%) shouldn't be called on a tensor with unallocated storage", err)
  end)

  it("done-means: (x*x):sum():backward() gives x.grad == 2*x", function()
    local x = torch.randn(3, 4, { requires_grad = true })
    ;(x * x):sum():backward()
    assert.is_true(x.grad:equal(2 * x:detach()))
  end)

  it("sets requires_grad by option, property and requires_grad_()", function()
    assert.is_false(torch.ones(2).requires_grad)
    assert.is_true(torch.ones(2, { requires_grad = true }).requires_grad)
    local a = torch.ones(2)
    a.requires_grad = true
    assert.is_true(a.requires_grad)
    local b = torch.ones(2)
    assert.is_true(rawequal(b:requires_grad_(), b))
    assert.is_true(b.requires_grad)
    b:requires_grad_(false)
    assert.is_false(b.requires_grad)
  end)

  it("takes a gradient for a non-scalar output and accumulates over two backward calls", function()
    local x = leaf({ 1, 2, 3 })
    ;(x * x):backward(torch.tensor({ 1, 10, 100 }, { dtype = f32 }))
    approx.check(x.grad, { 2, 40, 600 })
    ;(x * 3):sum():backward()
    approx.check(x.grad, { 5, 43, 603 })
  end)

  it("clears a gradient with x.grad = nil and assigns one of the right shape", function()
    local x = leaf({ 1, 2 })
    x:sum():backward()
    x.grad = nil
    assert.is_nil(x.grad)
    x.grad = torch.tensor({ 7, 8 }, { dtype = f32 })
    ;(x * 2):sum():backward()
    approx.check(x.grad, { 9, 10 })
  end)

  it("keeps a non-leaf's gradient only after retain_grad()", function()
    local x = leaf({ 1, 2 })
    local kept, dropped = x * 2, x * 3
    assert.is_true(rawequal(kept:retain_grad(), kept))
    ;(kept * dropped):sum():backward()
    approx.check(kept.grad, { 3, 6 })
    assert.is_nil(dropped.grad)
  end)

  it("names grad_fn like PyTorch and has none on leaves", function()
    local x = leaf({ 1, 2 })
    local y = x * x
    assert.are.equal("<MulBackward0>", tostring(y.grad_fn))
    assert.are.equal("MulBackward0", y.grad_fn:name())
    assert.are.equal("<AddBackward0>", tostring((x + 1).grad_fn))
    assert.are.equal("<SumBackward0>", tostring(x:sum().grad_fn))
    assert.is_nil(x.grad_fn)
    assert.is_nil(torch.ones(2).grad_fn)
    assert.is_true(x.is_leaf)
    assert.is_false(y.is_leaf)
    assert.is_true(torch.ones(2).is_leaf)
  end)

  it("detaches: no grad, a leaf, same storage", function()
    local y = leaf({ 1, 2 }) * 2
    local d = y:detach()
    assert.is_false(d.requires_grad)
    assert.is_true(d.is_leaf)
    assert.is_nil(d.grad_fn)
    assert.are.equal(y:data_ptr(), d:data_ptr())
  end)

  it("errors clearly on a second backward without retain_graph, and allows it with", function()
    local x = leaf({ 1, 2 })
    local loss = (x * x):sum()
    loss:backward()
    assert.error_matches(function() loss:backward() end,
      "backward: Trying to backward through the graph a second time", nil, true)
    local again = (x * x):sum()
    again:backward({ retain_graph = true })
    again:backward()
    approx.check(x.grad, { 2 + 4, 4 + 8 })
  end)
end)

describe("torch grad modes", function()
  local x
  before_each(function() x = leaf({ 1, 2 }) end)

  it("no_grad returns fn's values (nil included), passes arguments, restores the mode", function()
    local a, b, c = torch.no_grad(function(k) return (x * k).requires_grad, nil, torch.is_grad_enabled() end, 2)
    assert.is_false(a)
    assert.is_nil(b)
    assert.is_false(c)
    assert.are.equal(3, select("#", torch.no_grad(function() return 1, nil, 3 end)))
    assert.is_true(torch.is_grad_enabled())
    assert.is_true((x * 2).requires_grad)
  end)

  it("no_grad restores the mode when fn errors and passes the error on", function()
    assert.has_error(function() torch.no_grad(function() error("inside no_grad", 0) end) end, "inside no_grad")
    assert.is_true(torch.is_grad_enabled())
    local payload = {}
    local ok, err = pcall(torch.no_grad, function() error(payload) end)
    assert.is_false(ok)
    assert.is_true(rawequal(payload, err))
  end)

  it("enable_grad turns tracking back on inside no_grad", function()
    local inner = torch.no_grad(function()
      return torch.enable_grad(function() return (x * 2).requires_grad end)
    end)
    assert.is_true(inner)
  end)

  it("set_grad_enabled switches tracking globally", function()
    torch.set_grad_enabled(false)
    local off = (x * 2).requires_grad
    local enabled = torch.is_grad_enabled()
    torch.set_grad_enabled(true)
    assert.is_false(off)
    assert.is_false(enabled)
    assert.is_true((x * 2).requires_grad)
  end)

  it("inference_mode: no tracking inside, restored after, even on error", function()
    local inside, tracked, t = torch.inference_mode(function()
      return torch.is_inference_mode_enabled(), (x * 2).requires_grad, torch.ones(2)
    end)
    assert.is_true(inside)
    assert.is_false(tracked)
    assert.is_false(torch.is_inference_mode_enabled())
    assert.error_matches(function() (t * x):sum():backward() end, "Inference tensors cannot be saved for backward", nil, true)
    assert.has_error(function() torch.inference_mode(function() error("boom", 0) end) end, "boom")
    assert.is_false(torch.is_inference_mode_enabled())
  end)

  it("rejects modes given something other than a function or a boolean", function()
    assert.has_error(function() torch.no_grad(5) end, "bad argument #1 to 'no_grad' (function expected, got number)")
    assert.has_error(function() torch.enable_grad() end, "bad argument #1 to 'enable_grad' (function expected, got nil)")
    assert.has_error(function() torch.inference_mode("f") end, "bad argument #1 to 'inference_mode' (function expected, got string)")
    assert.has_error(function() torch.set_grad_enabled("no") end, "bad argument #1 to 'set_grad_enabled' (boolean expected, got string)")
    assert.has_error(function() torch.set_detect_anomaly(1) end, "bad argument #1 to 'set_detect_anomaly' (boolean expected, got number)")
  end)
end)

describe("torch.autograd.grad and anomaly detection", function()
  it("computes first and, with create_graph, second derivatives", function()
    local w = leaf({ 2, 3 })
    local g = torch.autograd.grad((w ^ 3):sum(), w, { create_graph = true })[1]
    approx.check(g, { 12, 27 })
    assert.is_true(g.requires_grad)
    approx.check(torch.autograd.grad(g:sum(), { w })[1], { 12, 18 })
    assert.is_nil(w.grad)  -- grad() does not touch .grad
  end)

  it("takes grad_outputs and several inputs; allow_unused gives nil", function()
    local w, u = leaf({ 1, 2 }), leaf({ 5, 5 })
    local gw = torch.autograd.grad(w * w, w, { grad_outputs = torch.tensor({ 1, 3 }, { dtype = f32 }) })[1]
    approx.check(gw, { 2, 12 })
    local r = torch.autograd.grad((w * 2):sum(), { w, u }, { allow_unused = true })
    approx.check(r[1], { 2, 2 })
    assert.is_nil(r[2])
    assert.error_matches(function() torch.autograd.grad((w * 2):sum(), { w, u }) end,
      "of the differentiated Tensors appears to not have been used in the graph", nil, true)
  end)

  it("reports a NaN-producing backward under anomaly detection, and restores the setting", function()
    local a = leaf({ -1, 1 })
    a:sqrt():sum():backward()  -- without detection: a NaN gradient, no error
    assert.is_true(a.grad:isnan():tolist()[1])
    assert.error_matches(function() torch.autograd.detect_anomaly(function() a:sqrt():sum():backward() end) end,
      "backward: Function 'SqrtBackward0' returned nan values in its 0th output", nil, true)
    assert.is_false(torch.is_anomaly_enabled())
    torch.set_detect_anomaly(true)
    local ok, err = pcall(function() a:sqrt():sum():backward() end)
    torch.set_detect_anomaly(false)
    assert.is_false(ok)
    assert.matches("SqrtBackward0", err, 1, true)
  end)

  it("survives hot loops under anomaly detection and restores the JIT afterwards", function()
    -- Regression: anomaly mode records a C++ backtrace per op, which aborted inside JIT traces.
    local x, n = leaf({ 1, 2 }), 0
    torch.set_detect_anomaly(true)
    for _ = 1, 300 do n = n + (x * 2):sum():item() end
    torch.set_detect_anomaly(false)
    assert.are.equal(300 * 6, n)
    assert.is_true((jit.status()))
  end)
end)

describe("torch.autograd gradients match PyTorch", function()
  -- x (3, 4), w (4, 5), b (5), target (3): loss = CE(tanh(x@w + b), t)
  --   + sum(softmax(x@w, 1) * [0..4]) / 10 + std(x) + norm(x * x)
  local xv, wv, bv, tv = {}, {}, { 0.1, -0.2, 0.3, 0, 0.05 }, { 4, 0, 2 }
  for i = 1, 3 do xv[i] = {} for j = 1, 4 do xv[i][j] = math.floor(math.sin(i * 4 + j) * 1e4) / 1e4 end end
  for i = 1, 4 do wv[i] = {} for j = 1, 5 do wv[i][j] = math.floor(math.cos(i * 5 + j) * 1e4) / 2e4 end end
  local ref

  setup(function()
    ref = pytorch.run(table.concat({
      "import torch.nn.functional as F",
      "x = torch.tensor(" .. py(xv) .. ", requires_grad=True)",
      "w = torch.tensor(" .. py(wv) .. ", requires_grad=True)",
      "b = torch.tensor(" .. py(bv) .. ", requires_grad=True)",
      "t = torch.tensor(" .. py(tv) .. ")",
      "h = x @ w",
      "loss = F.cross_entropy(torch.tanh(h + b), t) + (h.softmax(1) * torch.arange(5.)).sum() / 10 + x.std() + (x * x).norm()",
      "loss.backward()",
      "print(json.dumps([loss.item(), x.grad.tolist(), w.grad.tolist(), b.grad.tolist()]))",
    }, "\n"))
  end)

  it("for x, w and b", function()
    local x, w, b = leaf(xv), leaf(wv), leaf(bv)
    local h = x:matmul(w)
    local loss = F.cross_entropy((h + b):tanh(), torch.tensor(tv)) + (h:softmax(1) * torch.arange(5, { dtype = f32 })):sum() / 10
      + x:std() + (x * x):norm()
    loss:backward()
    approx.check(loss:item(), ref[1])
    approx.check(x.grad, ref[2])
    approx.check(w.grad, ref[3])
    approx.check(b.grad, ref[4])
  end)
end)

describe("torch.autograd with bad inputs", function()
  local x, freed
  before_each(function()
    x = leaf({ 1, 2 })
    freed = x * 2
    freed:free()
  end)

  it("refuses gradients on integer tensors", function()
    assert.has_error(function() torch.ones(2, { dtype = torch.int64, requires_grad = true }) end,
      "ones: only tensors of floating point dtype can require gradients, got torch.int64")
    assert.error_matches(function() torch.arange(3):requires_grad_() end,
      "requires_grad_: Only Tensors of floating point and complex dtype can require gradients", nil, true)
  end)

  it("refuses to switch off requires_grad on a non-leaf (it would silently stay on)", function()
    local y = x * 2
    assert.error_matches(function() y.requires_grad = false end,
      "requires_grad: you can only change requires_grad flags of leaf variables", nil, true)
    assert.is_true(y.requires_grad)
  end)

  it("checks property assignments", function()
    assert.has_error(function() x.requires_grad = "yes" end, "requires_grad must be a boolean, got string")
    assert.has_error(function() x:requires_grad_(1) end, "bad argument #2 to 'requires_grad_' (boolean expected, got number)")
    assert.has_error(function() x.grad = 5 end, "grad must be a Tensor or nil, got number")
    assert.error_matches(function() x.grad = torch.ones(7) end, "grad: assigned grad has shape [7] but the tensor has shape [2]", nil, true)
    assert.error_matches(function() x.grad = torch.ones(2, { dtype = torch.float64 }) end,
      "grad: assigned grad must match the tensor's dtype and device", nil, true)
  end)

  it("checks backward's arguments and targets", function()
    assert.error_matches(function() (x * 2):backward() end, "backward: grad can be implicitly created only for scalar outputs", nil, true)
    assert.has_error(function() (x * 2):backward(5) end, "bad argument #2 to 'backward' (Tensor or nil expected, got number)")
    assert.error_matches(function() (x * 2):backward(torch.ones(3)) end,
      "backward: invalid gradient at index 0 - got [3] but expected shape compatible with [2]", nil, true)
    assert.error_matches(function() torch.ones(2):sum():backward() end,
      "backward: element 0 of tensors does not require grad and does not have a grad_fn", nil, true)
    assert.error_matches(function() freed:backward() end, "backward: tensor was freed", nil, true)
    assert.error_matches(function() torch.ones(2):retain_grad() end, "retain_grad: can't retain_grad on Tensor that has requires_grad=False", nil, true)
  end)

  it("checks autograd.grad's arguments", function()
    local y = (x * 2):sum()
    assert.has_error(function() torch.autograd.grad(nil, x) end, "bad argument #1 to 'grad' (Tensor or non-empty table of Tensors expected, got nil)")
    assert.has_error(function() torch.autograd.grad(y, {}) end, "bad argument #2 to 'grad' (Tensor or non-empty table of Tensors expected, got table)")
    assert.has_error(function() torch.autograd.grad(y, { x, 3 }) end, "bad argument #2 to 'grad' (Tensor expected at position 2, got number)")
    assert.has_error(function() torch.autograd.grad(y, x, 5) end, "bad argument #3 to 'grad' (options table expected, got number)")
    assert.has_error(function() torch.autograd.grad(y, x, { grad_outputs = 5 }) end, "grad: grad_outputs must be a Tensor or a table of Tensors")
    assert.error_matches(function() torch.autograd.grad(y, freed) end, "autograd.grad: tensor was freed", nil, true)
  end)
end)
