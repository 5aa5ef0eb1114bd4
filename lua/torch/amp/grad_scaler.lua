--[[
  torch.amp.GradScaler — loss scaling for mixed-precision training, with PyTorch's semantics
  (torch/cuda/amp/grad_scaler.py in 1.13; https://pytorch.org/docs/stable/amp.html#gradient-scaling).

  Small float16 gradients underflow to zero. The scaler multiplies the loss by `scale` before
  backward, so gradients come out `scale` times larger; before the optimizer steps it divides
  them back ("unscales") and checks them: if any is inf or NaN the step is skipped. update()
  then adapts the scale:
      found inf/NaN this iteration:  scale = scale * backoff_factor,  clean_steps = 0
      otherwise:                     clean_steps = clean_steps + 1; when it reaches
                                     growth_interval: scale = scale * growth_factor (kept only
                                     if finite in float32), clean_steps = 0

      local scaler = torch.amp.GradScaler()      -- {init_scale = 2^16, growth_factor = 2,
                                                 --  backoff_factor = 0.5, growth_interval = 2000,
                                                 --  enabled = true}
      for _, batch in ipairs(data) do
        optimizer:zero_grad()
        local loss = torch.autocast("cuda", function() return loss_fn(model(batch.x), batch.y) end)
        scaler:scale(loss):backward()
        scaler:unscale_(optimizer)               -- optional: to clip true gradients
        scaler:step(optimizer)                   -- nil when the step was skipped
        scaler:update()
      end

  The optimizer contract is PyTorch's: a table with `param_groups` (an array of {params = {...}})
  and a `step` method. The scale lives in a float32 tensor [1] on the device of the first scaled
  output (made lazily, as in PyTorch). On CUDA the unscale/check and the update are libtorch's
  fused kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_); libtorch 1.13
  has no CPU kernels for them, so on the CPU the same algorithm runs as ordinary ops (PyTorch 1.13
  disables its scaler on the CPU; 2.3+ runs these kernels there with the same results).
  A disabled scaler passes everything through: scale(x) is x, step calls optimizer:step().
]]
local ffi = require "ffi"
local torch = require "torch"
local args = require "torch._args"

local READY, UNSCALED, STEPPED = "ready", "unscaled", "stepped"

local GradScaler = {}
GradScaler.__index = GradScaler

local defaults = { init_scale = 2.0 ^ 16, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000, enabled = true }

local function new(opts)
  opts = args.opt_table("GradScaler", 1, opts) or {}
  for k in pairs(opts) do
    if defaults[k] == nil then error(("GradScaler: unknown option '%s'"):format(tostring(k)), 3) end
  end
  local o = {}
  for k, v in pairs(defaults) do
    if opts[k] ~= nil then v = opts[k] end
    if type(v) ~= type(defaults[k]) then
      error(("GradScaler: %s must be a %s, got %s"):format(k, type(defaults[k]), args.typename(v)), 3)
    end
    o[k] = v
  end
  if not (o.init_scale > 0) then error("GradScaler: init_scale must be positive, got " .. o.init_scale, 3) end
  if not (o.growth_factor > 1) then error("GradScaler: the growth factor must be > 1.0, got " .. o.growth_factor, 3) end
  if not (o.backoff_factor < 1 and o.backoff_factor > 0) then
    error("GradScaler: the backoff factor must be in (0, 1), got " .. o.backoff_factor, 3)
  end
  if not args.is_int(o.growth_interval) or o.growth_interval <= 0 then
    error("GradScaler: growth_interval must be a positive integer, got " .. tostring(o.growth_interval), 3)
  end
  return setmetatable({
    _enabled = o.enabled, _init_scale = o.init_scale, _growth_factor = o.growth_factor,
    _backoff_factor = o.backoff_factor, _growth_interval = o.growth_interval, _init_growth_tracker = 0,
    _scale = nil, _growth_tracker = nil,
    _per_optimizer_states = setmetatable({}, { __mode = "k" }),   -- optimizer -> {stage, found_inf_per_device}
  }, GradScaler)
end

local function optimizer_state(self, fname, optimizer)
  if type(optimizer) ~= "table" or type(optimizer.param_groups) ~= "table" then
    error(("bad argument #1 to '%s' (optimizer with param_groups expected, got %s)"):format(fname, args.typename(optimizer)), 3)
  end
  local st = self._per_optimizer_states[optimizer]
  if st == nil then
    st = { stage = READY, found_inf_per_device = {} }
    self._per_optimizer_states[optimizer] = st
  end
  return st
end

local function check_scale(self, fname)
  if self._scale == nil then
    error(("GradScaler:%s: no scale yet. This may indicate your script did not use scaler:scale(loss or outputs) "
      .. "earlier in the iteration"):format(fname), 3)
  end
end

local function fused(device) return device.type == "cuda" end

-- PyTorch's float32 rounding of a double (the scale tensor is float32).
local function f32(x) return tonumber(ffi.new("float", x)) end

---------------------------------------------------------------- scale
local function scale_outputs(self, v)
  if torch.is_tensor(v) then
    if self._scale == nil then
      self._scale = torch.full({ 1 }, self._init_scale, { dtype = torch.float32, device = v.device })
      self._growth_tracker = torch.full({ 1 }, self._init_growth_tracker, { dtype = torch.int32, device = v.device })
    end
    local s = self._scale
    if s.device ~= v.device then s = s:to(v.device) end
    return v * s   -- shape broadcasts with [1], as in PyTorch: a 0-dim loss comes back as [1]
  end
  if type(v) ~= "table" then error("GradScaler:scale: outputs must be a Tensor or a table of Tensors", 3) end
  local out = {}
  for k, x in pairs(v) do out[k] = scale_outputs(self, x) end
  return out
end

-- scale(outputs): outputs * scale; outputs is a Tensor or a (nested) table of Tensors.
function GradScaler:scale(outputs)
  if not self._enabled then return outputs end
  return scale_outputs(self, outputs)
end

---------------------------------------------------------------- unscale_
--[[ Divides every gradient of the optimizer's parameters by the scale in place and records, per
     device, a float32 [1] tensor that is 1 if any gradient held an inf or NaN (checked before the
     division, as the fused kernel does). Gradients are grouped by device and dtype. ]]
local function unscale_grads(_, optimizer, inv_scale, found_inf, allow_fp16)
  local groups, order = {}, {}
  local per_device, inv_per_device = {}, {}
  for _, group in ipairs(optimizer.param_groups) do
    for _, p in ipairs(group.params or {}) do
      local g = p.grad
      if g ~= nil then
        if not allow_fp16 and g.dtype == torch.float16 then
          error("GradScaler:unscale_: attempting to unscale FP16 gradients", 3)
        end
        local dev = tostring(g.device)
        local key = dev .. "/" .. g.dtype.name
        if groups[key] == nil then
          groups[key] = { device = g.device, grads = {} }
          order[#order + 1] = key
        end
        local list = groups[key].grads
        list[#list + 1] = g
        if per_device[dev] == nil then
          per_device[dev] = found_inf:to(g.device, { copy = true })
          inv_per_device[dev] = inv_scale:to(g.device)
        end
      end
    end
  end
  torch.no_grad(function()   -- gradients made with create_graph must not record the unscale
    for _, key in ipairs(order) do
      local grp = groups[key]
      local dev = tostring(grp.device)
      if fused(grp.device) then
        torch._amp_foreach_non_finite_check_and_unscale_(grp.grads, per_device[dev], inv_per_device[dev])
      else
        for _, g in ipairs(grp.grads) do
          if not g:isfinite():all():item() then per_device[dev]:fill_(1) end
          g:mul_(inv_per_device[dev])
        end
      end
    end
  end)
  return per_device
end

function GradScaler:unscale_(optimizer)
  if not self._enabled then return end
  check_scale(self, "unscale_")
  local st = optimizer_state(self, "unscale_", optimizer)
  if st.stage == UNSCALED then
    error("GradScaler:unscale_: unscale_() has already been called on this optimizer since the last update()", 2)
  elseif st.stage == STEPPED then
    error("GradScaler:unscale_: unscale_() is being called after step()", 2)
  end
  -- 1/scale in double, then float32: PyTorch's rounding of the reciprocal
  local inv_scale = self._scale:double():reciprocal():float()
  local found_inf = torch.full({ 1 }, 0.0, { dtype = torch.float32, device = self._scale.device })
  st.found_inf_per_device = unscale_grads(self, optimizer, inv_scale, found_inf, false)
  st.stage = UNSCALED
end

---------------------------------------------------------------- step / update
local function step_if_finite(st, optimizer, ...)
  local found = 0
  for _, f in pairs(st.found_inf_per_device) do found = found + f:item() end
  if found ~= 0 then return nil end
  return optimizer:step(...)
end

local function pack(...) return { n = select("#", ...), ... } end

-- step(optimizer, ...): unscales if unscale_ was not called, then runs optimizer:step(...) unless
-- a gradient was inf/NaN. Returns step's results, or nil when the step was skipped.
function GradScaler:step(optimizer, ...)
  if not self._enabled then return optimizer:step(...) end
  for i = 1, select("#", ...) do
    if type((select(i, ...))) == "function" then
      error("GradScaler:step: closure use is not currently supported if GradScaler is enabled", 2)
    end
  end
  check_scale(self, "step")
  local st = optimizer_state(self, "step", optimizer)
  if st.stage == STEPPED then error("GradScaler:step: step() has already been called since the last update()", 2) end
  if st.stage == READY then self:unscale_(optimizer) end
  if next(st.found_inf_per_device) == nil then
    error("GradScaler:step: no inf checks were recorded for this optimizer (no parameter has a gradient)", 2)
  end
  local results = pack(step_if_finite(st, optimizer, ...))
  st.stage = STEPPED
  return unpack(results, 1, results.n)
end

-- The update rule on plain numbers: what _amp_update_scale_ computes (scale is float32).
local function update_scale_cpu(self, found_inf)
  local scale, tracker = self._scale:item(), self._growth_tracker:item()
  if found_inf ~= 0 then
    scale, tracker = f32(scale * self._backoff_factor), 0
  else
    tracker = tracker + 1
    if tracker == self._growth_interval then
      local grown = f32(scale * self._growth_factor)
      if grown == grown and grown ~= math.huge then scale = grown end
      tracker = 0
    end
  end
  self._scale:fill_(scale)
  self._growth_tracker:fill_(tracker)
end

--[[ update(new_scale=nil): with no argument, backs off or grows the scale from this iteration's
     inf checks (over every optimizer stepped); a number or a float32 [1] tensor sets it directly.
     Ends the iteration: every optimizer can be unscaled and stepped again. ]]
function GradScaler:update(new_scale)
  if not self._enabled then return end
  check_scale(self, "update")
  if type(new_scale) == "number" then
    self._scale:fill_(new_scale)
  elseif new_scale ~= nil then
    if not torch.is_tensor(new_scale) or new_scale:numel() ~= 1 or new_scale.requires_grad
        or new_scale.dtype ~= torch.float32 then
      args.bad("update", 1, "number or 1-element float32 Tensor with requires_grad=false", args.typename(new_scale))
    end
    self._scale:copy_(new_scale)
  else
    local combined
    for _, st in pairs(self._per_optimizer_states) do
      for _, f in pairs(st.found_inf_per_device) do
        f = f:to(self._scale.device)
        combined = combined and combined + f or f
      end
    end
    if combined == nil then error("GradScaler:update: no inf checks were recorded prior to update()", 2) end
    if fused(self._scale.device) then
      torch._amp_update_scale_(self._scale, self._growth_tracker, combined, self._growth_factor,
        self._backoff_factor, self._growth_interval)
    else
      update_scale_cpu(self, combined:item())
    end
  end
  self._per_optimizer_states = setmetatable({}, { __mode = "k" })
end

---------------------------------------------------------------- settings and state
function GradScaler:is_enabled() return self._enabled end

function GradScaler:get_scale()
  if not self._enabled then return 1.0 end
  return self._scale == nil and self._init_scale or self._scale:item()
end

function GradScaler:_get_growth_tracker()
  if not self._enabled then return 0 end
  return self._growth_tracker == nil and self._init_growth_tracker or self._growth_tracker:item()
end

function GradScaler:get_growth_factor() return self._growth_factor end
function GradScaler:set_growth_factor(v) self._growth_factor = args.number("set_growth_factor", 1, v) end
function GradScaler:get_backoff_factor() return self._backoff_factor end
function GradScaler:set_backoff_factor(v) self._backoff_factor = args.number("set_backoff_factor", 1, v) end
function GradScaler:get_growth_interval() return self._growth_interval end
function GradScaler:set_growth_interval(v) self._growth_interval = args.int("set_growth_interval", 1, v) end

-- PyTorch's keys; a disabled scaler returns an empty table.
function GradScaler:state_dict()
  if not self._enabled then return {} end
  return { scale = self:get_scale(), growth_factor = self._growth_factor, backoff_factor = self._backoff_factor,
    growth_interval = self._growth_interval, _growth_tracker = self:_get_growth_tracker() }
end

function GradScaler:load_state_dict(sd)
  if not self._enabled then return end
  if type(sd) ~= "table" then args.bad("load_state_dict", 1, "table", args.typename(sd)) end
  if next(sd) == nil then
    error("GradScaler:load_state_dict: the source state dict is empty, possibly because it was saved from a "
      .. "disabled instance of GradScaler", 2)
  end
  for _, k in ipairs({ "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" }) do
    if type(sd[k]) ~= "number" then
      error(("GradScaler:load_state_dict: state dict key '%s' must be a number, got %s"):format(k, args.typename(sd[k])), 2)
    end
  end
  self._init_scale = sd.scale
  if self._scale ~= nil then self._scale:fill_(sd.scale) end
  self._growth_factor, self._backoff_factor, self._growth_interval = sd.growth_factor, sd.backoff_factor, sd.growth_interval
  self._init_growth_tracker = sd._growth_tracker
  if self._growth_tracker ~= nil then self._growth_tracker:fill_(sd._growth_tracker) end
end

function GradScaler.__tostring(self)
  return ("GradScaler(scale=%s, growth_factor=%s, backoff_factor=%s, growth_interval=%d, enabled=%s)"):format(
    tostring(self:get_scale()), tostring(self._growth_factor), tostring(self._backoff_factor),
    self._growth_interval, tostring(self._enabled))
end

return setmetatable({}, {
  __call = function(_, opts)
    local scaler = new(opts)   -- not a tail call: new's errors blame the caller
    return scaler
  end,
  __index = GradScaler,
})
