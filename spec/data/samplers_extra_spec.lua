--[[
  spec/data/samplers_extra_spec.lua — data.Sampler (the base class), SubsetRandomSampler
  (lua/torch/data/sampler.lua), StackDataset and ChainDataset (lua/torch/data/dataset.lua).

  Covers: a Sampler subclass written with PyTorch's method names drives a DataLoader, as in
  PyTorch; the built-in samplers are Samplers; SubsetRandomSampler visits exactly its indices,
  repeats for a seed, differs across epochs, and without a generator draws from torch's global
  generator (PyTorch's order for the same torch.manual_seed); StackDataset
  (positional and named) and ChainDataset give the samples PyTorch's give on the same data;
  misuse errors.
  SubsetRandomSampler without a generator gives PyTorch's order for a torch.manual_seed (both
  torch.randperm on the global generator); with a torch.Generator, PyTorch's order for its
  seed (spec/data/sampler_parity_spec.lua checks that against PyTorch).

  Run:  build/ltorch /usr/bin/busted spec/data/samplers_extra_spec.lua
]]
local torch = require "torch"
local data = torch.utils.data
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local function collect(it)
  local out = {}
  for v in it do out[#out + 1] = v end
  return out
end

local function sorted(t)
  local c = { unpack(t) }
  table.sort(c)
  return c
end

describe("data.Sampler", function()
  it("a subclass with PyTorch's method names drives a DataLoader, batches as PyTorch's", function()
    local Evens = data.Sampler:extend("Evens")
    function Evens:__init(n) self.n = n end
    function Evens:__iter()
      local i = -2
      return function() i = i + 2; if i < self.n then return i end end
    end
    function Evens:__len() return math.ceil(self.n / 2) end
    local ds = data.TensorDataset(torch.arange(10) * 10)
    local loader = data.DataLoader(ds, { sampler = Evens(10), batch_size = 2 })
    local got = {}
    for batch in loader:iter() do got[#got + 1] = batch[1]:tolist() end
    local ref = pytorch.run([[
from torch.utils.data import Sampler, DataLoader, TensorDataset
class Evens(Sampler):
    def __init__(self, n): self.n = n
    def __iter__(self): return iter(range(0, self.n, 2))
    def __len__(self): return (self.n + 1) // 2
ds = TensorDataset(torch.arange(10) * 10)
print(json.dumps([b[0].tolist() for b in DataLoader(ds, sampler=Evens(10), batch_size=2)]))]])
    assert.same(ref, got)
    assert.equals(3, #loader)
  end)

  it("__iter may return an array; the built-in samplers are Samplers", function()
    local Fixed = data.Sampler:extend("Fixed")
    function Fixed:__iter() return { 3, 1, 2 } end
    assert.same({ 3, 1, 2 }, collect(Fixed():iter()))
    local ds = data.TensorDataset(torch.zeros(4))
    for _, s in ipairs({ data.SequentialSampler(ds), data.RandomSampler(ds, { generator = 1 }),
      data.SubsetRandomSampler({ 1, 2 }, 3) }) do
      local mt = getmetatable(s)
      while mt ~= nil and mt ~= data.Sampler do mt = getmetatable(mt) and getmetatable(mt).__index end
      assert.equals(data.Sampler, mt)
    end
  end)

  it("says what to define, and refuses Python's dunder names", function()
    local Bare = data.Sampler:extend("Bare")
    local s = Bare()
    assert.matches("Bare:iter%(%) is not implemented: define function Bare:iter%(%)", err(s.iter, s))
    assert.matches("object of type 'Bare' has no len%(%)", err(s.len, s))
    local Py = data.Sampler:extend("Py")
    Py.__iter__ = function() end
    assert.matches("Py defines __iter__: in Lua write function Py:__iter", err(Py))
  end)
end)

describe("data.SubsetRandomSampler", function()
  local idx = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21 }

  it("visits each of its indices once, repeats for a seed, differs across epochs", function()
    local s = data.SubsetRandomSampler(idx, 7)
    assert.equals(12, s:len())
    local e1, e2 = collect(s:iter()), collect(s:iter())
    assert.same(idx, sorted(e1))
    assert.same(idx, sorted(e2))
    assert.are_not.same(e1, e2)
    assert.same(e1, collect(data.SubsetRandomSampler(idx, { generator = 7 }):iter()))
    assert.same(e1, collect(data.SubsetRandomSampler({ indices = idx, generator = torch.Generator():manual_seed(7) })
      :iter()))
    assert.are_not.same(e1, collect(data.SubsetRandomSampler(idx, 8):iter()))
    assert.same(idx, sorted(collect(data.SubsetRandomSampler(torch.tensor(idx), 1):iter())))
    assert.same({}, collect(data.SubsetRandomSampler({}):iter()))
  end)

  it("without a generator uses torch's global generator: PyTorch's order for a manual_seed", function()
    local s = data.SubsetRandomSampler(idx)
    torch.manual_seed(5)
    local a1, a2 = collect(s:iter()), collect(s:iter())
    local after = torch.rand(1):item()
    torch.manual_seed(5)
    assert.same(a1, collect(s:iter()))
    assert.same(a2, collect(s:iter()))
    assert.are_not.same(a1, a2)
    local ref = pytorch.run([[
from torch.utils.data import SubsetRandomSampler
torch.manual_seed(5)
s = SubsetRandomSampler(list(range(10, 22)))
a1, a2 = list(s), list(s)
print(json.dumps([a1, a2, torch.rand(1).item()]))]])
    assert.same(ref, { a1, a2, after })
  end)

  it("feeds a DataLoader", function()
    local ds = data.TensorDataset(torch.arange(30))
    local loader = data.DataLoader(ds, { sampler = data.SubsetRandomSampler(idx, 3), batch_size = 5 })
    local seen = {}
    for batch in loader:iter() do
      for _, v in ipairs(batch[1]:tolist()) do seen[#seen + 1] = v end
    end
    assert.same(idx, sorted(seen))
    assert.equals(3, #loader)
  end)

  it("rejects bad arguments at the caller's line", function()
    local e = err(function() local s = data.SubsetRandomSampler(5); return s end)
    assert.matches("samplers_extra_spec.lua:%d+: bad argument #1 to 'SubsetRandomSampler'", e)
    assert.matches("SubsetRandomSampler: index 1 is a string", err(data.SubsetRandomSampler, { 1, "x" }))
    assert.matches("unexpected keyword argument 'seed'", err(data.SubsetRandomSampler, { 1 }, { seed = 1 }))
    assert.matches("SubsetRandomSampler: generator must be a torch.Generator %(torch.Generator%(%):manual_seed%(n%)%), "
      .. "a seed number or nil, got string", err(data.SubsetRandomSampler, { 1 }, "x"))
    assert.matches("got a torch.utils.data.Generator %(its stream is not PyTorch's%)",
      err(data.SubsetRandomSampler, { 1 }, data.Generator(1)))
  end)
end)

describe("data.StackDataset and data.ChainDataset", function()
  local PY = [[
from torch.utils.data import StackDataset, ChainDataset, TensorDataset, IterableDataset
a = TensorDataset(torch.arange(4) * 2)
b = TensorDataset(torch.arange(4) + 100, torch.arange(4) - 1)
class Count(IterableDataset):
    def __init__(self, lo, hi): self.lo, self.hi = lo, hi
    def __iter__(self): return iter(range(self.lo, self.hi))
    def __len__(self): return self.hi - self.lo
def enc(x):
    if isinstance(x, torch.Tensor): return x.tolist()
    if isinstance(x, dict): return {k: enc(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)): return [enc(v) for v in x]
    return x
pos = StackDataset(a, b)
named = StackDataset(x=a, y=b)
chain = ChainDataset([Count(0, 3), Count(10, 12), Count(5, 5), Count(20, 22)])
print(json.dumps(dict(pos=[enc(pos[i]) for i in range(len(pos))], named=[enc(named[i]) for i in range(len(named))],
                      chain=list(chain), chain_len=len(chain))))]]

  local ref
  setup(function() ref = pytorch.run(PY) end)

  local a = data.TensorDataset(torch.arange(4) * 2)
  local b = data.TensorDataset(torch.arange(4) + 100, torch.arange(4) - 1)
  local Count = data.IterableDataset:extend("Count")
  function Count:__init(lo, hi) self.lo, self.hi = lo, hi end
  function Count:__iter()
    local i = self.lo - 1
    return function() i = i + 1; if i < self.hi then return i end end
  end
  function Count:__len() return self.hi - self.lo end

  local function enc(x)
    if torch.is_tensor(x) then return x:tolist() end
    if type(x) == "table" then
      local out = {}
      for k, v in pairs(x) do out[k] = enc(v) end
      return out
    end
    return x
  end

  it("StackDataset (positional and named) gives PyTorch's samples", function()
    local pos, named = data.StackDataset(a, b), data.StackDataset({ x = a, y = b })
    assert.equals(4, #pos)
    assert.equals(4, named:len())
    local got_pos, got_named = {}, {}
    for i = 0, 3 do got_pos[i + 1] = enc(pos[i]); got_named[i + 1] = enc(named:get(i)) end
    assert.same(ref.pos, got_pos)
    assert.same(ref.named, got_named)
    local loader = data.DataLoader(named, { batch_size = 4 })
    local batch = loader:iter()()
    assert.same({ 0, 2, 4, 6 }, batch.x[1]:tolist())
  end)

  it("ChainDataset gives PyTorch's samples and length, also through a DataLoader", function()
    local chain = data.ChainDataset({ Count(0, 3), Count(10, 12), Count(5, 5), Count(20, 22) })
    assert.same(ref.chain, collect(chain:iter()))
    assert.equals(ref.chain_len, #chain)
    assert.same(ref.chain, collect(data.ChainDataset({ datasets = { Count(0, 3), Count(10, 12), Count(20, 22) } }):iter()))
    local seen = {}
    for batch in data.DataLoader(chain, { batch_size = 3 }):iter() do
      for _, v in ipairs(batch:tolist()) do seen[#seen + 1] = v end
    end
    assert.same(ref.chain, seen)
  end)

  it("rejects misuse", function()
    assert.matches("StackDataset: size mismatch between datasets",
      err(data.StackDataset, a, data.TensorDataset(torch.zeros(3))))
    assert.matches("StackDataset: at least one dataset should be passed", err(data.StackDataset))
    assert.matches("but both types are given", err(data.StackDataset, a, { y = b }))
    assert.matches("StackDataset: argument 2 is not a dataset", err(data.StackDataset, a, 5))
    assert.matches("StackDataset.get: index 4 out of range", err(function() return data.StackDataset(a):get(4) end))
    assert.matches("ChainDataset only supports IterableDataset, but dataset 1 is not one",
      err(data.ChainDataset, { Count(0, 1), a }))
    assert.matches("bad argument #1 to 'ChainDataset'", err(data.ChainDataset, Count(0, 1)))
    assert.matches("ChainDataset: unexpected keyword argument 'sets'", err(data.ChainDataset, { sets = {} }))
    local Unsized = data.IterableDataset:extend("Unsized")
    function Unsized:__iter() return function() end end
    assert.matches("Unsized has no len", err(function() return data.ChainDataset({ Unsized() }):len() end))
  end)
end)
