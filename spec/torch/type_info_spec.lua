--[[
  spec/torch/type_info_spec.lua — torch.finfo / torch.iinfo (lua/torch/_type_info.lua) and the
  dtypes libtorch has beyond the classic twelve (complex32, uint16/32/64, the float8 family;
  lua/torch/dtype.lua) against the reference PyTorch: every limit and its repr, each dtype's
  flags, itemsize and legacy type name, casts into and out of each (values as PyTorch rounds
  them), printing, uint64 values above 2^63, and PyTorch's errors at the caller's line.

  Run:  build/ltorch /usr/bin/busted spec/torch/type_info_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local FLOATS = { "float16", "bfloat16", "float32", "float64", "float8_e5m2", "float8_e4m3fn",
  "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "complex32", "complex64", "complex128" }
local INTS = { "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64" }
local NEW = { "complex32", "uint16", "uint32", "uint64", "float8_e5m2", "float8_e4m3fn",
  "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu" }
local VALUES = { 0.3, -1.7, 300, 2.5e-3, 1e5, 7 }

-- raises: fn() raises an error holding `text`, blamed on this file (the caller's line)
local function raises(text, fn)
  local msg = err(fn)
  assert.is_truthy(msg:find(text, 1, true), msg)
  assert.matches("type_info_spec%.lua:%d+:", msg)
end

-- the same numbers, NaN equal to NaN (float8_e4m3fn has no inf: 1e5 becomes NaN)
local function same_values(want, got, what)
  assert.are.equal(#want, #got, what)
  for i = 1, #want do
    if not (want[i] ~= want[i] and got[i] ~= got[i]) then assert.are.equal(want[i], got[i], what .. " [" .. i .. "]") end
  end
end

local function quoted(list)
  local q = {}
  for i, n in ipairs(list) do q[i] = ("%q"):format(n) end
  return table.concat(q, ", ")
end

local ref
setup(function()
  ref = pytorch.run(([[
import warnings
warnings.simplefilter("ignore")
out = {"finfo": {}, "iinfo": {}, "dtypes": {}}
for n in [%s]:
    f = torch.finfo(getattr(torch, n))
    out["finfo"][n] = {"bits": f.bits, "eps": f.eps, "max": f.max, "min": f.min, "tiny": f.tiny,
        "smallest_normal": f.smallest_normal, "resolution": f.resolution, "dtype": f.dtype, "repr": repr(f)}
for n in [%s]:
    f = torch.iinfo(getattr(torch, n))
    out["iinfo"][n] = {"bits": f.bits, "min": str(f.min), "max": str(f.max), "dtype": f.dtype, "repr": repr(f)}
for n in [%s]:
    d = getattr(torch, n)
    x = torch.tensor([%s], dtype=torch.float64)
    if not d.is_floating_point and not d.is_complex:
        x = x.abs()
    y = x.to(d)
    back = y.to(torch.complex128) if d.is_complex else y.to(torch.float64)
    if d.is_complex:
        back = back.real
    out["dtypes"][n] = {"is_signed": d.is_signed, "is_floating_point": d.is_floating_point,
        "is_complex": d.is_complex, "itemsize": d.itemsize, "type": y.type(),
        "back": back.tolist(), "print": str(y)}
out["default"] = repr(torch.finfo())
out["u64"] = torch.tensor([2.0 ** 64 - 2048], dtype=torch.float64).to(torch.uint64).item()
print(json.dumps(out))
]]):format(quoted(FLOATS), quoted(INTS), quoted(NEW), table.concat(VALUES, ", ")))
end)

describe("torch.finfo", function()
  it("gives PyTorch's limits and repr for every floating and complex dtype", function()
    for _, n in ipairs(FLOATS) do
      local f, want = torch.finfo(torch[n]), ref.finfo[n]
      for _, k in ipairs({ "bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype" }) do
        assert.are.equal(want[k], f[k], n .. "." .. k)
      end
      assert.are.equal(want.repr, tostring(f), n)
    end
  end)

  it("defaults to the default dtype, as PyTorch's torch.finfo()", function()
    assert.are.equal(ref.default, tostring(torch.finfo()))
    torch.set_default_dtype(torch.float64)
    local ok, f = pcall(torch.finfo)
    torch.set_default_dtype(torch.float32)
    assert.is_true(ok)
    assert.are.equal("float64", f.dtype)
  end)

  it("refuses what PyTorch refuses, at the caller's line", function()
    raises("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'", function() torch.finfo(torch.int64) end)
    raises("requires a floating point input type", function() torch.finfo(torch.bool) end)
    raises("argument 'type' (position 1) must be torch.dtype, not string", function() torch.finfo("float32") end)
    raises("must be torch.dtype, not Tensor", function() torch.finfo(torch.zeros(1)) end)
  end)
end)

describe("torch.iinfo", function()
  it("gives PyTorch's limits and repr for every integer dtype, the 64-bit ones exactly", function()
    for _, n in ipairs(INTS) do
      local i, want = torch.iinfo(torch[n]), ref.iinfo[n]
      assert.are.equal(want.bits, i.bits, n)
      assert.are.equal(want.dtype, i.dtype, n)
      assert.are.equal(want.min, (tostring(i.min):gsub("U?LL$", "")), n .. ".min")
      assert.are.equal(want.max, (tostring(i.max):gsub("U?LL$", "")), n .. ".max")
      assert.are.equal(want.repr, tostring(i), n)
    end
    assert.are.equal("number", type(torch.iinfo(torch.int32).max))
  end)

  it("refuses bool, floats and a missing dtype as PyTorch does", function()
    raises("torch.bool is not supported by torch.iinfo", function() torch.iinfo(torch.bool) end)
    raises("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'", function() torch.iinfo(torch.float32) end)
    raises('iinfo() missing 1 required positional arguments: "type"', function() torch.iinfo() end)
  end)
end)

describe("complex32, uint16/32/64 and the float8 dtypes", function()
  it("have PyTorch's flags, item sizes and legacy type names", function()
    for _, n in ipairs(NEW) do
      local d, want = torch[n], ref.dtypes[n]
      assert.are.equal(want.is_signed, d.is_signed, n)
      assert.are.equal(want.is_floating_point, d.is_floating_point, n)
      assert.are.equal(want.is_complex, d.is_complex, n)
      assert.are.equal(want.itemsize, d.itemsize, n)
      assert.are.equal(want.type, torch.zeros(1):to(d):type(), n)
    end
    assert.are.equal(torch.complex32, torch.chalf)
  end)

  it("cast to and from float64 with PyTorch's rounding, and print as PyTorch prints", function()
    for _, n in ipairs(NEW) do
      local d, want = torch[n], ref.dtypes[n]
      local x = torch.tensor(VALUES, { dtype = torch.float64 })
      if not d.is_floating_point and not d.is_complex then x = x:abs() end
      local y = x:to(d)
      assert.are.equal(d, y.dtype, n)
      local back = d.is_complex and torch.real(y:to(torch.complex128)) or y:double()
      same_values(want.back, back:tolist(), n)
      assert.are.equal(want.print, tostring(y), n)
    end
  end)

  it("x:chalf() is PyTorch's Tensor.chalf()", function()
    local y = torch.tensor({ 1.5, -2 }):chalf()
    assert.are.equal(torch.complex32, y.dtype)
    assert.are.same({ { 1.5, 0 }, { -2, 0 } }, torch.view_as_real(y):double():tolist())
  end)

  it("reads uint64 values above 2^63 as numbers, not wrapped int64s", function()
    local u = torch.tensor({ 2 ^ 64 - 2048 }, { dtype = torch.float64 }):to(torch.uint64)
    assert.are.equal(ref.u64, u[0]:item())
    assert.are.same({ ref.u64 }, u:tolist())
  end)

  it("raise libtorch's error where an op lacks the dtype, as PyTorch does", function()
    local u = torch.tensor({ 1, 2 }):to(torch.uint64)
    raises("\"add_stub\" not implemented for 'UInt64'", function() return u + u end)
  end)
end)
