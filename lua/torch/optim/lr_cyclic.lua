--[[
  torch.optim.lr_cyclic — the schedules that cycle, as PyTorch 2.11's
  torch.optim.lr_scheduler.CyclicLR (Smith 2017, https://pytorch.org/docs/2.11/generated/torch.optim.lr_scheduler.CyclicLR.html)
  and CosineAnnealingWarmRestarts (SGDR, Loshchilov & Hutter 2016,
  https://pytorch.org/docs/2.11/generated/torch.optim.lr_scheduler.CosineAnnealingWarmRestarts.html).

      local sched = optim.lr_scheduler.CyclicLR(opt, 1e-3, 1e-2, {step_size_up = 200, mode = "triangular2"})
      local sched = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 10, {T_mult = 2, eta_min = 1e-5})
      for epoch = 0, 19 do for i, batch in ipairs(batches) do ...; sched:step(epoch + i / #batches) end end

  CyclicLR(opt, base_lr, max_lr, {step_size_up = 2000, step_size_down = step_size_up,
    mode = "triangular" | "triangular2" | "exp_range", gamma = 1.0, scale_fn = nil (a function
    of the cycle or iteration number, replacing mode), scale_mode = "cycle" | "iterations",
    cycle_momentum = true, base_momentum = 0.8, max_momentum = 0.9, last_epoch = -1})
    lr moves linearly base_lr → max_lr → base_lr once per step_size_up + step_size_down steps,
    the amplitude scaled by scale_fn; with cycle_momentum, momentum (SGD, RMSprop) or beta1 (Adam
    & co.) moves the opposite way between max_momentum and base_momentum. base_lr, max_lr and
    the momenta take one value per group too. Call step() after every batch.
  CosineAnnealingWarmRestarts(opt, T_0, {T_mult = 1, eta_min = 0.0, last_epoch = -1})
    lr = eta_min + (base_lr − eta_min) (1 + cos(π T_cur / T_i)) / 2, restarting (T_cur ← 0,
    T_i ← T_i T_mult) every T_i epochs; step(epoch) takes a fractional epoch.
  state_dict() as PyTorch's: CyclicLR's _scale_fn_custom is None for a function, the fields of a
  callable table.
]]
local B = require "torch.optim.lr_scheduler_base"
local P = require "torch._pysig"
local None = require "torch.serialization.none"

local M = {}

local function typename(v)
  if type(v) == "cdata" then return "Tensor" end
  return type(v)
end

-- One value per group: a number for all, or an array as long as param_groups (PyTorch's _format_param).
local function per_group(name, optimizer, v)
  local n = #optimizer.param_groups
  if type(v) == "table" then
    if #v ~= n then
      P.fail("CyclicLR: %s must have the same length as optimizer.param_groups. %s has %d values, "
        .. "param_groups has %d.", name, name, #v, n)
    end
    return B.copy(v)
  end
  if type(v) ~= "number" then P.fail("CyclicLR: %s must be a number or one number per group, got %s", name, typename(v)) end
  local out = {}
  for i = 1, n do out[i] = v end
  return out
end

local function callable(f)
  local mt = type(f) == "table" and getmetatable(f)
  return type(f) == "function" or (mt and mt.__call ~= nil)
end

---------------------------------------------------------------- CyclicLR
local CyclicLR = B.LRScheduler:extend("CyclicLR")
M.CyclicLR = CyclicLR

local MODES = { triangular = true, triangular2 = true, exp_range = true }

function CyclicLR:__init(optimizer, base_lr, max_lr, opts)
  local o = B.options("CyclicLR", opts, { step_size_up = 2000, step_size_down = false, mode = "triangular",
    gamma = 1.0, scale_fn = false, scale_mode = "cycle", cycle_momentum = true, base_momentum = 0.8,
    max_momentum = 0.9, last_epoch = -1 })
  B.LRScheduler.check_optimizer("CyclicLR", optimizer)
  local base_lrs = per_group("base_lr", optimizer, base_lr)
  if o.last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do group.lr = base_lrs[i] end
  end
  self.max_lrs = per_group("max_lr", optimizer, max_lr)
  local up, down = o.step_size_up, o.step_size_down or o.step_size_up
  if type(up) ~= "number" or up <= 0 or type(down) ~= "number" or down < 0 then
    P.fail("CyclicLR: step_size_up must be a positive number and step_size_down a non-negative one, got %s, %s",
      tostring(up), tostring(down))
  end
  self.total_size = up + down
  self.step_ratio = up / self.total_size
  if o.scale_fn and not callable(o.scale_fn) then
    P.fail("CyclicLR: scale_fn must be a function, got %s", typename(o.scale_fn))
  end
  if not MODES[o.mode] and not o.scale_fn then P.fail("CyclicLR: mode is invalid and scale_fn is None") end
  if o.scale_mode ~= "cycle" and o.scale_mode ~= "iterations" then
    P.fail("CyclicLR: scale_mode must be 'cycle' or 'iterations', got %s", tostring(o.scale_mode))
  end
  self.mode, self.gamma, self.scale_mode = o.mode, o.gamma, o.scale_mode
  self._scale_fn_custom = o.scale_fn or nil
  self:_init_scale_fn()
  self.cycle_momentum = o.cycle_momentum
  if o.cycle_momentum then self:_init_momentum(optimizer, o) end
  self:init(optimizer, o.last_epoch)
  self.base_lrs = base_lrs
end

function CyclicLR:_init_momentum(optimizer, o)
  local d = optimizer.defaults
  if d.momentum == nil and d.betas == nil then
    P.fail("CyclicLR: optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
  end
  self.use_beta1 = d.betas ~= nil
  self.base_momentums = per_group("base_momentum", optimizer, o.base_momentum)
  self.max_momentums = per_group("max_momentum", optimizer, o.max_momentum)
  if o.last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do
      if self.use_beta1 then group.betas = { self.max_momentums[i], group.betas[2] }
      else group.momentum = self.max_momentums[i] end
      group.max_momentum, group.base_momentum = self.max_momentums[i], self.base_momentums[i]
    end
  end
end

-- The built-in modes fix scale_mode, as PyTorch's _init_scale_fn.
function CyclicLR:_init_scale_fn()
  if self._scale_fn_custom ~= nil then return end
  if self.mode == "exp_range" then self.scale_mode = "iterations" else self.scale_mode = "cycle" end
end

function CyclicLR:scale_fn(x)
  if self._scale_fn_custom ~= nil then return self._scale_fn_custom(x) end
  if self.mode == "triangular" then return 1.0 end
  if self.mode == "triangular2" then return 1 / (2.0 ^ (x - 1)) end
  return self.gamma ^ x
end

function CyclicLR:get_lr()
  local cycle = math.floor(1 + self.last_epoch / self.total_size)
  local x = 1.0 + self.last_epoch / self.total_size - cycle
  local scale_factor
  if x <= self.step_ratio then scale_factor = x / self.step_ratio
  else scale_factor = (x - 1) / (self.step_ratio - 1) end
  local scale = self:scale_fn(self.scale_mode == "cycle" and cycle or self.last_epoch)
  local lrs = {}
  for i, base_lr in ipairs(self.base_lrs) do
    lrs[i] = base_lr + (self.max_lrs[i] - base_lr) * scale_factor * scale
  end
  if self.cycle_momentum then
    for i, group in ipairs(self.optimizer.param_groups) do
      local base_m, max_m = self.base_momentums[i], self.max_momentums[i]
      local m = max_m - (max_m - base_m) * scale_factor * scale
      if self.use_beta1 then group.betas = { m, group.betas[2] } else group.momentum = m end
    end
  end
  return lrs
end

function CyclicLR:state_dict()
  local sd = B.LRScheduler.state_dict(self)
  local fn = self._scale_fn_custom
  sd._scale_fn_custom = type(fn) == "table" and B.copy(fn) or None
  return sd
end

function CyclicLR:load_state_dict(sd)
  local rest, fields = {}, nil
  for k, v in pairs(type(sd) == "table" and sd or {}) do
    if k == "_scale_fn_custom" then fields = v else rest[k] = v end
  end
  B.LRScheduler.load_state_dict(self, type(sd) == "table" and rest or sd)
  local fn = self._scale_fn_custom
  if type(fields) == "table" and fields ~= None and type(fn) == "table" then
    for k, v in pairs(fields) do fn[k] = B.copy(v) end
  end
  self:_init_scale_fn()
end

---------------------------------------------------------------- CosineAnnealingWarmRestarts
local CAWR = B.LRScheduler:extend("CosineAnnealingWarmRestarts")
M.CosineAnnealingWarmRestarts = CAWR

local function integer(v) return type(v) == "number" and v % 1 == 0 end

function CAWR:__init(optimizer, T_0, opts)
  local o = B.options("CosineAnnealingWarmRestarts", opts, { T_mult = 1, eta_min = 0.0, last_epoch = -1 })
  B.LRScheduler.check_optimizer("CosineAnnealingWarmRestarts", optimizer)
  if not integer(T_0) or T_0 <= 0 then
    P.fail("CosineAnnealingWarmRestarts: expected positive integer T_0, but got %s", tostring(T_0))
  end
  if not integer(o.T_mult) or o.T_mult < 1 then
    P.fail("CosineAnnealingWarmRestarts: expected integer T_mult >= 1, but got %s", tostring(o.T_mult))
  end
  if type(o.eta_min) ~= "number" then
    P.fail("CosineAnnealingWarmRestarts: expected float or int eta_min, but got %s", typename(o.eta_min))
  end
  self.T_0, self.T_i, self.T_mult, self.eta_min, self.T_cur = T_0, T_0, o.T_mult, o.eta_min, o.last_epoch
  self:init(optimizer, o.last_epoch)
end

function CAWR:get_lr()
  local out = {}
  for i, base_lr in ipairs(self.base_lrs) do
    out[i] = self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
  end
  return out
end

-- Moves T_cur and T_i to `epoch` (fractional allowed), as PyTorch's step(epoch).
local function seek(self, epoch)
  if type(epoch) ~= "number" then P.fail("bad argument #1 to 'step' (number or nil expected, got %s)", typename(epoch)) end
  if epoch < 0 then P.fail("CosineAnnealingWarmRestarts: expected non-negative epoch, but got %s", tostring(epoch)) end
  local T_0, T_mult = self.T_0, self.T_mult
  if epoch >= T_0 then
    if T_mult == 1 then
      self.T_cur = epoch % T_0
    else
      local n = math.floor(math.log(epoch / T_0 * (T_mult - 1) + 1) / math.log(T_mult))
      self.T_cur = epoch - T_0 * (T_mult ^ n - 1) / (T_mult - 1)
      self.T_i = T_0 * T_mult ^ n
    end
  else
    self.T_i, self.T_cur = T_0, epoch
  end
end

-- step(): one epoch on; step(epoch): jump to epoch. PyTorch's override does not count _step_count.
function CAWR:step(epoch)
  if epoch == nil and self.last_epoch < 0 then epoch = 0 end
  if epoch == nil then
    epoch = self.last_epoch + 1
    self.T_cur = self.T_cur + 1
    if self.T_cur >= self.T_i then
      self.T_cur = self.T_cur % self.T_i
      self.T_i = self.T_i * self.T_mult
    end
  else
    seek(self, epoch)
  end
  self.last_epoch = math.floor(epoch)
  for i, lr in ipairs(self:get_lr()) do self.optimizer.param_groups[i].lr = lr end
  self._last_lr = self:current_lrs()
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
P.init(M.CyclicLR, "optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode='triangular', "
  .. "gamma=1.0, scale_fn=None, scale_mode='cycle', cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, "
  .. "last_epoch=-1")
P.init(M.CosineAnnealingWarmRestarts, "optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1")

return M
