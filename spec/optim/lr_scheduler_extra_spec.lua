--[[
  spec/optim/lr_scheduler_extra_spec.lua — PolynomialLR (lua/torch/optim/lr_scheduler.lua),
  CyclicLR and CosineAnnealingWarmRestarts (lua/torch/optim/lr_cyclic.lua) against PyTorch 2.11.

  Covers: on a two-group optimizer, each group's lr and momentum (SGD) or beta1 (Adam) after
  construction and after each of 30 steps, for PolynomialLR (default, power 2, power 0.5 past
  total_iters), CyclicLR (triangular, triangular2, exp_range, a custom scale_fn per cycle and per
  iteration, asymmetric step sizes, per-group lrs and momenta, beta1 of Adam, cycle_momentum
  off) and CosineAnnealingWarmRestarts (T_mult 1 and 2, eta_min); step(epoch) with fractional
  epochs (CosineAnnealingWarmRestarts) and PolynomialLR's closed form; resuming with
  last_epoch; state_dict round trips continuing the sequence and PyTorch's state_dict fields;
  the signatures (positional, keyword); misuse errors.

  Tolerance: bitwise (atol 0): the same arithmetic in the same order, in double precision.

  Run:  build/ltorch /usr/bin/busted spec/optim/lr_scheduler_extra_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err
local S = optim.lr_scheduler

local STEPS = 30
local TOL = 0

local function new_opt(kind)
  local a = torch.zeros(2, { requires_grad = true })
  local b = torch.zeros(3, { requires_grad = true })
  local groups = { { params = { a } }, { params = { b }, lr = 0.05 } }
  if kind == "Adam" then return optim.Adam(groups, { lr = 0.1, betas = { 0.9, 0.99 } }) end
  return optim.SGD(groups, { lr = 0.1, momentum = 0.9 })
end

local PY_GROUPS = "[dict(params=[torch.zeros(2, requires_grad=True)]), "
  .. "dict(params=[torch.zeros(3, requires_grad=True)], lr=0.05)]"
local PY_OPT = {
  SGD = "torch.optim.SGD(" .. PY_GROUPS .. ", lr=0.1, momentum=0.9)",
  Adam = "torch.optim.Adam(" .. PY_GROUPS .. ", lr=0.1, betas=(0.9, 0.99))",
}

local function resumable(o) for _, g in ipairs(o.param_groups) do g.initial_lr = g.lr end end
local PY_RESUMABLE = "[g.setdefault('initial_lr', g['lr']) for g in opt.param_groups] and "

-- name, optimizer kind, Lua constructor, Python constructor (`opt` in scope, `L` = lr_scheduler)
local cases = {
  { "PolynomialLR", "SGD", function(o) return S.PolynomialLR(o) end, "L.PolynomialLR(opt)" },
  { "PolynomialLR_power2", "SGD", function(o) return S.PolynomialLR(o, 12, 2.0) end, "L.PolynomialLR(opt, 12, 2.0)" },
  { "PolynomialLR_sqrt", "Adam", function(o) return S.PolynomialLR(o, { total_iters = 20, power = 0.5 }) end,
    "L.PolynomialLR(opt, total_iters=20, power=0.5)" },
  { "PolynomialLR_resumed", "SGD", function(o) resumable(o); return S.PolynomialLR(o, 10, 1.5, 3) end,
    PY_RESUMABLE .. "L.PolynomialLR(opt, 10, 1.5, 3)" },
  { "CyclicLR", "SGD", function(o) return S.CyclicLR(o, 0.01, 0.1, { step_size_up = 4 }) end,
    "L.CyclicLR(opt, 0.01, 0.1, step_size_up=4)" },
  { "CyclicLR_triangular2", "SGD", function(o)
      return S.CyclicLR(o, { 0.01, 0.02 }, { 0.1, 0.3 }, 3, 5, "triangular2", { base_momentum = { 0.7, 0.8 } })
    end, "L.CyclicLR(opt, [0.01, 0.02], [0.1, 0.3], 3, 5, 'triangular2', base_momentum=[0.7, 0.8])" },
  { "CyclicLR_exp_range_adam", "Adam", function(o)
      return S.CyclicLR(o, 0.001, 0.01, { step_size_up = 5, mode = "exp_range", gamma = 0.97, max_momentum = 0.95 })
    end, "L.CyclicLR(opt, 0.001, 0.01, step_size_up=5, mode='exp_range', gamma=0.97, max_momentum=0.95)" },
  { "CyclicLR_scale_fn_cycle", "SGD", function(o)
      return S.CyclicLR(o, 0.01, 0.1, { step_size_up = 3, scale_fn = function(x) return 1 / x end })
    end, "L.CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1 / x)" },
  { "CyclicLR_scale_fn_iterations", "SGD", function(o)
      return S.CyclicLR(o, 0.01, 0.1, { step_size_up = 3, step_size_down = 2, scale_mode = "iterations",
        scale_fn = function(x) return 0.99 ^ x end })
    end, "L.CyclicLR(opt, 0.01, 0.1, step_size_up=3, step_size_down=2, scale_mode='iterations', "
      .. "scale_fn=lambda x: 0.99 ** x)" },
  { "CyclicLR_no_momentum", "SGD", function(o)
      return S.CyclicLR(o, 0.05, 0.5, { step_size_up = 7, cycle_momentum = false })
    end, "L.CyclicLR(opt, 0.05, 0.5, step_size_up=7, cycle_momentum=False)" },
  { "CAWR", "SGD", function(o) return S.CosineAnnealingWarmRestarts(o, 7) end, "L.CosineAnnealingWarmRestarts(opt, 7)" },
  { "CAWR_mult2", "Adam", function(o)
      return S.CosineAnnealingWarmRestarts(o, 3, { T_mult = 2, eta_min = 0.001 })
    end, "L.CosineAnnealingWarmRestarts(opt, 3, T_mult=2, eta_min=0.001)" },
  { "CAWR_resumed", "SGD", function(o) resumable(o); return S.CosineAnnealingWarmRestarts(o, 5, 2, 0.0, 4) end,
    PY_RESUMABLE .. "L.CosineAnnealingWarmRestarts(opt, 5, 2, 0.0, 4)" },
}

-- The fractional-epoch schedule of CosineAnnealingWarmRestarts, and PolynomialLR's closed form.
local EPOCHS = { 0.5, 1.25, 2.75, 3, 3.5, 9.2, 10, 21.7, 4.4, 45.0, 0 }

local function record(opt, sched, n)
  local out = {}
  local function snap()
    local lrs, moms = {}, {}
    for i, g in ipairs(opt.param_groups) do
      lrs[i] = g.lr
      moms[i] = g.betas and g.betas[1] or g.momentum
    end
    approx.check(sched:get_last_lr(), lrs, 0)
    out[#out + 1] = { lrs, moms }
  end
  snap()
  for _ = 1, n do
    opt:step()
    sched:step()
    snap()
  end
  return out
end

local function reference()
  local lines = { "import warnings; warnings.simplefilter('ignore')", "L = torch.optim.lr_scheduler", "res = {}",
    "def run(opt, s):",
    "    out = []",
    "    def snap():",
    "        gs = opt.param_groups",
    "        out.append([[g['lr'] for g in gs], [g['betas'][0] if 'betas' in g else g['momentum'] for g in gs]])",
    "    snap()",
    "    for t in range(30):",
    "        opt.step()",
    "        s.step()",
    "        snap()",
    "    return out" }
  for _, c in ipairs(cases) do
    lines[#lines + 1] = ("opt = %s; res[%q] = run(opt, %s)"):format(PY_OPT[c[2]], c[1], c[4])
  end
  lines[#lines + 1] = "E = " .. approx.py(EPOCHS)
  lines[#lines + 1] = "out = []"
  lines[#lines + 1] = "for s in [L.CosineAnnealingWarmRestarts(" .. PY_OPT.SGD .. ", 4), "
    .. "L.CosineAnnealingWarmRestarts(" .. PY_OPT.SGD .. ", 2, T_mult=3, eta_min=0.01), "
    .. "L.PolynomialLR(" .. PY_OPT.SGD .. ", 8, 2.0)]:"
  lines[#lines + 1] = "    for e in E: s.step(e); out.append([s.get_last_lr(), s.last_epoch])"
  lines[#lines + 1] = "res['epochs'] = out"
  lines[#lines + 1] = "opt = " .. PY_OPT.SGD
  lines[#lines + 1] = "res['keys'] = {n: sorted(s.state_dict().keys()) for n, s in "
    .. "[('CyclicLR', L.CyclicLR(opt, 0.01, 0.1)), ('CAWR', L.CosineAnnealingWarmRestarts(opt, 3)), "
    .. "('PolynomialLR', L.PolynomialLR(opt))]}"
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

describe("optim.lr_scheduler PolynomialLR, CyclicLR, CosineAnnealingWarmRestarts", function()
  local ref
  setup(function() ref = reference() end)

  for _, c in ipairs(cases) do
    it("gives PyTorch's lr sequence: " .. c[1], function()
      local opt = new_opt(c[2])
      approx.check(record(opt, c[3](opt), STEPS), ref[c[1]], TOL)
    end)
  end

  it("step(epoch) takes fractional epochs (CosineAnnealingWarmRestarts) and closed forms (PolynomialLR)", function()
    local out = {}
    for _, s in ipairs({ S.CosineAnnealingWarmRestarts(new_opt("SGD"), 4),
      S.CosineAnnealingWarmRestarts(new_opt("SGD"), 2, { T_mult = 3, eta_min = 0.01 }),
      S.PolynomialLR(new_opt("SGD"), 8, 2.0) }) do
      for _, e in ipairs(EPOCHS) do
        s:step(e)
        out[#out + 1] = { s:get_last_lr(), s.last_epoch }
      end
    end
    approx.check(out, ref.epochs, TOL)
  end)

  it("state_dict round trips continue the same sequence", function()
    for _, i in ipairs({ 2, 6, 7, 12 }) do
      local c, k = cases[i], 11
      local opt = new_opt(c[2])
      local sched = c[3](opt)
      local first = record(opt, sched, k)
      local opt2 = new_opt(c[2])
      local sched2 = c[3](opt2)
      opt2:load_state_dict(opt:state_dict())
      sched2:load_state_dict(sched:state_dict())
      local rest = record(opt2, sched2, STEPS - k)
      for j = 2, #rest do first[k + j] = rest[j] end
      local ok, e = pcall(approx.check, first, ref[c[1]], TOL)
      assert(ok, c[1] .. ": " .. tostring(e))
    end
  end)

  it("has PyTorch's state_dict fields", function()
    local opt = new_opt("SGD")
    local scheds = { CyclicLR = S.CyclicLR(opt, 0.01, 0.1), CAWR = S.CosineAnnealingWarmRestarts(opt, 3),
      PolynomialLR = S.PolynomialLR(opt) }
    for name, s in pairs(scheds) do
      local keys = {}
      for k in pairs(s:state_dict()) do keys[#keys + 1] = k end
      table.sort(keys)
      -- PyTorch's _get_lr_called_within_step is an internal flag of its step() wrapper
      local theirs = {}
      for _, k in ipairs(ref.keys[name]) do if k ~= "_get_lr_called_within_step" then theirs[#theirs + 1] = k end end
      assert.same(theirs, keys)
    end
    assert.equals(torch.serialization.None, scheds.CyclicLR:state_dict()._scale_fn_custom)
  end)

  it("a callable table as scale_fn keeps its fields through state_dict", function()
    local fn = setmetatable({ k = 0.5 }, { __call = function(self, x) return self.k ^ x end })
    local s = S.CyclicLR(new_opt("SGD"), 0.01, 0.1, { scale_fn = fn })
    local sd = s:state_dict()
    assert.same({ k = 0.5 }, sd._scale_fn_custom)
    fn.k = 0.9
    s:load_state_dict(sd)
    assert.equals(0.5, fn.k)
  end)

  it("rejects bad arguments", function()
    local opt = new_opt("SGD")
    assert.matches("CyclicLR: mode is invalid and scale_fn is None", err(S.CyclicLR, opt, 0.01, 0.1, { mode = "x" }))
    assert.matches("base_lr must have the same length as optimizer.param_groups",
      err(S.CyclicLR, opt, { 0.01 }, 0.1))
    assert.matches("optimizer must support momentum or beta1",
      err(S.CyclicLR, optim.Adagrad({ torch.zeros(1, { requires_grad = true }) }), 0.01, 0.1))
    assert.matches("CyclicLR: missing required argument 'max_lr'", err(S.CyclicLR, opt, 0.01))
    assert.matches("expected positive integer T_0, but got 0", err(S.CosineAnnealingWarmRestarts, opt, 0))
    assert.matches("expected positive integer T_0, but got 2.5", err(S.CosineAnnealingWarmRestarts, opt, 2.5))
    assert.matches("expected integer T_mult >= 1, but got 0", err(S.CosineAnnealingWarmRestarts, opt, 3, 0))
    local s = S.CosineAnnealingWarmRestarts(opt, 3)
    assert.matches("expected non%-negative epoch, but got %-1", err(s.step, s, -1))
    assert.matches("PolynomialLR: unexpected keyword argument 'gamma'", err(S.PolynomialLR, opt, { gamma = 2 }))
    assert.matches("is not an Optimizer", err(S.PolynomialLR, {}))
  end)
end)
