--[[
  torch.optim.lr_one_cycle — OneCycleLR, the 1cycle policy (Smith & Topin 2017) as PyTorch 2.11's
  torch.optim.lr_scheduler.OneCycleLR
  (https://pytorch.org/docs/2.11/generated/torch.optim.lr_scheduler.OneCycleLR.html).

      local sched = optim.lr_scheduler.OneCycleLR(opt, 0.1, {total_steps = 1000})
      -- or {epochs = 10, steps_per_epoch = #loader}; call sched:step() after every batch

  The lr rises from max_lr / div_factor to max_lr over the first pct_start of the steps, then
  anneals to initial_lr / final_div_factor (three_phase: up, back down to initial_lr, then to
  the minimum). With cycle_momentum, momentum (SGD, RMSprop) or beta1 (Adam, AdamW) moves the
  opposite way between max_momentum and base_momentum. Options: total_steps, epochs,
  steps_per_epoch, pct_start = 0.3, anneal_strategy = "cos" | "linear", cycle_momentum = true,
  base_momentum = 0.85, max_momentum = 0.95, div_factor = 25, final_div_factor = 1e4,
  three_phase = false, last_epoch = -1. max_lr, base_momentum and max_momentum
  also take one value per group. Stepping past total_steps is an error.
]]
local B = require "torch.optim.lr_scheduler_base"
local P = require "torch._pysig"

local M = {}

local OneCycleLR = B.LRScheduler:extend("OneCycleLR")
M.OneCycleLR = OneCycleLR

local anneal = {
  -- Cosine anneal from start to end as pct goes from 0 to 1.
  cos = function(start, stop, pct) return stop + (start - stop) / 2.0 * (math.cos(math.pi * pct) + 1) end,
  linear = function(start, stop, pct) return (stop - start) * pct + start end,
}

local function positive_int(v) return type(v) == "number" and v > 0 and v % 1 == 0 end

local function phases(total, pct, three)
  if three then
    return {
      { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
        start_momentum = "max_momentum", end_momentum = "base_momentum" },
      { end_step = 2 * pct * total - 2, start_lr = "max_lr", end_lr = "initial_lr",
        start_momentum = "base_momentum", end_momentum = "max_momentum" },
      { end_step = total - 1, start_lr = "initial_lr", end_lr = "min_lr",
        start_momentum = "max_momentum", end_momentum = "max_momentum" },
    }
  end
  return {
    { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
      start_momentum = "max_momentum", end_momentum = "base_momentum" },
    { end_step = total - 1, start_lr = "max_lr", end_lr = "min_lr",
      start_momentum = "base_momentum", end_momentum = "max_momentum" },
  }
end

function OneCycleLR:__init(optimizer, max_lr, opts)
  local o = B.options("OneCycleLR", opts, { total_steps = false, epochs = false, steps_per_epoch = false,
    pct_start = 0.3, anneal_strategy = "cos", cycle_momentum = true, base_momentum = 0.85, max_momentum = 0.95,
    div_factor = 25., final_div_factor = 1e4, three_phase = false, last_epoch = -1 })
  B.LRScheduler.check_optimizer("OneCycleLR", optimizer)
  local function bad(msg) error("OneCycleLR: " .. msg, 4) end
  if o.total_steps then
    if not positive_int(o.total_steps) then
      bad("expected positive integer total_steps, but got " .. tostring(o.total_steps))
    end
    self.total_steps = o.total_steps
  elseif o.epochs and o.steps_per_epoch then
    if not positive_int(o.epochs) then bad("expected positive integer epochs, but got " .. tostring(o.epochs)) end
    if not positive_int(o.steps_per_epoch) then
      bad("expected positive integer steps_per_epoch, but got " .. tostring(o.steps_per_epoch))
    end
    self.total_steps = o.epochs * o.steps_per_epoch
  else
    bad("you must define either total_steps OR (epochs AND steps_per_epoch)")
  end
  if type(o.pct_start) ~= "number" or o.pct_start < 0 or o.pct_start > 1 then
    bad("expected float between 0 and 1 pct_start, but got " .. tostring(o.pct_start))
  end
  if anneal[o.anneal_strategy] == nil then
    bad("anneal_strategy must be one of 'cos' or 'linear', instead got " .. tostring(o.anneal_strategy))
  end
  self._schedule_phases = phases(self.total_steps, o.pct_start, o.three_phase)
  self._anneal_func_type = o.anneal_strategy
  local max_lrs = B.per_group("OneCycleLR", "max_lr", optimizer, max_lr)
  if o.last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do
      group.initial_lr = max_lrs[i] / o.div_factor
      group.max_lr = max_lrs[i]
      group.min_lr = group.initial_lr / o.final_div_factor
    end
  end
  self.cycle_momentum = o.cycle_momentum
  if o.cycle_momentum then
    local d = optimizer.defaults
    if d.momentum == nil and d.betas == nil then
      bad("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    end
    self.use_beta1 = d.betas ~= nil
    local maxes = B.per_group("OneCycleLR", "max_momentum", optimizer, o.max_momentum)
    local bases = B.per_group("OneCycleLR", "base_momentum", optimizer, o.base_momentum)
    if o.last_epoch == -1 then
      for i, group in ipairs(optimizer.param_groups) do
        if self.use_beta1 then group.betas = { maxes[i], group.betas[2] } else group.momentum = maxes[i] end
        group.max_momentum, group.base_momentum = maxes[i], bases[i]
      end
    end
  end
  self:init(optimizer, o.last_epoch)
end

function OneCycleLR:get_lr()
  local step_num = self.last_epoch
  if step_num > self.total_steps then
    error(("OneCycleLR: tried to step %d times. The specified number of total steps is %d")
      :format(step_num, self.total_steps), 3)
  end
  local f = anneal[self._anneal_func_type]
  local lrs, phases_ = {}, self._schedule_phases
  for gi, group in ipairs(self.optimizer.param_groups) do
    local start_step, lr, momentum = 0, nil, nil
    for i, phase in ipairs(phases_) do
      local end_step = phase.end_step
      if step_num <= end_step or i == #phases_ then
        local pct = (step_num - start_step) / (end_step - start_step)
        lr = f(group[phase.start_lr], group[phase.end_lr], pct)
        if self.cycle_momentum then momentum = f(group[phase.start_momentum], group[phase.end_momentum], pct) end
        break
      end
      start_step = phase.end_step
    end
    lrs[gi] = lr
    if self.cycle_momentum then
      if self.use_beta1 then group.betas = { momentum, group.betas[2] } else group.momentum = momentum end
    end
  end
  return lrs
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
P.init(M.OneCycleLR, "optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, "
  .. "pct_start=0.3, anneal_strategy='cos', cycle_momentum=True, base_momentum=0.85, "
  .. "max_momentum=0.95, div_factor=25.0, final_div_factor=10000.0, three_phase=False, "
  .. "last_epoch=-1")

return M
