--[[
  spec/gpu/meta_device_spec.lua — the device logic of spec/gpu/cuda_spec.lua, run on PyTorch's
  "meta" device (shapes, dtypes and devices, no data), so that it is checked in CI on a machine
  without a GPU: anything that must keep a tensor's device shows right or wrong here.

  Covers: factories and moves to "meta", tostring as PyTorch's repr, ops and autograd keeping the
  device (elementwise, matmul, conv, norms, relu, where, embedding, attention), value reads as
  PyTorch's error, Module:to / half / float / double / bfloat16 keeping each tensor's device
  (the fix of a dtype cast that moved a model back to the CPU), Module:to_empty and
  load_state_dict(sd, {assign = true}) to materialize a model built on "meta", an optimizer step
  and clip_grad_norm_ on meta parameters; shapes and dtypes of a CNN and a Transformer layer's
  forward and backward equal to PyTorch's on the same model built on "meta".

  Run:  bash scripts/test.sh spec/gpu/meta_device_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim

local function on_meta(t) return t.device.type == "meta" end

local function meta_params(model)
  for _, list in ipairs({ model:parameters(), model:buffers() }) do
    for _, t in ipairs(list) do
      if not on_meta(t) then return false end
    end
  end
  return true
end

describe("the meta device", function()
  it("makes tensors and prints them as PyTorch does", function()
    local x = torch.randn(2, 3, { device = "meta" })
    assert.is_true(on_meta(x))
    assert.are.equal("meta", tostring(x.device))
    assert.are.equal("tensor(..., device='meta', size=(2, 3))", tostring(x))
    assert.are.equal("tensor(..., device='meta', size=(2,), dtype=torch.int64)",
      tostring(torch.zeros(2, { dtype = torch.int64, device = torch.device("meta") })))
    assert.are.equal("tensor(..., device='meta', size=(0,))", tostring(torch.empty(0, { device = "meta" })))
    assert.is_true(on_meta(torch.ones(3):to("meta")))
    assert.is_true(on_meta(torch.empty_like(x)))
  end)

  it("gives shapes, dtypes and devices through ops and autograd, and refuses to read values", function()
    local x = torch.randn(4, 8, { device = "meta", requires_grad = true })
    local w = torch.randn(8, 3, { device = "meta" })
    local y = torch.where(x:gt(0), x, x * 2):relu():matmul(w):softmax(-1)
    assert.are.same({ 4, 3 }, y:size())
    assert.is_true(on_meta(y))
    y:sum():backward()
    assert.is_true(on_meta(x.grad))
    assert.are.same({ 4, 8 }, x.grad:size())
    assert.are.equal(torch.float16, x:half():add(1).dtype)
    assert.has_error(function() return y:sum():item() end)
    assert.has_error(function() return y:tolist() end)
    assert.has_error(function() return y:cpu() end)
  end)
end)

describe("Module conversions keep each tensor's device", function()
  for _, case in ipairs({
    { "to(torch.float64)", function(m) return m:to(torch.float64) end, torch.float64 },
    { "to({dtype = torch.float16})", function(m) return m:to({ dtype = torch.float16 }) end, torch.float16 },
    { "half()", function(m) return m:half() end, torch.float16 },
    { "bfloat16()", function(m) return m:bfloat16() end, torch.bfloat16 },
    { "double()", function(m) return m:double() end, torch.float64 },
    { "float()", function(m) return m:double():float() end, torch.float32 },
  }) do
    it(case[1] .. " on a model moved to meta", function()
      local m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)):to("meta")
      assert.is_true(meta_params(m))
      local out = case[2](m)
      assert.are.equal(m, out)
      assert.is_true(meta_params(m), "a dtype-only conversion moved a tensor off its device")
      assert.are.equal(case[3], m[0].weight.dtype)
      -- BatchNorm's integer counter keeps its dtype, as in PyTorch
      assert.are.equal(torch.int64, m[1].num_batches_tracked.dtype)
    end)
  end

  it("nn.Linear(4, 3):to('meta'):to(torch.float64).weight.device is meta", function()
    assert.are.equal("meta", tostring(nn.Linear(4, 3):to("meta"):to(torch.float64).weight.device))
  end)

  it("casts gradients with their parameters and keeps a CPU parameter's identity", function()
    local m = nn.Linear(4, 3)
    m(torch.randn(2, 4)):sum():backward()
    local w = m.weight
    m:double()
    assert.are.equal(w, m.weight)   -- changed in place: an optimizer still holds it
    assert.are.equal(torch.float64, m.weight.grad.dtype)
    m:to("meta")
    assert.is_true(on_meta(m.weight) and on_meta(m.weight.grad))
    assert.is_true(m.weight.requires_grad)
  end)

  it("refuses what PyTorch refuses", function()
    local ok, err = pcall(function() nn.Linear(2, 2):to(torch.int64) end)
    assert.is_false(ok)
    assert.matches("nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.int64", err, 1, true)
    ok, err = pcall(function() nn.Linear(2, 2, { device = "meta" }):to("cpu") end)
    assert.is_false(ok)
    assert.matches("meta_device_spec.lua:%d+: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty%(%)", err)
    ok, err = pcall(function() nn.Linear(2, 2):to_empty("cpu") end)
    assert.is_false(ok)
    assert.matches("to_empty", err)
  end)
end)

describe("building a model on meta, then materializing it", function()
  it("builds layers with device = 'meta' and runs forward, backward and an optimizer step", function()
    local m = nn.Sequential(nn.Linear(8, 16, { device = "meta" }), nn.ReLU(), nn.Linear(16, 2, { device = "meta" }))
    assert.is_true(meta_params(m))
    local opt = optim.AdamW(m:parameters(), { lr = 1e-3 })
    local loss = F.cross_entropy(m(torch.randn(5, 8, { device = "meta" })),
      torch.zeros(5, { dtype = torch.int64, device = "meta" }))
    loss:backward()
    nn.utils.clip_grad_norm_(m:parameters(), 1.0)
    opt:step()
    assert.is_true(meta_params(m))
    assert.is_true(on_meta(m[0].weight.grad))
  end)

  it("to_empty then load_state_dict(sd, {assign = true}) gives the trained weights", function()
    local trained = nn.Linear(4, 3)
    local m = nn.Linear(4, 3, { device = "meta" })
    m:to_empty({ device = "cpu" })
    assert.are.equal("cpu", tostring(m.weight.device))
    m:load_state_dict(trained:state_dict())
    assert.are.same(trained.weight:tolist(), m.weight:tolist())

    local m2 = nn.Linear(4, 3, { device = "meta" })
    m2:load_state_dict(trained:state_dict(), { assign = true })
    assert.are.equal("cpu", tostring(m2.weight.device))
    assert.are.same(trained.bias:tolist(), m2.bias:tolist())
    assert.is_true(m2.weight.requires_grad)
  end)
end)

describe("shapes and dtypes on meta equal PyTorch's", function()
  it("for a CNN and a Transformer encoder layer, forward and backward", function()
    if not pytorch.available() then pending("the reference PyTorch is not installed") return end
    local ref = pytorch.run [[
import torch.nn as nn
cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(8, 4, 3, stride=2), nn.Flatten(), nn.Linear(4, 10)).to("meta")
x = torch.randn(2, 3, 8, 8, device="meta")
y = cnn(x); y.sum().backward()
enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, device="meta")
emb = nn.Embedding(20, 8, device="meta")
z = enc(emb(torch.zeros(3, 5, dtype=torch.int64, device="meta")))
z.sum().backward()
print(json.dumps({"cnn": list(y.shape), "grads": [list(p.grad.shape) for p in cnn.parameters()],
  "enc": list(z.shape), "emb_grad": list(emb.weight.grad.shape), "enc_grads": [list(p.grad.shape) for p in enc.parameters()],
  "dtype": str(z.dtype)}))
]]
    local cnn = nn.Sequential(nn.Conv2d(3, 8, 3, { padding = 1 }), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
      nn.Conv2d(8, 4, 3, { stride = 2 }), nn.Flatten(), nn.Linear(4, 10)):to("meta")
    local y = cnn(torch.randn(2, 3, 8, 8, { device = "meta" }))
    y:sum():backward()
    assert.are.same(ref.cnn, y:size())
    local grads = {}
    for i, p in ipairs(cnn:parameters()) do grads[i] = p.grad:size() end
    assert.are.same(ref.grads, grads)

    local enc = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, batch_first = true, device = "meta" })
    local emb = nn.Embedding(20, 8, { device = "meta" })
    local z = enc(emb(torch.zeros(3, 5, { dtype = torch.int64, device = "meta" })))
    z:sum():backward()
    assert.are.same(ref.enc, z:size())
    assert.are.equal(ref.dtype, tostring(z.dtype))
    assert.are.same(ref.emb_grad, emb.weight.grad:size())
    local enc_grads = {}
    for i, p in ipairs(enc:parameters()) do enc_grads[i] = p.grad:size() end
    assert.are.same(ref.enc_grads, enc_grads)
    assert.is_true(on_meta(z) and meta_params(enc))
  end)
end)
