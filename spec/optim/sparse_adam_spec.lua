--[[
  spec/optim/sparse_adam_spec.lua — optim.SparseAdam (lua/torch/optim/sparse_adam.lua) against
  PyTorch 2.11: an nn.Embedding(sparse = true) and an nn.EmbeddingBag(sparse = true) with the same
  weights trained for several steps on the same batches (repeated indices, rows left untouched)
  in both; the weights, the moments and the step count must be equal bit for bit (TOL = 0: the
  same libtorch kernels in the same order). Also PyTorch's refusals: lr <= 0, eps <= 0, a dense
  gradient, a sparse parameter.

  Run:  build/ltorch /usr/bin/busted spec/optim/sparse_adam_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local optim = torch.optim
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err
local py = approx.py

local TOL = 0
local BATCHES = { { { 1, 2, 4 }, { 4, 3, 9 } }, { { 0, 0, 7 }, { 2, 2, 2 } }, { { 5, 1, 4 }, { 8, 9, 1 } },
  { { 4, 4, 4 }, { 6, 3, 0 } }, { { 1, 2, 3 }, { 7, 8, 9 } } }

local CASES = {
  { name = "Embedding, defaults", bag = false, opts = {}, pyopts = "" },
  { name = "Embedding, lr betas eps maximize", bag = false,
    opts = { lr = 0.05, betas = { 0.8, 0.95 }, eps = 1e-6, maximize = true },
    pyopts = "lr=0.05, betas=(0.8, 0.95), eps=1e-6, maximize=True" },
  { name = "Embedding, Tensor lr", bag = false, opts = { lr = torch.tensor(0.02) }, pyopts = "lr=torch.tensor(0.02)" },
  { name = "EmbeddingBag(mode = 'sum')", bag = true, opts = { lr = 0.1 }, pyopts = "lr=0.1" },
}

local function weights()
  torch.manual_seed(3)
  return torch.randn(10, 4)
end

local function train(case)
  local m = case.bag and nn.EmbeddingBag(10, 4, { mode = "sum", sparse = true }) or nn.Embedding(10, 4, { sparse = true })
  m.weight:detach():copy_(weights())
  local opt = optim.SparseAdam(m:parameters(), case.opts)
  for _, b in ipairs(BATCHES) do
    opt:zero_grad()
    m(torch.tensor(b)):pow(2):sum():backward()
    opt:step()
  end
  return m, opt
end

describe("optim.SparseAdam", function()
  local ref
  setup(function()
    local lines = { "import torch.nn as nn", "W = torch.tensor(" .. py(weights():tolist()) .. ")",
      "B = " .. py(BATCHES), "out = []" }
    for _, c in ipairs(CASES) do
      lines[#lines + 1] = ([[
m = nn.EmbeddingBag(10, 4, mode='sum', sparse=True) if %s else nn.Embedding(10, 4, sparse=True)
with torch.no_grad(): m.weight.copy_(W)
opt = torch.optim.SparseAdam(m.parameters(), %s)
for b in B:
    opt.zero_grad(); m(torch.tensor(b)).pow(2).sum().backward(); opt.step()
s = opt.state[m.weight]
out.append(dict(w=m.weight.tolist(), m=s['exp_avg'].tolist(), v=s['exp_avg_sq'].tolist(), step=s['step'],
                keys=sorted(opt.state_dict()['state'][0].keys()), group=sorted(k for k in opt.state_dict()['param_groups'][0] if k != 'params')))]])
        :format(c.bag and "True" or "False", c.pyopts)
    end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it("equals PyTorch after " .. #BATCHES .. " steps: " .. c.name, function()
      local m, opt = train(c)
      local s = opt.state[m.weight]
      approx.check(m.weight, ref[i].w, TOL)
      approx.check(s.exp_avg, ref[i].m, TOL)
      approx.check(s.exp_avg_sq, ref[i].v, TOL)
      assert.equal(ref[i].step, s.step)
      local sd = opt:state_dict()
      local keys, group = {}, {}
      for k in pairs(sd.state[0]) do keys[#keys + 1] = k end
      for k in pairs(sd.param_groups[1]) do if k ~= "params" then group[#group + 1] = k end end
      table.sort(keys); table.sort(group)
      assert.same(ref[i].keys, keys)
      assert.same(ref[i].group, group)
    end)
  end

  it("resumes from its state_dict identically", function()
    local m = train(CASES[2])
    local m2 = nn.Embedding(10, 4, { sparse = true })
    m2.weight:detach():copy_(weights())
    local opt2 = optim.SparseAdam(m2:parameters(), CASES[2].opts)
    for j = 1, 2 do
      opt2:zero_grad(); m2(torch.tensor(BATCHES[j])):pow(2):sum():backward(); opt2:step()
    end
    local m3 = nn.Embedding(10, 4, { sparse = true })
    m3.weight:detach():copy_(m2.weight)
    local opt3 = optim.SparseAdam(m3:parameters(), CASES[2].opts)
    opt3:load_state_dict(opt2:state_dict())
    for j = 3, #BATCHES do
      opt3:zero_grad(); m3(torch.tensor(BATCHES[j])):pow(2):sum():backward(); opt3:step()
    end
    approx.check(m3.weight, m.weight:tolist(), TOL)
  end)

  it("refuses what PyTorch refuses", function()
    local r = pytorch.run [[
out = []
p = [torch.zeros(3, requires_grad=True)]
for kw in (dict(lr=0.0), dict(eps=0.0), dict(betas=(1.0, 0.9))):
    try: torch.optim.SparseAdam(p, **kw); out.append("ok")
    except ValueError as e: out.append(str(e))
try: torch.optim.SparseAdam([torch.zeros(3).to_sparse()]); out.append("ok")
except ValueError as e: out.append(str(e))
l = torch.nn.Linear(2, 2); o = torch.optim.SparseAdam(l.parameters()); l(torch.ones(1, 2)).sum().backward()
try: o.step(); out.append("ok")
except RuntimeError as e: out.append(str(e))
print(json.dumps(out))]]
    local p = { torch.zeros(3):requires_grad_() }
    assert.matches("Invalid learning rate: 0.0", r[1], 1, true)
    assert.matches("SparseAdam: invalid learning rate: 0", err(optim.SparseAdam, p, { lr = 0 }), 1, true)
    assert.matches("Invalid epsilon value: 0.0", r[2], 1, true)
    assert.matches("SparseAdam: invalid epsilon value: 0", err(optim.SparseAdam, p, { eps = 0 }), 1, true)
    assert.matches("Invalid beta parameter at index 0: 1.0", r[3], 1, true)
    assert.matches("invalid beta parameter at index 0: 1", err(optim.SparseAdam, p, { betas = { 1, 0.9 } }), 1, true)
    assert.equal("Sparse params at indices [[0, 0]]: SparseAdam requires dense parameter tensors", r[4])
    assert.matches(r[4], err(optim.SparseAdam, { torch.zeros(3):to_sparse() }), 1, true)
    assert.equal("SparseAdam does not support dense gradients, please consider Adam instead", r[5])
    local l = nn.Linear(2, 2)
    local o = optim.SparseAdam(l:parameters())
    l(torch.ones(1, 2)):sum():backward()
    assert.matches(r[5], err(o.step, o), 1, true)
  end)
end)
