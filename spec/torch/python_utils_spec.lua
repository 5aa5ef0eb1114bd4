--[[
  spec/torch/python_utils_spec.lua — torch.broadcast_shapes, torch.unravel_index, torch.typename
  and the default device (lua/torch/_python_utils.lua) against PyTorch 2.11: the same results on
  the same inputs, PyTorch's messages for bad shapes, and set_default_device refusing any device
  but the CPU instead of ignoring it.

  Run:  build/ltorch /usr/bin/busted spec/torch/python_utils_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local SHAPES = {   -- {python args, lua args}
  { "(2, 1), (3,)", { { 2, 1 }, { 3 } } },
  { "1, (4, 1, 1), [0, 1]", { 1, { 4, 1, 1 }, { 0, 1 } } },
  { "(5,), 1, (1, 5)", { { 5 }, 1, { 1, 5 } } },
  { "(0,), (1,)", { { 0 }, { 1 } } },
  { "", {} },
}
local BAD_SHAPES = {
  { "(2,), (3,)", { { 2 }, { 3 } } },
  { "(2, 3), (0, 3)", { { 2, 3 }, { 0, 3 } } },
  { "(-1,)", { { -1 } } },
}
local UNRAVEL = {
  { "torch.tensor([[5, 0], [3, 11]]), (3, 4)", function() return torch.tensor({ { 5, 0 }, { 3, 11 } }), { 3, 4 } end },
  { "torch.tensor(7), 10", function() return torch.tensor(7), 10 end },
  { "torch.tensor([0, 23, 17], dtype=torch.int32), (2, 3, 4)",
    function() return torch.tensor({ 0, 23, 17 }, { dtype = torch.int32 }), { 2, 3, 4 } end },
  { "torch.tensor([-1, 4]), [5]", function() return torch.tensor({ -1, 4 }), { 5 } end },
}

describe("torch.broadcast_shapes, unravel_index, typename, default device", function()
  local ref
  setup(function()
    local shapes, bad, unravel = {}, {}, {}
    for i, c in ipairs(SHAPES) do shapes[i] = "list(torch.broadcast_shapes(" .. c[1] .. "))" end
    for i, c in ipairs(BAD_SHAPES) do bad[i] = "err(lambda: torch.broadcast_shapes(" .. c[1] .. "))" end
    for i, c in ipairs(UNRAVEL) do unravel[i] = "[t.tolist() for t in torch.unravel_index(" .. c[1] .. ")]" end
    ref = pytorch.run(([[
def err(f):
    try:
        f()
    except Exception as e:
        return str(e)
print(json.dumps({"shapes": [%s], "bad": [%s], "unravel": [%s],
  "typename": [torch.typename(torch.ones(2)), torch.typename(torch.ones(2, dtype=torch.int64)), torch.typename(1),
               torch.typename(1.5), torch.typename("a"), torch.typename(None), torch.typename(torch.float32)]}))
]]):format(table.concat(shapes, ", "), table.concat(bad, ", "), table.concat(unravel, ", ")))
  end)

  it("broadcast_shapes gives PyTorch's shape", function()
    for i, c in ipairs(SHAPES) do
      local got = torch.broadcast_shapes(unpack(c[2]))
      assert.equals("torch.Size", torch.typename(got))
      assert.same(ref.shapes[i], { unpack(got) }, c[1])
    end
  end)

  it("broadcast_shapes raises PyTorch's messages", function()
    for i, c in ipairs(BAD_SHAPES) do
      local msg = err(torch.broadcast_shapes, unpack(c[2]))
      assert.is_truthy(msg:find(ref.bad[i], 1, true), ("%s: %s vs PyTorch's %s"):format(c[1], msg, ref.bad[i]))
    end
    assert.matches("Input shapes should be of type ints", err(torch.broadcast_shapes, { 2 }, "3"))
  end)

  it("unravel_index gives PyTorch's coordinates, one tensor per dimension", function()
    for i, c in ipairs(UNRAVEL) do
      local got = { torch.unravel_index(c[2]()) }
      local lists = {}
      for k, t in ipairs(got) do lists[k] = t:tolist() end
      assert.same(ref.unravel[i], lists, c[1])
    end
  end)

  it("unravel_index rejects bad indices and shapes", function()
    assert.matches("python_utils_spec.lua:%d+: unravel_index: expected 'indices' to be integer dtype, but got torch.float32",
      err(function() local r = torch.unravel_index(torch.tensor({ 1.5 }), { 2 }); return r end))
    assert.matches("'shape' cannot have negative values, but got %(2, %-1%)", err(torch.unravel_index, torch.tensor({ 1 }), { 2, -1 }))
    assert.matches("expected 'shape' to be int or sequence of ints", err(torch.unravel_index, torch.tensor({ 1 }), "3"))
  end)

  it("typename names types as PyTorch does", function()
    assert.same(ref.typename, { torch.typename(torch.ones(2)), torch.typename(torch.ones(2, { dtype = torch.int64 })),
      torch.typename(1), torch.typename(1.5), torch.typename("a"), torch.typename(nil), torch.typename(torch.float32) })
  end)

  it("the default device is the CPU; another one is refused, not ignored", function()
    assert.equals("cpu", tostring(torch.get_default_device()))
    torch.set_default_device("cpu")
    torch.set_default_device(nil)
    assert.matches("only the CPU can be the default device", err(torch.set_default_device, "cuda"))
    assert.matches("only the CPU can be the default device", err(torch.set_default_device, "meta"))
    assert.equals("cpu", tostring(torch.zeros(1).device))
  end)
end)
