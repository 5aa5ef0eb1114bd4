-- spec/torch/backends_spec.lua — what the libtorch build carries (lua/torch/backends.lua,
-- bindings/lt_cuda.cpp), against PyTorch on the same libtorch (the setup's .venv).
--
-- Covers: the build is torch 2.11's CUDA build and its CUDA library is loaded into this process
-- even without a GPU (torch.backends.cuda.is_built(): libtorch_cuda's hooks replaced the stubs;
-- libtorch_cuda.so in /proc/self/maps); torch.version.cuda, torch.backends.cudnn.version() and
-- torch.cuda.nccl.version() equal PyTorch's; torch.cuda's memory queries answer as PyTorch's do
-- before CUDA is used (0, an empty memory_stats, empty_cache and seeding all devices doing
-- nothing) and check their device argument.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/backends_spec.lua

local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local function maps_has(name)
  local f = assert(io.open("/proc/self/maps", "r"))
  local s = f:read("*a")
  f:close()
  return s:find(name, 1, true) ~= nil
end

describe("torch.backends", function()
  local ref
  setup(function()
    ref = pytorch.run [[
import torch.cuda.nccl
print(json.dumps({
  "version": torch.__version__,
  "built": torch.backends.cuda.is_built(),
  "cuda": torch.version.cuda,
  "cudnn": torch.backends.cudnn.version(),
  "cudnn_available": torch.backends.cudnn.is_available(),
  "nccl": list(torch.cuda.nccl.version()) if torch.backends.cuda.is_built() else None,
  "available": torch.cuda.is_available(),
  "allocated": torch.cuda.memory_allocated() if not torch.cuda.is_available() else 0,
  "stats": len(torch.cuda.memory_stats()) if not torch.cuda.is_available() else 0,
}))
]]
  end)

  it("runs on the libtorch PyTorch runs on (torch 2.11)", function()
    assert.are.equal("2.11.0", torch.libtorch_version)
    assert.are.equal(torch.libtorch_version, ref.version:match("^[^+]+"))
  end)

  it("has the CUDA library loaded, without a GPU", function()
    assert.are.equal(ref.built, torch.backends.cuda.is_built())
    assert.is_true(torch.backends.cuda.is_built(), "the PyPI wheel is a CUDA build")
    assert.is_true(maps_has("libtorch_cuda.so"))
    -- Without a GPU, asking for one is still the clear error, never a CPU fallback.
    local ok, err = pcall(torch.zeros, 2, { device = "cuda" })
    assert.is_false(ok)
    assert.are.equal(ref.available, torch.cuda.is_available())
    assert.matches("not available", err)
  end)

  it("reports the CUDA, cuDNN and NCCL versions PyTorch reports", function()
    assert.are.equal(ref.cuda, torch.version.cuda)
    assert.are.equal("13.0", torch.version.cuda)
    assert.are.equal(ref.cudnn, torch.backends.cudnn.version())
    assert.are.equal(ref.cudnn_available, torch.backends.cudnn.is_available())
    assert.are.same(ref.nccl, torch.cuda.nccl.version())
  end)

  it("answers torch.cuda's memory queries as PyTorch does before CUDA is used", function()
    if torch.cuda.is_available() then pending("a GPU is visible: spec/gpu/cuda_spec.lua checks the live figures") return end
    assert.are.equal(ref.allocated, torch.cuda.memory_allocated())
    assert.are.equal(0, torch.cuda.max_memory_allocated())
    assert.are.equal(0, torch.cuda.memory_reserved())
    assert.are.equal(0, torch.cuda.max_memory_reserved("cuda:0"))
    assert.are.same({}, torch.cuda.memory_stats())
    assert.are.equal(ref.stats, 0)
    torch.cuda.empty_cache()
    -- PyTorch's raises here ("invalid argument to reset_peak_memory_stats"); so does ltorch's
    assert.error_matches(function() torch.cuda.reset_peak_memory_stats() end,
      "invalid argument to reset_peak_memory_stats", 1, true)
    torch.cuda.manual_seed_all(0)
  end)

  it("checks the device argument of the memory queries", function()
    assert.error_matches(function() torch.cuda.memory_allocated("cpu") end,
      "cuda.memory_allocated: expected a CUDA device, got 'cpu'", 1, true)
    assert.error_matches(function() torch.cuda.memory_stats("gpu") end,
      "cuda.memory_stats: invalid device 'gpu'", 1, true)
  end)
end)
