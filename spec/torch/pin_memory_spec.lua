--[[
  spec/torch/pin_memory_spec.lua — pinned (page-locked) host memory as PyTorch's: the factories'
  pin_memory = true, Tensor:pin_memory(), Tensor:is_pinned(), and the DataLoader's pin_memory.

  Pinning needs CUDA. On a machine without a GPU (CI) PyTorch raises "Found no NVIDIA driver on
  your system ..." for every pinned allocation, and a DataLoader asked to pin warns and does not:
  ltorch must do the same, never accept the option and silently ignore it. With a GPU the
  tensors are pinned (run by bench/gpu/check.sh).

  Run:  bash scripts/test.sh spec/torch/pin_memory_spec.lua
]]
local torch = require "torch"

local has_gpu = torch.cuda.is_available()
local NO_DRIVER = "Found no NVIDIA driver on your system"

describe("pinned memory", function()
  local makers = {
    { "empty", function() return torch.empty(2, 3, { pin_memory = true }) end },
    { "zeros", function() return torch.zeros(4, { pin_memory = true }) end },
    { "randn", function() return torch.randn(4, { pin_memory = true }) end },
    { "tensor", function() return torch.tensor({ 1, 2 }, { pin_memory = true }) end },
    { "tensor of a tensor", function() return torch.tensor(torch.ones(2), { pin_memory = true }) end },
    { "Tensor:pin_memory", function() return torch.ones(3):pin_memory() end },
  }
  for _, case in ipairs(makers) do
    it(case[1] .. " pins, or raises PyTorch's error without a GPU", function()
      local ok, t = pcall(case[2])
      if has_gpu then
        assert.is_true(ok, tostring(t))
        assert.is_true(t:is_pinned())
        assert.are.equal("cpu", tostring(t.device))
      else
        assert.is_false(ok)
        assert.matches(NO_DRIVER, t, 1, true)
      end
    end)
  end

  it("ordinary tensors are not pinned, and the option must be a boolean", function()
    assert.is_false(torch.empty(2):is_pinned())
    assert.is_false(torch.empty(2, { pin_memory = false }):is_pinned())
    assert.has_error(function() torch.empty(2, { pin_memory = 1 }) end, "empty: option pin_memory must be a boolean, got number")
  end)

  it("the DataLoader pins batches with a GPU, and warns without one", function()
    local data = torch.utils.data
    local ds = data.TensorDataset(torch.randn(8, 2), torch.arange(8))
    local loader = data.DataLoader(ds, { batch_size = 4, pin_memory = true })
    assert.are.equal(has_gpu, loader.pin_memory)
    for batch in loader:iter() do
      assert.are.equal(has_gpu, batch[1]:is_pinned())
    end
  end)
end)
