--[[
  torch.doctor.trace_checks — the checks that judge the user's own training loop from what
  torch.doctor.capture saw while it ran (ctx.trace): the model's mode during optimizer steps, a
  missing zero_grad, the LR the optimizer really used against its scheduler, parameters that
  never get a gradient or are not optimised, validation in train mode, random augmentation in
  the evaluation data. Each returns a finding (see torch.doctor.checks) or nil without a trace.

  Ids: train_mode, zero_grad (the trace form of checks.zero_grad), lr_applied, grad_reach,
  eval_data.
]]
local torch = require "torch"
local capture = require "torch.doctor.capture"

local M = {}

local function finding(id, verdict, title, evidence, cause, confidence)
  return { id = id, verdict = verdict, title = title, evidence = evidence, cause = cause, confidence = confidence }
end

local function stochastic_layers(model)
  local names = {}
  for _, nm in ipairs(model:named_modules()) do
    local n = nm[2].__name or ""
    if n:match("Dropout") or n:match("BatchNorm") then names[#names + 1] = ("%s (%s)"):format(nm[1], n) end
  end
  return names
end

function M.train_mode(ctx)
  local t = ctx.trace
  if not t or not t.model then return nil end
  local total = t.train_steps + t.eval_steps
  local layers = stochastic_layers(t.model)
  local ev = ("%d of %d optimizer steps taken with the model in eval mode; dropout/BatchNorm layers: %s")
    :format(t.eval_steps, total, #layers > 0 and table.concat(layers, ", ", 1, math.min(#layers, 4)) or "none")
  if t.eval_steps == 0 then return finding("train_mode", "ok", "the model is in train mode at every optimizer step", ev) end
  if #layers == 0 then
    return finding("train_mode", "ok", "the model trains in eval mode, harmless here (no dropout/BatchNorm)", ev)
  end
  return finding("train_mode", "fail", "the model is left in eval mode while it trains", ev,
    "model:eval() (e.g. from a validation pass) is never undone: call model:train() at the start of "
      .. "every training epoch; in eval mode dropout is off and BatchNorm neither uses nor updates batch statistics",
    t.eval_steps == total and 0.95 or 0.8)
end

function M.zero_grad(ctx)
  local t = ctx.trace
  local backs = t.backwards - 1
  local ev = ("%d backward calls after an optimizer step; %d found the previous step's gradients still there; "
    .. "zero_grad called %d times"):format(math.max(backs, 0), t.accumulated, t.zero_grads)
  if t.accumulated > 0 then
    return finding("zero_grad", "fail", "gradients accumulate across steps (missing zero_grad)", ev,
      "call optimizer:zero_grad() (or model:zero_grad()) before loss:backward() in every step: each step "
        .. "now applies the sum of every gradient so far", t.accumulated >= backs * 0.9 and 0.97 or 0.85)
  end
  return finding("zero_grad", "ok", "gradients are reset between steps", ev)
end

local function lr_track(lrs)
  local n = #lrs
  if n == 0 then return "no step" end
  local idx, out = { 1, math.floor(n / 2) + 1, n }, {}
  for _, i in ipairs(idx) do out[#out + 1] = ("%d: %.3g"):format(i - 1, lrs[i]) end
  return "LR at step " .. table.concat(out, ", ")
end

function M.lr_applied(ctx)
  local t = ctx.trace
  local ev = lr_track(t.lrs)
  local problems, conf = {}, 0.9
  for _, s in ipairs(t.schedulers) do
    local name = s.sched.__name or "scheduler"
    if s.sched.optimizer ~= t.optimizer then
      problems[#problems + 1] = ("%s is attached to an optimizer that is never stepped"):format(name)
    elseif s.mismatch then
      problems[#problems + 1] = ("%s set the LR to %.3g but step %d ran with %.3g (the LR is overwritten after "
        .. "the scheduler)"):format(name, s.mismatch.sched, s.mismatch.step, s.mismatch.group)
    elseif s.steps == 0 then
      local epochs = 0
      for _, l in ipairs(t.loaders) do if l.steps > 0 then epochs = math.max(epochs, l.iterations - 1) end end
      if epochs >= 1 then
        problems[#problems + 1] = ("%s was never stepped through %d finished epochs"):format(name, epochs)
        conf = 0.8
      end
    end
  end
  local lrs, base = t.lrs, t.lrs[1]
  if base and base > 0 then
    for i, lr in ipairs(lrs) do
      if lr < 0.01 * base then
        problems[#problems + 1] = ("the LR fell below 1%% of its start by step %d of %d"):format(i - 1, #lrs)
        conf = 0.7
        break
      end
    end
  end
  ev = ev .. (#t.schedulers > 0 and ("; %d scheduler(s), stepped %d time(s)"):format(#t.schedulers, t.schedulers[1].steps) or "; no scheduler")
  if #problems == 0 then return finding("lr_applied", "ok", "the LR the optimizer uses is the one scheduled", ev) end
  return finding("lr_applied", "fail", "the LR schedule is not what the optimizer uses", ev .. "; " .. table.concat(problems, "; "),
    "build the scheduler on the optimizer you step, call sched:step() once per epoch (or per batch for "
      .. "per-step schedules) after optimizer:step(), and do not reassign param_groups[i].lr afterwards", conf)
end

function M.grad_reach(ctx)
  local t = ctx.trace
  if not t.model or not t.optimizer then return nil end
  local in_opt = {}
  for _, g in ipairs(t.optimizer.param_groups) do for _, p in ipairs(g.params) do in_opt[p] = true end end
  local never, missing, total = {}, {}, 0
  for _, nv in ipairs(t.model:named_parameters()) do
    local name, p = nv[1], nv[2]
    if p.requires_grad then
      total = total + 1
      if not in_opt[p] then missing[#missing + 1] = name
      elseif t.no_grad_params and t.no_grad_params[p] then never[#never + 1] = name end
    end
  end
  local ev = ("%d trainable parameters over %d steps: %d never got a non-zero gradient%s; %d not in the optimizer%s")
    :format(total, t.steps, #never, #never > 0 and (" (" .. table.concat(never, ", ", 1, math.min(#never, 5)) .. ")") or "",
      #missing, #missing > 0 and (" (" .. table.concat(missing, ", ", 1, math.min(#missing, 5)) .. ")") or "")
  if #never == 0 and #missing == 0 then
    return finding("grad_reach", "ok", "every parameter gets gradients and is optimised", ev)
  end
  return finding("grad_reach", #never > 0 and "fail" or "warn",
    #never > 0 and "gradients never reach some parameters" or "some parameters are not in the optimizer", ev,
    "a parameter off the loss's path (a detach(), an unused layer, a tensor rebuilt outside autograd) never "
      .. "learns; one missing from the optimizer is never updated (the optimizer was built before the layer "
      .. "was added, or on another model's parameters)", #never > 0 and 0.9 or 0.7)
end

-- a loader's dataset read twice at the same indices: do the samples differ?
local function random_samples(ds)
  -- a dataset is a table or a userdata proxy (torch.data); either reads .get and .len
  local ok, get, len = pcall(function() return ds.get, ds.len end)
  if not ok or type(get) ~= "function" or type(len) ~= "function" then return nil end
  local n = math.min(ds:len(), 8)
  local diff = 0
  for i = 0, n - 1 do
    local a, b = ds:get(i), ds:get(i)
    local ta = torch.is_tensor(a) and a or (type(a) == "table" and a[1])
    local tb = torch.is_tensor(b) and b or (type(b) == "table" and b[1])
    if torch.is_tensor(ta) and torch.is_tensor(tb) and not torch.equal(ta, tb) then diff = diff + 1 end
  end
  return diff, n
end

function M.eval_data(ctx)
  local t = ctx.trace
  local problems, notes = {}, {}
  local ef = t.eval_forwards
  if ef.train_mode > 0 then
    problems[#problems + 1] = ("%d of %d forwards without grad (validation) ran with the model in train mode "
      .. "and dropout/BatchNorm present"):format(ef.train_mode, ef.total)
  end
  for i, l in ipairs(t.loaders) do
    if l.steps == 0 and l.batches > 0 then
      local ok, diff, n = pcall(random_samples, l.loader.dataset)
      if ok and diff and diff > 0 then
        problems[#problems + 1] = ("evaluation loader %d returns different samples for the same index (%d of %d read "
          .. "twice): random augmentation is applied at evaluation"):format(i, diff, n)
      elseif ok and diff then
        notes[#notes + 1] = ("evaluation loader %d is deterministic"):format(i)
      end
    end
  end
  local ev = ("%d validation forwards seen%s"):format(ef.total, #notes > 0 and ("; " .. table.concat(notes, "; ")) or "")
  if #problems == 0 then return finding("eval_data", "ok", "evaluation runs in eval mode on fixed data", ev) end
  return finding("eval_data", "fail", "evaluation is not deterministic", ev .. "; " .. table.concat(problems, "; "),
    "evaluate with model:eval() and a dataset without random transforms (crop/flip/noise belong to training "
      .. "only): the validation numbers are noisy and biased otherwise", 0.9)
end

M.has_stochastic = capture.has_stochastic
return M
