-- spec/checkpoint/safetensors_rules_spec.lua — torch.load reads .safetensors exactly as the
-- format's own reader does: every file here is also given to the `safetensors` Python package
-- (its Rust reader, `safetensors.deserialize`), and each rule's file must be refused by both (or,
-- for the controls, read by both). One Python run checks every file.
-- The one deliberate difference: duplicate keys in the header JSON are refused here, while the
-- Rust reader keeps the last one silently.
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

local function u64(n) local t = {} for i = 1, 8 do t[i] = string.char(n % 256); n = math.floor(n / 256) end return table.concat(t) end
local function file(json, data) return u64(#json) .. json .. (data or "") end
local function f32(name, b, e, n)
  return ('"%s":{"dtype":"F32","shape":[%d],"data_offsets":[%d,%d]}'):format(name, n or (e - b) / 4, b, e)
end

local cases = {
  ok = file("{" .. f32("a", 0, 4) .. "," .. f32("b", 4, 12) .. "}", ("\0"):rep(12)),
  ok_utf8 = file('{"__metadata__":{"k":"v\xc3\xa9"},' .. f32("\xe2\x82\xac\\ud83d\\ude00", 0, 4) .. "}", ("\0"):rep(4)),
  ok_lenient = file('  {"__metadata__":null,"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1},' ..
    '"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"f":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}', ("\0"):rep(4)),
  float_offset = file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}}', ("\0"):rep(4)),
  negative_zero = file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[-0,4]}}', ("\0"):rep(4)),
  float_shape = file('{"a":{"dtype":"F32","shape":[1e0],"data_offsets":[0,4]}}', ("\0"):rep(4)),
  metadata_not_string = file('{"__metadata__":{"k":1}}'),
  list_header = file("[]"),
  bad_name = file("{" .. f32("a\xff", 0, 4) .. "}", ("\0"):rep(4)),
  bad_name_overlong = file("{" .. f32("a\xc0\xaf", 0, 4) .. "}", ("\0"):rep(4)),
  bad_name_surrogate = file("{" .. f32("a\xed\xa0\x80", 0, 4) .. "}", ("\0"):rep(4)),
  bad_name_escape = file("{" .. f32("a\\udc80", 0, 4) .. "}", ("\0"):rep(4)),
  bad_metadata = file('{"__metadata__":{"k":"v\xff"},' .. f32("a", 0, 4) .. "}", ("\0"):rep(4)),
  gap_between = file("{" .. f32("a", 0, 4) .. "," .. f32("b", 8, 12) .. "}", ("\0"):rep(12)),
  gap_at_start = file("{" .. f32("a", 4, 8) .. "}", ("\0"):rep(8)),
  trailing = file("{" .. f32("a", 0, 4) .. "}", ("\0"):rep(5)),
  trailing_no_tensor = file("{}", ("\0"):rep(3)),
  header_over_limit = u64(100000001) .. "{}",
  header_huge = ("\255"):rep(8) .. "{}",   -- a length of 2^64 - 1: every byte 0xff
  big_offset = file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}}', ("\0"):rep(4)),
  big_shape = file('{"a":{"dtype":"F32","shape":[99999999999999999999999],"data_offsets":[0,4]}}', ("\0"):rep(4)),
  duplicate_key = file("{" .. f32("a", 0, 4) .. "," .. f32("a", 0, 4) .. "}", ("\0"):rep(4)),
}

local python   -- name -> "OK" or the Python reader's error
local function reference()
  if python then return python end
  local names = {}
  for name, bytes in pairs(cases) do
    local f = assert(io.open(dir .. "/" .. name .. ".safetensors", "wb"))
    f:write(bytes)
    f:close()
    names[#names + 1] = name
  end
  python = pytorch.run(([[
from safetensors import deserialize
res = {}
for name in %s.split():
    try:
        deserialize(open(%q + "/" + name + ".safetensors", "rb").read()); res[name] = "OK"
    except Exception as e:
        res[name] = str(e)
print(json.dumps(res))
]]):format(("%q"):format(table.concat(names, " ")), dir))
  return python
end

-- torch.load refuses case `name` with a message matching pattern, and so does Python's reader.
local function both_refuse(name, pattern, python_pattern)
  local path = dir .. "/" .. name .. ".safetensors"
  local ref = reference()[name]
  assert.is_not_nil(ref)
  assert.are_not.equal("OK", ref, name .. ": the Python reader accepts it")
  if python_pattern then assert.matches(python_pattern, ref) end
  local ok, err = pcall(torch.load, path)
  assert.is_false(ok, name .. ": torch.load accepts it")
  assert.matches(pattern, err)
  assert.truthy(err:find(path, 1, true), err)
end

describe("safetensors: the format's rules, as its own reader applies them", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("controls: valid files (UTF-8 names and metadata, escapes) load in both", function()
    assert.equal("OK", reference().ok)
    assert.equal("OK", reference().ok_utf8)
    local sd = torch.load(dir .. "/ok.safetensors")
    assert.same({ 1 }, sd.a:size())
    assert.same({ 2 }, sd.b:size())
    sd = torch.load(dir .. "/ok_utf8.safetensors")
    assert.is_not_nil(sd["\xe2\x82\xac\xf0\x9f\x98\x80"])
    assert.equal("v\xc3\xa9", sd.k)
  end)

  it("controls: what the format allows loads (null metadata, unknown entry fields ignored, leading spaces, empty tensors sharing an offset)", function()
    assert.equal("OK", reference().ok_lenient)
    local sd = torch.load(dir .. "/ok_lenient.safetensors")
    assert.same({ 1 }, sd.a:size())
    assert.same({ 0 }, sd.e:size())
    assert.same({ 0 }, sd.f:size())
  end)

  it("complex64 travels as the format's C64, both ways", function()
    local z = torch.complex(torch.tensor({ 1.5, 2 }), torch.tensor({ -1.0, 3.25 }))
    local path = dir .. "/c64.safetensors"
    torch.save({ z = z }, path)
    assert.is_true(torch.equal(z, torch.load(path).z))
    local res = pytorch.run(([[
from safetensors.torch import load_file
z = load_file(%q)["z"]
print(json.dumps([str(z.dtype), z.real.tolist(), z.imag.tolist()]))
]]):format(path))
    assert.same({ "torch.complex64", { 1.5, 2 }, { -1, 3.25 } }, res)
  end)

  it("shapes and offsets are unsigned integer literals; the header is an object; metadata values strings", function()
    both_refuse("float_offset", "data_offsets %[0, 4%.0%]: offsets are unsigned integers", "expected usize")
    both_refuse("negative_zero", "data_offsets %[%-0, 4%]", "expected usize")
    both_refuse("float_shape", "bad shape: dimension 1 is 1e0", "expected usize")
    both_refuse("metadata_not_string", "__metadata__ values must be strings", "expected a string")
    both_refuse("list_header", "header is not a JSON object", "invalid type")
  end)

  it("tensor names must be UTF-8 (bad bytes, overlong forms, surrogates, lone surrogate escapes)", function()
    both_refuse("bad_name", "not valid UTF%-8: byte 0xff at file offset 11 %(header byte 3%)", "invalid UTF%-8")
    both_refuse("bad_name_overlong", "not valid UTF%-8: byte 0xc0 at file offset 11", "invalid UTF%-8")
    both_refuse("bad_name_surrogate", "not valid UTF%-8: byte 0xed at file offset 11", "invalid UTF%-8")
    both_refuse("bad_name_escape", "lone surrogate \\udc80", "surrogate")
  end)

  it("metadata must be UTF-8", function()
    both_refuse("bad_metadata", "not valid UTF%-8: byte 0xff at file offset 31 %(header byte 23%)", "invalid UTF%-8")
  end)

  it("no gaps: the first tensor at 0, each where the previous one ends", function()
    both_refuse("gap_between", "entry 'b' starts at data byte 8, but 'a' ends at byte 4: the 4 bytes between are unused", "invalid offset")
    both_refuse("gap_at_start", "entry 'a' starts at data byte 4, but the data starts at byte 0", "invalid offset")
  end)

  it("no trailing bytes after the last tensor", function()
    both_refuse("trailing", "the tensors end at data byte 4 of 5: 1 trailing bytes", "not fully covered")
    both_refuse("trailing_no_tensor", "the tensors end at data byte 0 of 3: 3 trailing bytes", "not fully covered")
  end)

  it("the header's 100,000,000-byte limit; lengths printed as the file holds them", function()
    both_refuse("header_over_limit", "header length 100000001 exceeds the format's limit of 100000000 bytes", "header too large")
    both_refuse("header_huge", "header length 18446744073709551615 exceeds the format's limit", "header too large")
    -- exactly at the limit: read by both (a 100 MB file of padding, read only here)
    local path = dir .. "/at_limit.safetensors"
    local f = assert(io.open(path, "wb"))
    f:write(u64(100000000), "{}", (" "):rep(100000000 - 2))
    f:close()
    local ok, err = pcall(torch.load, path)
    assert(ok, err)
    local res = pytorch.run(([[
from safetensors import deserialize
print(json.dumps(len(deserialize(open(%q, "rb").read()))))
]]):format(path))
    assert.equal(0, res)
    os.remove(path)
  end)

  it("huge numbers in a record are printed as written", function()
    both_refuse("big_offset", "data_offsets %[0, 18446744073709551615%]: offsets are unsigned integers below 2%^53")
    both_refuse("big_shape", "bad shape: dimension 1 is 99999999999999999999999")
  end)

  it("duplicate keys are refused (the Rust reader keeps the last one)", function()
    assert.equal("OK", reference().duplicate_key)
    local ok, err = pcall(torch.load, dir .. "/duplicate_key.safetensors")
    assert.is_false(ok)
    assert.matches('duplicate key "a"', err)
  end)
end)
