--[[
  torch.optim.lr_scheduler — learning-rate schedules with PyTorch 2.11's names, arguments and
  arithmetic (https://pytorch.org/docs/2.11/optim.html#how-to-adjust-learning-rate): the same
  recursions in the same order, so the lr sequences equal PyTorch's.

      local sched = optim.lr_scheduler.StepLR(opt, 30, {gamma = 0.1})
      for epoch = 1, 100 do train_one_epoch(); sched:step() end
      print(sched:get_last_lr()[1])

  Arguments take PyTorch's names, order and defaults: positional, in a trailing keyword table, or
  mixed (StepLR(opt, 10, 0.5), StepLR(opt, {step_size = 10}), StepLR{optimizer = opt, step_size = 10}).
  Every scheduler has step(), get_last_lr() (one lr per group), state_dict(), load_state_dict()
  and takes {last_epoch = -1} (PyTorch 2.11 has no `verbose`).
    LambdaLR(opt, fn or {fn per group})       lr = initial_lr * fn(epoch)
    MultiplicativeLR(opt, fn or {fn...})      lr = lr * fn(epoch) from epoch 1
    StepLR(opt, step_size, {gamma = 0.1})     lr = initial_lr * gamma ^ floor(epoch / step_size)
    MultiStepLR(opt, milestones, {gamma = 0.1})    gamma once at each milestone
    ConstantLR(opt, {factor = 1/3, total_iters = 5})
    LinearLR(opt, {start_factor = 1/3, end_factor = 1, total_iters = 5})
    ExponentialLR(opt, gamma)                 lr = initial_lr * gamma ^ epoch
    CosineAnnealingLR(opt, T_max, {eta_min = 0})
    PolynomialLR(opt, {total_iters = 5, power = 1.0})
                                              lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ^ power
    OneCycleLR, CyclicLR, CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler,
    ReduceLROnPlateau: see lr_one_cycle.lua, lr_cyclic.lua, lr_sequential.lua, lr_plateau.lua.
  LambdaLR/MultiplicativeLR state_dicts hold lr_lambdas = one entry per group, as PyTorch's: None
  (torch.serialization.None) for a function, a copy of the fields of a callable table.
]]
local B = require "torch.optim.lr_scheduler_base"
local None = require "torch.serialization.none"
local P = require "torch._pysig"

local LRScheduler, options = B.LRScheduler, B.options

local M = { LRScheduler = LRScheduler }

local function group_lrs(self, f)
  local out = {}
  for i, group in ipairs(self.optimizer.param_groups) do out[i] = f(group.lr, self.base_lrs[i], i) end
  return out
end

local function opts_with(name, opts, extra)
  local d = { last_epoch = -1 }
  for k, v in pairs(extra or {}) do d[k] = v end
  return options(name, opts, d)
end

---------------------------------------------------------------- LambdaLR, MultiplicativeLR
local function lambdas(name, optimizer, fn)
  LRScheduler.check_optimizer(name, optimizer)
  local n = #optimizer.param_groups
  if type(fn) == "function" then
    local list = {}
    for i = 1, n do list[i] = fn end
    return list
  end
  if type(fn) ~= "table" or #fn ~= n then
    error(("%s: expected a function or %d functions (one per group)"):format(name, n), 4)
  end
  for i = 1, n do
    local f, mt = fn[i], getmetatable(fn[i])
    if type(f) ~= "function" and not (type(f) == "table" and mt and mt.__call) then
      error(("%s: lr_lambda should be a function, but got %s"):format(name, type(f)), 4)
    end
  end
  return { unpack(fn) }
end

-- PyTorch's layout: lr_lambdas[i] is None for a function, the fields of a callable object.
local function lambdas_state_dict(self)
  local sd = LRScheduler.state_dict(self)
  sd.lr_lambdas = {}
  for i, fn in ipairs(self.lr_lambdas) do sd.lr_lambdas[i] = type(fn) == "table" and B.copy(fn) or None end
  return sd
end

-- The functions stay; a callable table gets its saved fields back.
local function lambdas_load_state_dict(self, sd)
  local saved = type(sd) == "table" and sd.lr_lambdas or nil
  local rest = sd
  if saved ~= nil then
    rest = {}
    for k, v in pairs(sd) do if k ~= "lr_lambdas" then rest[k] = v end end
  end
  LRScheduler.load_state_dict(self, rest)
  for i, fields in ipairs(saved or {}) do
    local fn = self.lr_lambdas[i]
    if type(fields) == "table" and fields ~= None and type(fn) == "table" then
      for k, v in pairs(fields) do fn[k] = B.copy(v) end
    end
  end
end

local LambdaLR = LRScheduler:extend("LambdaLR")
M.LambdaLR = LambdaLR
function LambdaLR:__init(optimizer, lr_lambda, opts)
  local o = opts_with("LambdaLR", opts)
  self.lr_lambdas = lambdas("LambdaLR", optimizer, lr_lambda)
  self:init(optimizer, o.last_epoch)
end
function LambdaLR:get_lr()
  return group_lrs(self, function(_, base_lr, i) return base_lr * self.lr_lambdas[i](self.last_epoch) end)
end
LambdaLR.state_dict, LambdaLR.load_state_dict = lambdas_state_dict, lambdas_load_state_dict

local MultiplicativeLR = LRScheduler:extend("MultiplicativeLR")
M.MultiplicativeLR = MultiplicativeLR
function MultiplicativeLR:__init(optimizer, lr_lambda, opts)
  local o = opts_with("MultiplicativeLR", opts)
  self.lr_lambdas = lambdas("MultiplicativeLR", optimizer, lr_lambda)
  self:init(optimizer, o.last_epoch)
end
function MultiplicativeLR:get_lr()
  if not self._is_initial then
    return group_lrs(self, function(lr, _, i) return lr * self.lr_lambdas[i](self.last_epoch) end)
  end
  return self:current_lrs()
end
MultiplicativeLR.state_dict, MultiplicativeLR.load_state_dict = lambdas_state_dict, lambdas_load_state_dict

---------------------------------------------------------------- StepLR, MultiStepLR
local StepLR = LRScheduler:extend("StepLR")
M.StepLR = StepLR
function StepLR:__init(optimizer, step_size, opts)
  local o = opts_with("StepLR", opts, { gamma = 0.1 })
  LRScheduler.check_optimizer("StepLR", optimizer)
  if type(step_size) ~= "number" or step_size < 1 or step_size % 1 ~= 0 then
    error("StepLR: step_size must be a positive integer, got " .. tostring(step_size), 3)
  end
  self.step_size, self.gamma = step_size, o.gamma
  self:init(optimizer, o.last_epoch)
end
function StepLR:get_lr()
  if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return self:current_lrs() end
  return group_lrs(self, function(lr) return lr * self.gamma end)
end
function StepLR:closed_form()
  local k = math.floor(self.last_epoch / self.step_size)
  return group_lrs(self, function(_, base_lr) return base_lr * self.gamma ^ k end)
end

-- milestones are kept as {[epoch] = count}, PyTorch's Counter.
local MultiStepLR = LRScheduler:extend("MultiStepLR")
M.MultiStepLR = MultiStepLR
function MultiStepLR:__init(optimizer, milestones, opts)
  local o = opts_with("MultiStepLR", opts, { gamma = 0.1 })
  LRScheduler.check_optimizer("MultiStepLR", optimizer)
  if type(milestones) ~= "table" then
    error("MultiStepLR: milestones must be an array of epochs, got " .. type(milestones), 3)
  end
  self.milestones = {}
  for _, m in ipairs(milestones) do self.milestones[m] = (self.milestones[m] or 0) + 1 end
  self.gamma = o.gamma
  self:init(optimizer, o.last_epoch)
end
function MultiStepLR:get_lr()
  local count = self.milestones[self.last_epoch]
  if count == nil then return self:current_lrs() end
  return group_lrs(self, function(lr) return lr * self.gamma ^ count end)
end
function MultiStepLR:closed_form()
  local passed = 0   -- bisect_right(sorted milestones, last_epoch)
  for m, count in pairs(self.milestones) do
    if m <= self.last_epoch then passed = passed + count end
  end
  return group_lrs(self, function(_, base_lr) return base_lr * self.gamma ^ passed end)
end

---------------------------------------------------------------- ConstantLR, LinearLR
local function factor_in_range(name, what, v)
  if type(v) ~= "number" or v > 1 or v < 0 then
    error(("%s: %s expected to be between 0 and 1, got %s"):format(name, what, tostring(v)), 4)
  end
end

local ConstantLR = LRScheduler:extend("ConstantLR")
M.ConstantLR = ConstantLR
function ConstantLR:__init(optimizer, opts)
  local o = opts_with("ConstantLR", opts, { factor = 1 / 3, total_iters = 5 })
  LRScheduler.check_optimizer("ConstantLR", optimizer)
  factor_in_range("ConstantLR", "constant multiplicative factor", o.factor)
  self.factor, self.total_iters = o.factor, o.total_iters
  self:init(optimizer, o.last_epoch)
end
function ConstantLR:get_lr()
  if self.last_epoch == 0 then return group_lrs(self, function(lr) return lr * self.factor end) end
  if self.last_epoch ~= self.total_iters then return self:current_lrs() end
  return group_lrs(self, function(lr) return lr * (1.0 / self.factor) end)
end
function ConstantLR:closed_form()
  local reached = self.last_epoch >= self.total_iters and 1 or 0
  return group_lrs(self, function(_, base_lr) return base_lr * (self.factor + reached * (1 - self.factor)) end)
end

local LinearLR = LRScheduler:extend("LinearLR")
M.LinearLR = LinearLR
function LinearLR:__init(optimizer, opts)
  local o = opts_with("LinearLR", opts, { start_factor = 1 / 3, end_factor = 1.0, total_iters = 5 })
  LRScheduler.check_optimizer("LinearLR", optimizer)
  if type(o.start_factor) ~= "number" or o.start_factor > 1 or o.start_factor <= 0 then
    error("LinearLR: starting multiplicative factor expected to be greater than 0 and less or equal to 1, got "
      .. tostring(o.start_factor), 3)
  end
  factor_in_range("LinearLR", "ending multiplicative factor", o.end_factor)
  self.start_factor, self.end_factor, self.total_iters = o.start_factor, o.end_factor, o.total_iters
  self:init(optimizer, o.last_epoch)
end
function LinearLR:get_lr()
  local e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
  if e == 0 then return group_lrs(self, function(lr) return lr * s end) end
  if self._is_initial or e > n then return self:current_lrs() end
  return group_lrs(self, function(lr) return lr * (1. + (f - s) / (n * s + (e - 1) * (f - s))) end)
end
function LinearLR:closed_form()
  local e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
  return group_lrs(self, function(_, base_lr) return base_lr * (s + (f - s) * math.min(n, e) / n) end)
end

---------------------------------------------------------------- ExponentialLR, CosineAnnealingLR
local ExponentialLR = LRScheduler:extend("ExponentialLR")
M.ExponentialLR = ExponentialLR
function ExponentialLR:__init(optimizer, gamma, opts)
  local o = opts_with("ExponentialLR", opts)
  LRScheduler.check_optimizer("ExponentialLR", optimizer)
  if type(gamma) ~= "number" then error("ExponentialLR: gamma must be a number, got " .. type(gamma), 3) end
  self.gamma = gamma
  self:init(optimizer, o.last_epoch)
end
function ExponentialLR:get_lr()
  if self._is_initial then return self:current_lrs() end
  return group_lrs(self, function(lr) return lr * self.gamma end)
end
function ExponentialLR:closed_form()
  return group_lrs(self, function(_, base_lr) return base_lr * self.gamma ^ self.last_epoch end)
end

local CosineAnnealingLR = LRScheduler:extend("CosineAnnealingLR")
M.CosineAnnealingLR = CosineAnnealingLR
function CosineAnnealingLR:__init(optimizer, T_max, opts)
  local o = opts_with("CosineAnnealingLR", opts, { eta_min = 0 })
  LRScheduler.check_optimizer("CosineAnnealingLR", optimizer)
  if type(T_max) ~= "number" or T_max <= 0 then
    error("CosineAnnealingLR: T_max must be a positive number, got " .. tostring(T_max), 3)
  end
  self.T_max, self.eta_min = T_max, o.eta_min
  self:init(optimizer, o.last_epoch)
end
-- PyTorch's recursive form: each lr follows from the previous one (so it composes with other
-- schedulers). Construction keeps the current lrs, also when resuming with last_epoch.
function CosineAnnealingLR:get_lr()
  local e, T, eta_min, pi, cos = self.last_epoch, self.T_max, self.eta_min, math.pi, math.cos
  if self._is_initial then return self:current_lrs() end
  if self._step_count == 1 and e > 0 then
    return group_lrs(self, function(_, base_lr) return eta_min + (base_lr - eta_min) * (1 + cos(e * pi / T)) / 2 end)
  end
  if (e - 1 - T) % (2 * T) == 0 then
    return group_lrs(self, function(lr, base_lr) return lr + (base_lr - eta_min) * (1 - cos(pi / T)) / 2 end)
  end
  return group_lrs(self, function(lr)
    return (1 + cos(pi * e / T)) / (1 + cos(pi * (e - 1) / T)) * (lr - eta_min) + eta_min
  end)
end
function CosineAnnealingLR:closed_form()
  local e, T, eta_min = self.last_epoch, self.T_max, self.eta_min
  return group_lrs(self, function(_, base_lr)
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * e / T)) / 2
  end)
end

---------------------------------------------------------------- PolynomialLR
local PolynomialLR = LRScheduler:extend("PolynomialLR")
M.PolynomialLR = PolynomialLR
function PolynomialLR:__init(optimizer, opts)
  local o = opts_with("PolynomialLR", opts, { total_iters = 5, power = 1.0 })
  LRScheduler.check_optimizer("PolynomialLR", optimizer)
  if type(o.total_iters) ~= "number" or type(o.power) ~= "number" then
    P.fail("PolynomialLR: total_iters and power must be numbers, got %s and %s", type(o.total_iters), type(o.power))
  end
  self.total_iters, self.power = o.total_iters, o.power
  self:init(optimizer, o.last_epoch)
end
-- PyTorch's recursive form: each lr is the previous one times the ratio of successive factors.
function PolynomialLR:get_lr()
  local e, n = self.last_epoch, self.total_iters
  if self._is_initial or e > n then return self:current_lrs() end
  local decay = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ^ self.power
  return group_lrs(self, function(lr) return lr * decay end)
end
function PolynomialLR:closed_form()
  local e, n = self.last_epoch, self.total_iters
  return group_lrs(self, function(_, base_lr) return base_lr * (1.0 - math.min(n, e) / n) ^ self.power end)
end

---------------------------------------------------------------- the rest of the family
for _, name in ipairs({ "torch.optim.lr_one_cycle", "torch.optim.lr_cyclic", "torch.optim.lr_sequential",
  "torch.optim.lr_plateau" }) do
  for k, v in pairs(require(name)) do M[k] = v end
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
P.init(M.LambdaLR, "optimizer, lr_lambda, last_epoch=-1")
P.init(M.MultiplicativeLR, "optimizer, lr_lambda, last_epoch=-1")
P.init(M.StepLR, "optimizer, step_size, gamma=0.1, last_epoch=-1")
P.init(M.MultiStepLR, "optimizer, milestones, gamma=0.1, last_epoch=-1")
P.init(M.ConstantLR, "optimizer, factor=0.3333333333333333, total_iters=5, last_epoch=-1")
P.init(M.LinearLR, "optimizer, start_factor=0.3333333333333333, end_factor=1.0, total_iters=5, last_epoch=-1")
P.init(M.ExponentialLR, "optimizer, gamma, last_epoch=-1")
P.init(M.CosineAnnealingLR, "optimizer, T_max, eta_min=0.0, last_epoch=-1")
P.init(M.PolynomialLR, "optimizer, total_iters=5, power=1.0, last_epoch=-1")

return M
