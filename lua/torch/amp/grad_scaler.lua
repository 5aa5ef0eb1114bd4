--[[
  torch.amp.GradScaler — loss scaling for mixed-precision training, as PyTorch 2.11's
  torch.amp.GradScaler (torch/amp/grad_scaler.py; https://pytorch.org/docs/2.11/amp.html#gradient-scaling).

  Small float16 gradients underflow to zero. The scaler multiplies the loss by `scale` before
  backward, so gradients come out `scale` times larger; before the optimizer steps it divides
  them back ("unscales") and checks them: if any is inf or NaN the step is skipped. update()
  then adapts the scale:
      found inf/NaN this iteration:  scale = scale * backoff_factor,  clean_steps = 0
      otherwise:                     clean_steps = clean_steps + 1; when it reaches
                                     growth_interval: scale = scale * growth_factor (kept only
                                     if finite in float32), clean_steps = 0

      local scaler = torch.amp.GradScaler("cuda")   -- PyTorch's form: device, then options
      -- or torch.amp.GradScaler("cuda", {init_scale = 2^16, growth_factor = 2, backoff_factor = 0.5,
      --                                  growth_interval = 2000, enabled = true})
      -- or torch.amp.GradScaler({device = "cpu", init_scale = 1024})
      for _, batch in ipairs(data) do
        optimizer:zero_grad()
        local loss = torch.autocast("cuda", function() return loss_fn(model(batch.x), batch.y) end)
        scaler:scale(loss):backward()
        scaler:unscale_(optimizer)               -- optional: to clip true gradients
        scaler:step(optimizer)                   -- nil when the step was skipped
        scaler:update()
      end

  device: as PyTorch 2.11's, "cuda" when not given (GradScaler(), or an options table without
  `device`), and "cuda" with CUDA unavailable warns and disables the scaler — so a ported
  `GradScaler()` does on a CPU machine what PyTorch's does; pass "cpu" to scale on the CPU.
  The optimizer contract is PyTorch's: a table with `param_groups` (an array of {params = {...}})
  and a `step` method. The scale lives in a float32 0-dim tensor on the device of the first
  scaled output (made lazily, as in PyTorch). Unscaling with the inf/NaN check and the update
  are libtorch's kernels, _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_,
  on every device (libtorch 2.11 has them for the CPU too).
  A disabled scaler passes everything through: scale(x) is x, step calls optimizer:step().
]]
local torch = require "torch"
local args = require "torch._args"

local READY, UNSCALED, STEPPED = "ready", "unscaled", "stepped"

local GradScaler = {}
GradScaler.__index = GradScaler

local defaults = { init_scale = 2.0 ^ 16, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000, enabled = true }

local function warn(msg) require("torch._warnings").warn(msg) end

-- new(device, opts) or new(opts): PyTorch's positional device first, or the options alone
-- (device may then be one of them).
local function new(device, opts)
  if type(device) ~= "string" then
    if opts ~= nil then args.bad("GradScaler", 1, "device string", args.typename(device), 2) end
    opts = args.opt_table("GradScaler", 1, device) or {}
    device = opts.device
    if device ~= nil and type(device) ~= "string" then
      error("GradScaler: device must be a string such as \"cuda\" or \"cpu\", got " .. args.typename(device), 3)
    end
  else
    opts = args.opt_table("GradScaler", 2, opts) or {}
    if opts.device ~= nil then error("GradScaler: device given twice (argument #1 and the device option)", 3) end
  end
  for k in pairs(opts) do
    if defaults[k] == nil and k ~= "device" then error(("GradScaler: unknown option '%s'"):format(tostring(k)), 3) end
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
  local enabled = o.enabled
  device = device or "cuda"   -- PyTorch's default
  local d = torch.device(device)   -- an unknown device is an error here
  if enabled and d.type == "cuda" and not torch.cuda.is_available() then
    warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
    enabled = false
  end
  return setmetatable({
    _device = device, _enabled = enabled, _init_scale = o.init_scale, _growth_factor = o.growth_factor,
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

---------------------------------------------------------------- scale
local function scale_outputs(self, v)
  if torch.is_tensor(v) then
    if self._scale == nil then
      self._scale = torch.full({}, self._init_scale, { dtype = torch.float32, device = v.device })
      self._growth_tracker = torch.full({}, self._init_growth_tracker, { dtype = torch.int32, device = v.device })
    end
    local s = self._scale
    if s.device ~= v.device then s = s:to(v.device) end
    return v * s   -- a 0-dim scale: the output keeps its shape
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
     device, a float32 0-dim tensor that is 1 if any gradient held an inf or NaN (libtorch's
     _amp_foreach_non_finite_check_and_unscale_, once per device and dtype). ]]
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
          groups[key] = { device = dev, grads = {} }
          order[#order + 1] = key
        end
        local list = groups[key].grads
        list[#list + 1] = g
        if per_device[dev] == nil then
          per_device[dev] = found_inf:to(g.device, { copy = true })
          inv_per_device[dev] = inv_scale:to(g.device, { copy = true })
        end
      end
    end
  end
  torch.no_grad(function()   -- gradients made with create_graph must not record the unscale
    for _, key in ipairs(order) do
      local grp = groups[key]
      torch._amp_foreach_non_finite_check_and_unscale_(grp.grads, per_device[grp.device], inv_per_device[grp.device])
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
  local found_inf = torch.full({}, 0.0, { dtype = torch.float32, device = self._scale.device })
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

--[[ update(new_scale=nil): with no argument, backs off or grows the scale from this iteration's
     inf checks (over every optimizer stepped; libtorch's _amp_update_scale_); a number or a
     1-element tensor (requires_grad false, on the scaler's device type) sets it directly.
     Ends the iteration: every optimizer can be unscaled and stepped again. ]]
function GradScaler:update(new_scale)
  if not self._enabled then return end
  check_scale(self, "update")
  if type(new_scale) == "number" then
    self._scale:fill_(new_scale)
  elseif new_scale ~= nil then
    local want = self._device and torch.device(self._device).type or self._scale.device.type
    if not torch.is_tensor(new_scale) or new_scale:numel() ~= 1 or new_scale.requires_grad
        or new_scale.device.type ~= want then
      args.bad("update", 1, "number or 1-element " .. want .. " Tensor with requires_grad=false",
        args.typename(new_scale))
    end
    self._scale:copy_(new_scale)
  else
    local combined
    for _, st in pairs(self._per_optimizer_states) do
      for _, f in pairs(st.found_inf_per_device) do
        f = f:to(self._scale.device)
        if combined == nil then combined = f else combined:add_(f) end
      end
    end
    if combined == nil then error("GradScaler:update: no inf checks were recorded prior to update()", 2) end
    torch._amp_update_scale_(self._scale, self._growth_tracker, combined, self._growth_factor,
      self._backoff_factor, self._growth_interval)
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
  return ("GradScaler(device=%s, scale=%s, growth_factor=%s, backoff_factor=%s, growth_interval=%d, enabled=%s)")
    :format(tostring(self._device), tostring(self:get_scale()), tostring(self._growth_factor),
      tostring(self._backoff_factor), self._growth_interval, tostring(self._enabled))
end

return setmetatable({}, {
  __call = function(_, device, opts)
    local scaler = new(device, opts)   -- not a tail call: new's errors blame the caller
    return scaler
  end,
  __index = GradScaler,
})
