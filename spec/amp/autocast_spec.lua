--[[
  spec/amp/autocast_spec.lua — torch.autocast regions (lua/torch/amp/init.lua, bindings/lt_amp.cpp).

  Covers: which ops run in bfloat16 under CPU autocast and which stay or go to float32 (matmul,
  mm, bmm, addmm, linear, conv2d -> bfloat16; softmax/sum of float32 inputs stay float32;
  mse_loss, prod -> float32; cat promotes; float64 and integer ops untouched), dtypes and values
  against PyTorch running the same ops under `torch.autocast("cpu")` (tolerance atol 1e-2 + rtol
  1e-2: one bfloat16 ulp is 2^-8 relative); state inside and after a region; results returned
  (trailing nils kept); nesting, enabled = false, restoring after an error at any depth; the cast
  cache (a stale cached weight inside a region, dropped by the outermost exit, cache_enabled =
  false, inherited by nested regions) against PyTorch's same sequence; misuse errors ("cuda" on a
  CPU-only build, unsupported dtypes, bad arguments).

  Run:  build/ltorch /usr/bin/busted spec/amp/autocast_spec.lua
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local f32 = torch.float32
local BF16_TOL = { atol = 1e-2, rtol = 1e-2 }

local inputs = {
  a = { { 0.5, -1.25, 2.0 }, { 1.5, 0.75, -0.5 } },
  b = { { 1.0, 0.3, -0.7, 2.2 }, { -1.1, 0.4, 0.9, 0.1 }, { 0.6, -0.2, 1.3, -1.7 } },
  W = { { 0.2, -0.4, 0.6 }, { 1.1, 0.3, -0.9 }, { -0.5, 0.8, 0.25 }, { 0.7, 0.7, -0.1 }, { -1.3, 0.05, 0.4 } },
  bias = { 0.1, -0.2, 0.3, -0.4, 0.5 },
  c = { { 0.25, -0.5, 1.0, 0.125 }, { -1.0, 2.0, 0.5, -0.25 } },
  img = { { { { 1, 2, 0, -1 }, { 0.5, -0.5, 1.5, 2 }, { -2, 1, 0.25, 0 }, { 1, 1, -1, 3 } } } },
  k = { { { { 0.1, 0.2, 0.3 }, { -0.1, 0.5, 0.0 }, { 0.2, -0.3, 0.4 } } },
        { { { 1.0, 0.0, -1.0 }, { 0.5, 0.5, 0.5 }, { -0.2, 0.1, 0.0 } } } },
}

local function t(name) return torch.tensor(inputs[name], { dtype = f32 }) end

-- Each case: name, the ltorch op, the same op in PyTorch (a, b, W, bias, c, img, k, m = a @ b).
local cases = {
  { "matmul", function(v) return v.a:matmul(v.b) end, "a @ b" },
  { "mm", function(v) return torch.mm(v.a, v.b) end, "torch.mm(a, b)" },
  { "bmm", function(v) return torch.bmm(v.a:unsqueeze(0), v.b:unsqueeze(0)) end, "torch.bmm(a[None], b[None])" },
  { "addmm", function(v) return torch.addmm(v.c, v.a, v.b) end, "torch.addmm(c, a, b)" },
  { "linear", function(v) return F.linear(v.a, v.W, v.bias) end, "F.linear(a, W, bias)" },
  { "conv2d", function(v) return torch.conv2d(v.img, v.k) end, "F.conv2d(img, k)" },
  { "softmax_f32", function(v) return v.a:softmax(1) end, "a.softmax(1)" },
  { "sum_f32", function(v) return v.a:sum() end, "a.sum()" },
  { "relu_of_mm", function(v) return v.m:relu() end, "m.relu()" },
  { "softmax_of_mm", function(v) return v.m:softmax(1) end, "m.softmax(1)" },
  { "sum_of_mm", function(v) return v.m:sum() end, "m.sum()" },
  { "mse_loss_of_mm", function(v) return torch.mse_loss(v.m, v.c) end, "F.mse_loss(m, c)" },
  { "prod_of_mm", function(v) return v.m:prod() end, "m.prod()" },
  { "cat_promotes", function(v) return torch.cat({ v.m, v.c }) end, "torch.cat([m, c])" },
  { "float64_untouched", function(v) return v.a:double():matmul(v.b:double()) end, "a.double() @ b.double()" },
  { "int64_untouched", function() return torch.ones(2, 3, { dtype = torch.int64 }):matmul(torch.ones(3, 2, { dtype = torch.int64 })) end,
    "torch.ones(2, 3, dtype=torch.long) @ torch.ones(3, 2, dtype=torch.long)" },
}

local function reference_script()
  local lines = { "import torch.nn.functional as F" }
  for name, v in pairs(inputs) do lines[#lines + 1] = ("%s = torch.tensor(%s)"):format(name, py(v)) end
  lines[#lines + 1] = "out = {}"
  lines[#lines + 1] = "with torch.autocast('cpu'):"
  lines[#lines + 1] = "    m = a @ b"
  for _, c in ipairs(cases) do
    lines[#lines + 1] = ("    r = %s"):format(c[3])
    lines[#lines + 1] = ("    out[%q] = {'dtype': str(r.dtype), 'values': r.double().tolist()}"):format(c[1])
  end
  lines[#lines + 1] = "print(json.dumps(out))"
  return table.concat(lines, "\n")
end

describe("torch.autocast('cpu') op dtypes and values", function()
  local ref
  setup(function() ref = pytorch.run(reference_script()) end)

  for _, c in ipairs(cases) do
    it(c[1] .. " matches PyTorch (" .. c[3] .. ")", function()
      local v = {}
      for name in pairs(inputs) do v[name] = t(name) end
      local r = torch.autocast("cpu", function()
        v.m = v.a:matmul(v.b)
        return c[2](v)
      end)
      assert.are.equal(ref[c[1]].dtype, tostring(r.dtype))
      approx.check(r:double(), ref[c[1]].values, BF16_TOL)
    end)
  end

  it("leaves the same ops in float32 outside a region", function()
    local a, b = t("a"), t("b")
    assert.are.equal(f32, a:matmul(b).dtype)
    assert.are.equal(f32, F.linear(a, t("W"), t("bias")).dtype)
  end)
end)

describe("torch.autocast state", function()
  it("starts off, with PyTorch's default dtypes and the cache on", function()
    assert.is_false(torch.is_autocast_cpu_enabled())
    assert.is_false(torch.is_autocast_enabled())
    assert.are.equal(torch.bfloat16, torch.get_autocast_cpu_dtype())
    assert.are.equal(torch.float16, torch.get_autocast_gpu_dtype())
    assert.is_true(torch.is_autocast_cache_enabled())
    assert.are.equal(torch.autocast, torch.amp.autocast)
  end)

  it("is on inside a region and off again after it", function()
    local inside = torch.autocast("cpu", function()
      return { torch.is_autocast_cpu_enabled(), torch.amp.is_autocast_enabled("cpu"), torch.get_autocast_cpu_dtype(),
        torch.is_autocast_enabled() }
    end)
    assert.are.same({ true, true, torch.bfloat16, false }, inside)
    assert.is_false(torch.is_autocast_cpu_enabled())
  end)

  it("returns every result of fn, trailing nils included", function()
    assert.are.equal(4, select("#", torch.autocast("cpu", function() return 1, nil, "x", nil end)))
    local a, b, c = torch.autocast("cpu", function() return 1, nil, "x" end)
    assert.are.same({ 1, nil, "x" }, { a, b, c })
    assert.are.equal(0, select("#", torch.autocast("cpu", function() end)))
  end)

  it("accepts an explicit bfloat16 dtype, by object or name", function()
    assert.are.equal(torch.bfloat16, torch.autocast("cpu", function() return torch.get_autocast_cpu_dtype() end,
      { dtype = torch.bfloat16 }))
    local r = torch.autocast("cpu", function() return torch.ones(2, 2):matmul(torch.ones(2, 2)) end, { dtype = "bfloat16" })
    assert.are.equal(torch.bfloat16, r.dtype)
  end)

  it("runs in float32 with enabled = false, also nested inside an enabled region", function()
    local a, b = t("a"), t("b")
    local off = torch.autocast("cpu", function()
      assert.is_false(torch.is_autocast_cpu_enabled())
      return a:matmul(b)
    end, { enabled = false })
    assert.are.equal(f32, off.dtype)
    local inner, after = torch.autocast("cpu", function()
      local x = torch.autocast("cpu", function() return a:matmul(b) end, { enabled = false })
      return x, a:matmul(b)
    end)
    assert.are.equal(f32, inner.dtype)
    assert.are.equal(torch.bfloat16, after.dtype)
  end)

  it("nests: an inner region ends with the outer one's state back", function()
    local seen = torch.autocast("cpu", function()
      local s = {}
      torch.autocast("cpu", function()
        s[1] = torch.is_autocast_cpu_enabled()
        torch.autocast("cpu", function() s[2] = torch.is_autocast_cpu_enabled() end, { enabled = false })
        s[3] = torch.is_autocast_cpu_enabled()
      end)
      s[4] = torch.is_autocast_cpu_enabled()
      return s
    end, { enabled = false })
    assert.are.same({ true, false, true, false }, seen)
    assert.is_false(torch.is_autocast_cpu_enabled())
  end)

  it("restores the state after an error in fn, at any depth, and re-raises it unchanged", function()
    local ok, err = pcall(torch.autocast, "cpu", function() error("boom in fn") end)
    assert.is_false(ok)
    assert.matches("boom in fn", err)
    assert.is_false(torch.is_autocast_cpu_enabled())
    local state = torch.autocast("cpu", function()
      local ok2, err2 = pcall(torch.autocast, "cpu", function() error({ code = 7 }) end, { enabled = false, cache_enabled = false })
      return { ok2, err2.code, torch.is_autocast_cpu_enabled(), torch.is_autocast_cache_enabled() }
    end)
    assert.are.same({ false, 7, true, true }, state)
    assert.is_false(torch.is_autocast_cpu_enabled())
    assert.is_true(torch.is_autocast_cache_enabled())
  end)

  it("allows a disabled 'cuda' region on any build and leaves CUDA autocast off", function()
    local inside = torch.autocast("cuda", function() return torch.is_autocast_enabled("cuda") end, { enabled = false })
    assert.is_false(inside)
    assert.is_false(torch.is_autocast_enabled())
  end)
end)

describe("torch.autocast cast cache", function()
  -- Inside a region, a float32 leaf weight that requires grad is cast to bfloat16 once and the
  -- copy reused: changing the weight in place inside the region is not seen until the outermost
  -- region ends. y1..y5 as in the PyTorch script below (weights 1, 2, 4, 4, then a new region).
  local function sequence(cache_enabled)
    local x = torch.ones(1, 2)
    local w = torch.ones(2, 1, { requires_grad = true })
    local ys = {}
    torch.autocast("cpu", function()
      ys[1] = x:matmul(w):item()
      torch.no_grad(function() w:mul_(2) end)
      ys[2] = x:matmul(w):item()
      torch.autocast("cpu", function()
        torch.no_grad(function() w:mul_(2) end)
        ys[3] = x:matmul(w):item()
      end)
      ys[4] = x:matmul(w):item()
    end, { cache_enabled = cache_enabled })
    ys[5] = torch.autocast("cpu", function() return x:matmul(w):item() end)
    return ys
  end

  local ref
  setup(function()
    ref = pytorch.run [[
out = {}
for ce in (True, False):
    x = torch.ones(1, 2); w = torch.ones(2, 1, requires_grad=True); ys = []
    with torch.autocast('cpu', cache_enabled=ce):
        ys.append((x @ w).item())
        with torch.no_grad(): w.mul_(2)
        ys.append((x @ w).item())
        with torch.autocast('cpu'):
            with torch.no_grad(): w.mul_(2)
            ys.append((x @ w).item())
        ys.append((x @ w).item())
    with torch.autocast('cpu'):
        ys.append((x @ w).item())
    out[str(ce)] = ys
print(json.dumps(out))
]]
  end)

  it("reuses a cached cast until the outermost region ends, as PyTorch does", function()
    local ys = sequence(true)
    assert.are.same(ref["True"], ys)
    assert.are.same({ 2, 2, 2, 2, 8 }, ys)
  end)

  it("casts afresh with cache_enabled = false, and nested regions inherit the setting", function()
    local ys = sequence(false)
    assert.are.same(ref["False"], ys)
    assert.are.same({ 2, 4, 8, 8, 8 }, ys)
    assert.is_true(torch.is_autocast_cache_enabled())
  end)

  it("drops the cache when the outermost region ends with an error", function()
    local x = torch.ones(1, 2)
    local w = torch.ones(2, 1, { requires_grad = true })
    pcall(torch.autocast, "cpu", function()
      local _ = x:matmul(w)        -- caches w's bfloat16 copy (value 1)
      error("stop")
    end)
    torch.no_grad(function() w:mul_(3) end)
    assert.are.equal(6, torch.autocast("cpu", function() return x:matmul(w):item() end))
  end)

  it("clear_autocast_cache() drops cached casts inside a region", function()
    local x = torch.ones(1, 2)
    local w = torch.ones(2, 1, { requires_grad = true })
    local ys = torch.autocast("cpu", function()
      local y1 = x:matmul(w):item()
      torch.no_grad(function() w:mul_(2) end)
      torch.clear_autocast_cache()
      return { y1, x:matmul(w):item() }
    end)
    assert.are.same({ 2, 4 }, ys)
  end)
end)

describe("torch.autocast misuse", function()
  local noop = function() end

  it("'cuda' on a build without CUDA is an error naming the build", function()
    if torch.cuda.is_available() then pending("this build has CUDA") return end
    local ok, err = pcall(torch.autocast, "cuda", noop)
    assert.is_false(ok)
    assert.matches("autocast: device_type 'cuda' is not available: this libtorch build %(" .. torch.libtorch_version:gsub("%.", "%%.") .. "%)", err)
    assert.is_false(torch.is_autocast_enabled())
  end)

  it("rejects dtypes CPU autocast cannot use, naming them, and changes no state", function()
    for _, d in ipairs({ torch.float64, torch.float32, torch.int64 }) do
      local ok, err = pcall(torch.autocast, "cpu", noop, { dtype = d })
      assert.is_false(ok)
      assert.matches("autocast: CPU autocast in this libtorch build .* supports .*torch%.bfloat16.*, got " .. tostring(d):gsub("%.", "%%."), err)
    end
    assert.is_false(torch.is_autocast_cpu_enabled())
    assert.are.equal(torch.bfloat16, torch.get_autocast_cpu_dtype())
  end)

  it("takes float16 on the CPU exactly where this libtorch does (asked of PyTorch on the same libtorch)", function()
    -- libtorch's own CPU autocast setter rejects float16 before the release that added it
    -- (1.13 does); ltorch asks that setter instead of guessing the version.
    local pytorch_takes_it = pytorch.run [[
try:
    torch.set_autocast_cpu_dtype(torch.float16)
    print(json.dumps(True))
except RuntimeError:
    print(json.dumps(False))
]]
    local release = "^(%d+%.%d+)"   -- the same libtorch (Debian's python3-torch says 1.13.0a0)
    assert.are.equal(torch.libtorch_version:match(release), pytorch.run([[print(json.dumps(torch.__version__))]]):match(release))
    local ok, result = pcall(torch.autocast, "cpu", function()
      return torch.ones(4, 4):matmul(torch.ones(4, 4)), torch.get_autocast_cpu_dtype()
    end, { dtype = torch.float16 })
    assert.are.equal(pytorch_takes_it, ok, tostring(result))
    if ok then
      assert.are.equal(torch.float16, result.dtype)
    else
      assert.matches("supports only torch%.bfloat16, got torch%.float16", result)
    end
    assert.is_false(torch.is_autocast_cpu_enabled())
    assert.are.equal(torch.bfloat16, torch.get_autocast_cpu_dtype())   -- the probe put it back
  end)

  it("blames the caller's line", function()
    local ok, err = pcall(function() torch.autocast("cpu", noop, { dtype = torch.float64 }) end)
    assert.is_false(ok)
    assert.matches("autocast_spec%.lua:%d+: autocast:", err)
  end)

  it("rejects bad arguments with PyTorch-style messages", function()
    local function msg(...)
      local ok, err = pcall(torch.autocast, ...)
      assert.is_false(ok)
      return err
    end
    assert.matches("device_type must be 'cpu' or 'cuda', got 'mps'", msg("mps", noop))
    assert.matches("bad argument #1 to 'autocast' %(device type string", msg(0, noop))
    assert.matches("bad argument #2 to 'autocast' %(function expected, got nil%)", msg("cpu"))
    assert.matches("bad argument #3 to 'autocast' %(options table expected, got string%)", msg("cpu", noop, "x"))
    assert.matches("unknown option 'fast_dtype'", msg("cpu", noop, { fast_dtype = torch.bfloat16 }))
    assert.matches("enabled must be a boolean, got number", msg("cpu", noop, { enabled = 1 }))
    assert.matches("cache_enabled must be a boolean, got string", msg("cpu", noop, { cache_enabled = "yes" }))
    assert.matches("unknown dtype 'bf16'", msg("cpu", noop, { dtype = "bf16" }))
    assert.matches("get_autocast_dtype: device_type must be 'cpu' or 'cuda', got 'xla'",
      select(2, pcall(torch.amp.get_autocast_dtype, "xla")))
    assert.is_false(torch.is_autocast_cpu_enabled())
  end)
end)
