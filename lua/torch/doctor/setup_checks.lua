--[[
  torch.doctor.setup_checks — checks of the setup-table form that stand in for what a traced
  script shows by itself. Here: train_mode, the setup form of trace_checks.train_mode: is the
  model in train mode when the user's own step (setup.train_step) reaches optimizer:step()?

  The model is taken as setup.model() returns it (doctor's own probes call model:train() on
  their models, which would hide this bug). With a setup.train_step, a few of the user's steps
  run on it and every optimizer:step() records the model's mode; without one, the mode the
  model comes in is what the user's loop starts from. The evaluation pass is not replayed before
  the steps: in the setup protocol the epoch loop (where model:train() usually sits) is not
  given, so a train_step without model:train() after an evaluate with model:eval() is not a bug
  that can be seen here.

    local SC = require "torch.doctor.setup_checks"
    SC.train_mode(ctx) -> finding
]]
local S = require "torch.doctor.setup"
local U = require "torch.doctor.check_util"

local M = {}

-- The names of the layers whose behaviour differs between train and eval mode.
function M.stochastic_layers(model)
  local names = {}
  for _, nm in ipairs(model:named_modules()) do
    local n = nm[2].__name or ""
    if n:match("Dropout") or n:match("BatchNorm") then names[#names + 1] = ("%s (%s)"):format(nm[1], n) end
  end
  return names
end

function M.train_mode(ctx)
  local s = ctx.setup
  local model = S.new_model(s, ctx.seed)
  local layers = M.stochastic_layers(model)
  local named = #layers > 0 and table.concat(layers, ", ", 1, math.min(#layers, 4)) or "none"
  local cause = "the model is in eval mode (model:eval() in setup.model(), or in train_step) and nothing calls "
    .. "model:train(): call it at the start of every training epoch (or in train_step); in eval mode dropout is "
    .. "off and BatchNorm neither uses nor updates batch statistics"
  if not s.train_step then
    local ev = ("setup.model() returns the model in %s mode; no train_step given; dropout/BatchNorm layers: %s")
      :format(rawget(model, "training") and "train" or "eval", named)
    if rawget(model, "training") or #layers == 0 then return U.finding("train_mode", "ok", "the model comes in train mode", ev) end
    local f = U.finding("train_mode", "fail", "the model is handed over in eval mode", ev, cause)
    f.confidence = 0.7
    return f
  end
  local opt = S.new_optimizer(s, model)
  local train_steps, eval_steps, orig = 0, 0, opt.step
  opt.step = function(self, ...)
    if rawget(model, "training") then train_steps = train_steps + 1 else eval_steps = eval_steps + 1 end
    return orig(self, ...)
  end
  local b = ctx.batches[1]
  local ok, err = pcall(function() for _ = 1, 3 do s.train_step(model, b.x, b.y, s.loss_fn, opt) end end)
  opt.step = orig
  if not ok then return U.finding("train_mode", "skip", "train_step raised an error", tostring(err)) end
  local total = train_steps + eval_steps
  local ev = ("%d of %d optimizer steps of train_step taken with the model in eval mode; dropout/BatchNorm layers: %s")
    :format(eval_steps, total, named)
  if total == 0 then return U.finding("train_mode", "skip", "train_step did not call optimizer:step()", ev) end
  if eval_steps == 0 then return U.finding("train_mode", "ok", "the model is in train mode at every optimizer step", ev) end
  if #layers == 0 then
    return U.finding("train_mode", "ok", "the model trains in eval mode, harmless here (no dropout/BatchNorm)", ev)
  end
  local f = U.finding("train_mode", "fail", "the model is left in eval mode while it trains", ev, cause)
  f.confidence = eval_steps == total and 0.95 or 0.85
  return f
end

return M
