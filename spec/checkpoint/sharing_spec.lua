-- spec/checkpoint/sharing_spec.lua — loading is linear whatever the sharing, and torch.load holds
-- no file once it returns.
--   * The doubling pickle: 64 nested lists, each holding the previous one twice through the memo
--     (x = [x, x]); 2^64 paths, 65 lists. PyTorch loads it at once, with the lists shared; so
--     must ltorch (pickle.load by hand-written bytes, torch.load on the file PyTorch writes).
--   * Saving a shared table writes it once and a reference after (Python's pickler does the
--     same), so the doubling structure also saves in linear size and loads shared in PyTorch.
--   * 10,000 torch.load calls leave /proc/self/fd's count unchanged; a checkpoint deleted
--     after loading is gone from the open files at once.
local torch = require "torch"
local pickle = require "torch.serialization.pickle"
local pytorch = require "spec.support.pytorch"
local fresh = require "spec.support.fresh_process"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

-- Python's protocol-2 bytes for x = []; 64 times x = [x, x]: the outer list first, each list
-- memoized (BINPUT i) as it opens, the inner one's second copy a BINGET.
local function doubling(levels)
  local out = { "\128\2" }
  for i = 0, levels - 1 do out[#out + 1] = "]q" .. string.char(i) .. "(" end
  out[#out + 1] = "]q" .. string.char(levels)
  for i = levels - 1, 0, -1 do out[#out + 1] = "h" .. string.char(i + 1) .. "e" end
  out[#out + 1] = "."
  return table.concat(out)
end

local function depth_and_sharing(x)
  local depth, shared = 0, true
  while #x == 2 do
    shared = shared and rawequal(x[1], x[2])
    depth, x = depth + 1, x[1]
  end
  return depth, shared and #x == 0
end


describe("checkpoint sharing and descriptors", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("pickle.load: the doubling pickle (64 levels) loads in well under a second, shared", function()
    local bytes = doubling(64)
    local t0 = os.clock()
    local x = pickle.load(bytes)
    local dt = os.clock() - t0
    assert.is_true(dt < 1, ("took %.3f s"):format(dt))
    local depth, shared = depth_and_sharing(x)
    assert.equal(64, depth)
    assert.is_true(shared)
    -- a real cycle is still refused, however deep the sharing around it
    local ok, err = pcall(pickle.load, "\128\2]q\0(]q\1h\0h\0eh\1a.")
    assert.is_false(ok)
    assert.matches("recursive structure", err)
  end)

  it("pickle.load: nesting has no limit (PyTorch's loader has none): 100,000 levels", function()
    local n = 100000
    local t0 = os.clock()
    local x = pickle.load("\128\2" .. ("]"):rep(n) .. ("a"):rep(n - 1) .. ".")
    assert.is_true(os.clock() - t0 < 1)
    local depth = 1
    while x[1] do x, depth = x[1], depth + 1 end
    assert.equal(n, depth)
  end)

  it("torch.load of PyTorch's doubling file; torch.save writes sharing as references", function()
    local py = dir .. "/py_doubling.pt"
    local lt = dir .. "/lt_doubling.pt"
    local x = {}
    for _ = 1, 64 do x = { x, x } end
    local t0 = os.clock()
    torch.save(x, lt)
    assert.is_true(os.clock() - t0 < 1)
    local res = pytorch.run(([[
import time
x = []
for _ in range(64): x = [x, x]
torch.save(x, %q)
deep = []
for _ in range(300): deep = [deep, 1]
torch.save(deep, %q)
y = torch.load(%q, weights_only=True)
d, s = 0, True
while len(y) == 2: s = s and y[0] is y[1]; d += 1; y = y[0]
print(json.dumps({"depth": d, "shared": s}))
]]):format(py, dir .. "/py_deep.pt", lt))
    assert.same({ depth = 64, shared = true }, res)   -- PyTorch reads ltorch's file shared
    local deep, levels = torch.load(dir .. "/py_deep.pt"), 0   -- 300 levels, as PyTorch saved them
    while deep[1] do deep, levels = deep[1], levels + 1 end
    assert.equal(300, levels)
    for _, path in ipairs({ py, lt }) do
      t0 = os.clock()
      local y = torch.load(path)
      local dt = os.clock() - t0
      assert.is_true(dt < 1, ("%s took %.3f s"):format(path, dt))
      local depth, shared = depth_and_sharing(y)
      assert.equal(64, depth)
      assert.is_true(shared)
    end
  end)

  it("10,000 torch.load calls hold no descriptor; a deleted checkpoint is released", function()
    -- In a fresh process: the suite's own process has descriptors of its own coming and going.
    local r = fresh.run(([[
local ffi = require "ffi"
pcall(ffi.cdef, "int getpid(void);")
local fds = "/proc/" .. ffi.C.getpid() .. "/fd"
local function listing()
  local p = assert(io.popen("ls -l " .. fds))   -- the pipe itself is one entry, each time
  local s = p:read("*a")
  p:close()
  return s
end
local function count() local n = 0 for _ in listing():gmatch("\n") do n = n + 1 end return n end
local path, gone = %q, %q
torch.save({ w = torch.arange(6):reshape(2, 3), n = 1 }, path)
collectgarbage(); collectgarbage()
local before = count()
collectgarbage("stop")   -- nothing may depend on a collection to close the file
for _ = 1, 10000 do assert(torch.load(path).n == 1) end
local after = count()
torch.save({ w = torch.ones(1000) }, gone)
local sd = torch.load(gone)
os.remove(gone)
local held = listing():find("gone.pt", 1, true) ~= nil
print(require("cjson").encode({ before = before, after = after, held = held, sum = sd.w:sum():item() }))
]]):format(dir .. "/small.pt", dir .. "/gone.pt"))
    assert.equal(r.before, r.after)
    assert.is_false(r.held)
    assert.equal(1000, r.sum)
  end)
end)
