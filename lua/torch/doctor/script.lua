--[[
  torch.doctor.script — runs a user's file for doctor. A file that returns a setup table (the
  protocol of torch.doctor.setup) is used as is; an ordinary training script is run under
  instrumentation (torch.doctor.capture) for `budget` optimizer steps and stopped, and what it
  trained — model (as it was at its first forward), loss, optimizer class and hyper-parameters,
  the batches of its steps and of its validation loss calls — becomes a setup for the probes,
  with the trace attached for the checks that judge the script's own loop.

    local setup = require("torch.doctor.script").load("train.lua", {"--epochs", "3"}, {budget = 50})
    setup.trace      -- nil for a setup file; the capture trace for a training script
]]
local torch = require "torch"
local S = require "torch.doctor.setup"
local DC = require "torch.doctor.data_checks"
local capture = require "torch.doctor.capture"
local TU = require "torch.nn._transformer_util"

local nn = torch.nn

local M = {}

-- The model as the loss sees it, when the script reshapes the output before the loss (see
-- capture.loss_view): (N, 1) -> (N), or (B, T, C) -> (B, C, T), PyTorch's class-dim-1 layout.
local LossView = nn.Module:extend("LossView")
function LossView:__init(inner, view) self.inner = inner; self.view = view end
function LossView:forward(x)
  local out = self.inner(x)
  if self.view.per_row > 1 then return out:movedim(-1, 1) end
  return out:reshape(-1, unpack(self.view.tail))
end

local function viewed_loss(fn, view)
  if view.per_row == 1 then return fn end
  return function(out, y) return fn(out:movedim(1, -1):reshape(-1, unpack(view.tail)), y:reshape(-1)) end
end

local function is_setup(t)
  return type(t) == "table" and t.model ~= nil and t.loss_fn ~= nil and t.train_loader ~= nil
end

-- Runs `path` with `args` (as arg[1..] and ...) under capture; returns the value it returned, the
-- capture, and the error it raised (nil when it ended or was stopped by the budget).
local function run_script(path, args, opts)
  local chunk, why = loadfile(path)
  if not chunk then error("doctor: cannot load setup script: " .. why, 0) end
  local saved_arg = rawget(_G, "arg")
  local a = { [0] = path }
  for i, v in ipairs(args or {}) do a[i] = v end
  _G.arg = a
  local cap = capture.install({ budget = opts.budget, keep = opts.keep, verbose = opts.verbose })
  local ok, ret = xpcall(function() return chunk(unpack(a)) end, function(e)
    if capture.is_stop(e) then return e end
    return debug.traceback(tostring(e), 2)
  end)
  cap:restore()
  _G.arg = saved_arg
  if ok then return ret, cap, nil end
  if capture.is_stop(ret) then return nil, cap, nil end
  return nil, cap, ret
end

-- A fresh optimizer of the script's class with the script's hyper-parameters (first group's).
-- The group holds keys the constructor does not take (AdamW's decoupled_weight_decay, a
-- scheduler's initial_lr): the optimizer is made with lr alone and the group then gets them all.
local function optimizer_builder(trace)
  local class, h = trace.opt_class, trace.opt_groups[1]
  return function(params)
    local opt = class(params, { lr = h.lr })
    local group = opt.param_groups[1]
    for k, v in pairs(h) do
      if k ~= "params" then group[k] = v end
    end
    return opt
  end
end

-- The setup the probes run on, from what the trace captured.
function M.setup_from_trace(trace, path)
  local model = trace.model
  local template = model and trace.templates[model]
  if not template then
    error(("doctor: %s made %d optimizer steps but no nn.Module forward was seen before them"):format(path, trace.steps), 0)
  end
  if not trace.loss then
    error(("doctor: %s trains, but its loss is not one doctor recognises (nn.*Loss modules and "
      .. "F.cross_entropy, F.mse_loss, ... are); write the setup table instead (see torch.doctor.setup)"):format(path), 0)
  end
  if #trace.batches == 0 then
    error("doctor: no (input, target) batch was seen at an optimizer step in " .. path, 0)
  end
  local val = trace.val_batches
  if #val == 0 then
    -- batches of the loaders iterated without an optimizer step (validation loaders)
    for _, l in ipairs(trace.loaders) do
      if l.steps == 0 then
        for _, b in ipairs(l.kept) do
          local ok, x, y = pcall(S.split, {}, b)
          if ok and x ~= nil and y ~= nil then val[#val + 1] = { x = x, y = y } end
        end
      end
    end
  end
  -- the first epoch's batches, for the duplicate scan (later epochs repeat the samples)
  -- (without a DataLoader: until a batch whose samples were nearly all seen before)
  local first = trace.batches[1]
  local scan, seen = { first }, {}
  if not first.loader then for _, k in ipairs(DC.fingerprints({ first })) do seen[k] = true end end
  for i = 2, #trace.batches do
    local b = trace.batches[i]
    if first.loader and (b.loader ~= first.loader or b.pass ~= first.pass) then break end
    if not first.loader then
      local keys, old = DC.fingerprints({ b }), 0
      for _, k in ipairs(keys) do if seen[k] then old = old + 1 end end
      if old > 0.5 * #keys then break end
      for _, k in ipairs(keys) do seen[k] = true end
    end
    scan[#scan + 1] = b
  end
  local loss = trace.loss
  local view = loss.view
  return {
    model = function()
      local m = TU.deepcopy(template)
      if view then m = LossView(m, view) end
      m:train()
      return m
    end,
    loss_fn = view and viewed_loss(loss.fn, view) or loss.fn,
    loss_name = loss.name,
    optimizer = optimizer_builder(trace),
    train_loader = trace.batches,
    scan_loader = scan,
    val_loader = #val > 0 and val or nil,
    trace = trace,
    script = path,
  }
end

function M.load(path, args, opts)
  opts = opts or {}
  local ret, cap, err = run_script(path, args, opts)
  local trace = cap.trace
  if err then
    if trace.steps == 0 then error(("doctor: script %s failed before its first optimizer step: %s"):format(path, err), 0) end
    -- a script that fails after some steps still gave doctor something to look at
    trace.script_error = err
  end
  if trace.steps == 0 then
    if is_setup(ret) then return ret end
    if type(ret) == "table" then
      local missing = {}
      for _, k in ipairs({ "model", "loss_fn", "train_loader" }) do if ret[k] == nil then missing[#missing + 1] = k end end
      error("doctor: setup is missing " .. table.concat(missing, ", ") .. " (see torch.doctor.setup for the protocol)", 0)
    end
    error(("doctor: %s ran to its end without an optimizer step and returned no setup table (got %s); "
      .. "give a training script (model, loss, optimizer:step()) or a setup table"):format(path, type(ret)), 0)
  end
  return M.setup_from_trace(trace, path)
end

M.is_setup = is_setup
return M
