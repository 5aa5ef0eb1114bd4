-- spec/checkpoint/jit_spec.lua — torch.jit.load runs a TorchScript module saved by PyTorch and
-- matches PyTorch's outputs (tolerance: exact — same libtorch, same kernels, same threads).
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

local PY = [==[
import sys
sys.path.insert(0, %q)
from tsmodel import Net
torch.manual_seed(0)
m = torch.jit.script(Net())
m.eval()
m.save(%q + '/net.pt')
x = torch.randn(5, 4)
y, s = m(x)
torch.save({'x': x, 'y': y.detach(), 's': s.detach()}, %q + '/io.pt')
print(json.dumps({'params': [n for n, _ in m.named_parameters()]}))
]==]

local MODEL = [==[
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.bn = torch.nn.BatchNorm1d(3)
        self.drop = torch.nn.Dropout(0.5)
    def forward(self, x):
        h = self.drop(torch.tanh(self.bn(self.fc(x))))
        return h, h.sum(1)
]==]

describe("torch.jit.load", function()
  local res
  setup(function()
    local f = assert(io.open(dir .. "/tsmodel.py", "w"))
    f:write(MODEL)
    f:close()
    res = pytorch.run(PY:format(dir, dir, dir))
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("runs forward and matches PyTorch", function()
    local m = torch.jit.load(dir .. "/net.pt")
    m:eval()
    assert.is_false(m:is_training())
    local io_ = torch.load(dir .. "/io.pt")
    local out = m(io_.x)
    assert.is_true(torch.equal(out[1]:detach(), io_.y))
    assert.is_true(torch.equal(out[2]:detach(), io_.s))
  end)

  it("lists named parameters with PyTorch's names", function()
    local m = torch.jit.load(dir .. "/net.pt")
    local names = {}
    for i, nv in ipairs(m:named_parameters()) do names[i] = nv[1] end
    assert.same(res.params, names)
    assert.same({ 3, 4 }, m:named_parameters()[1][2]:size())
  end)

  it("gives clear errors", function()
    local ok, err = pcall(torch.jit.load, dir .. "/missing.pt")
    assert.is_false(ok)
    assert.matches("jit.load", err)
    local m = torch.jit.load(dir .. "/net.pt")
    ok, err = pcall(function() return m:call("nope", torch.ones(1)) end)
    assert.is_false(ok)
    assert.matches("no method 'nope'", err)
    ok, err = pcall(function() return m(torch.ones(2, 7)) end)
    assert.is_false(ok)
    assert.matches("^jit forward: The following operation failed in the TorchScript interpreter", err)
  end)
end)
