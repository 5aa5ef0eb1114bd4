-- spec/torch/indexing_spec.lua — x[...] read and write (lua/torch/_indexing.lua) and the value
-- methods item, tolist, clone, copy_, fill_, zero_ (lua/torch/_views.lua), against PyTorch.
--
-- Covers every index form in _indexing.lua's header: integers, negative integers, {} (":"),
-- {start, stop, step} with nil bounds, {start = , stop = , step = }, slice strings ":" "1:3" "::2"
-- "-2:", "..." (Ellipsis), torch.newaxis / "None", booleans, a bool mask, an int64 index tensor,
-- and assignment of numbers, booleans and broadcastable tensors through each form. Each Lua key is
-- paired with the Python subscript it stands for; PyTorch evaluates them live on the same
-- x = arange(60).reshape(3, 4, 5) (int64: comparisons are exact). Bad keys and values must raise
-- a Lua error naming the problem.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/indexing_spec.lua   (or bash scripts/test.sh spec/torch)

local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"

local errs = require("spec.support.errors").errs

local function base() return torch.arange(60):reshape(3, 4, 5) end
local new = torch.newaxis

-- { Lua key (a function of x, so tensors can be built from it), Python subscript }
local READS = {
  { function() return 0 end, "0" },
  { function() return -1 end, "-1" },
  { function() return { 1, 2 } end, "1, 2" },
  { function() return { 2, -1, -2 } end, "2, -1, -2" },
  { function() return { {}, 1 } end, ":, 1" },
  { function() return { {}, {}, 3 } end, ":, :, 3" },
  { function() return { { 1, 3 } } end, "1:3" },
  { function() return { {}, { nil, nil, 2 } } end, ":, ::2" },
  { function() return { {}, { 1, nil }, { 0, 5, 3 } } end, ":, 1:, 0:5:3" },
  { function() return { {}, { -3, -1 } } end, ":, -3:-1" },
  { function() return { { start = 1, step = 1 }, { stop = 2 } } end, "1::1, :2" },
  { function() return { ":", "1:3" } end, ":, 1:3" },
  { function() return { "::2", ":", "-2:" } end, "::2, :, -2:" },
  { function() return { 0, "1:" } end, "0, 1:" },
  { function() return { "...", 0 } end, "..., 0" },
  { function() return { 1, "...", { 1, 3 } } end, "1, ..., 1:3" },
  { function() return { new } end, "None" },
  { function() return new end, "None" },
  { function() return { {}, new, 0 } end, ":, None, 0" },
  { function() return { "None", "...", "None" } end, "None, ..., None" },
  { function() return { 0, { 9, 20 } } end, "0, 9:20" },
  { function() return { {}, { 3, 1 } } end, ":, 3:1" },
  { function() return true end, "True" },
  { function() return { 0, false } end, "0, False" },
  { function(x) return x:gt(40) end, "x > 40" },
  { function(x) return { x[{ {}, {}, 0 }]:gt(20) } end, "x[:, :, 0] > 20" },
  { function() return torch.tensor({ 2, 0, 2 }) end, "torch.tensor([2, 0, 2])" },
  { function() return { {}, torch.tensor({ 3, -1 }), 1 } end, ":, torch.tensor([3, -1]), 1" },
  { function() return { torch.tensor({ 0, 2 }), torch.tensor({ 1, 3 }) } end, "torch.tensor([0, 2]), torch.tensor([1, 3])" },
  { function() return {} end, "()" },
  { function() return torch.tensor(1) end, "torch.tensor(1)" },
}

local function label(c) return "x[" .. c[2] .. "]" end

describe("reading x[...]", function()
  local ref
  setup(function()
    local lines = { "x = torch.arange(60).reshape(3, 4, 5)", "out = []" }
    for _, c in ipairs(READS) do
      lines[#lines + 1] = ("y = x[%s]; out.append({'v': y.tolist(), 'shape': list(y.shape)})"):format(c[2])
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  for i, c in ipairs(READS) do
    it(label(c), function()
      local x = base()
      local y = x[c[1](x)]
      assert.are.same(ref[i].shape, { unpack(y:size()) })
      assert.are.same(ref[i].v, y:tolist())
    end)
  end

  it("basic indexing returns views; advanced indexing copies", function()
    local x = base()
    x[{ 1, "1:3", {} }]:fill_(-1)
    x[{ "...", new, 0 }]:fill_(-2)
    assert.are.equal(-1, x[{ 1, 2, 3 }]:item())
    assert.are.equal(-2, x[{ 2, 3, 0 }]:item())
    x[torch.tensor({ 0 })]:fill_(-3)
    assert.are.equal(1, x[{ 0, 0, 1 }]:item())
  end)
end)

-- { Lua key, Python subscript, value as Lua, value as Python }
local WRITES = {
  { function() return 0 end, "0", 5, "5" },
  { function() return { -1, {}, 2 } end, "-1, :, 2", -7, "-7" },
  { function() return { {}, { 1, 3 } } end, ":, 1:3", 0, "0" },
  { function() return { "::2", "...", "-2:" } end, "::2, ..., -2:", 100, "100" },
  { function() return { {}, 0 } end, ":, 0", function() return torch.arange(5) end, "torch.arange(5)" },
  { function() return { 1 } end, "1", function() return torch.tensor({ { 1 }, { 2 }, { 3 }, { 4 } }) end,
    "torch.tensor([[1], [2], [3], [4]])" },
  { function(x) return x:lt(10) end, "x < 10", -1, "-1" },
  { function() return torch.tensor({ 2, 0 }) end, "torch.tensor([2, 0])", 9, "9" },
  { function() return { 0, torch.tensor({ 1, 3 }), { 0, 2 } } end, "0, torch.tensor([1, 3]), 0:2",
    function() return torch.tensor({ 8, 9 }) end, "torch.tensor([8, 9])" },
  { function() return { new, 2 } end, "None, 2", 3, "3" },
  { function() return {} end, "()", 4, "4" },
  { function() return { "...", 4 } end, "..., 4", 2.9, "2.9" },
}

describe("assigning x[...] = v", function()
  local ref
  setup(function()
    local lines = { "out = []" }
    for _, c in ipairs(WRITES) do
      lines[#lines + 1] = ("x = torch.arange(60).reshape(3, 4, 5); x[%s] = %s; out.append(x.tolist())"):format(c[2], c[4])
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  for i, c in ipairs(WRITES) do
    it(label(c) .. " = " .. c[4], function()
      local x = base()
      local v = c[3]
      if type(v) == "function" then v = v() end
      x[c[1](x)] = v
      assert.are.same(ref[i], x:tolist())
    end)
  end

  it("assigns booleans into bool tensors and floats into float tensors", function()
    local b = torch.zeros(3, { dtype = torch.bool })
    b[{ "1:" }] = true
    assert.are.same({ false, true, true }, b:tolist())
    local f = torch.zeros(2, 2)
    f[{ {}, 1 }] = 2.5
    approx.check(f, { { 0, 2.5 }, { 0, 2.5 } }, 0)
  end)
end)

describe("bad indices and values", function()
  local x = base()

  it("name the problem", function()
    local get = function(k) return x[k] end
    local set = function(k, v) x[k] = v end
    errs("index: index 3 is out of bounds for dimension 0 with size 3", get, 3)
    errs("index: index -4 is out of bounds for dimension 0 with size 3", get, -4)
    errs("index: index 9 is out of bounds for dimension 1 with size 4", get, { 0, 9 })
    errs("index: too many indices for tensor of dimension 3", get, { 0, 0, 0, 0 })
    errs("index: position 1 must be an integer, got 0.5", get, { 0.5 })
    errs("index: position 2 must be an integer, got 1.5", get, { 0, 1.5 })
    errs("index: bad slice string '1:a' at position 1", get, { "1:a" })
    errs("index: bad slice string 'abc' at position 2", get, { 0, "abc" })
    errs("index: slice step at position 1 must be positive, got 0", get, { "::0" })
    errs("index: slice step at position 1 must be positive, got -1", get, { "::-1" })
    errs("index: slice step at position 2 must be positive, got -2", get, { {}, { 0, 2, -2 } })
    errs("index: slice start at position 1 must be an integer, got 0.5", get, { { 0.5, 2 } })
    errs("index: an index can only have a single ellipsis ('...')", get, { "...", "..." })
    errs("index: unsupported index of type function at position 1", get, { print })
    errs("index: unsupported index of type nil at position 2", get, { 0, nil, 1 })
    errs("index: The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4, 5]", get,
      torch.tensor({ true, false }))
    errs("index: tensors used as indices must be long, int, byte or bool tensors",
      get, torch.tensor({ 1 }, { dtype = torch.float32 }))
    errs("index: index 7 is out of bounds for dimension 0 with size 3", get, torch.tensor({ 7 }))
    errs("Tensor has no attribute or method 'foo'", get, "foo")
    errs("index assignment: index 5 is out of bounds for dimension 0 with size 3", set, 5, 1)
    errs("index assignment: expected a Tensor, number or boolean value, got string", set, 0, "a")
    errs("index assignment: expected a Tensor, number or boolean value, got nil", set, 0, nil)
    errs("index assignment: The expanded size of the tensor (5) must match the existing size (3)", set, { 0, 0 }, torch.ones(3))
    errs("index: position 1 must be an integer, got 0.5", set, { 0.5 }, 1)
    errs("cannot set attribute 'foo' of a Tensor", set, "foo", 1)
  end)

  it("refuse freed tensors, as the indexed tensor, the index or the value", function()
    local dead = torch.ones(3)
    dead:free()
    errs("index: tensor was freed", function() return dead[0] end)
    errs("index assignment: tensor was freed", function() dead[0] = 1 end)
    local idx = torch.tensor({ 0 })
    idx:free()
    errs("index: tensor was freed", function() return x[idx] end)
    errs("index assignment: tensor was freed", function() x[0] = dead end)
  end)

  it("blames the caller's line", function()
    local ok, msg = pcall(function() local y = x[{ 0.5 }]; return y end)
    assert.is_false(ok)
    assert.matches("indexing_spec.lua:%d+: index: position 1", msg)
    ok, msg = pcall(function() local y = x[7]; return y end)
    assert.is_false(ok)
    assert.matches("indexing_spec.lua:%d+: index: index 7 is out of bounds", msg)
  end)
end)

describe("item, tolist, clone, copy_, fill_, zero_", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
x = torch.tensor([[1.5, -2.25], [3.0, 4.75]])
y = torch.zeros(2, 2); y.copy_(torch.tensor([7, 8]))
z = torch.zeros(3, dtype=torch.int32); z.copy_(torch.tensor([1.9, -1.9, 2.5]))
print(json.dumps({
  "item_f": torch.tensor([[2.5]]).item(), "item_i": torch.tensor(-7).item(), "item_b": torch.tensor(True).item(),
  "list": x.tolist(), "list_b": (x > 2).tolist(), "list_i": torch.arange(6).reshape(3, 1, 2).tolist(),
  "copy_bc": y.tolist(), "copy_cast": z.tolist(), "fill_i": torch.zeros(2, dtype=torch.int64).fill_(2.7).tolist(),
  "half": torch.tensor([0.1, 1/3], dtype=torch.float16).tolist(),
}))]==]
  end)

  it("item gives a Lua number or boolean", function()
    assert.are.equal(ref.item_f, torch.tensor({ { 2.5 } }):item())
    assert.are.equal(ref.item_i, torch.tensor(-7):item())
    assert.are.equal(ref.item_b, torch.tensor(true):item())
    assert.are.equal("number", type(torch.tensor(3, { dtype = torch.int32 }):item()))
  end)

  it("tolist gives nested 1-based Lua arrays (0-dim: the number)", function()
    local x = torch.tensor({ { 1.5, -2.25 }, { 3.0, 4.75 } })
    assert.are.same(ref.list, x:tolist())
    assert.are.same(ref.list_b, x:gt(2):tolist())
    assert.are.same(ref.list_i, torch.arange(6):reshape(3, 1, 2):tolist())
    assert.are.same(ref.half, torch.tensor({ 0.1, 1 / 3 }, { dtype = torch.float16 }):tolist())
    assert.are.equal(5, torch.tensor(5):tolist())
    assert.are.same({}, torch.zeros(0):tolist())
    assert.are.same({ {}, {} }, torch.zeros(2, 0):tolist())
  end)

  it("clone copies, copy_ broadcasts and casts, fill_ and zero_ work in place", function()
    local x = torch.arange(4)
    local c = x:clone()
    c[0] = 10
    assert.are.same({ 0, 1, 2, 3 }, x:tolist())
    local y = torch.zeros(2, 2)
    assert.is_true(y:copy_(torch.tensor({ 7, 8 })) == y)
    assert.are.same(ref.copy_bc, y:tolist())
    local z = torch.zeros(3, { dtype = torch.int32 })
    z:copy_(torch.tensor({ 1.9, -1.9, 2.5 }))
    assert.are.same(ref.copy_cast, z:tolist())
    assert.are.same(ref.fill_i, torch.zeros(2, { dtype = torch.int64 }):fill_(2.7):tolist())
    assert.are.same({ true, true }, torch.zeros(2, { dtype = torch.bool }):fill_(true):tolist())
    local v = torch.ones(2, 3)
    v[{ {}, "1:" }]:zero_()
    assert.are.same({ { 1, 0, 0 }, { 1, 0, 0 } }, v:tolist())
  end)

  it("reject bad arguments", function()
    local dead = torch.ones(2)
    dead:free()
    local x = torch.ones(3)
    errs("item: a Tensor with 3 elements cannot be converted to Scalar", x.item, x)
    errs("item: a complex tensor has no Lua number form", x.item, torch.zeros(1, { dtype = torch.complex64 }))
    errs("tolist: a complex tensor has no Lua number form", x.tolist, torch.zeros(2, { dtype = torch.complex64 }))
    errs("bad argument #2 to 'fill_' (number or boolean expected, got string)", x.fill_, x, "a")
    errs("bad argument #2 to 'fill_' (number or boolean expected, got nil)", x.fill_, x, nil)
    errs("copy_: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
      x.copy_, x, torch.zeros(2))
    errs("bad argument #2 to 'copy_' (Tensor expected, got number)", x.copy_, x, 3)
    for _, name in ipairs({ "item", "tolist", "clone", "zero_" }) do
      errs("bad argument #1 to '" .. name .. "' (Tensor expected, got table)", x[name], {})
      errs(name .. ": tensor was freed", x[name], dead)
    end
    errs("fill_: tensor was freed", x.fill_, dead, 1)
    errs("copy_: tensor was freed", x.copy_, dead, x)
    errs("copy_: tensor was freed", x.copy_, x, dead)
  end)
end)
