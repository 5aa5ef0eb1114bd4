--[[
  spec/nn/module_spec.lua — nn.Module itself (lua/torch/nn/module.lua) and the containers
  (lua/torch/nn/containers.lua), compared with PyTorch where PyTorch has an answer.

  Covers: registration by assignment (Parameter vs plain tensor vs Module, reassignment and
  removal), named_parameters / named_buffers / named_children / named_modules order, state_dict
  keys and shapes of a nested model (Sequential, ModuleList, ModuleDict inside custom modules, a
  non-persistent buffer, a shared submodule) equal to Python's state_dict(), load_state_dict
  (strict, non-strict report, size mismatch), train/eval propagation, to(dtype) keeping tensor
  identity, apply order, zero_grad (set_to_none true/false), requires_grad_, forward hooks and
  pre-hooks with handle:remove(), the nested repr equal to PyTorch's, num_parameters, and the
  behaviour of Sequential / ModuleList / ModuleDict (0-based get, append, len, error location).

  One pytorch.run builds the same model in Python; names, shapes, repr and counts are compared
  exactly (no floating-point values are compared with PyTorch here).

  Run:  build/ltorch /usr/bin/busted spec/nn/module_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"

---------------------------------------------------------------- the model, in Lua and in Python
local Block = nn.Module:extend("Block")
function Block:__init(width)
  self.proj = nn.Linear(width, width)
  self.act = nn.GELU()
  self:register_buffer("running", torch.zeros(width))
  self:register_buffer("scratch", torch.zeros(1), false)   -- not persistent: not in state_dict
end
function Block:forward(x) return self.act(self.proj(x)) + self.running end

local Net = nn.Module:extend("Net")
function Net:__init()
  self.scale = nn.Parameter(torch.ones(1))
  self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4, { bias = false }))
  self.blocks = nn.ModuleList({ Block(4), Block(4) })
  self.heads = nn.ModuleDict({ cls = nn.Linear(4, 3), reg = nn.Linear(4, 1) })
  self:register_buffer("steps", torch.zeros(1, { dtype = torch.int64 }))
  self.tied = self.features:get(0)        -- the same Linear under a second name
  self.plain = torch.zeros(2)              -- a plain tensor attribute: not registered
end
function Net:forward(x)
  local h = self.features(x)
  for _, b in ipairs(self.blocks:list()) do h = b(h) end
  return self.heads:get("cls")(h) * self.scale
end

local PY_MODEL = [[
import torch.nn as nn
class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.act = nn.GELU()
        self.register_buffer('running', torch.zeros(width))
        self.register_buffer('scratch', torch.zeros(1), persistent=False)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4, bias=False))
        self.blocks = nn.ModuleList([Block(4), Block(4)])
        self.heads = nn.ModuleDict({'cls': nn.Linear(4, 3), 'reg': nn.Linear(4, 1)})
        self.register_buffer('steps', torch.zeros(1, dtype=torch.int64))
        self.tied = self.features[0]
        self.plain = torch.zeros(2)
net = Net()
visited = []
net.apply(lambda m: visited.append(type(m).__name__))
net.blocks[1].requires_grad_(False)
out = {
  'params': [n for n, _ in net.named_parameters()],
  'buffers': [n for n, _ in net.named_buffers()],
  'children': [n for n, _ in net.named_children()],
  'modules': [[n, type(m).__name__] for n, m in net.named_modules()],
  'state': [[k, list(v.shape)] for k, v in net.state_dict().items()],
  'repr': repr(net),
  'numel': sum(p.numel() for p in net.parameters()),
  'trainable': sum(p.numel() for p in net.parameters() if p.requires_grad),
  'apply': visited,
}
print(json.dumps(out))
]]

local function names(list)
  local out = {}
  for i, nv in ipairs(list) do out[i] = nv[1] end
  return out
end

describe("nn.Module on a nested model, against PyTorch", function()
  local ref
  setup(function() ref = pytorch.run(PY_MODEL) end)

  it("named_parameters / named_buffers / named_children / named_modules in PyTorch's order", function()
    local net = Net()
    assert.are.same(ref.params, names(net:named_parameters()))
    assert.are.same(ref.buffers, names(net:named_buffers()))
    assert.are.same(ref.children, names(net:named_children()))
    local mods = {}
    for i, nm in ipairs(net:named_modules()) do mods[i] = { nm[1], nm[2]._class.__name } end
    assert.are.same(ref.modules, mods)
    assert.are.equal(#ref.params, #net:parameters())
    assert.are.equal(#ref.modules, #net:modules())
  end)

  it("state_dict keys (shared module twice, no non-persistent buffer) and shapes equal Python's", function()
    local net = Net()
    local keys = net:state_dict_keys()
    local sd = net:state_dict()
    local got = {}
    for i, k in ipairs(keys) do got[i] = { k, { unpack(sd[k]:size()) } } end
    assert.are.same(ref.state, got)
    local n = 0
    for _ in pairs(sd) do n = n + 1 end
    assert.are.equal(#keys, n)
    assert.is_false(sd["features.0.weight"].requires_grad)   -- detached, as PyTorch's
  end)

  it("prints PyTorch's repr", function()
    assert.are.equal(ref.repr, tostring(Net()))
  end)

  it("counts parameters as PyTorch does (shared ones once; trainable only)", function()
    local net = Net()
    assert.are.equal(ref.numel, net:num_parameters())
    net.blocks:get(1):requires_grad_(false)
    assert.are.equal(ref.trainable, net:num_parameters(true))
    assert.are.equal(ref.numel, net:num_parameters())
  end)

  it("apply visits children first, then the module, as PyTorch", function()
    local visited = {}
    local net = Net()
    assert.are.equal(net, net:apply(function(m) visited[#visited + 1] = m._class.__name end))
    assert.are.same(ref.apply, visited)
  end)
end)

describe("nn.Module registration by assignment", function()
  local Bare = nn.Module:extend("Bare")   -- (nn.Module itself is not callable; PyTorch's is)
  it("registers Parameters, Modules and buffers, and leaves plain tensors alone", function()
    local m = Bare()
    local w = nn.Parameter(torch.randn(2, 2))
    m.w = w
    m.child = nn.Linear(2, 2)
    m.plain = torch.ones(3)
    m:register_buffer("buf", torch.zeros(2))
    m.number = 5
    assert.are.same({ "w", "child.weight", "child.bias" }, names(m:named_parameters()))
    assert.are.same({ "buf" }, names(m:named_buffers()))
    assert.are.same({ "child" }, names(m:named_children()))
    assert.are.same({ "w", "buf", "child.weight", "child.bias" }, m:state_dict_keys())
    assert.is_true(rawequal(w, m.w))
    assert.is_true(nn.is_parameter(m.w))
    assert.is_false(nn.is_parameter(m.plain))
    assert.are.equal(5, m.number)
    assert.is_true(m.w.requires_grad)
    assert.is_false(nn.Parameter(torch.ones(1), false).requires_grad)
  end)

  it("keeps the kind of a name on reassignment and removes it on nil", function()
    local m = Bare()
    m.w = nn.Parameter(torch.randn(2))
    m.w = torch.zeros(3)                   -- a tensor into a parameter slot stays a parameter
    assert.is_true(nn.is_parameter(m.w))
    assert.are.same({ 3 }, { unpack(m.w:size()) })
    m:register_buffer("b", torch.zeros(1))
    local b2 = torch.ones(2)
    m.b = b2
    assert.is_true(rawequal(b2, m.b))
    assert.are.same({ "b" }, names(m:named_buffers()))
    m.fc = nn.Linear(1, 1)
    m.fc = nil
    m.w = nil
    m.b = nil
    assert.are.same({}, m:state_dict_keys())
    assert.are.same({}, m:named_children())
    m.x = nn.Linear(1, 1)
    m.x = nn.Parameter(torch.ones(1))      -- a Parameter replaces the child under the same name
    assert.are.same({ "x" }, names(m:named_parameters()))
    assert.are.same({}, m:named_children())
  end)

  it("rejects wrong kinds for registered names", function()
    local m = Bare()
    m.w = nn.Parameter(torch.randn(2))
    m.fc = nn.Linear(1, 1)
    m:register_buffer("b", torch.zeros(1))
    assert.has_error(function() m.w = "x" end, "cannot assign 'string' as parameter 'w' (nn.Parameter or nil expected)")
    assert.has_error(function() m.b = 1 end, "cannot assign 'number' as buffer 'b' (Tensor or nil expected)")
    assert.has_error(function() m.fc = torch.ones(1) end, "cannot assign 'cdata' as child module 'fc' (Module or nil expected)")
    assert.has_error(function() m:register_buffer("c", {}) end, "register_buffer: 'c' must be a Tensor or nil, got table")
    assert.has_error(function() m:add_module("d", {}) end, "add_module: 'd' is not a Module")
    assert.has_error(function() nn.Parameter({}) end, "bad argument #1 to 'Parameter' (Tensor expected, got table)")
    assert.has_error(function() nn.Module:extend() end, "bad argument #1 to 'extend' (class name string expected)")
    local NoForward = nn.Module:extend("NoForward")
    assert.has_error(function() NoForward()(torch.ones(1)) end, "NoForward has no forward method")
  end)

  it("named_parameters(false) lists the module's own only", function()
    local net = Net()
    assert.are.same({ "scale" }, names(net:named_parameters(false)))
    assert.are.same({ "steps" }, names(net:named_buffers(false)))
  end)
end)

describe("nn.Module load_state_dict", function()
  it("copies every value in place (strict), keeping tensor identity", function()
    local a, b = Net(), Net()
    local w = a.features:get(0).weight
    local report = a:load_state_dict(b:state_dict())
    assert.are.same({ missing_keys = {}, unexpected_keys = {} }, report)
    assert.is_true(rawequal(w, a.features:get(0).weight))
    assert.is_true(w:equal(b.features:get(0).weight))
    assert.is_true(a.heads:get("reg").bias:equal(b.heads:get("reg").bias))
    assert.is_true(w.requires_grad)
  end)

  it("reports missing and unexpected keys (non-strict) and raises on them (strict)", function()
    local a, b = Net(), Net()
    local sd = b:state_dict()
    sd["scale"], sd["blocks.1.running"] = nil, nil
    sd["extra.weight"], sd["another"] = torch.ones(1), torch.ones(1)
    local before = a.scale:clone()
    local report = a:load_state_dict(sd, false)
    assert.are.same({ "scale", "blocks.1.running" }, report.missing_keys)
    assert.are.same({ "another", "extra.weight" }, report.unexpected_keys)
    assert.is_true(a.scale:equal(before))
    assert.is_true(a.blocks:get(0).proj.weight:equal(b.blocks:get(0).proj.weight))
    assert.has_error(function() a:load_state_dict(sd) end,
      "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: scale, blocks.1.running.\n\t"
      .. "Unexpected key(s) in state_dict: another, extra.weight.")
  end)

  it("raises on a size mismatch even when not strict, changing nothing", function()
    local a = Net()
    local sd = Net():state_dict()
    sd["heads.cls.weight"] = torch.ones(2, 4)
    local before = a.features:get(0).weight:clone()
    assert.has_error(function() a:load_state_dict(sd, false) end,
      "Error(s) in loading state_dict for Net:\n\tsize mismatch for heads.cls.weight: copying a param with shape "
      .. "[2, 4] from checkpoint, the shape in current model is [3, 4].")
    assert.is_true(a.features:get(0).weight:equal(before))
    assert.has_error(function() a:load_state_dict("x") end, "load_state_dict: expected a table of tensors, got string")
  end)
end)

describe("nn.Module modes, dtype, grads and hooks", function()
  it("train/eval propagate to every submodule", function()
    local net = Net()
    assert.are.equal(net, net:eval())
    for _, m in ipairs(net:modules()) do assert.is_false(m.training) end
    net.blocks:train()
    assert.is_true(net.blocks:get(1).proj.training)
    assert.is_false(net.features.training)
    net:train()
    for _, m in ipairs(net:modules()) do assert.is_true(m.training) end
    net:train(false)
    assert.is_false(net.heads:get("cls").training)
  end)

  it("to(dtype) casts floating tensors in place, keeping parameter identity and grads", function()
    local net = Net()
    local w, steps = net.features:get(0).weight, net.steps
    local l = net(torch.randn(2, 4)):sum()
    l:backward()
    assert.are.equal(net, net:to(torch.float64))
    assert.is_true(rawequal(w, net.features:get(0).weight))
    assert.are.equal(torch.float64, w.dtype)
    assert.are.equal(torch.float64, w.grad.dtype)
    assert.are.equal(torch.float64, net.blocks:get(0).running.dtype)
    assert.are.equal(torch.int64, net.steps.dtype)
    assert.is_true(rawequal(steps, net.steps))
    assert.is_true(w.requires_grad and w.is_leaf)
    assert.are.equal(torch.float64, net(torch.randn(2, 4, { dtype = torch.float64 })).dtype)
    net:float()
    assert.are.equal(torch.float32, w.dtype)
  end)

  it("zero_grad sets grads to nil by default, or zeroes them with set_to_none = false", function()
    local net = Net()
    local l = net(torch.randn(2, 4)):sum()
    l:backward()
    local w = net.heads:get("cls").weight
    assert.is_not_nil(w.grad)
    net:zero_grad(false)
    assert.is_true(w.grad:eq(0):all():item())
    assert.are.same({ 3, 4 }, { unpack(w.grad:size()) })
    assert.are.equal(net, net:zero_grad())
    for _, p in ipairs(net:parameters()) do assert.is_nil(p.grad) end
  end)

  it("requires_grad_ switches every parameter and returns the module", function()
    local net = Net()
    assert.are.equal(net, net:requires_grad_(false))
    for _, p in ipairs(net:parameters()) do assert.is_false(p.requires_grad) end
    net.heads:requires_grad_()
    assert.is_true(net.heads:get("reg").weight.requires_grad)
    assert.is_false(net.scale.requires_grad)
  end)

  it("runs forward pre-hooks and hooks, lets them replace args/output, and removes them", function()
    local lin = nn.Linear(3, 2)
    local calls = {}
    local h1 = lin:register_forward_pre_hook(function(m, args)
      calls[#calls + 1] = "pre"
      assert.are.equal(lin, m)
      return args[1] * 0
    end)
    local h2 = lin:register_forward_hook(function(_, args, out)
      calls[#calls + 1] = "post"
      assert.is_true(args[1]:eq(0):all():item())
      return out + 1
    end)
    local h3 = lin:register_forward_hook(function() calls[#calls + 1] = "post2" end)
    local y = lin(torch.ones(1, 3))
    assert.is_true(y:equal(lin.bias:view(1, 2) + 1))
    assert.are.same({ "pre", "post", "post2" }, calls)
    h1.remove(); h2.remove(); h3.remove()
    calls = {}
    local x = torch.ones(1, 3)
    assert.is_true(lin(x):equal(torch.nn.functional.linear(x, lin.weight, lin.bias)))
    assert.are.same({}, calls)
    assert.has_error(function() lin:register_forward_hook(1) end,
      "bad argument #1 to 'register_forward_hook' (function expected)")
  end)
end)

describe("nn containers", function()
  it("Sequential: 0-based get, negative index, append, len, named pairs", function()
    local a, b = nn.Linear(2, 3), nn.ReLU()
    local seq = nn.Sequential(a, b)
    assert.are.equal(2, seq:len())
    assert.are.equal(a, seq:get(0))
    assert.are.equal(b, seq:get(-1))
    local c = nn.Linear(3, 1)
    assert.are.equal(seq, seq:append(c))
    assert.are.equal(3, seq:len())
    assert.are.equal(c, seq:get(2))
    assert.are.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, seq:state_dict_keys())
    assert.are.same({ 4, 1 }, { unpack(seq(torch.randn(4, 2)):size()) })
    assert.has_error(function() seq:get(3) end, "index 3 is out of range for a Sequential of 3 modules "
      .. "(indices are 0-based, as in PyTorch: [0] is the first module, [-1] the last)")
    local named = nn.Sequential({ { "enc", nn.Linear(2, 2) }, { "act", nn.Tanh() } })
    assert.are.same({ "enc", "act" }, names(named:named_children()))
    assert.are.equal(torch.ones(5, 2):dim(), nn.Sequential()(torch.ones(5, 2)):dim())
    assert.has_error(function() nn.Sequential(nn.ReLU(), 5) end, "Sequential: item 2 is not a Module (got number)")
  end)

  it("Sequential names the failing module in errors", function()
    local seq = nn.Sequential(nn.ReLU(), nn.Linear(3, 2))
    assert.has_error(function() seq(torch.ones(2, 4)) end,
      "in module 1 (Linear) of Sequential: Linear(3->2): expected input with last dim 3, got [2, 4]")
    local outer = nn.Sequential(nn.Identity(), seq)
    assert.error_matches(function() outer(torch.ones(2, 4)) end,
      "in module 1 (Sequential) of Sequential: in module 1 (Linear) of Sequential: Linear(3->2)", nil, true)
  end)

  it("Sequential hands the first module exactly its arguments (none, one, several; nils kept)", function()
    local Count = nn.Module:extend("Count")
    function Count:forward(...)
      local n = select("#", ...)
      self.seen = n
      return torch.tensor(n)
    end
    local first, second = Count(), Count()
    local seq = nn.Sequential(first, second)
    local out = seq()
    assert.are.equal(0, first.seen)
    assert.are.equal(1, second.seen)   -- each later module gets its predecessor's output alone
    assert.are.equal(1, out:item())
    seq(torch.ones(1))
    assert.are.equal(1, first.seen)
    seq(torch.ones(1), nil, torch.ones(1))
    assert.are.equal(3, first.seen)
    seq(nil, nil)
    assert.are.equal(2, first.seen)
    assert.are.equal(1, second.seen)
  end)

  it("ModuleList: get, append, extend_with, len, list, and no forward", function()
    local l = nn.ModuleList({ nn.Linear(1, 1) })
    l:append(nn.Linear(1, 2)):extend_with({ nn.Linear(2, 3), nn.Linear(3, 4) })
    assert.are.equal(4, l:len())
    assert.are.equal(2, l:get(1).out_features)
    assert.are.equal(4, l:get(-1).out_features)
    local outs = {}
    for i, m in ipairs(l:list()) do outs[i] = m.out_features end
    assert.are.same({ 1, 2, 3, 4 }, outs)
    assert.are.same({ "0", "1", "2", "3" }, names(l:named_children()))
    assert.has_error(function() l(torch.ones(1)) end, "ModuleList is a container; call its modules, not the list")
    assert.has_error(function() l:get(4) end, "index 4 is out of range for a ModuleList of 4 modules "
      .. "(indices are 0-based, as in PyTorch: [0] is the first module, [-1] the last)")
    assert.are.equal(0, nn.ModuleList():len())
  end)

  it("ModuleDict: sorted keys from a table, given order from pairs, get, no forward", function()
    local d = nn.ModuleDict({ b = nn.ReLU(), a = nn.Tanh(), c = nn.Identity() })
    assert.are.same({ "a", "b", "c" }, d:keys())
    assert.are.equal("Tanh", d:get("a")._class.__name)
    assert.is_nil(d:get("z"))
    local o = nn.ModuleDict({ { "z", nn.ReLU() }, { "y", nn.Tanh() } })
    assert.are.same({ "z", "y" }, o:keys())
    assert.has_error(function() o(torch.ones(1)) end, "ModuleDict is a container; call its modules, not the dict")
    assert.has_error(function() nn.ModuleDict({ a = 1 }) end, "ModuleDict: item 1 is not a Module (got number)")
  end)
end)
