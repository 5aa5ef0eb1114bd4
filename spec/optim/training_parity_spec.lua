--[[
  spec/optim/training_parity_spec.lua — whole training runs in ltorch and in PyTorch 2.11 from the
  same initial weights on the same batches give the same per-step losses (the optimizers'
  done-means check).

  Runs (20 steps each, cross_entropy, train mode):
    MLP  nn.Sequential(Linear(20, 32), ReLU, Linear(32, 5)), batches of 16:
         SGD(lr 0.1, momentum 0.9) and AdamW(lr 0.01, weight_decay 0.01)
    CNN  nn.Sequential(Conv2d(1, 4, 3, padding 1), BatchNorm2d(4), ReLU, MaxPool2d(2), Flatten,
         Linear(64, 5)) on 8x8 images, batches of 8: SGD(lr 0.05, momentum 0.9, nesterov,
         weight_decay 1e-4) and AdamW(lr 0.01) with CosineAnnealingLR(T_max 20)
  The initial state_dict and the batches are made in ltorch and sent to PyTorch as literals
  (float32 values written exactly); PyTorch runs its optimizers with foreach=False. One
  python run computes all four references.

  Tolerance: per-step losses atol 1e-5 (the done-means bar; observed: bitwise equal, as the
  same libtorch runs the same kernels); final state_dict (weights, BatchNorm running stats)
  atol 1e-5 + rtol 1e-5.

  Run:  build/ltorch /usr/bin/busted spec/optim/training_parity_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional
local optim = torch.optim
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local STEPS = 20
local LOSS_TOL = 1e-5
local STATE_TOL = { atol = 1e-5, rtol = 1e-5 }

local models = {
  mlp = {
    build = function() return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)) end,
    py = "nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))",
    -- labels from a fixed random linear teacher, so there is something to learn
    batch = function(teacher)
      local x = torch.randn(16, 20)
      return x, x:matmul(teacher):argmax(1)
    end,
    inputs = 20,
  },
  cnn = {
    build = function()
      return nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64, 5))
    end,
    py = "nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), "
      .. "nn.Linear(64, 5))",
    batch = function(teacher)
      local x = torch.randn(8, 1, 8, 8)
      return x, x:view(8, 64):matmul(teacher):argmax(1)
    end,
    inputs = 64,
  },
}

local runs = {
  { name = "mlp_sgd_momentum", model = "mlp",
    opt = function(p) return optim.SGD(p, { lr = 0.1, momentum = 0.9 }) end,
    py = "torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=False)" },
  { name = "mlp_adamw", model = "mlp",
    opt = function(p) return optim.AdamW(p, { lr = 0.01, weight_decay = 0.01 }) end,
    py = "torch.optim.AdamW(params, lr=0.01, weight_decay=0.01, foreach=False)" },
  { name = "cnn_sgd_nesterov", model = "cnn",
    opt = function(p) return optim.SGD(p, { lr = 0.05, momentum = 0.9, nesterov = true, weight_decay = 1e-4 }) end,
    py = "torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4, foreach=False)" },
  { name = "cnn_adamw_cosine", model = "cnn",
    opt = function(p) return optim.AdamW(p, { lr = 0.01 }) end,
    py = "torch.optim.AdamW(params, lr=0.01, foreach=False)",
    sched = function(o) return optim.lr_scheduler.CosineAnnealingLR(o, STEPS) end,
    py_sched = "torch.optim.lr_scheduler.CosineAnnealingLR(opt, 20)" },
}

-- Initial weights and batches per run, from fixed seeds.
local function setup_run(run, seed)
  local m = models[run.model]
  torch.manual_seed(seed)
  run.init = m.build():state_dict()
  local teacher = torch.randn(m.inputs, 5)
  run.xs, run.ys = {}, {}
  for t = 1, STEPS do run.xs[t], run.ys[t] = m.batch(teacher) end
end

local function plain(sd)
  local out = {}
  for k, v in pairs(sd) do out[k] = v:tolist() end
  return out
end

local function py_dict(sd)
  local parts = {}
  for k, v in pairs(sd) do
    local dtype = v:is_floating_point() and "torch.float32" or "torch.int64"
    parts[#parts + 1] = ("%q: torch.tensor(%s, dtype=%s)"):format(k, py(v:tolist()), dtype)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function py_list(ts, dtype)
  local parts = {}
  for i, t in ipairs(ts) do parts[i] = py(t:tolist()) end
  return ("torch.tensor([%s], dtype=%s)"):format(table.concat(parts, ", "), dtype)
end

local PRELUDE = [==[
import torch.nn as nn, torch.nn.functional as F
def train(net, init, make_opt, make_sched, xs, ys):
    net.load_state_dict(init)
    params = list(net.parameters())
    opt = make_opt(params)
    sched = make_sched(opt) if make_sched else None
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        if sched: sched.step()
        losses.append(loss.item())
    return dict(losses=losses, state={k: v.tolist() for k, v in net.state_dict().items()})
res = {}
]==]

local function reference()
  local lines = { PRELUDE }
  for _, r in ipairs(runs) do
    lines[#lines + 1] = ("res[%q] = train(%s, %s, lambda params: %s, %s, %s, %s)"):format(r.name, models[r.model].py,
      py_dict(r.init), r.py, r.py_sched and ("lambda opt: " .. r.py_sched) or "None",
      py_list(r.xs, "torch.float32"), py_list(r.ys, "torch.int64"))
  end
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

local function train(run)
  local net = models[run.model].build()
  net:load_state_dict(run.init)
  local opt = run.opt(net:parameters())
  local sched = run.sched and run.sched(opt)
  local losses = {}
  for t = 1, STEPS do
    opt:zero_grad()
    local loss = F.cross_entropy(net(run.xs[t]), run.ys[t])
    loss:backward()
    opt:step()
    if sched then sched:step() end
    losses[t] = loss:item()
  end
  return losses, plain(net:state_dict())
end

describe("training parity with PyTorch", function()
  local ref
  setup(function()
    for i, r in ipairs(runs) do setup_run(r, 100 + i) end
    ref = reference()
  end)

  for _, r in ipairs(runs) do
    it("gives the same per-step losses and final weights: " .. r.name, function()
      local losses, state = train(r)
      approx.check(losses, ref[r.name].losses, LOSS_TOL)
      for k, v in pairs(ref[r.name].state) do
        local ok, err = pcall(approx.check, state[k], v, STATE_TOL)
        if not ok then error(k .. ": " .. err, 0) end
      end
      -- the run learned something
      local first, last = 0, 0
      for t = 1, 5 do first, last = first + losses[t], last + losses[STEPS + 1 - t] end
      assert.is_true(last < first, ("mean loss of the last 5 steps %.4f, of the first 5 %.4f"):format(last / 5, first / 5))
    end)
  end
end)
