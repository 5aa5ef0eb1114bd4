-- spec/torch/views_spec.lua — shape methods and views (lua/torch/_views.lua, metadata in _tensor.lua).
--
-- Covers view reshape permute transpose/swapaxes t .T squeeze unsqueeze narrow select expand
-- contiguous flatten split chunk view_as reshape_as expand_as, and the metadata size(dim) (negative
-- dims, 0-dim tensors), shape, stride, is_contiguous, dim/ndim, numel, #x, storage_offset. Values,
-- shapes and strides are compared with PyTorch, computed live (spec/support/pytorch.lua) on the
-- same input x = arange(24).reshape(2, 3, 4) (int64, so comparisons are exact). Also checks that
-- views share storage with their base (a write through one shows in the other) and that every
-- method raises a clear error for bad dims, bad shapes, non-tensors and freed tensors.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/views_spec.lua   (or bash scripts/test.sh spec/torch)

local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local errs = require("spec.support.errors").errs

local function base() return torch.arange(24):reshape(2, 3, 4) end

-- name -> { Lua producer, Python expression over x }
local CASES = {
  view = { function(x) return x:view(4, 6) end, "x.view(4, 6)" },
  view_tbl = { function(x) return x:view({ -1, 8 }) end, "x.view(-1, 8)" },
  reshape_nc = { function(x) return x:transpose(0, 2):reshape(6, 4) end, "x.transpose(0, 2).reshape(6, 4)" },
  permute = { function(x) return x:permute(2, 0, 1) end, "x.permute(2, 0, 1)" },
  permute_neg = { function(x) return x:permute({ -1, -3, -2 }) end, "x.permute(-1, -3, -2)" },
  transpose = { function(x) return x:transpose(0, 2) end, "x.transpose(0, 2)" },
  swapaxes = { function(x) return x:swapaxes(-1, 1) end, "x.swapaxes(-1, 1)" },
  t = { function(x) return x[0]:t() end, "x[0].t()" },
  T = { function(x) return x.T end, "x.permute(2, 1, 0)" },
  squeeze = { function(x) return x:view(2, 1, 3, 1, 4):squeeze() end, "x.view(2, 1, 3, 1, 4).squeeze()" },
  squeeze_d = { function(x) return x:view(2, 1, 12):squeeze(1) end, "x.view(2, 1, 12).squeeze(1)" },
  squeeze_keep = { function(x) return x:squeeze(0) end, "x.squeeze(0)" },
  unsqueeze = { function(x) return x:unsqueeze(0) end, "x.unsqueeze(0)" },
  unsqueeze_neg = { function(x) return x:unsqueeze(-1) end, "x.unsqueeze(-1)" },
  narrow = { function(x) return x:narrow(2, 1, 2) end, "x.narrow(2, 1, 2)" },
  narrow_neg = { function(x) return x:narrow(-2, 1, 2) end, "x.narrow(-2, 1, 2)" },
  select = { function(x) return x:select(1, -1) end, "x.select(1, -1)" },
  expand = { function(x) return x[{ {}, { 0, 1 }, {} }]:expand(2, 5, 4) end, "x[:, 0:1, :].expand(2, 5, 4)" },
  expand_neg = { function(x) return x:unsqueeze(0):expand(3, -1, -1, -1) end, "x.unsqueeze(0).expand(3, -1, -1, -1)" },
  contiguous = { function(x) return x:transpose(0, 1):contiguous() end, "x.transpose(0, 1).contiguous()" },
  flatten = { function(x) return x:flatten() end, "x.flatten()" },
  flatten1 = { function(x) return x:flatten(1) end, "x.flatten(1)" },
  flatten01 = { function(x) return x:flatten(0, 1) end, "x.flatten(0, 1)" },
  view_as = { function(x) return x:view_as(torch.zeros(6, 4)) end, "x.view_as(torch.zeros(6, 4))" },
  reshape_as = { function(x) return x.T:reshape_as(torch.zeros(24)) end, "x.permute(2, 1, 0).reshape_as(torch.zeros(24))" },
  expand_as = { function(x) return x[0]:expand_as(x) end, "x[0].expand_as(x)" },
}

describe("views against PyTorch", function()
  local ref
  setup(function()
    local lines = { "x = torch.arange(24).reshape(2, 3, 4)", "out = {}" }
    for name, c in pairs(CASES) do
      lines[#lines + 1] = ("y = %s; out[%q] = {'v': y.tolist(), 'shape': list(y.shape), "
        .. "'stride': list(y.stride()), 'contig': y.is_contiguous()}"):format(c[2], name)
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  local names = {}
  for name in pairs(CASES) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    it(name .. ": values, shape, stride, contiguity", function()
      local y = CASES[name][1](base())
      local r = ref[name]
      assert.are.same(r.v, y:tolist())
      assert.are.same(r.shape, { unpack(y:size()) })
      assert.are.same(r.stride, y:stride())
      assert.are.equal(r.contig, y:is_contiguous())
    end)
  end
end)

describe("split and chunk", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
x = torch.arange(24).reshape(2, 3, 4)
def shapes(ts): return [list(t.shape) for t in ts]
print(json.dumps({
  "split2": shapes(x.split(3, 2)), "split_sizes": shapes(x.split([1, 2], 1)),
  "split_vals": [t.tolist() for t in x.split(3, 2)], "chunk": shapes(torch.arange(6).chunk(4)),
  "chunk_dim": shapes(x.chunk(2, -1)), "chunk_more": shapes(x.chunk(5, 1)),
  "empty_split": shapes(torch.arange(0).split(2)), "empty_chunk": shapes(torch.arange(0).chunk(3)),
}))]==]
  end)

  local function shapes(ts)
    local s = {}
    for i, t in ipairs(ts) do s[i] = { unpack(t:size()) } end
    return s
  end

  it("split by size and by list of sizes", function()
    local x = base()
    assert.are.same(ref.split2, shapes(x:split(3, 2)))
    assert.are.same(ref.split_sizes, shapes(x:split({ 1, 2 }, 1)))
    local vals = {}
    for i, t in ipairs(x:split(3, 2)) do vals[i] = t:tolist() end
    assert.are.same(ref.split_vals, vals)
    assert.are.same(ref.empty_split, shapes(torch.arange(0):split(2)))
  end)

  it("chunk like PyTorch (uneven and empty dims)", function()
    assert.are.same(ref.chunk, shapes(torch.arange(6):chunk(4)))
    assert.are.same(ref.chunk_dim, shapes(base():chunk(2, -1)))
    assert.are.same(ref.chunk_more, shapes(base():chunk(5, 1)))
    assert.are.same(ref.empty_chunk, shapes(torch.arange(0):chunk(3)))
  end)
end)

describe("metadata", function()
  it("size(dim) takes negative dims; size() is a torch.Size", function()
    local x = base()
    assert.are.equal(2, x:size(0))
    assert.are.equal(4, x:size(-1))
    assert.are.equal(3, x:size(-2))
    assert.are.equal(2, x:size(-3))
    assert.are.equal("torch.Size([2, 3, 4])", tostring(x:size()))
    assert.are.equal(torch.Size({ 2, 3, 4 }), x.shape)
    assert.are.equal(24, x.shape:numel())
    assert.are.equal(3, x:dim())
    assert.are.equal(3, x.ndim)
    assert.are.equal(24, x:numel())
    assert.are.equal(2, #x)
    assert.are.same({ 12, 4, 1 }, x:stride())
    assert.are.equal(1, x:stride(-1))
    assert.are.equal(5, x:narrow(2, 1, 2):select(1, 1):storage_offset())
  end)

  it("0-dim tensors have an empty shape and no dims to ask about", function()
    local s = torch.tensor(5)
    assert.are.equal("torch.Size([])", tostring(s:size()))
    assert.are.equal(0, s:dim())
    assert.are.equal(1, s:numel())
    errs("size: dimension specified as 0 but tensor has no dimensions", s.size, s, 0)
    errs("stride: dimension specified as -1 but tensor has no dimensions", s.stride, s, -1)
    errs("len() of a 0-d tensor", function() return #s end)
  end)

  it("rejects out-of-range and non-integer dims", function()
    local x = base()
    errs("size: dimension out of range (expected to be in range of [-3, 2], but got 3)", x.size, x, 3)
    errs("size: dimension out of range (expected to be in range of [-3, 2], but got -4)", x.size, x, -4)
    errs("size: dim must be an integer, got string", x.size, x, "a")
    errs("stride: dim must be an integer, got 1.5", x.stride, x, 1.5)
  end)
end)

describe("views share storage", function()
  it("writes through a view show in the base and back", function()
    local x = base()
    local views = {
      x:view(24), x:reshape(6, 4), x:permute(2, 0, 1), x:transpose(0, 1), x:narrow(2, 0, 2), x:select(0, 0),
      x:unsqueeze(1), x:flatten(), x:split(2, 2)[1], x:chunk(3, 1)[1], x:view_as(torch.zeros(4, 6)), x.T,
      x:contiguous(),
    }
    for i, v in ipairs(views) do
      local first = {}   -- each view's first element is x[0, 0, 0]
      for d = 1, v:dim() do first[d] = 0 end
      v[first] = -i
      assert.are.equal(-i, x[{ 0, 0, 0 }]:item(), "view " .. i)
    end
    x[{ 0, 0, 0 }] = 77
    assert.are.equal(77, views[1][0]:item())
    local e = x[{ {}, { 0, 1 }, { 0, 1 } }]:expand(2, 3, 5)
    assert.are.same({ 12, 0, 0 }, e:stride())
    assert.are.equal(x:data_ptr(), e:data_ptr())
  end)

  it("clone and contiguous of a non-contiguous view copy", function()
    local x = base()
    local c = x:clone()
    c:fill_(0)
    assert.are.equal(23, x[{ 1, 2, 3 }]:item())
    local tc = x:transpose(0, 2):contiguous()
    assert.is_true(tc:is_contiguous())
    tc:zero_()
    assert.are.equal(23, x[{ 1, 2, 3 }]:item())
  end)
end)

describe("bad arguments", function()
  local x = base()
  local FREED = "tensor was freed"
  local dead = torch.ones(2, 3)
  dead:free()

  it("bad shapes and dims name the problem", function()
    errs("view: shape '[5, 5]' is invalid for input of size 24", x.view, x, 5, 5)
    errs("bad argument #2 to 'view' (sequence of integers expected, got string at position 1)", x.view, x, "a")
    errs("bad argument #2 to 'view' (sequence of integers expected, got nil at position 1)", x.view, x, nil)
    errs("view: view size is not compatible with input tensor's size and stride", x.view, x:transpose(0, 1), -1)
    errs("view: only one dimension can be inferred", x.view, x, -1, -1)
    errs("bad argument #2 to 'reshape' (sequence of integers expected, got 2.5 at position 1)", x.reshape, x, 2.5, 4)
    errs("reshape: shape '[7]' is invalid for input of size 24", x.reshape, x, 7)
    errs("permute: permute(): duplicate dims are not allowed", x.permute, x, 0, 0, 1)
    errs("is not equal to len(dims) = 2", x.permute, x, 0, 1)
    errs("permute: Dimension out of range (expected to be in range of [-3, 2], but got 5)", x.permute, x, 0, 1, 5)
    errs("transpose: Dimension out of range (expected to be in range of [-3, 2], but got 5)", x.transpose, x, 0, 5)
    errs("bad argument #3 to 'transpose' (integer expected, got nil)", x.transpose, x, 0)
    errs("t: expects a tensor with <= 2 dimensions, but self is 3D", x.t, x)
    errs("squeeze: Dimension out of range (expected to be in range of [-3, 2], but got 5)", x.squeeze, x, 5)
    errs("bad argument #2 to 'squeeze' (integer expected, got string)", x.squeeze, x, "a")
    errs("unsqueeze: Dimension out of range (expected to be in range of [-4, 3], but got 5)", x.unsqueeze, x, 5)
    errs("narrow: start (1) + length (5) exceeds dimension size (2)", x.narrow, x, 0, 1, 5)
    errs("narrow: Dimension out of range (expected to be in range of [-3, 2], but got 4)", x.narrow, x, 4, 0, 1)
    errs("select: select(): index 5 out of range for tensor of size [2, 3, 4] at dimension 0", x.select, x, 0, 5)
    errs("expand: The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0",
      x.expand, x, 3, 3, 4)
    errs("flatten: Dimension out of range (expected to be in range of [-3, 2], but got 7)", x.flatten, x, 0, 7)
    errs("flatten: flatten() has invalid args: start_dim cannot come after end_dim", x.flatten, x, 2, 0)
    errs("split: dimension out of range (expected to be in range of [-3, 2], but got 5)", x.split, x, 1, 5)
    errs("split: split_size must be positive, got 0", x.split, x, 0)
    errs("split: sizes 1,1 sum to 2, but dim 1 has size 3", x.split, x, { 1, 1 }, 1)
    errs("bad argument #2 to 'split' (integer expected, got string)", x.split, x, "a")
    errs("split: expects at least a 1-dimensional tensor", x.split, torch.tensor(1), 1)
    errs("chunk: number of chunks must be positive, got 0", x.chunk, x, 0)
    errs("chunk: dimension out of range (expected to be in range of [-3, 2], but got 9)", x.chunk, x, 2, 9)
    errs("view_as: shape '[5]' is invalid for input of size 24", x.view_as, x, torch.zeros(5))
    errs("bad argument #2 to 'view_as' (Tensor expected, got number)", x.view_as, x, 3)
    errs("expand_as: expand(CPULongType{[2, 3, 4]}, size=[5]): the number of sizes provided (1)",
      x.expand_as, x, torch.zeros(5))
  end)

  it("non-tensors and freed tensors are refused by every method", function()
    local methods = {
      view = { 6 }, reshape = { 6 }, expand = { 2, 3 }, permute = { 1, 0 }, transpose = { 0, 1 }, t = {},
      squeeze = {}, unsqueeze = { 0 }, narrow = { 0, 0, 1 }, select = { 0, 0 }, flatten = {}, split = { 1 },
      chunk = { 2 }, contiguous = {}, clone = {}, view_as = { x }, reshape_as = { x }, expand_as = { x },
    }
    for name, a in pairs(methods) do
      errs("bad argument #1 to '" .. name .. "' (Tensor expected, got number)", torch.Tensor[name], 3, unpack(a))
      errs(name .. ": " .. FREED, torch.Tensor[name], dead, unpack(a))
    end
    errs("bad argument #2 to 'view_as' (Tensor expected, got nil)", x.view_as, x, nil)
    errs("view_as: " .. FREED, x.view_as, x, dead)
    for _, name in ipairs({ "size", "stride", "is_contiguous", "dim", "numel" }) do
      errs(FREED, torch.Tensor[name], dead)
    end
    errs(FREED, function() return dead.shape end)
    errs(FREED, function() return dead.T end)
  end)

  it("blames the caller's line", function()
    local ok, msg = pcall(function() local y = x:view("a"); return y end)
    assert.is_false(ok)
    assert.matches("views_spec.lua:%d+: bad argument #2 to 'view'", msg)
  end)
end)
