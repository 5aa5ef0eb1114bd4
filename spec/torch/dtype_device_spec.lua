-- spec/torch/dtype_device_spec.lua — dtypes (lua/torch/dtype.lua) and devices (lua/torch/device.lua).
--
-- Covers the 12 dtypes (uint8 int8 int16 int32 int64 float16 float32 float64 complex64 complex128
-- bool bfloat16): their names, PyTorch's aliases, itemsize and kind flags against PyTorch; dtype
-- conversions (to, float(), double(), half(), bfloat16(), long(), int(), short(), char(), byte(),
-- bool(), type()) with values compared to PyTorch's exactly; the default dtype; devices ("cpu",
-- parsing "cuda:1", equality), and the errors: a CUDA or MPS device on this CPU-only libtorch
-- names the build, bad dtype names and device strings say what was wrong.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/dtype_device_spec.lua   (or bash scripts/test.sh spec/torch)

local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"

local NAMES = { "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
  "complex64", "complex128", "bool", "bfloat16" }

local errs = require("spec.support.errors").errs

describe("dtypes", function()
  local ref
  setup(function()
    ref = pytorch.run [==[
names = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
         "complex64", "complex128", "bool", "bfloat16"]
out = {}
for n in names:
    d = getattr(torch, n)
    out[n] = {"str": str(d), "itemsize": torch.empty(0, dtype=d).element_size(),
              "float": d.is_floating_point, "complex": d.is_complex, "signed": d.is_signed}
aliases = {a: str(getattr(torch, a)) for a in
           ["float", "double", "half", "long", "int", "short", "cfloat", "cdouble"]}
print(json.dumps({"dtypes": out, "aliases": aliases}))]==]
  end)

  for _, name in ipairs(NAMES) do
    it(name .. " matches PyTorch's name, size and kind", function()
      local d, r = torch[name], ref.dtypes[name]
      assert.are.equal(r.str, tostring(d))
      assert.are.equal(r.itemsize, d.itemsize)
      assert.are.equal(r.float, d.is_floating_point)
      assert.are.equal(r.complex, d.is_complex)
      assert.are.equal(r.signed, d.is_signed)
      local x = torch.zeros(2, { dtype = name })
      assert.are.equal(d, x.dtype)
      assert.are.equal(r.itemsize, x:element_size())
      assert.are.equal(2 * r.itemsize, x.nbytes)
    end)
  end

  it("has PyTorch's aliases and accepts names as strings", function()
    for alias, full in pairs(ref.aliases) do
      assert.are.equal(full, tostring(torch[alias]), alias)
    end
    assert.are.equal(torch.float64, torch.zeros(1, { dtype = "torch.float64" }).dtype)
    assert.are.equal(torch.int64, torch.zeros(1, { dtype = "long" }).dtype)
  end)

  it("rejects unknown dtypes with a clear message", function()
    errs("zeros: unknown dtype 'float99' (expected torch.float32, torch.int64, ...", torch.zeros, 2, { dtype = "float99" })
    errs("zeros: unknown dtype 42", torch.zeros, 2, { dtype = 42 })
    errs("type: unknown dtype 'foo'", torch.Tensor.type, torch.zeros(1), "foo")
    errs("to: invalid device 'float99'", torch.Tensor.to, torch.zeros(1), "float99")
    errs("bad argument #2 to 'to' (dtype, device, Tensor or options expected, got boolean)",
      torch.Tensor.to, torch.zeros(1), true)
    errs("set_default_dtype: unknown dtype 'zz'", torch.set_default_dtype, "zz")
  end)
end)

describe("dtype conversions", function()
  local signed = { -2.75, -0.5, 0, 1.5, 3.9, 100.25 }
  local unsigned = { 0, 0.5, 1.5, 3.9, 200.25 }
  local ref
  setup(function()
    ref = pytorch.run([==[
s = torch.tensor(]==] .. approx.py(signed) .. [==[, dtype=torch.float64)
u = torch.tensor(]==] .. approx.py(unsigned) .. [==[, dtype=torch.float64)
out = {}
for m in ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "bool"]:
    y = getattr(s, m)()
    out[m] = {"dtype": str(y.dtype), "v": y.tolist()}
y = u.byte()
out["byte"] = {"dtype": str(y.dtype), "v": y.tolist()}
out["wrap"] = torch.tensor([300, -1]).to(torch.uint8).tolist()
out["tenth"] = [torch.tensor(0.1, dtype=d).item() for d in (torch.float16, torch.bfloat16, torch.float32)]
out["types"] = [torch.zeros(1, dtype=d).type() for d in
    (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool, torch.bfloat16)]
print(json.dumps(out))]==])
  end)

  for _, m in ipairs({ "float", "double", "half", "bfloat16", "long", "int", "short", "char", "bool", "byte" }) do
    it(m .. "() converts like PyTorch (exact values)", function()
      local src = torch.tensor(m == "byte" and unsigned or signed, { dtype = torch.float64 })
      local y = src[m](src)
      assert.are.equal(ref[m].dtype, tostring(y.dtype))
      assert.are.same(ref[m].v, y:tolist())
    end)
  end

  it("to() accepts a dtype, a name, another tensor or an options table", function()
    local x = torch.tensor({ 1.5, -2.5 })
    assert.are.equal(torch.float64, x:to(torch.float64).dtype)
    assert.are.equal(torch.int32, x:to("int32").dtype)
    assert.are.equal(torch.int16, x:to(torch.zeros(1, { dtype = torch.int16 })).dtype)
    assert.are.equal(torch.float16, x:to({ dtype = torch.half }).dtype)
    assert.are.same({ 1, -2 }, x:to(torch.int64):tolist())
    assert.are.equal(torch.float64, x:type("torch.float64").dtype)
  end)

  it("wraps out-of-range integers and rounds to half precision like PyTorch", function()
    assert.are.same(ref.wrap, torch.tensor({ 300, -1 }):to(torch.uint8):tolist())
    local got = {}
    for i, d in ipairs({ torch.float16, torch.bfloat16, torch.float32 }) do got[i] = torch.tensor(0.1, { dtype = d }):item() end
    assert.are.same(ref.tenth, got)
  end)

  it("type() gives PyTorch's legacy type names", function()
    local got = {}
    for i, d in ipairs({ torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool, torch.bfloat16 }) do
      got[i] = torch.zeros(1, { dtype = d }):type()
    end
    assert.are.same(ref.types, got)
  end)

  it("conversions of a freed tensor fail clearly", function()
    local x = torch.ones(2)
    x:free()
    errs("to: tensor was freed", torch.Tensor.float, x)
    errs("to: tensor was freed", torch.Tensor.to, x, torch.float64)
    errs("tensor was freed", function() return x.dtype end)
  end)
end)

describe("default dtype", function()
  after_each(function() torch.set_default_dtype(torch.float32) end)

  it("is float32 and can be set to another floating type", function()
    assert.are.equal(torch.float32, torch.get_default_dtype())
    torch.set_default_dtype(torch.float64)
    assert.are.equal(torch.float64, torch.get_default_dtype())
    assert.are.equal(torch.float64, torch.tensor({ 1.5 }).dtype)
    assert.are.equal(torch.float64, torch.zeros(1).dtype)
    assert.are.equal(torch.int64, torch.tensor({ 1 }).dtype)
    torch.set_default_dtype("float32")
    assert.are.equal(torch.float32, torch.ones(1).dtype)
  end)

  it("refuses non-floating types", function()
    errs("set_default_dtype: only floating-point types are supported as the default type, got torch.int64",
      torch.set_default_dtype, torch.int64)
    assert.are.equal(torch.float32, torch.get_default_dtype())
  end)
end)

describe("devices", function()
  local build = "this libtorch build (" .. torch.libtorch_version .. ")"
  -- The "no CUDA here" specs describe a CPU-only build; a CUDA build has spec/gpu instead.
  local function cpu_only()
    if torch.cuda.is_available() then pending("this build has CUDA (see spec/gpu/cuda_spec.lua)") return false end
    return true
  end

  it("tensors live on the CPU by default", function()
    local x = torch.zeros(2)
    assert.are.equal("cpu", tostring(x.device))
    assert.are.equal("cpu", x.device.type)
    assert.is_nil(x.device.index)
    assert.is_false(x.is_cuda)
    assert.are.equal(torch.device("cpu"), torch.zeros(1, { device = "cpu" }).device)
    assert.are.equal("cpu", tostring(torch.zeros(1, { device = torch.device("cpu") }).device))
    assert.are.equal("cpu", tostring(x:cpu().device))
    assert.are.equal("cpu", tostring(x:to("cpu").device))
  end)

  it("parses device strings without needing the device", function()
    local d = torch.device("cuda:1")
    assert.are.equal("cuda", d.type)
    assert.are.equal(1, d.index)
    assert.are.equal("cuda:1", tostring(d))
    assert.are.equal(d, torch.device("cuda", 1))
    assert.are_not.equal(d, torch.device("cuda"))
    assert.are.equal("mps", tostring(torch.device("mps")))
    assert.are.equal("cuda:0", tostring(torch.device(0)))
  end)

  it("reports this build has no CUDA or MPS", function()
    if not cpu_only() then return end
    assert.is_false(torch.cuda.is_available())
    assert.are.equal(0, torch.cuda.device_count())
    assert.is_false(torch.backends.mps.is_available())
  end)

  it("asking for CUDA or MPS is an error naming the build, never a CPU fallback", function()
    if not cpu_only() then return end
    local x = torch.ones(2)
    errs("zeros: device 'cuda' is not available: " .. build .. " has no CUDA support", torch.zeros, 2, { device = "cuda" })
    errs("ones: device 'cuda:1' is not available: " .. build, torch.ones, 2, { device = "cuda:1" })
    errs("tensor: device 'mps' is not available: " .. build .. " has no MPS support", torch.tensor, { 1 }, { device = "mps" })
    errs("to: device 'cuda' is not available: " .. build, x.to, x, "cuda")
    errs("to: device 'cuda:1' is not available: " .. build, x.to, x, torch.device("cuda:1"))
    errs("to: device 'cuda:0' is not available: " .. build, x.cuda, x, 0)
    errs("to: device 'mps' is not available: " .. build, x.to, x, { device = "mps" })
    errs("randn: device 'cuda:0' is not available", torch.randn, 2, { device = 0 })
    errs("zeros: device 'cpu:1': the CPU has only index 0", torch.zeros, 2, { device = "cpu:1" })
    errs("zeros: device 'xla' is not supported by ltorch", torch.zeros, 2, { device = "xla" })
  end)

  it("torch.cuda's device control fails naming the build (seeding is a no-op), and checks its arguments first", function()
    if not cpu_only() then return end
    errs("cuda.synchronize: " .. build .. " has no CUDA support", torch.cuda.synchronize)
    errs("cuda.synchronize: " .. build, torch.cuda.synchronize, 0)
    errs("cuda.current_device: " .. build, torch.cuda.current_device)
    errs("cuda.set_device: " .. build, torch.cuda.set_device, "cuda:0")
    -- as PyTorch: seeding CUDA without CUDA does nothing (a ported script's seeding line runs)
    torch.cuda.manual_seed(1)
    torch.cuda.manual_seed_all(1)
    errs("cuda.set_device: expected a CUDA device, got nil", torch.cuda.set_device)
    errs("cuda.set_device: expected a CUDA device, got 'cpu'", torch.cuda.set_device, "cpu")
    errs("cuda.synchronize: invalid device 'gpu'", torch.cuda.synchronize, "gpu")
    errs("cuda.synchronize: invalid device index -1", torch.cuda.synchronize, -1)
    errs("cuda.manual_seed: expected a non-negative integer seed, got -1", torch.cuda.manual_seed, -1)
    errs("cuda.manual_seed_all: expected a non-negative integer seed, got 0.5", torch.cuda.manual_seed_all, 0.5)
    errs("cuda.manual_seed: expected a non-negative integer seed, got x", torch.cuda.manual_seed, "x")
  end)

  it("rejects malformed device specs", function()
    local expected = "(expected \"cpu\", \"cuda\", \"cuda:N\", \"mps\" or \"meta\")"
    for _, bad in ipairs({ "gpu", "CUDA", "cuda:x", "cuda:-1", "", "cuda:1:2" }) do
      errs("device: invalid device '" .. bad .. "' " .. expected, torch.device, bad)
    end
    errs("zeros: invalid device 'gpu'", torch.zeros, 2, { device = "gpu" })
    errs("device: expected a device (\"cpu\", \"cuda\", \"cuda:1\", \"mps\"), got nil", torch.device, nil)
    errs("device: expected a device", torch.device, true)
    errs("device: invalid device index -1 (expected a non-negative integer)", torch.device, -1)
    errs("device: invalid device index 1.5", torch.device, 1.5)
    errs("device: invalid device 'cuda:x'", torch.device, "cuda", "x")
  end)

  it("blames the caller's line", function()
    local ok, msg = pcall(function() local d = torch.device("gpu"); return d end)
    assert.is_false(ok)
    assert.matches("dtype_device_spec.lua:%d+: device: invalid device 'gpu'", msg)
  end)
end)
