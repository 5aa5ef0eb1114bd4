--[[
  spec/porting/idioms_spec.lua — PyTorch idioms ported line by line never silently do something
  else (issue #24): each either works as in PyTorch or raises an error that says what to write.

  What: `#loader` / `#dataset`, `for x, y in loader:unpacked()`, `for name, p in
  m:named_parameters()` (and m:state_dict()), load_state_dict's strict/assign forms and result, Dataset subclasses
  with __init/__len/__getitem, Sequential/ModuleList indexing from 0, Python None from a
  checkpoint, a shuffled DataLoader seeded by torch.manual_seed, torch.cuda.manual_seed_all on
  a CPU build, a keyword repeating a positional argument, errors blamed on the caller's line,
  and num_workers with a dataset the workers cannot rebuild.
  Run:  build/ltorch /usr/bin/busted spec/porting/idioms_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local data = torch.utils.data

local SPEC = "idioms_spec.lua"

local err_of = require("spec.support.errors").err

-- asserts that `msg` is blamed on this spec file at `line`
local function blamed_at(msg, line)
  assert.truthy(msg:find(SPEC .. ":" .. line .. ":", 1, true), "not blamed on line " .. line .. ": " .. msg)
end

local function batch_order(loader)
  local out = {}
  for x in loader:unpacked() do
    for _, v in ipairs(x:tolist()) do out[#out + 1] = v end
  end
  return out
end

describe("# on a loader and a dataset", function()
  it("gives len(), as Python's len()", function()
    local ds = data.TensorDataset(torch.randn(10, 3), torch.arange(10))
    assert.equal(10, #ds)
    assert.equal(3, #data.DataLoader(ds, { batch_size = 4 }))
    assert.equal(2, #data.DataLoader(ds, { batch_size = 4, drop_last = true }))
    assert.equal(4, #data.Subset(ds, { 0, 1, 2, 3 }))
    assert.equal(14, #data.ConcatDataset({ ds, data.Subset(ds, { 0, 1, 2, 3 }) }))
  end)

  it("ds[i] is ds:get(i), 0-based as Python's ds[i]", function()
    local ds = data.TensorDataset(torch.arange(5))
    assert.equal(3, ds[3][1]:item())
    assert.has_error(function() return ds[5] end)
  end)
end)

describe("iterating a DataLoader", function()
  local ds = data.TensorDataset(torch.arange(6):view(3, 2), torch.arange(3))

  it("for x, y in loader:unpacked() gives each batch's fields", function()
    local n = 0
    for x, y in data.DataLoader(ds, { batch_size = 2 }):unpacked() do
      n = n + 1
      assert.equal(2, x:dim())
      assert.equal(1, y:dim())
    end
    assert.equal(2, n)
  end)

  it("a dataset whose __getitem returns x, y (Python's tuple) batches both", function()
    local Pairs = data.Dataset:extend("Pairs")
    function Pairs:__len() return 5 end
    function Pairs:__getitem(i) return torch.tensor({ i, i }), torch.tensor(i) end
    local seen = {}
    for x, y in data.DataLoader(Pairs(), { batch_size = 2 }):unpacked() do
      assert.equal(2, x:dim())
      for _, v in ipairs(y:tolist()) do seen[#seen + 1] = v end
    end
    assert.same({ 0, 1, 2, 3, 4 }, seen)
  end)

  it("for ... in loader (Python's form) is an error naming both Lua forms", function()
    local loader = data.DataLoader(ds)
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() for _ in loader do end end)
    blamed_at(e, line)
    assert.matches("loader:iter()", e, 1, true)
    assert.matches("loader:unpacked()", e, 1, true)
  end)
end)

describe("named_parameters and friends", function()
  local net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))

  it("for name, p in m:named_parameters() yields names and tensors in registration order", function()
    local names = {}
    for name, p in net:named_parameters() do
      names[#names + 1] = name
      assert.is_true(torch.is_tensor(p))
    end
    assert.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, names)
    local mods = {}
    for name, m in net:named_modules() do mods[#mods + 1] = name .. "=" .. m._class.__name end
    assert.same({ "=Sequential", "0=Linear", "1=ReLU", "2=Linear" }, mods)
    local kids = {}
    for name in net:named_children() do kids[#kids + 1] = name end
    assert.same({ "0", "1", "2" }, kids)
    local bn = nn.BatchNorm1d(2)
    local bufs = {}
    for name in bn:named_buffers() do bufs[#bufs + 1] = name end
    assert.same({ "running_mean", "running_var", "num_batches_tracked" }, bufs)
  end)

  it("for name, t in m:state_dict() yields PyTorch's order; pairs() still works", function()
    local sd = net:state_dict()
    local names = {}
    for name, t in sd do
      names[#names + 1] = name
      assert.is_true(torch.is_tensor(t))
    end
    assert.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, names)
    local n = 0
    for _ in pairs(sd) do n = n + 1 end
    assert.equal(4, n)
  end)

  it("the array form keeps working for ipairs callers", function()
    local list = net:named_parameters()
    assert.equal(4, #list)
    assert.equal("0.weight", list[1][1])
    for _, nv in ipairs(list) do assert.is_true(torch.is_tensor(nv[2])) end
  end)

  it("pairs() over it, then using the pair as the tensor, is an error saying what to write", function()
    local sizes = {}
    local line = debug.getinfo(1, "l").currentline + 2
    local e = err_of(function()
      for _, p in pairs(net:named_parameters()) do sizes[#sizes + 1] = p:size() end
    end)
    blamed_at(e, line)
    assert.matches("for name, v in m:named_parameters() do", e, 1, true)
  end)
end)

describe("load_state_dict", function()
  local function fresh() return nn.Sequential(nn.Linear(2, 2)) end

  it("accepts strict as a boolean or {strict = false} and returns (missing, unexpected)", function()
    local sd = fresh():state_dict()
    sd["0.bias"] = nil
    sd.extra = torch.zeros(1)
    for _, opts in ipairs({ false, { strict = false } }) do
      local missing, unexpected = fresh():load_state_dict(sd, opts)
      assert.same({ "0.bias" }, { unpack(missing) })
      assert.same({ "extra" }, unexpected)
      assert.same({ "0.bias" }, missing.missing_keys)
      assert.same({ "extra" }, missing.unexpected_keys)
    end
    assert.has_error(function() fresh():load_state_dict(sd, { strict = true }) end)
    assert.has_error(function() fresh():load_state_dict(sd) end)
  end)

  it("refuses unknown options, at the caller's line", function()
    local m, sd = fresh(), fresh():state_dict()
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() m:load_state_dict(sd, { strcit = false }); return 1 end)
    blamed_at(e, line)
    assert.matches("unknown option 'strcit'", e, 1, true)
  end)

  it("assign = true takes the state dict's tensors (parameters keep requires_grad)", function()
    local m, sd = fresh(), fresh():state_dict()
    local w = torch.ones(2, 2)
    sd["0.weight"] = w
    m:load_state_dict(sd, { assign = true })
    assert.is_true(m[0].weight:equal(w))
    assert.is_true(m[0].weight.requires_grad)
    assert.is_false(w.requires_grad)
    w:fill_(3)
    assert.equal(3, m[0].weight[0][0]:item())   -- shares storage, as PyTorch's assign
  end)
end)

describe("Dataset subclasses", function()
  it("__init, __len and __getitem work as PyTorch's __init__, __len__, __getitem__", function()
    local Squares = data.Dataset:extend("Squares")
    function Squares:__init(n) self.n = n end
    function Squares:__len() return self.n end
    function Squares:__getitem(i) return torch.tensor(i * i) end
    local ds = Squares(5)
    assert.equal(5, #ds)
    assert.equal(5, ds:len())
    assert.equal(9, ds:get(3):item())
    assert.equal(16, ds[4]:item())
    local seen = {}
    for b in data.DataLoader(ds, { batch_size = 2 }):iter() do seen[#seen + 1] = b:tolist() end
    assert.same({ { 0, 1 }, { 4, 9 }, { 16 } }, seen)
  end)

  it("the Lua-style init(...) -> self still works", function()
    local Old = data.Dataset:extend()
    function Old:init(n) self.n = n; return self end
    function Old:len() return self.n end
    assert.equal(7, #Old(7))
  end)

  it("Python's spellings are errors naming the Lua method", function()
    local Py = data.Dataset:extend("Py")
    function Py:__init__() end
    assert.matches("function Py:__init(...)", err_of(function() return Py() end), 1, true)
    local NoLen = data.Dataset:extend("NoLen")
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() local n = #NoLen(); return n end)
    blamed_at(e, line)
    assert.matches("define function NoLen:len() (or :__len())", e, 1, true)
    assert.matches("NoLen:get(i)", err_of(function() return NoLen():get(0) end), 1, true)
  end)

  it("an nn.Module with __init__ is an error too", function()
    local Net = nn.Module:extend("Net")
    function Net:__init__() end
    assert.matches("function Net:__init(...)", err_of(function() return Net() end), 1, true)
  end)
end)

describe("Sequential and ModuleList indices", function()
  it("index from 0 as PyTorch's (and as tensors), -1 is the last, out of range is an error", function()
    local a, b = nn.Linear(1, 1), nn.Tanh()
    local seq = nn.Sequential(a, b)
    assert.equal(a, seq[0])
    assert.equal(b, seq[1])
    assert.equal(b, seq[-1])
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() return seq[2] end)
    blamed_at(e, line)
    assert.matches("indices are 0-based, as in PyTorch", e, 1, true)
    local list = nn.ModuleList({ a, b })
    assert.equal(a, list[0])
    assert.has_error(function() return list[2] end)
  end)

  it("seq[i] = module replaces the module under the same name", function()
    local seq = nn.Sequential(nn.Linear(1, 1), nn.Tanh())
    local r = nn.ReLU()
    seq[1] = r
    assert.equal(r, seq[1])
    assert.same({ "0.weight", "0.bias" }, seq:state_dict_keys())
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() seq[0] = 5 end)
    blamed_at(e, line)
    assert.matches("Sequential[0] = value: a Module expected, got number", e, 1, true)
  end)
end)

describe("Python None from a checkpoint", function()
  local path = os.tmpname() .. ".pt"
  after_each(function() os.remove(path) end)

  it("a dict value None loads as nil; None in a list keeps its place as torch.None", function()
    local None = torch.serialization.None
    torch.save({ scheduler = None, kept = 1, list = { 1, None, 3 } }, path)
    local ck = torch.load(path)
    assert.is_nil(ck.scheduler)
    assert.equal(1, ck.kept)
    assert.equal(3, #ck.list)
    assert.equal(None, ck.list[2])
    assert.equal("torch.None", tostring(ck.list[2]))
  end)

  it("a file holding only None loads as nil", function()
    torch.save(torch.serialization.None, path)
    assert.is_nil(torch.load(path))
  end)
end)

describe("DataLoader{shuffle = true} without a generator", function()
  it("follows torch.manual_seed, as PyTorch's does", function()
    local ds = data.TensorDataset(torch.arange(20))
    local loader = data.DataLoader(ds, { batch_size = 5, shuffle = true })
    torch.manual_seed(0)
    local a = batch_order(loader)
    torch.manual_seed(0)
    local b = batch_order(loader)
    torch.manual_seed(0)
    local c = batch_order(data.DataLoader(ds, { batch_size = 5, shuffle = true }))
    assert.same(a, b)
    assert.same(a, c)
    assert.are_not.same(a, batch_order(loader))   -- the next epoch: a new permutation
  end)

  it("random_split without a generator follows torch.manual_seed too", function()
    local ds = data.TensorDataset(torch.arange(20))
    torch.manual_seed(1)
    local a = data.random_split(ds, { 10, 10 })
    torch.manual_seed(1)
    local b = data.random_split(ds, { 10, 10 })
    assert.same(a[1].indices, b[1].indices)
  end)
end)

describe("torch.cuda seeding without CUDA", function()
  it("manual_seed and manual_seed_all do nothing, as PyTorch's lazy seeding", function()
    if torch.cuda.is_available() then return pending("a CUDA device is present") end
    assert.has_no_error(function() torch.cuda.manual_seed_all(1) end)
    assert.has_no_error(function() torch.cuda.manual_seed(1) end)
  end)
end)

describe("generated ops", function()
  it("a keyword repeating a positional argument is Python's error", function()
    local y = torch.ones(2)
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() torch.add(y, y, { other = torch.zeros(2) }); return 1 end)
    blamed_at(e, line)
    assert.matches("torch.add() got multiple values for argument 'other'", e, 1, true)
    assert.matches("got multiple values for argument 'other'",
      err_of(function() return y:add(y, { other = y }) end), 1, true)
    assert.same({ 3, 3 }, torch.add(y, { other = y, alpha = 2 }):tolist())
  end)

  it("'no overload accepts' names the caller's line, for a function and a method", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() torch.add(1, 2, 3, 4); return 1 end)
    blamed_at(e, line)
    assert.matches("no overload accepts", e, 1, true)
    local x = torch.zeros(2)
    line = debug.getinfo(1, "l").currentline + 1
    e = err_of(function() x:add(1, 2, 3, 4); return 1 end)
    blamed_at(e, line)
  end)

  it("backward twice names the caller's line", function()
    local w = torch.ones(2, { requires_grad = true })
    local loss = (w * w):sum()
    loss:backward()
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() loss:backward(); return 1 end)
    blamed_at(e, line)
    assert.matches("second time", e, 1, true)
  end)
end)

describe("DataLoader workers with a dataset they cannot rebuild", function()
  it("is refused where the loader is made, naming what cannot cross and saying what to write", function()
    local ds = data.TensorDataset(torch.arange(4))
    ds.log = io.stderr   -- workers take any script dataset, but not an open file
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() local l = data.DataLoader(ds, { num_workers = 2 }); return l end)
    blamed_at(e, line)
    assert.matches("dataset.log (a file handle)", e, 1, true)
    assert.matches("num_workers = 0", e, 1, true)
    assert.matches("dataset_factory = {module =", e, 1, true)
  end)
end)

describe("LSTM's state", function()
  it("Python's `out, hidden = lstm(x, hidden)` is an error saying the Lua form, at the caller's line", function()
    local lstm = nn.LSTM(3, 4)
    local out, h, c = lstm(torch.randn(5, 2, 3))
    assert.are.same({ 1, 2, 4 }, h:size())
    assert.are.same({ 1, 2, 4 }, c:size())
    assert.are.same({ 5, 2, 4 }, lstm(torch.randn(5, 2, 3), { h, c }):size())
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() local o = lstm(torch.randn(5, 2, 3), h); return o end)
    blamed_at(e, line)
    assert.matches("write `local out, h, c = lstm(x, hx)` and pass {h, c}", e, 1, true)
    assert.is_not_nil(out)
  end)
end)
