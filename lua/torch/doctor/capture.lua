--[[
  torch.doctor.capture — instruments the training library while a user's script runs, and writes
  what it sees into a trace: module forwards and their train/eval mode, loss calls with input and
  target, backward, zero_grad, optimizer steps with their LR, LR scheduler steps, DataLoader
  iterations. After `budget` optimizer steps the step hook raises a private sentinel, which
  stops the script (os.exit raises it too). Every wrapped method is restored by :restore().

    local cap = require("torch.doctor.capture").install({ budget = 50 })
    local ok, err = xpcall(chunk, debug.traceback)
    cap:restore()
    if not ok and not cap.is_stop(err) then ... end
    cap.trace     -- see new_trace below

  Wrapped, on the classes: every Module class's instance __call (patched as instances are made,
  through Module.new), Module.zero_grad, Optimizer.step/zero_grad, Tensor.backward, the
  functional losses (F.cross_entropy, F.mse_loss, ...), LR scheduler step, DataLoader.iter.
]]
local torch = require "torch"
local module = require "torch.nn.module"
local optimizer = require "torch.optim.optimizer"
local sched_base = require "torch.optim.lr_scheduler_base"
local DataLoader = require "torch.data.dataloader"
local TU = require "torch.nn._transformer_util"

local Module, Optimizer = module.Module, optimizer.Optimizer
local F = torch.nn.functional

local M = {}

-- The sentinel the step hook raises; is_stop(err) recognises it.
local STOP = setmetatable({}, { __tostring = function() return "doctor: step budget reached" end })
function M.is_stop(err) return err == STOP end

-- functional losses and the nn class name doctor's checks know them by
M.loss_names = {
  cross_entropy = "CrossEntropyLoss", nll_loss = "NLLLoss", mse_loss = "MSELoss", l1_loss = "L1Loss",
  smooth_l1_loss = "SmoothL1Loss", huber_loss = "HuberLoss", binary_cross_entropy = "BCELoss",
  binary_cross_entropy_with_logits = "BCEWithLogitsLoss",
}

local function new_trace(budget, keep)
  return {
    budget = budget, keep = keep,
    steps = 0, backwards = 0, zero_grads = 0, accumulated = 0,  -- backward calls that met stale grads
    model = nil, templates = {},        -- the trained root module; its deep copy at its first forward
    optimizer = nil, opt_class = nil, opt_groups = nil,  -- the stepped optimizer, its first hyper-parameters
    loss = nil,                         -- {fn, name, opts} of the last loss call in a training step
    batches = {}, val_batches = {},     -- {x, y} of training steps / of loss calls outside them
    losses = {}, lrs = {},              -- per step: the loss value, the first group's LR
    eval_steps = 0, train_steps = 0,    -- steps taken with the model in eval / train mode
    eval_forwards = { train_mode = 0, total = 0 },  -- forwards without grad (validation)
    no_grad_params = nil,               -- [param] = true while its grad was never non-zero at a step
    schedulers = {},                    -- {sched, steps, lr_mismatch = {step, group lr, sched lr}}
    loaders = {},                       -- {loader, iterations, batches, steps (during), forwards}
  }
end

local function first_arg_tensor(...)
  local a = ...
  if torch.is_tensor(a) then return a end
end

local function has_stochastic(m)
  for _, sub in ipairs(m:modules()) do
    local n = sub.__name or ""
    if n:match("Dropout") or n:match("BatchNorm") then return true end
  end
  return false
end
M.has_stochastic = has_stochastic

-- How the loss's input is a reshape of the model's output, or nil when it is the output itself:
-- {tail = the loss input's sizes after dim 0, per_row = loss rows per sample}. Two forms are
-- known: an (N, 1) output viewed as (N) (per_row 1), and a sequence model's (B, T, C) output
-- flattened to (B*T, C) against (B*T) targets (per_row T).
function M.loss_view(out, input, target)
  if not torch.is_tensor(out) or out:dim() < 1 or input:dim() < 1 or out:numel() ~= input:numel() then return nil end
  local so, si = out:size(), input:size()
  if table.concat(so, ",") == table.concat(si, ",") then return nil end
  local tail = {}
  for d = 2, #si do tail[#tail + 1] = si[d] end
  if si[1] == so[1] then return { tail = tail, per_row = 1 } end
  if #so == 3 and #si == 2 and si[2] == so[3] and si[1] == so[1] * so[2] and target:dim() == 1
      and target:size(0) == si[1] then
    return { tail = tail, per_row = so[2] }
  end
  return nil
end

--[[ The install steps below share one session table `st`: the trace, the undo list, and the
     state the wraps keep between calls (depth: nesting of module forwards; in_loss: inside a
     loss; stopped: the budget was reached; pending: the batch of the step in progress;
     current_loader: the DataLoader entry last iterated; dirty: grads not cleared since a step). ]]

-- Replaces tbl[key] with wrapper(original), remembering how to undo it.
local function patch(st, tbl, key, wrapper)
  local orig = rawget(tbl, key)
  st.undo[#st.undo + 1] = function() rawset(tbl, key, orig) end
  rawset(tbl, key, wrapper(orig))
end

local function stop(st) st.stopped = true; error(STOP, 0) end

-- Calls orig(...) with st[counter] raised by one, re-raising its error without a position.
local function nested(st, counter, orig, ...)
  st[counter] = st[counter] + 1
  local ok, out = pcall(orig, ...)
  st[counter] = st[counter] - 1
  if not ok then error(out, 0) end
  return out
end

local function record_loss(st, fn, name, input, target)
  local trace = st.trace
  if st.in_loss > 0 or not torch.is_tensor(input) or not torch.is_tensor(target) then return end
  local grad = torch.is_grad_enabled()
  local x = trace.last_x
  if grad then
    local view = M.loss_view(trace.last_out, input, target)
    trace.loss = { fn = fn, name = name, view = view }
    -- a target flattened with the outputs goes back to one row per sample
    local y = (view and view.per_row > 1) and target:reshape(input:size(0) / view.per_row, view.per_row) or target
    local loader = st.current_loader
    st.pending = x and { x = x, y = y, loader = loader, pass = loader and loader.iterations } or nil
  elseif x and #trace.val_batches < trace.keep then
    trace.val_batches[#trace.val_batches + 1] = { x = x, y = target }
  end
end

-- A root module's forward (not inside another forward or a loss): the batch, the model, its mode.
local function root_forward(st, orig, self, ...)
  local trace = st.trace
  if not trace.templates[self] then trace.templates[self] = TU.deepcopy(self) end
  trace.last_x, trace.last_model = first_arg_tensor(...), self
  if not torch.is_grad_enabled() then
    trace.eval_forwards.total = trace.eval_forwards.total + 1
    if rawget(self, "training") and has_stochastic(self) then
      trace.eval_forwards.train_mode = trace.eval_forwards.train_mode + 1
    end
  end
  if st.current_loader then st.current_loader.forwards = st.current_loader.forwards + 1 end
  st.depth = 1
  local ok, out = pcall(orig, self, ...)
  st.depth = 0
  if not ok then error(out, 0) end
  trace.last_out = out
  return out
end

-- Module forwards: each class's instance metatable gets a wrapped __call when its first
-- instance is made (through Module.new).
local function wrap_forwards(st)
  local patched_mt = {}
  local function wrap_call(orig)
    return function(self, ...)
      if st.stopped then error(STOP, 0) end
      local name = rawget(self, "_class").__name or ""
      if st.depth == 0 and name:match("Loss$") then
        local input, target = ...
        record_loss(st, self, name, input, target)
        return nested(st, "in_loss", orig, self, ...)
      end
      if st.depth > 0 or st.in_loss > 0 then return nested(st, "depth", orig, self, ...) end
      return root_forward(st, orig, self, ...)
    end
  end
  patch(st, Module, "new", function(orig)
    return function(class, ...)
      local self = orig(class, ...)
      local mt = getmetatable(self)
      if mt and not patched_mt[mt] then
        patched_mt[mt] = mt.__call
        mt.__call = wrap_call(mt.__call)
      end
      return self
    end
  end)
  st.undo[#st.undo + 1] = function() for mt, orig in pairs(patched_mt) do mt.__call = orig end end
end

-- The functional losses (F.cross_entropy, ...).
local function wrap_losses(st)
  for fname, cname in pairs(M.loss_names) do
    if F[fname] then   -- loads torch.nn.functional_loss
      patch(st, F, fname, function(orig)
        return function(input, target, o)
          record_loss(st, function(a, b) return orig(a, b, o) end, cname, input, target)
          return nested(st, "in_loss", orig, input, target, o)
        end
      end)
    end
  end
end

-- Whether any parameter of the optimizer still holds a non-zero gradient.
local function any_grad(opt)
  for _, g in ipairs(opt.param_groups) do
    for _, p in ipairs(g.params) do
      local gr = p.grad
      if gr ~= nil and gr:abs():max():item() > 0 then return true end
    end
  end
  return false
end

-- backward (did the previous step's gradients survive into this one?) and the zero_grads.
local function wrap_backward(st)
  local trace = st.trace
  patch(st, torch.Tensor, "backward", function(orig)
    return function(self, ...)
      if st.stopped then error(STOP, 0) end
      trace.backwards = trace.backwards + 1
      if st.dirty and trace.optimizer and any_grad(trace.optimizer) then trace.accumulated = trace.accumulated + 1 end
      st.dirty = false
      if self:numel() == 1 then trace.last_loss_value = self:detach():double():item() end
      return orig(self, ...)
    end
  end)
  local function cleared() trace.zero_grads = trace.zero_grads + 1; st.dirty = false end
  patch(st, Module, "zero_grad", function(orig) return function(...) cleared(); return orig(...) end end)
  patch(st, Optimizer, "zero_grad", function(orig) return function(...) cleared(); return orig(...) end end)
end

-- trace.no_grad_params: the parameters whose grad has been zero or absent at every step so far.
local function note_grads(trace, opt)
  local first = trace.no_grad_params == nil
  if first then trace.no_grad_params = {} end
  for _, g in ipairs(opt.param_groups) do
    for _, p in ipairs(g.params) do
      if first or trace.no_grad_params[p] then
        local gr = p.grad
        local zero = gr == nil or gr:abs():max():item() == 0
        trace.no_grad_params[p] = zero or nil
      end
    end
  end
end

-- The first optimizer stepped is the one traced; its first hyper-parameters are kept.
local function adopt_optimizer(trace, opt)
  trace.optimizer, trace.opt_class = opt, getmetatable(opt)
  trace.opt_groups = {}
  for i, g in ipairs(opt.param_groups) do
    local h = {}
    for k, v in pairs(g) do if k ~= "params" and k ~= "initial_lr" then h[k] = v end end
    trace.opt_groups[i] = h
  end
end

-- A scheduler whose last LR differs from the group's at this step: the first mismatch is kept.
local function note_lr_mismatch(trace, opt)
  local lr = opt.param_groups[1].lr
  for _, s in ipairs(trace.schedulers) do
    local last = s.sched._last_lr
    if s.sched.optimizer == opt and s.steps > 0 and type(last) == "table" and type(last[1]) == "number"
        and math.abs(last[1] - lr) > 1e-12 * math.max(1, math.abs(lr)) and not s.mismatch then
      s.mismatch = { step = trace.steps, group = lr, sched = last[1] }
    end
  end
end

-- What a step of the traced optimizer records before it runs.
local function before_step(st, opt)
  local trace = st.trace
  local model = trace.last_model
  if model then
    trace.model = model
    if rawget(model, "training") then trace.train_steps = trace.train_steps + 1
    else trace.eval_steps = trace.eval_steps + 1 end
  end
  note_grads(trace, opt)
  if st.pending and #trace.batches < trace.keep then trace.batches[#trace.batches + 1] = st.pending end
  st.pending = nil
  trace.losses[#trace.losses + 1] = trace.last_loss_value
  trace.lrs[#trace.lrs + 1] = opt.param_groups[1].lr
  note_lr_mismatch(trace, opt)
  if st.current_loader then st.current_loader.steps = st.current_loader.steps + 1 end
end

-- A closure optimizer (LBFGS) evaluates the model inside step(closure): the step's batch, loss
-- and gradients exist only after the closure's first call, so the records wait for it.
local function recording_closure(st, opt, closure)
  local recorded = false
  return function(...)
    local loss = closure(...)
    if not recorded then recorded = true; before_step(st, opt) end
    return loss
  end
end

-- Optimizer.step (and every optimizer class that defines its own step): the step's records,
-- and the stop when the budget is reached.
local function wrap_steps(st)
  local trace = st.trace
  local function wrap_step(orig)
    return function(self, closure, ...)
      if st.stopped then error(STOP, 0) end
      if not trace.optimizer then adopt_optimizer(trace, self) end
      if self == trace.optimizer then
        if type(closure) == "function" then closure = recording_closure(st, self, closure)
        else before_step(st, self) end
      end
      local r = orig(self, closure, ...)
      if self == trace.optimizer then
        trace.steps = trace.steps + 1
        st.dirty = true
        if trace.steps >= trace.budget then stop(st) end
      end
      return r
    end
  end
  patch(st, Optimizer, "step", wrap_step)
  for _, class in pairs(require("torch._lazy_namespace").load_all(torch.optim)) do
    if type(class) == "table" and class ~= Optimizer and rawget(class, "step") and class.zero_grad == Optimizer.zero_grad then
      patch(st, class, "step", wrap_step)
    end
  end
end

-- LR schedulers: the base step and every class that defines its own.
local function wrap_schedulers(st)
  local trace = st.trace
  local function wrap_sched(orig)
    return function(self, ...)
      local entry
      for _, s in ipairs(trace.schedulers) do if s.sched == self then entry = s end end
      if not entry then
        entry = { sched = self, steps = 0, created_at = trace.steps }
        trace.schedulers[#trace.schedulers + 1] = entry
      elseif not rawget(self, "_is_initial") then
        entry.steps = entry.steps + 1
        entry.last_at = trace.steps
      end
      return orig(self, ...)
    end
  end
  patch(st, sched_base.LRScheduler, "step", wrap_sched)
  for _, class in pairs(torch.optim.lr_scheduler) do
    if type(class) == "table" and class ~= sched_base.LRScheduler and rawget(class, "step") then
      patch(st, class, "step", wrap_sched)
    end
  end
end

-- DataLoader iteration: per loader, its passes and batches (the first pass's kept).
local function wrap_loaders(st)
  local trace = st.trace
  patch(st, DataLoader, "iter", function(orig)
    return function(self, ...)
      local entry
      for _, l in ipairs(trace.loaders) do if l.loader == self then entry = l end end
      if not entry then
        entry = { loader = self, iterations = 0, batches = 0, steps = 0, forwards = 0, kept = {} }
        trace.loaders[#trace.loaders + 1] = entry
      end
      entry.iterations = entry.iterations + 1
      local it = orig(self, ...)
      return function()
        local b = it()
        if b ~= nil then
          entry.batches = entry.batches + 1
          st.current_loader = entry
          if entry.iterations == 1 and #entry.kept < trace.keep then entry.kept[#entry.kept + 1] = b end
        end
        return b
      end
    end
  end)
end

-- The script's own end: os.exit stops it like the budget does; print is muted unless verbose.
local function wrap_exit(st, verbose)
  -- luacheck: push ignore 121 122 (the script's os.exit and print are intercepted on purpose)
  local exit, print_ = os.exit, print
  os.exit = function() stop(st) end
  if not verbose then print = function() end end
  st.undo[#st.undo + 1] = function() os.exit = exit; print = print_ end
  -- luacheck: pop
end

-- Installs the wraps; returns the capture object (trace, restore).
function M.install(opts)
  opts = opts or {}
  local trace = new_trace(opts.budget or 50, opts.keep or 50)
  local st = { trace = trace, undo = {}, depth = 0, in_loss = 0, stopped = false, pending = nil,
    current_loader = nil, dirty = false }
  wrap_forwards(st)
  wrap_losses(st)
  wrap_backward(st)
  wrap_steps(st)
  wrap_schedulers(st)
  wrap_loaders(st)
  wrap_exit(st, opts.verbose)
  local cap = { trace = trace, is_stop = M.is_stop }
  function cap:restore()
    for i = #st.undo, 1, -1 do st.undo[i]() end
    st.undo = {}
    if not trace.model then trace.model = trace.last_model end
  end
  return cap
end

return M
