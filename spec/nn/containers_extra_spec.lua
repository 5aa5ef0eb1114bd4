--[[
  spec/nn/containers_extra_spec.lua — nn.ParameterList and nn.ParameterDict
  (lua/torch/nn/containers.lua) against PyTorch.

  One pytorch.run plays the same script as each it-block (build, append / extend / set by index,
  update / pop / popitem / setdefault / clear, nest in a module) and returns reprs, state_dict
  keys, lengths, requires_grad flags and values; ltorch must agree. A model holding both
  trains one SGD step like PyTorch's (the containers' parameters reach the optimizer). Also
  misuse errors.

  Run:  build/ltorch /usr/bin/busted spec/nn/containers_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local PY = [==[
import torch.nn as nn
out = {}
pl = nn.ParameterList([nn.Parameter(torch.ones(3, 4)), torch.zeros(2, dtype=torch.float64), 5])
out['pl_repr'] = repr(pl)
pl.append(torch.full((2,), 2.0))
pl.extend([torch.ones(1), nn.Parameter(torch.ones(2), requires_grad=False)])
pl[0] = torch.full((3,), 7.0)
pl[-1] = torch.ones(5)
out['pl_len'] = len(pl)
out['pl_keys'] = list(pl.state_dict().keys())
out['pl_rg'] = [p.requires_grad for p in pl.parameters()]
out['pl_sizes'] = [list(p.shape) for p in pl.parameters()]
out['pl_last'] = pl[-2].tolist()
out['pl_repr2'] = repr(pl)
out['pl_one'] = repr(nn.ParameterList([torch.ones(2)]))
pd = nn.ParameterDict({'b': torch.ones(2), 'a': nn.Parameter(torch.zeros(3), requires_grad=False)})
out['pd_repr'] = repr(pd)
pd['c'] = torch.ones(1)
pd.update([('e', torch.ones(4)), ('d', torch.zeros(1))])
pd.update({'g': torch.ones(1), 'f': torch.ones(2)})
out['pd_keys'] = list(pd.keys())
out['pd_sd'] = list(pd.state_dict().keys())
out['pd_pop'] = pd.pop('b').tolist()
k, v = pd.popitem()
out['pd_popitem'] = [k, v.tolist()]
out['pd_setdefault'] = pd.setdefault('h', torch.full((2,), 3.0)).tolist()
out['pd_setdefault2'] = pd.setdefault('h', torch.ones(9)).tolist()
out['pd_get'] = [pd.get('zz') is None, pd.get('a').tolist()]
out['pd_len'] = len(pd)
out['pd_in'] = ['a' in pd, 'b' in pd]
out['pd_items'] = [[k, list(v.shape)] for k, v in pd.items()]
out['pd_rg'] = [p.requires_grad for p in pd.values()]
cp = pd.copy()
out['cp_keys'] = list(cp.keys())
out['fromkeys'] = list(pd.fromkeys(['x', 'y'], torch.ones(1)).keys())
out['pd_repr2'] = repr(pd)
pd.clear()
out['pd_cleared'] = [len(pd), repr(pd)]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([torch.ones(3), torch.full((3,), 2.0)])
        self.gains = nn.ParameterDict({'beta': torch.zeros(3), 'alpha': torch.ones(3)})
    def forward(self, x):
        return x * self.scales[0] * self.scales[1] + self.gains['alpha'] * self.gains['beta'] + self.gains['alpha']
net = Net()
out['net_repr'] = repr(net)
out['net_keys'] = list(net.state_dict().keys())
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
net(x).pow(2).sum().backward(); opt.step()
out['net_params'] = [p.tolist() for p in net.parameters()]
print(json.dumps(out))
]==]

describe("nn.ParameterList / nn.ParameterDict", function()
  local ref
  setup(function() ref = pytorch.run(PY) end)

  it("ParameterList: wraps tensors, appends, extends, indexes from 0 and -1, prints like PyTorch", function()
    local pl = nn.ParameterList({ nn.Parameter(torch.ones(3, 4)), torch.zeros(2, { dtype = torch.float64 }), 5 })
    assert.are.equal(ref.pl_repr, tostring(pl))
    pl:append(torch.ones(2) * 2.0)
    pl:extend({ torch.ones(1), nn.Parameter(torch.ones(2), false) })
    pl[0] = torch.ones(3) * 7.0
    pl[-1] = torch.ones(5)
    assert.are.equal(ref.pl_len, pl:len())
    assert.are.same(ref.pl_keys, pl:state_dict_keys())
    local rg, sizes = {}, {}
    for i, p in ipairs(pl:parameters()) do rg[i], sizes[i] = p.requires_grad, p:size() end
    assert.are.same(ref.pl_rg, rg)
    assert.are.same(ref.pl_sizes, sizes)
    assert.are.same(ref.pl_last, pl[-2]:tolist())
    assert.are.equal(ref.pl_repr2, tostring(pl))
    assert.are.equal(ref.pl_one, tostring(nn.ParameterList({ torch.ones(2) })))
    assert.are.equal(6, #pl:list())
    assert.are.equal(5, pl:list()[3])
  end)

  it("ParameterDict: sorted dict keys, ordered pairs, update, pop, popitem, setdefault, get, copy, clear", function()
    local pd = nn.ParameterDict({ b = torch.ones(2), a = nn.Parameter(torch.zeros(3), false) })
    assert.are.equal(ref.pd_repr, tostring(pd))
    pd.c = torch.ones(1)
    pd:update({ { "e", torch.ones(4) }, { "d", torch.zeros(1) } })
    pd:update({ g = torch.ones(1), f = torch.ones(2) })
    assert.are.same(ref.pd_keys, pd:keys())
    assert.are.same(ref.pd_sd, pd:state_dict_keys())
    assert.are.same(ref.pd_pop, pd:pop("b"):tolist())
    local k, v = pd:popitem()
    assert.are.same(ref.pd_popitem, { k, v:tolist() })
    assert.are.same(ref.pd_setdefault, pd:setdefault("h", torch.ones(2) * 3.0):tolist())
    assert.are.same(ref.pd_setdefault2, pd:setdefault("h", torch.ones(9)):tolist())
    assert.are.same(ref.pd_get, { pd:get("zz") == nil, pd:get("a"):tolist() })
    assert.are.equal(ref.pd_len, pd:len())
    assert.are.same(ref.pd_in, { pd:contains("a"), pd:contains("b") })
    local items = {}
    for i, kv in ipairs(pd:items()) do items[i] = { kv[1], kv[2]:size() } end
    assert.are.same(ref.pd_items, items)
    local rg = {}
    for i, p in ipairs(pd:values()) do rg[i] = p.requires_grad end
    assert.are.same(ref.pd_rg, rg)
    assert.are.same(ref.cp_keys, pd:copy():keys())
    assert.are.same(ref.fromkeys, pd:fromkeys({ "x", "y" }, torch.ones(1)):keys())
    assert.are.equal(ref.pd_repr2, tostring(pd))
    pd:clear()
    assert.are.same(ref.pd_cleared, { pd:len(), tostring(pd) })
    assert.are.equal(0, #pd:parameters())
  end)

  it("nested in a model: PyTorch's repr, state_dict keys, and one SGD step", function()
    local Net = nn.Module:extend("Net")
    function Net:__init()
      self.scales = nn.ParameterList({ torch.ones(3), torch.ones(3) * 2.0 })
      self.gains = nn.ParameterDict({ beta = torch.zeros(3), alpha = torch.ones(3) })
    end
    function Net:forward(x)
      return x * self.scales[0] * self.scales[1] + self.gains.alpha * self.gains["beta"] + self.gains.alpha
    end
    local net = Net()
    assert.are.equal(ref.net_repr, tostring(net))
    assert.are.same(ref.net_keys, net:state_dict_keys())
    local opt = torch.optim.SGD(net:parameters(), { lr = 0.1 })
    local loss = net(torch.tensor({ { 1.0, 2.0, 3.0 }, { -1.0, 0.5, 2.0 } })):pow(2):sum()
    loss:backward()
    opt:step()
    for i, p in ipairs(net:parameters()) do approx.check(p, ref.net_params[i], 1e-6) end
  end)

  it("ParameterDict({parameters = ...}) is the keyword form; any other table is the dict", function()
    assert.are.same({ "x" }, nn.ParameterDict({ parameters = { x = torch.ones(1) } }):keys())
    assert.are.same({ "a", "b" }, nn.ParameterDict({ b = torch.ones(1), a = torch.ones(1) }):keys())
    assert.are.same({ "b", "a" }, nn.ParameterDict({ { "b", torch.ones(1) }, { "a", torch.ones(1) } }):keys())
    assert.are.equal(1, nn.ParameterList({ values = { torch.ones(1) } }):len())
  end)

  describe("misuse", function()
    it("gives clear errors", function()
      local pl = nn.ParameterList({ torch.ones(1) })
      assert.matches("ParameterList should not be called", err(pl, torch.ones(1)))
      assert.matches("index 3 is out of range", err(function() return pl[3] end))
      assert.matches("index %-2 is out of range", err(function() pl[-2] = torch.ones(1) end))
      assert.matches("ParameterList.extend should be called with an iterable, but got Tensor",
        err(function() pl:extend(torch.ones(2)) end))
      local pd = nn.ParameterDict()
      assert.matches("ParameterDict should not be called", err(pd, torch.ones(1)))
      assert.matches("ParameterDict has no key 'zz'", err(function() return pd:pop("zz") end))
      assert.matches("popitem%(%): ParameterDict is empty", err(function() return pd:popitem() end))
      assert.matches("ParametersDict.update should be called with an iterable of key/value pairs, but got number",
        err(function() pd:update(3) end))
      assert.matches("ParameterDict update sequence element #0 should be a {key, value} pair",
        err(function() pd:update({ { "a" } }) end))
    end)
  end)
end)
