--[[
  spec/torch/dispatch_buffers_spec.lua — the generated ops' shared call tables (torch._dispatch:
  the positional arguments, the packed cdata and the bound values of a call that is not nested)
  hold nothing once a call has ended, and a Tensor list packed for one overload serves the next
  overloads the same call tries (torch._dispatch_values).

  Why: the tables are reused from call to call to spare the garbage of three tables per op (the
  optimizers' foreach steps make ~10 such calls each). A table left holding an argument would
  keep a tensor alive after its last user reference is gone; a list packed once and reused
  where it should not be (a list with holes, or one that another parameter type reads
  differently) would give a wrong answer. finalizer_reentry_spec.lua covers calls that overlap.

  Run:  build/ltorch /usr/bin/busted spec/torch/dispatch_buffers_spec.lua
]]
local torch = require "torch"

-- Whether the tensor made by make() and handed to use() is collected once the caller drops it:
-- only a reference kept inside the library (or by use's result) would keep it alive.
local function collected_after(make, use)
  local weak = setmetatable({}, { __mode = "v" })
  do
    local t = make()
    weak[1] = t
    use(t)
  end
  collectgarbage("collect")
  collectgarbage("collect")
  return weak[1] == nil
end

describe("the generated ops' shared call tables", function()
  local ones4 = function() return torch.ones(4) end

  it("keep no argument after a call that returned a tensor", function()
    assert.is_true(collected_after(ones4, function(t) local r = torch.logaddexp(t, t); r:free() end))
  end)

  it("keep no argument after a call with keywords and Tensor lists", function()
    assert.is_true(collected_after(ones4, function(t)
      local out = torch._foreach_add({ t }, { t }, { alpha = 2 })
      assert.are.equal(3, out[1][1]:item())
      out[1]:free()
    end))
  end)

  it("keep no argument after a call that raised an error", function()
    assert.is_true(collected_after(ones4, function(t)
      local ok, err = pcall(torch.logaddexp, t, torch.ones(3))
      assert.is_false(ok)
      assert.matches("logaddexp", err)
    end))
    assert.is_true(collected_after(ones4, function(t)
      local ok, err = pcall(torch._foreach_add_, { t }, "x")
      assert.is_false(ok)
      assert.matches("no overload accepts", err)
    end))
  end)

  it("keep no argument after an in-place call that returns its argument", function()
    assert.is_true(collected_after(ones4, function(t) torch._foreach_mul_({ t, t:view(2, 2) }, 0.5) end))
  end)
end)

describe("a Tensor list packed once per call", function()
  it("serves every overload tried: the Scalar overload after the List and Tensor ones", function()
    local a, b = torch.tensor({ 1.0, 2.0 }), torch.tensor({ 3.0 })
    torch._foreach_add_({ a, b }, 1)
    assert.are.same({ 2, 3 }, a:tolist())
    assert.are.same({ 4 }, b:tolist())
    torch._foreach_add_({ a, b }, torch.tensor(10.0))   -- the Tensor overload, after the List one
    assert.are.same({ 12, 13 }, a:tolist())
    assert.are.same({ 14 }, b:tolist())
  end)

  it("gives the same list twice in one call the same handles", function()
    local p, g = { torch.zeros(2) }, { torch.tensor({ 2.0, 3.0 }) }
    torch._foreach_addcmul_(p, g, g, 0.5)
    assert.are.same({ 2, 4.5 }, p[1]:tolist())
  end)

  it("keeps a list with holes (Tensor?[]) apart from one without", function()
    local x = torch.arange(24):reshape(2, 3, 4)
    local first, last = torch.tensor({ 1 }), torch.tensor({ 0, 3 })
    -- PyTorch: aten.index(x, [tensor([1]), None, tensor([0, 3])]) and aten.index(x, [tensor([1])])
    assert.are.same({ { 12, 16, 20 }, { 15, 19, 23 } }, torch.index(x, { first, nil, last }):tolist())
    assert.are.same({ { { 12, 13, 14, 15 }, { 16, 17, 18, 19 }, { 20, 21, 22, 23 } } }, torch.index(x, { first }):tolist())
  end)

  it("still refuses a list holding a non-Tensor, naming the argument", function()
    local ok, err = pcall(torch._foreach_add_, { torch.ones(2), 3 }, 1)
    assert.is_false(ok)
    assert.matches("table of Tensors", err, 1, true)
  end)
end)
