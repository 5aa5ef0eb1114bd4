--[[
  spec/torch/memory_format_spec.lua — memory_format= reaches libtorch, as in PyTorch: x:clone,
  x:contiguous and x:to with {memory_format = torch.channels_last} give PyTorch's strides, and
  x:is_contiguous({memory_format = ...}) answers as PyTorch's. Before, the clone/contiguous/to
  fast paths dropped the keyword silently (a silent difference) and is_contiguous ignored it.

  Run:  build/ltorch /usr/bin/busted spec/torch/memory_format_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

describe("memory_format", function()
  local ref
  setup(function()
    ref = pytorch.run [[
x = torch.arange(120.).reshape(2, 3, 4, 5)
v = torch.arange(720.).reshape(2, 3, 4, 5, 6)
cl = torch.channels_last
y = x.contiguous(memory_format=cl)
print(json.dumps({
  "clone": list(x.clone(memory_format=cl).stride()),
  "contiguous": list(y.stride()),
  "to": list(x.to(memory_format=cl).stride()),
  "to_dtype": [list(x.to(torch.float64, memory_format=cl).stride()), str(x.to(torch.float64, memory_format=cl).dtype)],
  "clone_preserve": list(y.clone(memory_format=torch.preserve_format).stride()),
  "back": list(y.contiguous().stride()),
  "3d": list(v.contiguous(memory_format=torch.channels_last_3d).stride()),
  "is_contiguous": [x.is_contiguous(memory_format=cl), y.is_contiguous(memory_format=cl), y.is_contiguous(),
                    x.is_contiguous(), v.contiguous(memory_format=torch.channels_last_3d).is_contiguous(memory_format=torch.channels_last_3d)],
}))
]]
  end)

  local x = torch.arange(120):double():float():reshape(2, 3, 4, 5)
  local v = torch.arange(720):float():reshape(2, 3, 4, 5, 6)
  local cl = torch.channels_last

  it("clone, contiguous and to give PyTorch's channels-last strides", function()
    local y = x:contiguous({ memory_format = cl })
    assert.are.same(ref.clone, x:clone({ memory_format = cl }):stride())
    assert.are.same(ref.contiguous, y:stride())
    assert.are.same(ref.to, x:to({ memory_format = cl }):stride())
    local d = x:to(torch.float64, { memory_format = cl })
    assert.are.same(ref.to_dtype, { d:stride(), tostring(d.dtype) })
    assert.are.same(ref.clone_preserve, y:clone({ memory_format = torch.preserve_format }):stride())
    assert.are.same(ref.back, y:contiguous():stride())
    assert.are.same(ref["3d"], v:contiguous({ memory_format = torch.channels_last_3d }):stride())
    assert.are.equal(0, (y - x):abs():max():item())
  end)

  it("is_contiguous answers for a memory format as PyTorch's", function()
    local y = x:contiguous({ memory_format = cl })
    assert.are.same(ref.is_contiguous, { x:is_contiguous({ memory_format = cl }), y:is_contiguous({ memory_format = cl }),
      y:is_contiguous(), x:is_contiguous(),
      v:contiguous({ memory_format = torch.channels_last_3d }):is_contiguous({ memory_format = torch.channels_last_3d }) })
  end)

  it("refuses an unknown format or keyword instead of ignoring it", function()
    assert.matches("argument 'memory_format' must be memory format", err(function() return x:clone({ memory_format = "bogus" }) end))
    assert.matches("is_contiguous: memory_format must be", err(function() return x:is_contiguous({ memory_format = "nhwc" }) end))
    assert.matches("unexpected keyword argument 'format'", err(function() return x:is_contiguous({ format = cl }) end))
    assert.matches("unexpected keyword", err(function() return x:to({ memory_fromat = cl }) end))
  end)
end)
