--[[
  torch.optim.lr_sequential — schedulers made of schedulers, as PyTorch 2.11's SequentialLR and
  ChainedScheduler (https://pytorch.org/docs/2.11/generated/torch.optim.lr_scheduler.SequentialLR.html).

      local warmup = lr_scheduler.LinearLR(opt, {start_factor = 0.1, total_iters = 5})
      local decay = lr_scheduler.CosineAnnealingLR(opt, 95)
      local sched = lr_scheduler.SequentialLR(opt, {warmup, decay}, {5})   -- warmup, then decay

  SequentialLR(opt, schedulers, milestones): scheduler i runs from milestone i-1 on; at each
  milestone the next one restarts from epoch 0 (its lr update without counting a step).
  ChainedScheduler(schedulers, optimizer = nil) steps them all, each scaling what the previous
  one set. state_dict() nests each scheduler's state_dict.
]]
local B = require "torch.optim.lr_scheduler_base"
local ReduceLROnPlateau = require("torch.optim.lr_plateau").ReduceLROnPlateau
local P = require "torch._pysig"

local M = {}

---------------------------------------------------------------- SequentialLR
local SequentialLR = B.LRScheduler:extend("SequentialLR")
M.SequentialLR = SequentialLR

-- PyTorch's recursive_undo: one epoch back for every scheduler inside s.
local function undo(s)
  if s._schedulers ~= nil then
    for _, inner in ipairs(s._schedulers) do undo(inner) end
  elseif s.last_epoch ~= nil then
    s.last_epoch = s.last_epoch - 1
  end
end

function SequentialLR:__init(optimizer, schedulers, milestones, opts)
  local o = B.options("SequentialLR", opts, { last_epoch = -1 })
  B.LRScheduler.check_optimizer("SequentialLR", optimizer)
  if type(schedulers) ~= "table" or #schedulers == 0 then
    error("SequentialLR: expected a non-empty array of schedulers", 3)
  end
  for i, s in ipairs(schedulers) do
    if getmetatable(s) == ReduceLROnPlateau then
      error(("SequentialLR: does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
        .. "specified when calling `step`, but got one at index %d in the given schedulers sequence"):format(i - 1), 3)
    end
    if type(s) ~= "table" or s.optimizer ~= optimizer then
      error(("SequentialLR: expects all schedulers to belong to the same optimizer, but got scheduler at index %d "
        .. "to be different than the optimizer passed in"):format(i - 1), 3)
    end
  end
  if type(milestones) ~= "table" or #milestones ~= #schedulers - 1 then
    error(("SequentialLR: expects number of schedulers provided to be one more than the number of milestone "
      .. "points, but got number of schedulers %d and the number of milestones to be equal to %s")
      :format(#schedulers, type(milestones) == "table" and tostring(#milestones) or type(milestones)), 3)
  end
  self._schedulers = { unpack(schedulers) }
  self._milestones = { unpack(milestones) }
  self.last_epoch = o.last_epoch + 1
  self.optimizer = optimizer
  -- Reset the learning rates and undo the step each scheduler (nested ones too) took when it
  -- was built; then only the first one takes its initial step.
  for _, group in ipairs(optimizer.param_groups) do group.lr = group.initial_lr end
  undo(self)
  self._schedulers[1]:_initial_step()
  self._last_lr = self._schedulers[1]:get_last_lr()
end

function SequentialLR:step()
  self.last_epoch = self.last_epoch + 1
  local idx = 0   -- bisect_right(milestones, last_epoch)
  for _, m in ipairs(self._milestones) do if m <= self.last_epoch then idx = idx + 1 end end
  local s = self._schedulers[idx + 1]
  if idx > 0 and self._milestones[idx] == self.last_epoch then s:_update_lr(0) else s:step() end
  self._last_lr = s:get_last_lr()
end

local function nested_state(self)
  local sd = {}
  for k, v in pairs(self) do
    if k ~= "optimizer" and k ~= "_schedulers" and type(v) ~= "function" then sd[k] = B.copy(v) end
  end
  sd._schedulers = {}
  for i, s in ipairs(self._schedulers) do sd._schedulers[i] = s:state_dict() end
  return sd
end

local function load_nested(self, sd)
  if type(sd) ~= "table" then error(self.__name .. ": load_state_dict expects a table, got " .. type(sd), 2) end
  for k, v in pairs(sd) do
    if k ~= "_schedulers" and k ~= "optimizer" then self[k] = B.copy(v) end
  end
  for i, s in ipairs(sd._schedulers or {}) do self._schedulers[i]:load_state_dict(s) end
end

SequentialLR.state_dict, SequentialLR.load_state_dict = nested_state, load_nested

---------------------------------------------------------------- ChainedScheduler
local ChainedScheduler = B.LRScheduler:extend("ChainedScheduler")
M.ChainedScheduler = ChainedScheduler

function ChainedScheduler:__init(schedulers, optimizer)
  if type(schedulers) ~= "table" or #schedulers == 0 then
    error("ChainedScheduler: expects at least one scheduler to be chained, but got no scheduler", 3)
  end
  optimizer = optimizer or schedulers[1].optimizer
  for i, s in ipairs(schedulers) do
    if getmetatable(s) == ReduceLROnPlateau then
      error(("ChainedScheduler: does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
        .. "specified when calling `step`, but got one at index %d in the given schedulers sequence"):format(i - 1), 3)
    end
    if type(s) ~= "table" or s.optimizer ~= optimizer then
      error(("ChainedScheduler: expects all schedulers to belong to the same optimizer, but got scheduler at "
        .. "index %d to be different than the optimizer passed in"):format(i - 1), 3)
    end
  end
  self._schedulers = { unpack(schedulers) }
  self.optimizer = optimizer
  self._last_lr = self:current_lrs()
end

function ChainedScheduler:step()
  for _, s in ipairs(self._schedulers) do s:step() end
  self._last_lr = self:current_lrs()
end

ChainedScheduler.state_dict, ChainedScheduler.load_state_dict = nested_state, load_nested

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
P.init(M.SequentialLR, "optimizer, schedulers, milestones, last_epoch=-1")
P.init(M.ChainedScheduler, "schedulers, optimizer=None", "all")

return M
