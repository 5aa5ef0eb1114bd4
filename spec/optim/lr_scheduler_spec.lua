--[[
  spec/optim/lr_scheduler_spec.lua — torch.optim.lr_scheduler (lua/torch/optim/lr_scheduler*.lua,
  lr_one_cycle.lua, lr_sequential.lua, lr_plateau.lua) against PyTorch 2.11.

  Covers: for every scheduler (and the main option variants) on a two-group optimizer, the lr
  of each group after construction and after each of 30 steps, plus the momentum/beta1 that
  OneCycleLR cycles, equal PyTorch's; resuming with last_epoch (2.11: construction keeps the
  restored lrs); step(epoch) (closed forms); state_dict round trips that continue the same
  sequence; state_dict field names; misuse errors.

  Tolerance: bitwise (atol 0): the same recursions in the same order, in double precision.

  Run:  build/ltorch /usr/bin/busted spec/optim/lr_scheduler_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local S = optim.lr_scheduler

local STEPS = 30
local TOL = 0

-- A metric with improvements, plateaus and noise, for ReduceLROnPlateau.
local METRICS = {}
for i = 1, STEPS do METRICS[i] = 1 / (1 + math.floor(i / 4)) + 0.001 * ((i * 7) % 3) end

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

-- name, optimizer kind, Lua constructor, Python constructor (`opt` in scope, `L` = lr_scheduler)
local cases = {
  { "StepLR", "SGD", function(o) return S.StepLR(o, 7, { gamma = 0.5 }) end, "L.StepLR(opt, 7, gamma=0.5)" },
  { "StepLR_default", "SGD", function(o) return S.StepLR(o, 3) end, "L.StepLR(opt, 3)" },
  { "MultiStepLR", "SGD", function(o) return S.MultiStepLR(o, { 5, 12, 12, 20 }, { gamma = 0.3 }) end,
    "L.MultiStepLR(opt, [5, 12, 12, 20], gamma=0.3)" },
  { "ExponentialLR", "SGD", function(o) return S.ExponentialLR(o, 0.9) end, "L.ExponentialLR(opt, 0.9)" },
  { "CosineAnnealingLR", "SGD", function(o) return S.CosineAnnealingLR(o, 10, { eta_min = 0.001 }) end,
    "L.CosineAnnealingLR(opt, 10, eta_min=0.001)" },
  { "CosineAnnealingLR_7", "SGD", function(o) return S.CosineAnnealingLR(o, 7) end, "L.CosineAnnealingLR(opt, 7)" },
  { "LinearLR", "SGD", function(o) return S.LinearLR(o, { start_factor = 0.25, end_factor = 0.9, total_iters = 10 }) end,
    "L.LinearLR(opt, start_factor=0.25, end_factor=0.9, total_iters=10)" },
  { "LinearLR_default", "SGD", function(o) return S.LinearLR(o) end, "L.LinearLR(opt)" },
  { "ConstantLR", "SGD", function(o) return S.ConstantLR(o, { factor = 0.5, total_iters = 4 }) end,
    "L.ConstantLR(opt, factor=0.5, total_iters=4)" },
  { "LambdaLR", "SGD", function(o) return S.LambdaLR(o, function(e) return 0.95 ^ e end) end,
    "L.LambdaLR(opt, lambda e: 0.95 ** e)" },
  { "LambdaLR_per_group", "SGD", function(o)
      return S.LambdaLR(o, { function(e) return 1 / (e + 1) end, function(e) return math.min(1, (e + 1) / 5) end })
    end, "L.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: min(1, (e + 1) / 5)])" },
  { "MultiplicativeLR", "SGD", function(o) return S.MultiplicativeLR(o, function(e) return 0.9 + 0.001 * e end) end,
    "L.MultiplicativeLR(opt, lambda e: 0.9 + 0.001 * e)" },
  { "OneCycleLR", "SGD", function(o) return S.OneCycleLR(o, 0.5, { total_steps = STEPS }) end,
    "L.OneCycleLR(opt, 0.5, total_steps=30)" },
  { "OneCycleLR_adam_linear_3phase", "Adam", function(o)
      return S.OneCycleLR(o, { 0.5, 0.2 }, { epochs = 5, steps_per_epoch = 7, anneal_strategy = "linear",
        three_phase = true, pct_start = 0.25, div_factor = 10, final_div_factor = 100 })
    end, "L.OneCycleLR(opt, [0.5, 0.2], epochs=5, steps_per_epoch=7, anneal_strategy='linear', three_phase=True, "
      .. "pct_start=0.25, div_factor=10., final_div_factor=100.)" },
  { "OneCycleLR_no_momentum", "SGD", function(o)
      return S.OneCycleLR(o, 1.0, { total_steps = 40, cycle_momentum = false, pct_start = 0.4 })
    end, "L.OneCycleLR(opt, 1.0, total_steps=40, cycle_momentum=False, pct_start=0.4)" },
  { "SequentialLR", "SGD", function(o)
      return S.SequentialLR(o, { S.LinearLR(o, { start_factor = 0.1, total_iters = 5 }), S.CosineAnnealingLR(o, 20) }, { 5 })
    end, "L.SequentialLR(opt, [L.LinearLR(opt, start_factor=0.1, total_iters=5), L.CosineAnnealingLR(opt, 20)], [5])" },
  { "SequentialLR_3", "SGD", function(o)
      return S.SequentialLR(o, { S.ConstantLR(o, { factor = 0.5, total_iters = 2 }), S.ExponentialLR(o, 0.8),
        S.StepLR(o, 4, { gamma = 0.5 }) }, { 3, 10 })
    end, "L.SequentialLR(opt, [L.ConstantLR(opt, factor=0.5, total_iters=2), L.ExponentialLR(opt, 0.8), "
      .. "L.StepLR(opt, 4, gamma=0.5)], [3, 10])" },
  { "ChainedScheduler", "SGD", function(o)
      return S.ChainedScheduler({ S.ConstantLR(o, { factor = 0.5, total_iters = 5 }), S.ExponentialLR(o, 0.9) })
    end, "L.ChainedScheduler([L.ConstantLR(opt, factor=0.5, total_iters=5), L.ExponentialLR(opt, 0.9)])" },
  { "ReduceLROnPlateau", "SGD", function(o)
      return S.ReduceLROnPlateau(o, { patience = 2, factor = 0.5, cooldown = 1, min_lr = { 0.01, 0.02 } })
    end, "L.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1, min_lr=[0.01, 0.02])", metrics = true },
  { "ReduceLROnPlateau_max_abs", "SGD", function(o)
      return S.ReduceLROnPlateau(o, { mode = "max", threshold_mode = "abs", threshold = 0.01, patience = 1 })
    end, "L.ReduceLROnPlateau(opt, mode='max', threshold_mode='abs', threshold=0.01, patience=1)", metrics = true },
  { "CosineAnnealingLR_resumed", "SGD", function(o)
      for _, g in ipairs(o.param_groups) do g.initial_lr = g.lr end
      return S.CosineAnnealingLR(o, 10, { last_epoch = 4 })
    end, "[g.setdefault('initial_lr', g['lr']) for g in opt.param_groups] and L.CosineAnnealingLR(opt, 10, last_epoch=4)" },
  { "ExponentialLR_resumed", "SGD", function(o)
      for _, g in ipairs(o.param_groups) do g.initial_lr = g.lr end
      return S.ExponentialLR(o, 0.9, { last_epoch = 3 })
    end, "[g.setdefault('initial_lr', g['lr']) for g in opt.param_groups] and L.ExponentialLR(opt, 0.9, last_epoch=3)" },
  { "LinearLR_resumed", "SGD", function(o)
      for _, g in ipairs(o.param_groups) do g.initial_lr = g.lr end
      return S.LinearLR(o, { start_factor = 0.5, total_iters = 6, last_epoch = 2 })
    end, "[g.setdefault('initial_lr', g['lr']) for g in opt.param_groups] and "
      .. "L.LinearLR(opt, start_factor=0.5, total_iters=6, last_epoch=2)" },
  { "MultiplicativeLR_resumed", "SGD", function(o)
      for _, g in ipairs(o.param_groups) do g.initial_lr = g.lr end
      return S.MultiplicativeLR(o, function(e) return 0.9 + 0.001 * e end, { last_epoch = 5 })
    end, "[g.setdefault('initial_lr', g['lr']) for g in opt.param_groups] and "
      .. "L.MultiplicativeLR(opt, lambda e: 0.9 + 0.001 * e, last_epoch=5)" },
}

-- Records, after construction and after each step, every group's lr and momentum (or beta1).
local function record(opt, sched, n, with_metrics)
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
  for t = 1, n do
    opt:step()
    if with_metrics then sched:step(METRICS[t]) else sched:step() end
    snap()
  end
  return out
end

local function reference()
  local lines = { "import warnings; warnings.simplefilter('ignore')", "L = torch.optim.lr_scheduler",
    "M = " .. approx.py(METRICS), "res = {}",
    "def run(opt, s, metrics):",
    "    out = []",
    "    def snap():",
    "        gs = opt.param_groups",
    "        out.append([[g['lr'] for g in gs], [g['betas'][0] if 'betas' in g else g['momentum'] for g in gs]])",
    "    snap()",
    "    for t in range(30):",
    "        opt.step()",
    "        s.step(M[t]) if metrics else s.step()",
    "        snap()",
    "    return out" }
  for _, c in ipairs(cases) do
    lines[#lines + 1] = ("opt = %s; res[%q] = run(opt, %s, %s)")
      :format(PY_OPT[c[2]], c[1], c[4], c.metrics and "True" or "False")
  end
  -- step(epoch) uses the closed forms
  lines[#lines + 1] = "opt = " .. PY_OPT.SGD
  lines[#lines + 1] = "out = []"
  lines[#lines + 1] = "for s in [L.StepLR(opt, 3, gamma=0.5), L.MultiStepLR(opt, [2, 6, 6], gamma=0.5), "
    .. "L.ExponentialLR(opt, 0.9), L.CosineAnnealingLR(opt, 8), L.LinearLR(opt, total_iters=4), L.ConstantLR(opt)]:"
  lines[#lines + 1] = "    for e in [5, 2, 9, 7, 3]: s.step(e); out.append(s.get_last_lr())"
  lines[#lines + 1] = "res['closed_form'] = out"
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

describe("optim.lr_scheduler", function()
  local ref
  setup(function() ref = reference() end)

  for _, c in ipairs(cases) do
    it("gives PyTorch's lr sequence: " .. c[1], function()
      local opt = new_opt(c[2])
      local sched = c[3](opt)
      approx.check(record(opt, sched, STEPS, c.metrics), ref[c[1]], TOL)
    end)
  end

  it("step(epoch) jumps with the closed forms", function()
    local opt = new_opt("SGD")
    local out = {}
    for _, s in ipairs({ S.StepLR(opt, 3, { gamma = 0.5 }), S.MultiStepLR(opt, { 2, 6, 6 }, { gamma = 0.5 }),
      S.ExponentialLR(opt, 0.9), S.CosineAnnealingLR(opt, 8), S.LinearLR(opt, { total_iters = 4 }), S.ConstantLR(opt) }) do
      for _, e in ipairs({ 5, 2, 9, 7, 3 }) do
        s:step(e)
        out[#out + 1] = s:get_last_lr()
      end
    end
    approx.check(out, ref.closed_form, TOL)
  end)

  -- Runs k steps, saves optimizer and scheduler, rebuilds both, loads, runs the rest.
  local function resumed(c, k)
    local opt = new_opt(c[2])
    local sched = c[3](opt)
    local first = record(opt, sched, k, c.metrics)
    local osd, ssd = opt:state_dict(), sched:state_dict()
    local opt2 = new_opt(c[2])
    local sched2 = c[3](opt2)
    opt2:load_state_dict(osd)
    sched2:load_state_dict(ssd)
    local out = {}
    for i = 1, k + 1 do out[i] = first[i] end
    local offset = k
    local rest = {}
    -- continue with the remaining metrics for ReduceLROnPlateau
    for t = k + 1, STEPS do
      opt2:step()
      if c.metrics then sched2:step(METRICS[t]) else sched2:step() end
      local lrs, moms = {}, {}
      for i, g in ipairs(opt2.param_groups) do lrs[i] = g.lr; moms[i] = g.betas and g.betas[1] or g.momentum end
      rest[#rest + 1] = { lrs, moms }
    end
    for _, r in ipairs(rest) do offset = offset + 1; out[offset + 1] = r end
    return out
  end

  it("state_dict round trips continue the same sequence", function()
    for _, name in ipairs({ "StepLR", "MultiStepLR", "CosineAnnealingLR", "OneCycleLR", "LinearLR",
      "OneCycleLR_adam_linear_3phase", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau", "LambdaLR" }) do
      for _, c in ipairs(cases) do
        if c[1] == name then
          local ok, err = pcall(approx.check, resumed(c, 11), ref[name], TOL)
          if not ok then error(name .. ": " .. err, 0) end
        end
      end
    end
  end)

  it("state_dict holds plain data with PyTorch's field names", function()
    local opt = new_opt("SGD")
    local s = S.MultiStepLR(opt, { 5, 12, 12 }, { gamma = 0.3 })
    local sd = s:state_dict()
    assert.is_nil(sd.optimizer)
    assert.same({ 0.1, 0.05 }, sd.base_lrs)
    assert.equals(0, sd.last_epoch)
    assert.same({ [5] = 1, [12] = 2 }, sd.milestones)
    assert.equals(1, sd._step_count)
    assert.is_false(sd._is_initial)
    assert.is_nil(sd.verbose)
    local None = require("torch.serialization").None
    local l = S.LambdaLR(opt, function() return 1 end):state_dict()
    assert.same({ None, None }, l.lr_lambdas)   -- PyTorch's [None, None]: functions are not saved
    -- a callable table's fields are saved and loaded back into it
    local fn = setmetatable({ k = 0.5 }, { __call = function(t, e) return t.k ^ e end })
    local lam = S.LambdaLR(opt, { fn, function() return 1 end })
    local lsd = lam:state_dict()
    assert.same({ { k = 0.5 }, None }, lsd.lr_lambdas)
    lsd.lr_lambdas[1].k = 0.25
    lam:load_state_dict(lsd)
    assert.equals(0.25, fn.k)
    assert.equals("function", type(lam.lr_lambdas[2]))
    local seq = S.SequentialLR(opt, { S.ExponentialLR(opt, 0.9), S.StepLR(opt, 2) }, { 3 }):state_dict()
    assert.equals(2, #seq._schedulers)
    assert.equals(0.9, seq._schedulers[1].gamma)
  end)

  it("OneCycleLR refuses to step past total_steps", function()
    local opt = new_opt("SGD")
    local s = S.OneCycleLR(opt, 0.5, { total_steps = 3 })
    for _ = 1, 3 do s:step() end
    local ok, err = pcall(s.step, s)
    assert.is_false(ok)
    assert.matches("OneCycleLR: tried to step 4 times. The specified number of total steps is 3", err, 1, true)
  end)

  it("reports misuse clearly", function()
    local opt = new_opt("SGD")
    local err = require("spec.support.errors").err
    assert.matches("lr_scheduler_spec.lua:%d+: StepLR: unexpected keyword argument 'gama' %(did you mean 'gamma'%?%)",
      err(function() S.StepLR(opt, 3, { gama = 0.5 }) end))
    assert.matches("lr_scheduler_spec.lua:%d+: StepLR: table is not an Optimizer", err(function() S.StepLR({}, 3) end))
    assert.matches("StepLR: step_size must be a positive integer, got 0", err(function() S.StepLR(opt, 0) end))
    assert.matches("lr_scheduler_spec.lua:%d+: CosineAnnealingLR: param 'initial_lr' is not specified in "
      .. "param_groups%[0%] when resuming",
      err(function() S.CosineAnnealingLR(new_opt("SGD"), 10, { last_epoch = 3 }) end))
    assert.matches("LinearLR: starting multiplicative factor expected to be greater than 0 and less or equal to 1, got 0",
      err(function() S.LinearLR(opt, { start_factor = 0 }) end))
    assert.matches("StepLR: unexpected keyword argument 'verbose'", err(function() S.StepLR(opt, 3, { verbose = true }) end))
    assert.matches("LambdaLR: expected a function or 2 functions", err(function() S.LambdaLR(opt, { function() end }) end))
    assert.matches("OneCycleLR: you must define either total_steps OR %(epochs AND steps_per_epoch%)",
      err(function() S.OneCycleLR(opt, 0.1) end))
    assert.matches("OneCycleLR: expected positive integer total_steps, but got 2.5",
      err(function() S.OneCycleLR(opt, 0.1, { total_steps = 2.5 }) end))
    assert.matches("OneCycleLR: expected 2 values for max_lr, got 3",
      err(function() S.OneCycleLR(opt, { 1, 2, 3 }, { total_steps = 5 }) end))
    assert.matches("OneCycleLR: optimizer must support momentum",
      err(function()
        S.OneCycleLR(optim.Adagrad({ torch.zeros(1, { requires_grad = true }) }), 0.1, { total_steps = 5 })
      end))
    assert.matches("SequentialLR: expects number of schedulers provided to be one more than the number of milestone points",
      err(function() S.SequentialLR(opt, { S.StepLR(opt, 2), S.StepLR(opt, 3) }, {}) end))
    assert.matches("SequentialLR: expects all schedulers to belong to the same optimizer",
      err(function() S.SequentialLR(opt, { S.StepLR(new_opt("SGD"), 2) }, {}) end))
    assert.matches("ReduceLROnPlateau: factor should be < 1.0", err(function() S.ReduceLROnPlateau(opt, { factor = 1 }) end))
    assert.matches("SequentialLR: does not support `ReduceLROnPlateau`",
      err(function() S.SequentialLR(opt, { S.ReduceLROnPlateau(opt) }, {}) end))
    assert.matches("ReduceLROnPlateau: mode avg is unknown!", err(function() S.ReduceLROnPlateau(opt, { mode = "avg" }) end))
    local r = S.ReduceLROnPlateau(opt)
    assert.matches("bad argument #1 to 'step' %(number or 0%-dim Tensor expected, got nil%)", err(function() r:step() end))
    r:step(torch.tensor(0.5, { dtype = torch.float32 }))
    assert.equals(0.5, r.best)
  end)

  it("loads at its first use, not with the optimizers (a script that trains without one keeps a smaller heap)", function()
    local bin = (arg and arg[-1]) or "build/ltorch"
    local script = [[
      local optim = require "torch.optim"
      local before = package.loaded["torch.optim.lr_scheduler"] ~= nil
      local S = optim.lr_scheduler
      print(before, package.loaded["torch.optim.lr_scheduler"] == S, rawget(optim, "lr_scheduler") == S,
        type(S.StepLR), optim.no_such_name)
    ]]
    local p = assert(io.popen(("%s -e %q 2>&1"):format(bin, script)))
    local out = p:read("*a")
    p:close()
    assert.equals("false\ttrue\ttrue\ttable\tnil\n", out)
  end)
end)
