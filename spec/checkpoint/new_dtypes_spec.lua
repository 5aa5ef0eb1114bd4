--[[
  spec/checkpoint/new_dtypes_spec.lua — checkpoints of the dtypes without a typed storage class
  (uint16/32/64, float8, complex32) against the reference PyTorch 2.11, both ways: .pt files,
  which PyTorch writes with _rebuild_tensor_v3 over an untyped (byte) storage
  (lua/torch/serialization/pickle.lua), and .safetensors (U16/U32/U64, F8_*). Bit for bit: values
  travel as float64 (each new dtype's values are exact there) and uint64 ones as strings.
  Also the hostile forms of v3: a 7th argument that is no dtype, a typed storage, a byte count
  that is no whole number of elements, an extent past the storage.

  Run:  build/ltorch /usr/bin/busted spec/checkpoint/new_dtypes_spec.lua
]]
local torch = require "torch"
local pickle = require "torch.serialization.pickle"
local pytorch = require "spec.support.pytorch"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

-- name -> values, dtype; the same in Python (PY_TENSORS)
local function lua_tensors()
  local base = torch.arange(8, { dtype = torch.uint8 })
  return {
    u16 = torch.tensor({ { 1, 2, 65535 }, { 3, 4, 5 } }):to(torch.uint16):t(),   -- a non-contiguous view
    u32 = torch.tensor({ 1, 2, 70000, 4294967295 }):to(torch.uint32),
    u64 = torch.tensor({ 5, 2 ^ 40, 2 ^ 63 + 2 ^ 20 }, { dtype = torch.float64 }):to(torch.uint64),
    e4m3 = torch.tensor({ 0.5, -3, 448, 0.015625 }):to(torch.float8_e4m3fn),
    e5m2 = torch.tensor({ 0.25, -57344, 1.5 }):to(torch.float8_e5m2),
    e4m3fnuz = torch.tensor({ 0.5, -240 }):to(torch.float8_e4m3fnuz),
    e5m2fnuz = torch.tensor({ 1.5, 3 }):to(torch.float8_e5m2fnuz),
    c32 = torch.complex(torch.tensor({ 1.5, -2 }), torch.tensor({ 0.25, 4 })):chalf(),
    bytes_view = base:narrow(0, 2, 4):view(torch.uint16),   -- storage offset 1 in uint16 elements
    f32 = torch.tensor({ 1.5, 2.5 }),
  }
end
local PY_TENSORS = [==[
def tensors():
    base = torch.arange(8, dtype=torch.uint8)
    return {
        "u16": torch.tensor([[1, 2, 65535], [3, 4, 5]]).to(torch.uint16).t(),
        "u32": torch.tensor([1, 2, 70000, 4294967295]).to(torch.uint32),
        "u64": torch.tensor([5, 2.0 ** 40, 2.0 ** 63 + 2.0 ** 20], dtype=torch.float64).to(torch.uint64),
        "e4m3": torch.tensor([0.5, -3, 448, 0.015625]).to(torch.float8_e4m3fn),
        "e5m2": torch.tensor([0.25, -57344, 1.5]).to(torch.float8_e5m2),
        "e4m3fnuz": torch.tensor([0.5, -240]).to(torch.float8_e4m3fnuz),
        "e5m2fnuz": torch.tensor([1.5, 3]).to(torch.float8_e5m2fnuz),
        "c32": torch.complex(torch.tensor([1.5, -2]), torch.tensor([0.25, 4])).chalf(),
        "bytes_view": base[2:6].view(torch.uint16),
        "f32": torch.tensor([1.5, 2.5]),
    }
def describe(t):
    if t.dtype == torch.uint64:
        v = [str(x) for x in t.flatten().tolist()]
    elif t.is_complex():
        v = torch.view_as_real(t.to(torch.complex128)).flatten().tolist()
    else:
        v = t.to(torch.float64).flatten().tolist()
    return {"dtype": str(t.dtype), "shape": list(t.shape), "v": v}
]==]

-- what PyTorch's describe() gives, for an ltorch tensor
local function summary(t)
  local v
  if t.dtype == torch.uint64 then
    v = {}
    local c = t:contiguous():flatten()
    local ptr = require("ffi").cast("uint64_t*", c:data_ptr())
    for i = 0, c:numel() - 1 do v[i + 1] = tostring(ptr[i]):gsub("ULL$", "") end
  elseif t.dtype.is_complex then
    v = torch.view_as_real(t:to(torch.complex128)):flatten():tolist()
  else
    v = t:double():flatten():tolist()
  end
  local shape = {}
  for i, n in ipairs(t:size()) do shape[i] = n end
  return { dtype = tostring(t.dtype), shape = shape, v = v }
end

local function check_same(want, got, what)
  assert.are.equal(want.dtype, got.dtype, what)
  assert.are.same(want.shape, got.shape, what)
  assert.are.same(want.v, got.v, what)
end

describe("checkpoints of uint16/32/64, float8 and complex32 with PyTorch", function()
  local res
  teardown(function() os.execute("rm -rf " .. dir) end)

  setup(function()
    local t = lua_tensors()
    torch.save(t, dir .. "/lt.pt")
    local st = {}
    for k, v in pairs(t) do if k ~= "c32" then st[k] = v end end   -- safetensors has no complex32 code
    torch.save(st, dir .. "/lt.safetensors")
    res = pytorch.run(PY_TENSORS .. ([[
import warnings
warnings.simplefilter("ignore")
from safetensors.torch import load_file, save_file
D = %q
out = {"want": {k: describe(v) for k, v in tensors().items()}}
out["pt"] = {k: describe(v) for k, v in torch.load(D + "/lt.pt", weights_only=True).items()}
out["st"] = {k: describe(v) for k, v in load_file(D + "/lt.safetensors").items()}
torch.save(tensors(), D + "/py.pt")
save_file({k: v.contiguous() for k, v in tensors().items() if k != "c32"}, D + "/py.safetensors")
print(json.dumps(out))
]]):format(dir))
  end)

  it("ltorch builds the same tensors as PyTorch", function()
    for k, v in pairs(lua_tensors()) do check_same(res.want[k], summary(v), k) end
  end)

  it("PyTorch loads ltorch's .pt with weights_only=True, bit for bit", function()
    for k in pairs(lua_tensors()) do check_same(res.want[k], res.pt[k], k) end
  end)

  it("PyTorch's safetensors loads ltorch's .safetensors", function()
    for k in pairs(lua_tensors()) do
      if k ~= "c32" then check_same(res.want[k], res.st[k], k) end
    end
  end)

  it("ltorch loads PyTorch's .pt (v3 over byte storages, views at an offset) and .safetensors", function()
    local pt, st = torch.load(dir .. "/py.pt"), torch.load(dir .. "/py.safetensors")
    for k in pairs(lua_tensors()) do
      check_same(res.want[k], summary(pt[k]), k .. " (.pt)")
      if k ~= "c32" then check_same(res.want[k], summary(st[k]), k .. " (.safetensors)") end
    end
  end)

  it("refuses hostile _rebuild_tensor_v3 forms with a clear error", function()
    local function v3(storage_cls, nbytes, size, dtype_global)
      local function i4(n) return string.char(n % 256, math.floor(n / 256) % 256, 0, 0) end
      return "\128\2ctorch._utils\n_rebuild_tensor_v3\n((X\7\0\0\0storagec" .. storage_cls .. "\nX\1\0\0\0" ..
        "0X\3\0\0\0cpuJ" .. i4(nbytes) .. "tQJ" .. i4(0) .. "(J" .. i4(size) .. "t(J" .. i4(1) ..
        "t\137ccollections\nOrderedDict\n)Rc" .. dtype_global .. "\ntR."
    end
    local ok = pickle.load(v3("torch.storage\nUntypedStorage", 8, 4, "torch\nuint16"))
    assert.are.same({ 4 }, ok.size)
    assert.are.equal("uint16", ok.dtype)
    local function refuses(pattern, bytes)
      local good, err = pcall(pickle.load, bytes)
      assert.is_false(good, "expected an error matching " .. pattern)
      assert.matches(pattern, tostring(err))
    end
    refuses("runs past its storage", v3("torch.storage\nUntypedStorage", 8, 5, "torch\nuint16"))
    refuses("not a whole number of uint32 elements", v3("torch.storage\nUntypedStorage", 6, 1, "torch\nuint32"))
    refuses("expects an UntypedStorage", v3("torch\nFloatStorage", 8, 2, "torch\nuint16"))
    refuses("expects a dtype as its 7th argument", v3("torch.storage\nUntypedStorage", 8, 2, "collections\nOrderedDict"))
    refuses("global 'torch.Tensor' is not allowed", v3("torch.storage\nUntypedStorage", 8, 2, "torch\nTensor"))
  end)
end)
