--[[
  amp.lua — the device and mixed precision of a training run, from three config keys, and the
  training step that goes with them. One file for every script: each project gets it from
  ltorch's templates/_common, and ltorch's recipes/ require it as "templates._common.amp".

      local amp = require "amp"
      local mp, err = amp.new(config)   -- config.device, config.amp, config.amp_dtype
      if not mp then (one-line usage error: err) end
      model:to(mp.device)
      local loss = mp:autocast(function() return criterion(model(x), y) end)
      mp:scale(loss):backward()         -- DDP too: its Reducer averages during backward
      mp:step(opt, model:parameters(), clip)
      checkpoint parts: {..., scaler = mp.scaler}   (nil unless float16)

  Keys (PyTorch's own defaults and recipe, https://pytorch.org/docs/stable/amp.html):
    device     "auto" (cuda when available) | "cpu" | "cuda" | "cuda:N". A CUDA device this
               machine or build lacks is an error, never a silent CPU run. With opts.local_rank
               (one process per GPU), a bare "cuda" means cuda:(local_rank % device count).
               opts.inference = true: evaluation only, no GradScaler for float16.
    amp        false: float32 everywhere. true: the forward pass under torch.autocast on the
               device: matmuls and convolutions in amp_dtype, reductions and losses in float32.
    amp_dtype  "bfloat16" (default): float32's exponent range, so gradients cannot underflow
               and no loss scaling is needed. "float16": a torch.amp.GradScaler scales the loss
               before backward, unscales the gradients before clipping, skips the step when one
               is inf/NaN and adapts the scale (its state belongs in full checkpoints). It runs
               on the CPU too: the scale lives on the loss's device. Needs amp = true.
  step(opt, params, clip): [unscale_ ->] clip_grad_norm_ (clip > 0) -> opt:step() (the
  scaler's step: skipped on inf/NaN) [-> update]; returns false when the step was skipped
  (mp.skipped counts them; mp:scale_note() puts the scale and that count in a log line).
]]
local torch = require "torch"

local M = {}

local DTYPES = { bfloat16 = torch.bfloat16, float16 = torch.float16 }

-- -> device string or nil, error message
local function resolve_device(name, local_rank)
  if type(name) ~= "string" then return nil, ("--device must be a string, got %s"):format(type(name)) end
  local index = name:match("^cuda:(%d+)$")
  if name ~= "auto" and name ~= "cpu" and name ~= "cuda" and not index then
    return nil, ("--device must be auto, cpu, cuda or cuda:N, got '%s'"):format(name)
  end
  local count = torch.cuda.is_available() and torch.cuda.device_count() or 0
  if name == "auto" then
    if count == 0 then return "cpu" end
    name = "cuda"
  end
  if name == "cpu" then return "cpu" end
  if count == 0 then
    return nil, ("--device %s is not available (no CUDA device, or a CPU-only libtorch); use --device cpu or auto")
      :format(name)
  end
  if index and tonumber(index) >= count then
    return nil, ("--device %s is not available (this machine has %d CUDA device%s: cuda:0..cuda:%d)")
      :format(name, count, count == 1 and "" or "s", count - 1)
  end
  if not index and local_rank then return ("cuda:%d"):format(local_rank % count) end
  return name
end

local Mixed = {}
Mixed.__index = Mixed

-- new(config [, {local_rank = n, inference = bool}]) -> Mixed, or nil and a one-line message naming the bad key.
function M.new(config, opts)
  local device, err = resolve_device(config.device or "auto", opts and opts.local_rank)
  if not device then return nil, err end
  local enabled, name = config.amp == true, config.amp_dtype or "bfloat16"
  if not DTYPES[name] then return nil, ("--amp-dtype must be bfloat16 or float16, got '%s'"):format(tostring(name)) end
  if name ~= "bfloat16" and not enabled then
    return nil, ("--amp-dtype %s needs --amp (mixed precision is off)"):format(name)
  end
  local self = setmetatable({ device = device, device_type = device:match("^cuda") and "cuda" or "cpu",
    enabled = enabled, dtype = enabled and DTYPES[name] or nil, skipped = 0 }, Mixed)
  self.autocast_opts = { dtype = self.dtype }
  if enabled and name == "float16" and not (opts and opts.inference) then
    self.scaler = torch.amp.GradScaler(self.device_type)
  end
  return self
end

-- fn() under autocast when amp is on, a plain call otherwise; fn's results.
function Mixed:autocast(fn)
  if not self.enabled then return fn() end
  return torch.autocast(self.device_type, fn, self.autocast_opts)
end

-- The loss to call backward on: loss * scale with float16, the loss itself otherwise.
function Mixed:scale(loss)
  if self.scaler then return self.scaler:scale(loss) end
  return loss
end

function Mixed:step(opt, params, clip)
  local s = self.scaler
  if not s then
    if clip and clip > 0 then torch.nn.utils.clip_grad_norm_(params, clip) end
    opt:step()
    return true
  end
  s:unscale_(opt)   -- clip the true gradients, not the scaled ones
  if clip and clip > 0 then torch.nn.utils.clip_grad_norm_(params, clip) end
  local before = s:get_scale()
  s:step(opt)
  s:update()
  local stepped = s:get_scale() >= before   -- update() backs off only after an inf/NaN gradient
  if not stepped then self.skipped = self.skipped + 1 end
  return stepped
end

-- For an epoch's log line: "" without a scaler, else "  loss scale 65536, skipped steps 0".
function Mixed:scale_note()
  if not self.scaler then return "" end
  return ("  loss scale %g, skipped steps %d"):format(self.scaler:get_scale(), self.skipped)
end

-- "cpu", "cuda:0, amp bfloat16", "cpu, amp float16 + GradScaler"
function Mixed:describe()
  if not self.enabled then return self.device end
  return ("%s, amp %s%s"):format(self.device, self.dtype.name, self.scaler and " + GradScaler" or "")
end

return M
