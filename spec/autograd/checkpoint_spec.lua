--[[
  spec/autograd/checkpoint_spec.lua — torch.utils.checkpoint (lua/torch/utils/checkpoint.lua):
  recompute-in-backward activation checkpointing.

  Covers: a 16-layer MLP (Linear 256->256, ReLU, Dropout 0.1; batch 2048) checkpointed per layer
  gives the same gradients as without (dropout masks repeat: the RNG state is restored for the
  recomputation) and a lower peak of tensor memory during forward+backward, measured with
  torch.memory_stats().peak_bytes over the live bytes before the step and printed; input
  gradients flow through a checkpoint; the callable module also exposes .checkpoint; dropout
  replayed with forward's CPU and CUDA generator states (CUDA pending without a GPU).

  Run:  build/ltorch /usr/bin/busted spec/autograd/checkpoint_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local C = require("torch._C").C

local function close(a, b, tol) return (a - b):abs():max():item() <= (tol or 1e-6) end

describe("torch.utils.checkpoint", function()
  it("gives the same gradients and a lower activation peak on a 16-layer MLP", function()
    torch.manual_seed(0)
    local layers = {}
    for i = 1, 16 do layers[i] = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.1)) end
    local x = torch.randn(2048, 256)
    local function step(ckpt)
      for _, l in ipairs(layers) do
        for _, p in ipairs(l:parameters()) do p.grad = torch.zeros_like(p) end
      end
      torch.collect()
      local mem = C.lt_memory()
      local base = tonumber(mem.live_bytes)
      mem.peak_bytes = mem.live_bytes   -- restart the peak from here (a statistic, written from Lua)
      torch.manual_seed(1)
      local h = x
      for i = 1, 16 do
        if ckpt then h = torch.utils.checkpoint(layers[i], h) else h = layers[i](h) end
      end
      h:sum():backward()
      local peak = torch.memory_stats().peak_bytes - base
      local grads = {}
      for i, l in ipairs(layers) do grads[i] = l:parameters()[1].grad:clone() end
      return peak, grads
    end
    local peak_plain, g_plain = step(false)
    local peak_ckpt, g_ckpt = step(true)
    print(("\n[checkpoint] 16-layer MLP, batch 2048x256: peak %.1f MiB without, %.1f MiB with checkpointing (%.0f%% less)")
      :format(peak_plain / 2 ^ 20, peak_ckpt / 2 ^ 20, 100 * (1 - peak_ckpt / peak_plain)))
    for i = 1, 16 do assert.is_true(close(g_plain[i], g_ckpt[i], 1e-5), "layer " .. i) end
    assert.is_true(peak_ckpt < 0.75 * peak_plain)
  end)

  it("passes gradients to its tensor arguments and returns fn's results", function()
    local w = torch.randn(4, 4, { requires_grad = true })
    local x = torch.randn(3, 4, { requires_grad = true })
    local function f(a, b) return torch.tanh(a:matmul(w)) * b, 7 end
    local b = torch.randn(3, 4, { requires_grad = true })
    local y, seven = torch.utils.checkpoint.checkpoint(f, x, b)
    assert.equal(7, seven)
    y:sum():backward()
    local gx, gb, gw = x.grad:clone(), b.grad:clone(), w.grad:clone()
    x.grad, b.grad, w.grad = nil, nil, nil
    f(x, b):sum():backward()
    assert.is_true(close(gx, x.grad))
    assert.is_true(close(gb, b.grad))
    assert.is_true(close(gw, w.grad))
  end)

  -- On CUDA the dropout masks come from the device's generator: checkpoint must save and restore
  -- its state too (pending without a GPU; bench/gpu/check.sh runs this file on one).
  for _, dev in ipairs({ "cpu", "cuda" }) do
    it("replays dropout on " .. dev .. " with forward's generator states, leaving the stream as it was", function()
      if dev == "cuda" and not torch.cuda.is_available() then pending("no CUDA device") return end
      local drop = nn.Dropout(0.5)
      local function block(t) return drop(t * 3) end
      local x = torch.randn(64, 32, { device = dev, requires_grad = true })
      torch.manual_seed(21)
      local y = torch.utils.checkpoint(block, x)
      y:sum():backward()
      local after_ckpt = torch.rand(4, { device = dev }):cpu()
      local g = x.grad:clone()
      x.grad = nil
      torch.manual_seed(21)
      local y2 = block(x)
      y2:sum():backward()
      local after_plain = torch.rand(4, { device = dev }):cpu()
      assert.is_true(close(g, x.grad, 0), "recomputed dropout masks differ from forward's")
      assert.is_true(close(y, y2, 0))
      -- the recompute ran inside a fork: the caller's stream goes on as if it had not happened
      assert.is_true(close(after_ckpt, after_plain, 0))
    end)
  end

  it("under no_grad it just runs fn", function()
    local x = torch.randn(3, { requires_grad = true })
    local y = torch.no_grad(function() return torch.utils.checkpoint(function(t) return t * 2 end, x) end)
    assert.is_false(y.requires_grad)
  end)
end)
