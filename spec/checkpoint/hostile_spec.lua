-- spec/checkpoint/hostile_spec.lua — truncated, corrupt and hostile checkpoints end in a clear
-- Lua error: no crash, no huge allocation, no code run. Also runs the libFuzzer harness over
-- the parsers for a bounded time (fuzz/run.sh; skipped when clang is absent).
local torch = require "torch"
local pickle = require "torch.serialization.pickle"
local st = require "torch.serialization.safetensors"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

local function write(name, bytes)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(bytes)
  f:close()
  return dir .. "/" .. name
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function refuses(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(err))
end

local function u64(n) local t = {} for i = 1, 8 do t[i] = string.char(n % 256); n = math.floor(n / 256) end return table.concat(t) end
local function header(json) return u64(#json) .. json end

describe("hostile checkpoints", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("pickle: refuses globals outside the weights_only subset, by name", function()
    refuses("global 'os.system' is not allowed", pickle.load, "\128\2cos\nsystem\nX\2\0\0\0lsq\0\133R.")
    refuses("global 'builtins.eval'", pickle.load, "\128\2cbuiltins\neval\n.")
    refuses("NEWOBJ", pickle.load, "\128\2ctorch\nFloatStorage\n)\129.")
    refuses("INST", pickle.load, "(i__main__\nX\n.")
  end)

  it("pickle: truncation, bad lengths, duplicate keys, cycles, bad tensors", function()
    refuses("past the end", pickle.load, "\128\2X\255\255\255\127ab")
    refuses("truncated", pickle.load, "\128\2}q\0(X\1\0\0\0a")
    refuses("duplicate key 'a'", pickle.load, "\128\2}(X\1\0\0\0aK\1X\1\0\0\0aK\2u.")
    refuses("recursive", pickle.load, "\128\2]q\0h\0a.")
    refuses("memo key 7", pickle.load, "\128\2h\7.")
    refuses("stack underflow", pickle.load, "\128\2a.")
    refuses("integer of 9 bytes", pickle.load, "\128\2\138\009" .. "123456789.")
    local function tensor(size, stride, offset, numel)
      return "\128\2ctorch._utils\n_rebuild_tensor_v2\n((X\7\0\0\0storagectorch\nFloatStorage\nX\1\0\0\0" ..
        "0X\3\0\0\0cpuJ" .. u64(numel):sub(1, 4) .. "tQJ" .. u64(offset):sub(1, 4) .. "(J" .. u64(size):sub(1, 4) ..
        "t(J" .. u64(stride):sub(1, 4) .. "t\137ccollections\nOrderedDict\n)RtR."
    end
    assert.equal(4, pickle.load(tensor(4, 1, 0, 4)).size[1])
    refuses("runs past its storage", pickle.load, tensor(5, 1, 0, 4))
    refuses("runs past its storage", pickle.load, tensor(2, 1, 3, 4))
    refuses("runs past its storage", pickle.load, tensor(2, 1000000, 0, 4))
    refuses("not a storage type", pickle.load,
      (tensor(4, 1, 0, 4):gsub("torch\nFloatStorage", "collections\nOrderedDict")))
  end)

  it("safetensors: lengths past the end, overlaps, wrong sizes, duplicate keys", function()
    refuses("past the end", st.parse_header, u64(1000) .. "{}")
    refuses("header length 1099511627776 exceeds the format's limit of 100000000", st.parse_header, u64(2 ^ 40) .. "{}")
    refuses("too short", st.parse_header, "abc")
    refuses("duplicate key", st.parse_header, header('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}') .. "xxxx")
    refuses("need 8", st.parse_header, header('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}') .. "xxxx")
    refuses("past the 4 data bytes", st.parse_header, header('{"a":{"dtype":"F32","shape":[1000000000000000],"data_offsets":[0,4000000000000000]}}') .. "xxxx")
    refuses("overlap", st.parse_header, header('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}') .. "xxxx")
    refuses("unsupported dtype", st.parse_header, header('{"a":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}}') .. "x")
    refuses("nested too deeply", st.parse_header, header(("["):rep(100)) .. "")
  end)

  it("torch.load: truncated and corrupted files of both formats", function()
    local good = dir .. "/good.pt"
    torch.save({ w = torch.randn(64, 64), n = 1 }, good)
    local bytes = read(good)
    for _, cut in ipairs({ 0, 3, 100, math.floor(#bytes / 2), #bytes - 30, #bytes - 1 }) do
      local p = write("cut.pt", bytes:sub(1, cut))
      refuses("^load: ", torch.load, p)
    end
    -- flip bytes all over the file: must load or fail cleanly
    math.randomseed(7)
    for i = 1, 60 do
      local pos = math.random(1, #bytes)
      local p = write("flip.pt", bytes:sub(1, pos - 1) .. string.char(math.random(0, 255)) .. bytes:sub(pos + 1))
      local ok, err = pcall(torch.load, p)
      if not ok then assert.matches("^load: ", err, "flip " .. i) end
    end
    local sgood = dir .. "/good.safetensors"
    torch.save({ w = torch.randn(8, 8) }, sgood)
    local sb = read(sgood)
    for _, cut in ipairs({ 0, 7, 20, #sb - 1 }) do
      refuses("^load: ", torch.load, write("cut.safetensors", sb:sub(1, cut)))
    end
    refuses("not a PyTorch zip checkpoint", torch.load, write("legacy.pt", "\128\2}."))
    refuses("No such file", torch.load, dir .. "/missing.pt")
  end)

  it("torch.load: a version record past 2^64 - 1 is refused with its number", function()
    local good = dir .. "/v.pt"
    torch.save({ a = 1 }, good)
    -- the same archive with its version record replaced (Python's zipfile: stored, CRCs right)
    require("spec.support.pytorch").run(([[
import zipfile
src = zipfile.ZipFile(%q)
for tag, ver in [("huge", b"99999999999999999999999\n"), ("max1", b"18446744073709551616"), ("text", b"abc")]:
    with zipfile.ZipFile(%q + "/v_" + tag + ".pt", "w", zipfile.ZIP_STORED) as out:
        for name in src.namelist():
            out.writestr(name, ver if name.endswith("/version") else src.read(name))
print("[]")
]]):format(good, dir))
    refuses("version record holds 99999999999999999999999, past 2%^64 %- 1", torch.load, dir .. "/v_huge.pt")
    refuses("version record holds 18446744073709551616, past 2%^64 %- 1", torch.load, dir .. "/v_max1.pt")
    refuses("Couldn't parse the version abc", torch.load, dir .. "/v_text.pt")   -- libtorch's own message
    assert.equal(1, torch.load(good).a)
  end)

  it("fuzz harness: bounded run over the parsers, zero crashes", function()
    if os.execute("command -v clang >/dev/null 2>&1") ~= 0 and os.execute("command -v clang >/dev/null 2>&1") ~= true then
      pending("clang not installed")
      return
    end
    local secs = tonumber(os.getenv("LTORCH_FUZZ_SECONDS") or "20")
    local p = io.popen("bash fuzz/run.sh " .. secs .. " 2>&1")
    local out = p:read("*a")
    p:close()
    local execs = out:match("fuzz: (%d+) executions, 0 crashes")
    assert.is_truthy(execs, out)
    print(("\nfuzz: %s executions in %d s, 0 crashes"):format(execs, secs))
  end)
end)
