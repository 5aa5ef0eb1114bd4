--[[
  spec/optim/muon_spec.lua — optim.Muon (lua/torch/optim/muon.lua) against PyTorch 2.11's
  torch.optim.Muon.

  Covers: three 2-D parameters (wide, tall — the Newton-Schulz iteration runs on the transpose —
  and square; the square one skips step 2) over 5 steps of identical gradients, with default
  options, nesterov off, each adjust_lr_fn, weight_decay 0, other momentum, ns_steps and
  ns_coefficients, per-group options; the momentum buffers and the state_dict layout; resuming
  from state_dict; the signature; misuse (1-D parameters, bad options).

  Tolerance: bitwise (atol 0): the same bfloat16 libtorch kernels in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/muon_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err
local py = approx.py

local TOL = 0
local STEPS = 5

torch.manual_seed(4321)
local shapes = { { 3, 5 }, { 6, 2 }, { 4, 4 } }
local P0, G = {}, {}
for i, s in ipairs(shapes) do P0[i] = torch.randn(s) end
for t = 1, STEPS do
  G[t] = {}
  for i, s in ipairs(shapes) do
    if not (i == 3 and t == 2) then G[t][i] = torch.randn(s) * (0.5 + t / 4) end
  end
end

local cases = {
  { name = "default", opts = {} },
  { name = "plain_momentum", opts = { lr = 0.02, nesterov = false, momentum = 0.9 } },
  { name = "original", opts = { lr = 0.01, adjust_lr_fn = "original", weight_decay = 0 } },
  { name = "match_rms_adamw", opts = { lr = 0.01, adjust_lr_fn = "match_rms_adamw", weight_decay = 0.05 } },
  { name = "tensor_lr", opts = { lr = torch.tensor(0.01), adjust_lr_fn = "match_rms_adamw", weight_decay = 0.05 } },
  { name = "tensor_lr_original", opts = { lr = torch.tensor(0.02), weight_decay = 0.1 } },
  { name = "ns", opts = { lr = 0.05, ns_steps = 3, ns_coefficients = { 3.0, -3.2, 1.2 }, eps = 1e-5 } },
  { name = "groups", opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { momentum = 0.5 } }, { idx = { 2 }, opts = { lr = 0.1, nesterov = false } } } },
}

local function kwargs(opts)
  local keys, parts = {}, {}
  for k in pairs(opts or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = opts[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "string" and ("'" .. v .. "'") or py(v))
  end
  return table.concat(parts, ", ")
end

local function lists(ts)
  local out = {}
  for i = 1, #shapes do out[i] = ts[i] and py(ts[i]:tolist()) or "None" end
  return "[" .. table.concat(out, ", ") .. "]"
end

local function reference()
  local g = {}
  for t = 1, STEPS do g[t] = lists(G[t]) end
  local lines = { ([==[
P0 = [torch.tensor(x, dtype=torch.float32) for x in %s]
G = [[None if g is None else torch.tensor(g, dtype=torch.float32) for g in step] for step in [%s]]
def run(groups, kw):
    ps = [p.clone().requires_grad_() for p in P0]
    params = ps if groups is None else [dict(params=[ps[i - 1] for i in g[0]], **g[1]) for g in groups]
    opt = torch.optim.Muon(params, **kw)
    out = []
    for t in range(%d):
        for i, p in enumerate(ps):
            p.grad = None if G[t][i] is None else G[t][i].clone()
        opt.step()
        out.append([p.detach().tolist() for p in ps])
    sd = opt.state_dict()
    state = {str(k): {n: v.tolist() for n, v in s.items()} for k, s in sd['state'].items()}
    keys = [sorted(k for k in g if k != 'params') for g in sd['param_groups']]
    return dict(params=out, state=state, group_keys=keys)
res = {}
]==]):format(lists(P0), table.concat(g, ", "), STEPS) }
  for _, c in ipairs(cases) do
    local groups = "None"
    if c.groups then
      local gs = {}
      for _, gr in ipairs(c.groups) do gs[#gs + 1] = ("(%s, dict(%s))"):format(py(gr.idx), kwargs(gr.opts)) end
      groups = "[" .. table.concat(gs, ", ") .. "]"
    end
    lines[#lines + 1] = ("res[%q] = run(%s, dict(%s))"):format(c.name, groups, kwargs(c.opts))
  end
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

local function make(case, ps)
  local params = ps
  if case.groups then
    params = {}
    for gi, gr in ipairs(case.groups) do
      local g = { params = {} }
      for k, v in pairs(gr.opts) do g[k] = v end
      for j, i in ipairs(gr.idx) do g.params[j] = ps[i] end
      params[gi] = g
    end
  end
  return optim.Muon(params, case.opts)
end

local function fresh()
  local ps = {}
  for i, p in ipairs(P0) do ps[i] = p:clone():requires_grad_() end
  return ps
end

local function steps(opt, ps, from, to, each)
  for t = from, to do
    for i, p in ipairs(ps) do p.grad = G[t][i] and G[t][i]:clone() or nil end
    opt:step()
    if each then each(t) end
  end
end

local function values(ps)
  local out = {}
  for i, p in ipairs(ps) do out[i] = p:detach():tolist() end
  return out
end

describe("optim.Muon", function()
  local ref
  setup(function() ref = reference() end)

  for _, case in ipairs(cases) do
    it("matches PyTorch step by step: " .. case.name, function()
      local r = ref[case.name]
      local ps = fresh()
      local opt = make(case, ps)
      steps(opt, ps, 1, STEPS, function(t)
        local ok, e = pcall(approx.check, values(ps), r.params[t], TOL)
        assert(ok, ("after step %d: %s"):format(t, tostring(e)))
      end)
      local sd = opt:state_dict()
      for k, s in pairs(sd.state) do
        approx.check(s.momentum_buffer, r.state[tostring(k)].momentum_buffer, TOL)
      end
      for gi, g in ipairs(sd.param_groups) do
        local keys = {}
        for k in pairs(g) do if k ~= "params" then keys[#keys + 1] = k end end
        table.sort(keys)
        assert.same(r.group_keys[gi], keys)
      end
    end)
  end

  it("resumes from state_dict identically", function()
    local ps = fresh()
    local opt = make(cases[2], ps)
    steps(opt, ps, 1, 3)
    local ps2 = {}
    for i, p in ipairs(ps) do ps2[i] = p:detach():clone():requires_grad_() end
    local opt2 = make(cases[2], ps2)
    opt2:load_state_dict(opt:state_dict())
    steps(opt2, ps2, 4, STEPS)
    approx.check(values(ps2), ref.plain_momentum.params[STEPS], TOL)
  end)

  it("binds PyTorch's signature and checks its arguments", function()
    local p = torch.zeros(2, 3, { requires_grad = true })
    local g = optim.Muon({ p }, 0.02, 0.01, 0.9, false, { 3, -4, 2 }, 1e-6, 4, "original").param_groups[1]
    assert.same({ 0.02, 0.01, 0.9, false, 1e-6, 4, "original" },
      { g.lr, g.weight_decay, g.momentum, g.nesterov, g.eps, g.ns_steps, g.adjust_lr_fn })
    assert.same({ 3, -4, 2 }, g.ns_coefficients)
    local d = optim.Muon({ p }).param_groups[1]
    assert.same({ 3.4445, -4.775, 2.0315 }, d.ns_coefficients)
    assert.equals(torch.serialization.None, d.adjust_lr_fn)
    local v = torch.zeros(3, { requires_grad = true })
    assert.matches("Muon only supports 2D parameters whereas we found a parameter with size: torch.Size%(%[3%]%)",
      err(optim.Muon, { p, v }))
    assert.matches("Muon: invalid learning rate", err(optim.Muon, { p }, { lr = -1 }))
    assert.matches("Muon: adjust learning rate function bogus is not supported",
      err(optim.Muon, { p }, { adjust_lr_fn = "bogus" }))
    assert.matches("Muon: invalid ns_coefficients", err(optim.Muon, { p }, { ns_coefficients = { 1, 2 } }))
    assert.matches("Muon: invalid ns_steps", err(optim.Muon, { p }, { ns_steps = 100 }))
    assert.matches("unexpected keyword argument 'foreach'", err(optim.Muon, { p }, { foreach = true }))
  end)
end)
