-- spec/torch/creation_spec.lua — making tensors (lua/torch/_creation.lua), checked against PyTorch.
--
-- Covers torch.tensor from nested tables (shape, dtype inference: integral numbers -> int64, any
-- fraction -> float32, booleans -> bool; dtype=/requires_grad= options; ragged and bad input), the
-- factories zeros ones full empty eye arange linspace rand randn randint randperm scalar_tensor,
-- the *_like forms, torch.from_buffer (cdata arrays shared without a copy, Lua strings copied),
-- torch.manual_seed (reproducible, and the same stream as PyTorch's CPU generator), and the error
-- each function raises for bad arguments. Reference values come from PyTorch, computed live with
-- spec/support/pytorch.lua; floats agree to atol 1e-6 / rtol 1e-5 (float32) unless stated.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/creation_spec.lua   (or bash scripts/test.sh spec/torch)

local ffi = require "ffi"
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"

local FREED = "tensor was freed"

local function dead()
  local x = torch.ones(2)
  x:free()
  return x
end

-- Asserts x has the dtype, shape and values (within approx's float32 default) PyTorch reported.
local function same(x, r)
  assert.are.equal(r.dtype, tostring(x.dtype))
  assert.are.same(r.shape, { unpack(x:size()) })
  approx.check(x, r.v)
end

local errs = require("spec.support.errors").errs

describe("torch.tensor", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
def d(t): return {"dtype": str(t.dtype), "shape": list(t.shape), "v": t.tolist()}
print(json.dumps({
  "int": d(torch.tensor([[1, 2, 3], [4, 5, 6]])),
  "float": d(torch.tensor([[1.5, 2], [3, -4.25]])),
  "bool": d(torch.tensor([True, False, True])),
  "f64": d(torch.tensor([1, 2], dtype=torch.float64)),
  "i32": d(torch.tensor([1.9, -2.9], dtype=torch.int32)),
  "empty": d(torch.tensor([])),
  "scalar": d(torch.tensor(7)),
  "scalar_f": d(torch.tensor(2.5)),
  "scalar_b": d(torch.tensor(False)),
  "cube": d(torch.tensor([[[1, 2]], [[3, 4]]])),
}))]==]
  end)

  it("infers int64 from integral numbers", function() same(torch.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }), ref.int) end)
  it("infers float32 when any value has a fraction", function() same(torch.tensor({ { 1.5, 2 }, { 3, -4.25 } }), ref.float) end)
  it("infers bool from booleans", function() same(torch.tensor({ true, false, true }), ref.bool) end)
  it("honours dtype=, truncating like PyTorch", function()
    same(torch.tensor({ 1, 2 }, { dtype = torch.float64 }), ref.f64)
    same(torch.tensor({ 1.9, -2.9 }, { dtype = "int32" }), ref.i32)
  end)
  it("makes an empty float32 tensor from {}", function() same(torch.tensor({}), ref.empty) end)
  it("makes 0-dim tensors from numbers and booleans", function()
    same(torch.tensor(7), ref.scalar)
    same(torch.tensor(2.5), ref.scalar_f)
    same(torch.tensor(false), ref.scalar_b)
  end)
  it("reads 3-d nesting", function() same(torch.tensor({ { { 1, 2 } }, { { 3, 4 } } }), ref.cube) end)

  it("sets requires_grad and copies a tensor argument", function()
    local x = torch.tensor({ 1.5 }, { requires_grad = true })
    assert.is_true(x.requires_grad)
    local src = torch.tensor({ 1, 2 })
    local y = torch.tensor(src, { dtype = torch.float64 })
    y[0] = 9
    assert.are.same({ 1, 2 }, src:tolist())
    assert.are.equal(torch.float64, y.dtype)
  end)

  it("rejects ragged and non-numeric input, naming the position", function()
    errs("tensor: expected a sequence of length 2 at data[2], got length 1", torch.tensor, { { 1, 2 }, { 3 } })
    errs("tensor: expected a sequence of length 2 at data[2], got number", torch.tensor, { { 1, 2 }, 3 })
    errs("tensor: expected a number or boolean at data[2], got table", torch.tensor, { 1, { 2 } })
    errs("tensor: expected a number or boolean at data[1], got string", torch.tensor, { "a" })
    errs("bad argument #1 to 'tensor' (table, number, boolean or Tensor expected, got nil)", torch.tensor, nil)
    errs("bad argument #1 to 'tensor' (table, number, boolean or Tensor expected, got function)", torch.tensor, print)
  end)

  it("rejects bad options", function()
    errs("tensor: unknown dtype 'float99'", torch.tensor, { 1 }, { dtype = "float99" })
    errs("tensor: unknown option 'dtyp'", torch.tensor, { 1 }, { dtyp = torch.float32 })
    errs("only tensors of floating point dtype can require gradients", torch.tensor, { 1 }, { requires_grad = true })
    errs("bad argument #2 to 'tensor' (options table expected, got number)", torch.tensor, { 1 }, 5)
    errs(FREED, torch.tensor, dead())
  end)
end)

describe("factories", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
def d(t): return {"dtype": str(t.dtype), "shape": list(t.shape), "v": t.tolist()}
print(json.dumps({
  "zeros": d(torch.zeros(2, 3)), "ones": d(torch.ones(3, dtype=torch.int32)),
  "full_i": d(torch.full((2, 2), 7)), "full_f": d(torch.full((3,), 2.5)), "full_b": d(torch.full((2,), True)),
  "eye": d(torch.eye(3)), "eye23": d(torch.eye(2, 3)), "eye_l": d(torch.eye(2, dtype=torch.int64)),
  "ar5": d(torch.arange(5)), "ar14": d(torch.arange(1, 4)), "arq": d(torch.arange(0, 1, 0.25)),
  "ardown": d(torch.arange(10, 0, -3)), "ar64": d(torch.arange(5, dtype=torch.float64)),
  "lin": d(torch.linspace(0, 1, 5)), "lin7": d(torch.linspace(-1, 1, 7)), "lin1": d(torch.linspace(3, 9, 1)),
  "st": d(torch.scalar_tensor(3)), "st64": d(torch.scalar_tensor(1.5, dtype=torch.float64)),
  "empty": d(torch.empty(2, 0, 3)),
}))]==]
  end)

  it("zeros / ones take varargs or a table", function()
    same(torch.zeros(2, 3), ref.zeros); same(torch.zeros({ 2, 3 }), ref.zeros)
    same(torch.ones(3, { dtype = torch.int32 }), ref.ones)
  end)
  it("full infers its dtype from the fill value", function()
    same(torch.full({ 2, 2 }, 7), ref.full_i); same(torch.full({ 3 }, 2.5), ref.full_f); same(torch.full({ 2 }, true), ref.full_b)
  end)
  it("empty has the shape and default dtype", function()
    local x = torch.empty(4, 5)
    assert.are.same({ 4, 5 }, { unpack(x:size()) })
    assert.are.equal(torch.float32, x.dtype)
    same(torch.empty(2, 0, 3), ref.empty)
  end)
  it("eye", function()
    same(torch.eye(3), ref.eye); same(torch.eye(2, 3), ref.eye23); same(torch.eye(2, { dtype = torch.int64 }), ref.eye_l)
  end)
  it("arange: int64 for integers, float32 otherwise, negative steps", function()
    same(torch.arange(5), ref.ar5)
    same(torch.arange(1, 4), ref.ar14)
    same(torch.arange(0, 1, 0.25), ref.arq)
    same(torch.arange(10, 0, -3), ref.ardown)
    same(torch.arange(5, { dtype = torch.float64 }), ref.ar64)
  end)
  it("linspace", function()
    same(torch.linspace(0, 1, 5), ref.lin); same(torch.linspace(-1, 1, 7), ref.lin7); same(torch.linspace(3, 9, 1), ref.lin1)
  end)
  it("scalar_tensor is 0-dim of the default float dtype", function()
    same(torch.scalar_tensor(3), ref.st)
    same(torch.scalar_tensor(1.5, { dtype = torch.float64 }), ref.st64)
  end)

  it("reject bad shapes, values and options", function()
    errs("zeros: negative dimension -1", torch.zeros, -1)
    errs("bad argument #2 to 'zeros' (sequence of integers expected, got string at position 2)", torch.zeros, 2, "a")
    errs("bad argument #1 to 'ones' (sequence of integers expected, got 2.5 at position 1)", torch.ones, 2.5)
    errs("bad argument #1 to 'empty' (sequence of integers expected, got nil at position 1)", torch.empty, nil)
    errs("zeros: unknown dtype 'foo'", torch.zeros, 2, { dtype = "foo" })
    errs("bad argument #1 to 'full' (sequence of integers expected, got nil at position 1)", torch.full, nil, 1)
    errs("bad argument #2 to 'full' (number or boolean expected, got string)", torch.full, { 2 }, "x")
    errs("eye: n must be greater or equal to 0, got -1", torch.eye, -1)
    errs("bad argument #1 to 'eye' (integer expected, got string)", torch.eye, "a")
    errs("arange: step must be nonzero", torch.arange, 0, 5, 0)
    errs("bad argument #1 to 'arange' (number expected, got string)", torch.arange, "a")
    errs("arange: upper bound and lower bound inconsistent with step sign", torch.arange, 0, 5, -1)
    errs("linspace: number of steps must be non-negative", torch.linspace, 0, 1, -1)
    errs("bad argument #3 to 'linspace' (integer expected, got 2.5)", torch.linspace, 0, 1, 2.5)
    errs("bad argument #1 to 'scalar_tensor' (number or boolean expected, got string)", torch.scalar_tensor, "x")
  end)

  it("blames the caller's line for misuse", function()
    local ok, msg = pcall(function() local x = torch.zeros(2, "a"); return x end)
    assert.is_false(ok)
    assert.matches("creation_spec.lua:%d+: bad argument #2 to 'zeros'", msg)
  end)
end)

describe("random factories and manual_seed", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
torch.manual_seed(42)
out = {"rand": torch.rand(3).tolist(), "randn": torch.randn(3).tolist(),
       "randint": torch.randint(0, 10, (5,)).tolist(), "randperm": torch.randperm(6).tolist()}
print(json.dumps(out))]==]
  end)

  it("draw the same stream as PyTorch after manual_seed", function()
    torch.manual_seed(42)
    approx.check(torch.rand(3), ref.rand)
    approx.check(torch.randn(3), ref.randn)
    approx.check(torch.randint(0, 10, { 5 }), ref.randint, 0)
    approx.check(torch.randperm(6), ref.randperm, 0)
  end)

  it("repeat after re-seeding and differ across seeds", function()
    torch.manual_seed(7)
    local a = torch.randn(8):tolist()
    torch.manual_seed(7)
    assert.are.same(a, torch.randn(8):tolist())
    torch.manual_seed(8)
    assert.are_not.same(a, torch.randn(8):tolist())
  end)

  it("respect ranges, shapes and dtypes", function()
    local u = torch.rand(1000)
    assert.is_true(u:min():item() >= 0 and u:max():item() < 1)
    local n = torch.randn(20000, { dtype = torch.float64 })
    assert.are.equal(torch.float64, n.dtype)
    assert.is_true(math.abs(n:mean():item()) < 0.05 and math.abs(n:std():item() - 1) < 0.05)
    local r = torch.randint(3, 6, { 4, 50 })
    assert.are.equal(torch.int64, r.dtype)
    assert.are.same({ 4, 50 }, { unpack(r:size()) })
    assert.is_true(r:min():item() >= 3 and r:max():item() <= 5)
    assert.is_true(torch.randint(4, { 100 }):max():item() <= 3)   -- randint(high, size)
    local p = torch.randperm(50):sort()
    approx.check(p, torch.arange(50):tolist(), 0)
  end)

  it("reject bad arguments", function()
    errs("randint: expected low < high, got low=5 high=2", torch.randint, 5, 2, { 3 })
    errs("bad argument #3 to 'randint' (size table expected, got number)", torch.randint, 3, 10, 5)
    errs("randperm: n must be non-negative, got -1", torch.randperm, -1)
    errs("rand: negative dimension -1", torch.rand, -1)
    errs("manual_seed: seed must be non-negative, got -1", torch.manual_seed, -1)
    errs("bad argument #1 to 'manual_seed' (integer expected, got string)", torch.manual_seed, "x")
    errs("bad argument #1 to 'randn' (sequence of integers expected, got boolean at position 1)", torch.randn, true)
  end)
end)

describe("*_like", function()
  it("copy shape, dtype and device, and accept overrides", function()
    local base = torch.ones(2, 3, { dtype = torch.int32 })
    local z = torch.zeros_like(base)
    assert.are.equal(torch.int32, z.dtype)
    approx.check(z, { { 0, 0, 0 }, { 0, 0, 0 } }, 0)
    local o, f4 = torch.ones_like(base, { dtype = torch.float64 }), torch.full_like(base, 4)
    assert.are.equal(torch.float64, o.dtype)
    assert.are.equal(torch.int32, f4.dtype)
    approx.check(o, { { 1, 1, 1 }, { 1, 1, 1 } }, 0)
    approx.check(f4, { { 4, 4, 4 }, { 4, 4, 4 } }, 0)
    assert.are.same({ 2, 3 }, { unpack(torch.empty_like(base):size()) })
    local f = torch.zeros(3, 2, { dtype = torch.float64 })
    local r, n = torch.rand_like(f), torch.randn_like(f)
    assert.are.equal(torch.float64, r.dtype)
    assert.are.same({ 3, 2 }, { unpack(n:size()) })
    assert.is_true(r:min():item() >= 0 and r:max():item() < 1)
  end)

  it("reject bad arguments", function()
    errs("bad argument #1 to 'zeros_like' (Tensor expected, got number)", torch.zeros_like, 3)
    errs("bad argument #1 to 'ones_like' (Tensor expected, got nil)", torch.ones_like, nil)
    errs("zeros_like: " .. FREED, torch.zeros_like, dead())
    errs("bad argument #2 to 'ones_like' (options table expected, got string)", torch.ones_like, torch.ones(1), "x")
    errs("bad argument #2 to 'full_like' (number or boolean expected, got nil)", torch.full_like, torch.ones(1))
    errs("\"check_uniform_bounds\" not implemented for 'Long'", torch.rand_like, torch.arange(3))
  end)
end)

describe("torch.from_buffer", function()
  it("wraps an ffi array without copying, both ways", function()
    local buf = ffi.new("float[6]", { 1, 2, 3, 4, 5, 6 })
    local t = torch.from_buffer(buf, { dtype = torch.float32, shape = { 2, 3 } })
    approx.check(t, { { 1, 2, 3 }, { 4, 5, 6 } }, 0)
    t[{ 0, 0 }] = 100          -- write through the tensor ...
    assert.are.equal(100, buf[0])
    buf[5] = -1                -- ... and through the buffer
    assert.are.equal(-1, t[{ 1, 2 }]:item())
    approx.check(torch.from_buffer(buf, { dtype = "float32", offset = 8 }), { 3, 4, 5, -1 }, 0)
    local p = torch.from_buffer(ffi.cast("float*", buf), { dtype = torch.float32, count = 2 })
    approx.check(p, { 100, 2 }, 0)
  end)

  it("keeps the buffer alive as long as a tensor uses it", function()
    local t = torch.from_buffer(ffi.new("int32_t[3]", { 7, 8, 9 }), { dtype = torch.int32 })
    for _ = 1, 3 do collectgarbage() end
    local junk = ffi.new("int32_t[3]", { 0, 0, 0 })
    assert.are.same({ 7, 8, 9 }, t:tolist())
    assert.is_not_nil(junk)
  end)

  it("copies a Lua string (default dtype uint8)", function()
    local s = string.char(1, 2, 3, 250)
    local t = torch.from_buffer(s)
    assert.are.equal(torch.uint8, t.dtype)
    assert.are.same({ 1, 2, 3, 250 }, t:tolist())
    t[0] = 9
    assert.are.equal(1, s:byte(1))
    local ints = torch.from_buffer(ffi.string(ffi.new("int32_t[2]", { 7, -8 }), 8), { dtype = torch.int32 })
    assert.are.same({ 7, -8 }, ints:tolist())
    assert.are.same({ 0 }, { unpack(torch.from_buffer(""):size()) })
  end)

  it("rejects bad buffers and options", function()
    local buf = ffi.new("float[6]")
    errs("bad argument #1 to 'from_buffer' (cdata buffer or string expected, got number)", torch.from_buffer, 3)
    errs("bad argument #1 to 'from_buffer' (cdata buffer or string expected, got nil)", torch.from_buffer, nil)
    errs("from_buffer: shape needs 28 bytes, the buffer has 24",
      torch.from_buffer, buf, { dtype = torch.float32, shape = { 7 } })
    errs("from_buffer: buffer length 20 is not a multiple of the element size 8",
      torch.from_buffer, buf, { dtype = torch.float64, offset = 4 })
    errs("from_buffer: unknown option 'dtpe'", torch.from_buffer, buf, { dtpe = torch.float64 })
    errs("from_buffer: a pointer has no length; give shape or count", torch.from_buffer, ffi.cast("float*", buf))
    errs("from_buffer: offset outside the buffer", torch.from_buffer, buf, { offset = -1 })
    errs("from_buffer: offset outside the buffer", torch.from_buffer, "abcd", { offset = 10 })
    errs("from_buffer: unknown dtype 'zzz'", torch.from_buffer, buf, { dtype = "zzz" })
    errs("from_buffer: negative dimension -1", torch.from_buffer, buf, { dtype = torch.float32, shape = { -1 } })
  end)
end)
