--[[
  spec/nn/release_spec.lua — containers release intermediate tensors at once (torch.nn._release):
  nn.Sequential and nn.TransformerEncoder free a layer's output once the next layer has returned,
  a Transformer layer and MultiheadAttention free what they make inside, so memory follows C++'s
  `x = layer(x)` without waiting for the Lua collector. And the release never touches a tensor
  anyone else can hold: a user module's, a hook's, the caller's input passed through, the result.
  Results and gradients are the same with and without the release (a hook turns it off).
  The collector is stopped around each measurement, so only the release can free anything.

  Run:  build/ltorch /usr/bin/busted spec/nn/release_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local C = require("torch._C").C

local mem = C.lt_memory()
local function live() return tonumber(mem.live_bytes) end

-- fn() with the Lua collector stopped; returns fn's results and the live tensor bytes it added
local function without_gc(fn)
  torch.collect()
  collectgarbage("stop")
  local before = live()
  local ok, a, b = pcall(fn)
  local grown = live() - before
  collectgarbage("restart")
  assert(ok, a)
  return a, b, grown
end

local function mib(n) return n * 4 / 2 ^ 20 end   -- float32 elements -> MiB

describe("nn.Sequential releases intermediates", function()
  it("keeps only the output alive after a no-grad forward (the collector stopped)", function()
    local net = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 8))
    local x = torch.randn(512, 256)
    local out, _, grown = without_gc(function() return torch.no_grad(function() return net(x) end) end)
    assert.are.same({ 512, 8 }, out:size())
    -- 4 intermediates of 512 x 1024 (2 MiB each) would be 8 MiB; the output is 16 KiB
    assert.is_true(grown < 2 ^ 20, ("%d bytes grew"):format(grown))
  end)

  it("gives the same output and gradients as with the release off (a hook on the container's child)", function()
    torch.manual_seed(0)
    local net = nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    local x = torch.randn(2, 1, 8, 8)
    local y1 = net(x)
    y1:sum():backward()
    local g1 = net[0].weight.grad:clone()
    net:zero_grad()
    local h = net[1]:register_forward_hook(function() end)   -- keeps_nothing is false: no release
    local y2 = net(x)
    y2:sum():backward()
    h:remove()
    assert.are.same(y1:tolist(), y2:tolist())
    assert.are.same(g1:tolist(), net[0].weight.grad:tolist())
  end)

  it("never frees a tensor a user module keeps, a hook sees, or the caller's input", function()
    local Keep = nn.Module:extend("KeepInput")
    function Keep:forward(x) self.kept = x; return x * 2 end
    local keep = Keep()
    local seen
    local relu = nn.ReLU()
    relu:register_forward_hook(function(_, args, out) seen = { args[1], out } end)
    local net = nn.Sequential(nn.Linear(4, 4), keep, nn.Linear(4, 4), relu, nn.Linear(4, 2))
    local x = torch.randn(3, 4)
    net(x)
    assert.is_false(keep.kept:is_freed())
    assert.is_false(seen[1]:is_freed())
    assert.is_false(seen[2]:is_freed())
    assert.are.same({ 3, 4 }, keep.kept:size())
    -- modules that pass their input through (Identity, eval Dropout): the caller's x survives
    local pass = nn.Sequential(nn.Identity(), nn.Dropout(0.5), nn.Linear(4, 2))
    pass:eval()
    pass(x)
    assert.is_false(x:is_freed())
    assert.are.same({ 3, 4 }, x:size())
    local same = nn.Sequential(nn.Identity(), nn.Identity())
    assert.are.equal(x, same(x))
    assert.is_false(x:is_freed())
    -- with more than one argument (the extra ones go to the first module), and checked again
    -- once the loop has compiled
    local two = nn.Sequential(nn.Identity(), nn.ReLU(), nn.Identity())
    for _ = 1, 300 do
      two(x, torch.ones(1))
      assert.is_false(x:is_freed())
      two(x)
      assert.is_false(x:is_freed())
    end
  end)
end)

describe("Transformer layers and MultiheadAttention release what they make", function()
  it("TransformerEncoder's no-grad forward leaves only its output (the collector stopped)", function()
    torch.manual_seed(0)
    local layer = nn.TransformerEncoderLayer(64, 4, { dim_feedforward = 256, dropout = 0.0, batch_first = true })
    local enc = nn.TransformerEncoder(layer, 2)
    local x = torch.randn(4, 128, 64)
    local out, _, grown = without_gc(function() return torch.no_grad(function() return enc(x) end) end)
    assert.are.same({ 4, 128, 64 }, out:size())
    -- the output is 0.125 MiB; one layer's feed-forward hidden alone is 0.5 MiB, its packed
    -- projection 0.375 MiB
    assert.is_true(grown <= 2 * mib(4 * 128 * 64) * 2 ^ 20, ("%d bytes grew"):format(grown))
  end)

  it("gives the same outputs and gradients as with the release off", function()
    local function run(hooked)
      torch.manual_seed(1)
      local layer = nn.TransformerEncoderLayer(16, 2, { dim_feedforward = 32, dropout = 0.1, batch_first = true })
      local enc = nn.TransformerEncoder(layer, 2)
      local mha = nn.MultiheadAttention(16, 2)
      if hooked then
        enc.layers[0].linear1:register_forward_hook(function() end)
        enc.layers[1].self_attn:register_forward_hook(function() end)
        mha:register_forward_pre_hook(function() end)
      end
      local x = torch.randn(3, 5, 16, { requires_grad = true })
      local y = enc(x)
      local a, w = mha(x:transpose(0, 1), x:transpose(0, 1), x:transpose(0, 1))
      ;(y:sum() + a:sum() + w:sum()):backward()
      return { y:tolist(), a:tolist(), w:tolist(), x.grad:tolist() }
    end
    assert.are.same(run(true), run(false))
  end)

  it("leaves a parametrized layer alone: parametrize.cached() keeps its computed weight", function()
    local P = require "torch.nn.parametrize"
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, dropout = 0.0, batch_first = true })
    torch.nn.utils.parametrizations.weight_norm(layer.linear1)
    local x = torch.randn(2, 3, 8)
    P.cached(function()
      local a = layer(x)
      local b = layer(x)   -- the second read of the cached weight: freed, had the layer run in a scope
      assert.are.same(a:tolist(), b:tolist())
    end)
  end)

  it("still blames the caller's line for a bad call", function()
    local m = nn.MultiheadAttention(8, 2, { batch_first = true })
    local x = torch.randn(2, 3, 8)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() local y = m(x, x, torch.randn(2, 3, 5)); return y end)
    assert.is_false(ok)
    assert.truthy(err:find("release_spec.lua:" .. line .. ": MultiheadAttention", 1, true), err)
    ok, err = pcall(function() local y = m(x, x, x, { bogus = 1 }); return y end)
    assert.is_false(ok)
    assert.truthy(err:find("release_spec.lua:%d+: MultiheadAttention%(embed_dim=8, num_heads=2%): unknown option 'bogus'"), err)
  end)
end)
