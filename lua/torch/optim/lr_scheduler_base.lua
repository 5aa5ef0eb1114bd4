--[[
  torch.optim.lr_scheduler_base — what every learning-rate scheduler shares, after PyTorch 2.11's
  LRScheduler: it remembers each group's initial_lr (base_lrs), counts epochs in last_epoch
  (-1 before the first step; construction takes one step, to epoch 0, or to last_epoch + 1 when
  resuming) and on each step() writes get_lr()'s values into the optimizer's param_groups.

  The step taken at construction runs with self._is_initial = true; the recursive schedules
  (MultiplicativeLR, LinearLR, ExponentialLR, CosineAnnealingLR) then keep the current lrs, so
  building a scheduler with last_epoch = k leaves the lrs the checkpoint restored.

  A scheduler class: Base:extend(name); its __init sets its own fields, then calls
  Base.init(self, optimizer, last_epoch); it defines get_lr() (PyTorch's chainable form, reading
  each group's current lr) and, where PyTorch has one, closed_form() (used by step(epoch)).
  state_dict() holds every field except the optimizer and functions, as PyTorch's __dict__.

  Usage: internal to lua/torch/optim/lr_*.lua; users reach the classes through
  torch.optim.lr_scheduler.
]]
local base = require "torch.optim.optimizer"

local M = {}

function M.is_optimizer(o)
  if type(o) ~= "table" then return false end
  local mt = getmetatable(o)
  while mt ~= nil do
    if mt == base.Optimizer then return true end
    mt = rawget(mt, "__base")
  end
  return false
end

local function typename(v)
  if type(v) == "cdata" then return "Tensor" end
  return type(v)
end

--[[ options(name, opts, defaults) -> defaults overridden by opts; an unknown key is an error
     naming the scheduler. ]]
function M.options(name, opts, defaults)
  if opts ~= nil and type(opts) ~= "table" then
    error(("%s: options must be a table, got %s"):format(name, typename(opts)), 4)
  end
  local o = {}
  for k, v in pairs(defaults) do o[k] = v end
  for k, v in pairs(opts or {}) do
    if defaults[k] == nil then error(("%s: unknown option '%s'"):format(name, tostring(k)), 4) end
    o[k] = v
  end
  return o
end

-- Class:extend(name) -> a scheduler class; calling it runs __init on a new instance.
function M.extend(parent, name)
  local class = setmetatable({ __name = name, __base = parent },
    { __index = parent, __call = function(cls, ...) return cls.new(cls, ...) end,
      __tostring = function() return "<class " .. name .. ">" end })
  class.__index = class
  return class
end

function M.new(class, ...)
  local self = setmetatable({}, class)
  class.__init(self, ...)
  return self
end

---------------------------------------------------------------- LRScheduler
local LRScheduler = M.extend({ new = M.new, extend = M.extend }, "LRScheduler")
M.LRScheduler = LRScheduler

function LRScheduler.check_optimizer(name, optimizer)
  if not M.is_optimizer(optimizer) then
    error(("%s: %s is not an Optimizer"):format(name, typename(optimizer)), 4)
  end
end

function LRScheduler:init(optimizer, last_epoch)
  self.optimizer = optimizer
  last_epoch = last_epoch or -1
  if last_epoch == -1 then
    for _, group in ipairs(optimizer.param_groups) do
      if group.initial_lr == nil then group.initial_lr = group.lr end
    end
  else
    for i, group in ipairs(optimizer.param_groups) do
      if group.initial_lr == nil then
        error(("%s: param 'initial_lr' is not specified in param_groups[%d] when resuming scheduler with "
          .. "last_epoch >= 0"):format(self.__name, i - 1), 4)
      end
    end
  end
  self.base_lrs = {}
  for i, group in ipairs(optimizer.param_groups) do self.base_lrs[i] = group.initial_lr end
  self.last_epoch = last_epoch
  self:_initial_step()
end

function LRScheduler:_initial_step()
  self._step_count = 0
  self._is_initial = true
  self:step()
  self._is_initial = false
end

-- step(epoch): advance one epoch (epoch given: jump there, with the closed form where there is one).
function LRScheduler:step(epoch)
  self._step_count = self._step_count + 1
  self:_update_lr(epoch)
end

-- The lr update of step(epoch) without counting a step (SequentialLR's restart at a milestone).
function LRScheduler:_update_lr(epoch)
  local values
  if epoch == nil then
    self.last_epoch = self.last_epoch + 1
    values = self:get_lr()
  else
    self.last_epoch = epoch
    values = self.closed_form and self:closed_form() or self:get_lr()
  end
  for i, group in ipairs(self.optimizer.param_groups) do group.lr = values[i] end
  self._last_lr = self:current_lrs()
end

function LRScheduler:current_lrs()
  local lrs = {}
  for i, group in ipairs(self.optimizer.param_groups) do lrs[i] = group.lr end
  return lrs
end

-- The learning rates the last step() set, one per group.
function LRScheduler:get_last_lr() return self._last_lr end

local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end
M.copy = copy

-- Every field but the optimizer and functions (PyTorch's __dict__ less the optimizer).
function LRScheduler:state_dict()
  local sd = {}
  for k, v in pairs(self) do
    if k ~= "optimizer" and type(v) ~= "function" then sd[k] = copy(v) end
  end
  return sd
end

function LRScheduler:load_state_dict(sd)
  if type(sd) ~= "table" then
    error(("%s: load_state_dict expects a table, got %s"):format(self.__name, typename(sd)), 2)
  end
  for k, v in pairs(sd) do
    if k ~= "optimizer" then self[k] = copy(v) end
  end
end

-- Per-group values: a number for all groups or an array of one per group.
function M.per_group(name, what, optimizer, v)
  local n = #optimizer.param_groups
  if type(v) == "table" then
    if #v ~= n then error(("%s: expected %d values for %s, got %d"):format(name, n, what, #v), 4) end
    return copy(v)
  end
  local out = {}
  for i = 1, n do out[i] = v end
  return out
end

return M
