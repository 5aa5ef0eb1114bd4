--[[
  torch.optim.lr_plateau — ReduceLROnPlateau: cut the learning rate when a metric stops
  improving, as PyTorch 2.11's torch.optim.lr_scheduler.ReduceLROnPlateau
  (https://pytorch.org/docs/2.11/generated/torch.optim.lr_scheduler.ReduceLROnPlateau.html).

      local sched = optim.lr_scheduler.ReduceLROnPlateau(opt, {mode = "min", patience = 5})
      for epoch = 1, 100 do train(); sched:step(validation_loss()) end   -- a number or 0-dim tensor

  After more than `patience` epochs without improvement (better than best by `threshold`,
  relative or absolute), each group's lr becomes max(lr * factor, min_lr) — unless that changes
  it by eps or less — and `cooldown` epochs are ignored. Options: mode = "min" | "max",
  factor = 0.1, patience = 10, threshold = 1e-4, threshold_mode = "rel" | "abs", cooldown = 0,
  min_lr = 0 (or one per group: then a group added later is an error when the lr is cut; a
  single min_lr covers added groups), eps = 1e-8.
]]
local B = require "torch.optim.lr_scheduler_base"
local P = require "torch._pysig"

local M = {}

local ReduceLROnPlateau = B.extend({ new = B.new }, "ReduceLROnPlateau")
M.ReduceLROnPlateau = ReduceLROnPlateau

local function init_is_better(self)
  if self.mode ~= "min" and self.mode ~= "max" then
    error("ReduceLROnPlateau: mode " .. tostring(self.mode) .. " is unknown!", 4)
  end
  if self.threshold_mode ~= "rel" and self.threshold_mode ~= "abs" then
    error("ReduceLROnPlateau: threshold mode " .. tostring(self.threshold_mode) .. " is unknown!", 4)
  end
  self.mode_worse = self.mode == "min" and math.huge or -math.huge
end

function ReduceLROnPlateau:__init(optimizer, opts)
  local o = B.options("ReduceLROnPlateau", opts, { mode = "min", factor = 0.1, patience = 10, threshold = 1e-4,
    threshold_mode = "rel", cooldown = 0, min_lr = 0, eps = 1e-8 })
  B.LRScheduler.check_optimizer("ReduceLROnPlateau", optimizer)
  if type(o.factor) ~= "number" or o.factor >= 1.0 then
    error("ReduceLROnPlateau: factor should be < 1.0, got " .. tostring(o.factor), 3)
  end
  self.factor = o.factor
  self.optimizer = optimizer
  if type(o.min_lr) ~= "table" then self.default_min_lr = o.min_lr end   -- nil (PyTorch's None) for a list
  self.min_lrs = B.per_group("ReduceLROnPlateau", "min_lr", optimizer, o.min_lr)
  self.patience, self.cooldown, self.cooldown_counter = o.patience, o.cooldown, 0
  self.mode, self.threshold, self.threshold_mode, self.eps = o.mode, o.threshold, o.threshold_mode, o.eps
  self.last_epoch = 0
  init_is_better(self)
  self:_reset()
  self._last_lr = self:current_lrs()
end

function ReduceLROnPlateau:_reset()
  self.best = self.mode_worse
  self.cooldown_counter = 0
  self.num_bad_epochs = 0
end

ReduceLROnPlateau.current_lrs = B.LRScheduler.current_lrs
ReduceLROnPlateau.get_last_lr = B.LRScheduler.get_last_lr

function ReduceLROnPlateau:is_better(a, best)
  if self.mode == "min" and self.threshold_mode == "rel" then return a < best * (1. - self.threshold)
  elseif self.mode == "min" then return a < best - self.threshold
  elseif self.threshold_mode == "rel" then return a > best * (self.threshold + 1.)
  end
  return a > best + self.threshold
end

-- step(metric): metric is a number or a 0-dim tensor.
function ReduceLROnPlateau:step(metrics, epoch)
  local current = metrics
  if type(metrics) == "cdata" then current = metrics:item() end
  if type(current) ~= "number" then
    error(("bad argument #1 to 'step' (number or 0-dim Tensor expected, got %s)"):format(type(metrics)), 2)
  end
  self.last_epoch = epoch or (self.last_epoch + 1)
  if self:is_better(current, self.best) then
    self.best = current
    self.num_bad_epochs = 0
  else
    self.num_bad_epochs = self.num_bad_epochs + 1
  end
  if self.cooldown_counter > 0 then
    self.cooldown_counter = self.cooldown_counter - 1
    self.num_bad_epochs = 0   -- bad epochs in cooldown do not count
  end
  if self.num_bad_epochs > self.patience then
    self:_reduce_lr()
    self.cooldown_counter = self.cooldown
    self.num_bad_epochs = 0
  end
  self._last_lr = self:current_lrs()
end

function ReduceLROnPlateau:_reduce_lr()
  local groups = self.optimizer.param_groups
  if #groups ~= #self.min_lrs then
    if self.default_min_lr == nil then
      error(("ReduceLROnPlateau: the number of param groups in the `optimizer` (%d) differs from when "
        .. "`ReduceLROnPlateau` was initialized (%d), usually due to a new param group being added to the "
        .. "optimizer. Please modify the `min_lrs` field to match the length of the `optimizer` param groups.")
        :format(#groups, #self.min_lrs), 3)
    end
    self.min_lrs = {}
    for i = 1, #groups do self.min_lrs[i] = self.default_min_lr end
  end
  for i, group in ipairs(groups) do
    local old_lr = group.lr
    local new_lr = math.max(old_lr * self.factor, self.min_lrs[i])
    if old_lr - new_lr > self.eps then group.lr = new_lr end
  end
end

function ReduceLROnPlateau:in_cooldown() return self.cooldown_counter > 0 end

ReduceLROnPlateau.state_dict = B.LRScheduler.state_dict
function ReduceLROnPlateau:load_state_dict(sd)
  B.LRScheduler.load_state_dict(self, sd)
  init_is_better(self)
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
P.init(M.ReduceLROnPlateau, "optimizer, mode='min', factor=0.1, patience=10, threshold=0.0001, "
  .. "threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-08")

return M
