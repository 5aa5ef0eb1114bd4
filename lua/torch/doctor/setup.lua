--[[
  torch.doctor.setup — reads a doctor "setup" (the protocol below) and gives the checks what they
  need: fresh models, optimizers, a batch cache, the loss, the task's expected numbers.

  The setup protocol (a table, or a script path whose chunk returns that table):
    model        = function() -> nn.Module                      (required; called once per check,
                   after torch.manual_seed(seed), so paired runs start from the same weights)
    loss_fn      = nn.CrossEntropyLoss() | function(output, target) -> 0-d loss   (required)
    optimizer    = function(params) -> optim.X(params, {...})   (default SGD lr 0.01)
    train_loader = function() -> DataLoader | iterator function | array of batches  (required)
    val_loader   = the same, optional (used for the train/val leak check)
    task         = "classification" | "binary" | "regression"   (default: guessed from loss/targets)
    num_classes  = C                                            (classification; default from output)
    batch        = function(batch) -> x, y                      (default batch[1], batch[2] or .x, .y)
    scheduler    = function(optimizer) -> lr scheduler, optional; scheduler_step = "epoch" | "step"
    epochs, steps_per_epoch                                     the planned run (LR schedule check)
    train_step   = function(model, x, y, loss_fn, optimizer) -> loss, optional: your own step,
                   checked for a missing zero_grad
    evaluate     = function(model, x) -> output, optional: your evaluation forward, checked for a
                   missing model:eval() (it is called on a model left in train mode)
    decode       = function(x_row) -> string, optional: how to show one input (text tokens, ...)
    class_names  = {"cat", "dog", ...}, optional: shown beside the labels (index 0 -> class_names[1])
    device       = "cuda", optional: batches and models are moved there
  A batch is {x, y} (DataLoader's default collate) or {x = , y = }.
]]
local torch = require "torch"

local M = {}

local function is_module(v) return type(v) == "table" and rawget(v, "_modules") ~= nil end
M.is_module = is_module

function M.load(src)
  if type(src) == "table" then return src end
  if type(src) ~= "string" then error("doctor: setup must be a table or a script path, got " .. type(src), 0) end
  local chunk, why = loadfile(src)
  if not chunk then error("doctor: cannot load setup script: " .. why, 0) end
  local ok, t = pcall(chunk)
  if not ok then error("doctor: setup script " .. src .. " failed: " .. tostring(t), 0) end
  if type(t) ~= "table" then
    error(("doctor: setup script %s must return the setup table (got %s)"):format(src, type(t)), 0)
  end
  return t
end

function M.validate(s)
  local missing = {}
  for _, k in ipairs({ "model", "loss_fn", "train_loader" }) do
    if s[k] == nil then missing[#missing + 1] = k end
  end
  if #missing > 0 then
    error("doctor: setup is missing " .. table.concat(missing, ", ")
      .. " (see torch.doctor.setup for the protocol)", 0)
  end
  if type(s.model) ~= "function" then error("doctor: setup.model must be a function returning a Module", 0) end
  if s.task and s.task ~= "classification" and s.task ~= "binary" and s.task ~= "regression" then
    error("doctor: setup.task must be classification, binary or regression, got " .. tostring(s.task), 0)
  end
end

-- Does v have an iter method (a DataLoader: a table, or the userdata proxy DataLoader makes)?
local function has_iter(v)
  if type(v) ~= "table" and type(v) ~= "userdata" then return false end
  local ok, f = pcall(function() return v.iter end)
  return ok and type(f) == "function"
end
M.has_iter = has_iter

-- An iterator over batches from a loader-ish value.
function M.iterate(loader)
  if type(loader) == "function" then
    -- a builder (returns a loader) or an iterator (returns batches): builders take no args and
    -- return a non-batch value; try calling once.
    local v = loader()
    if has_iter(v) or (type(v) == "table" and v[1] ~= nil and type(v[1]) == "table" and not torch.is_tensor(v[1])) then
      return M.iterate(v)
    end
    if type(v) == "function" then return v end
    local first, done = v, false
    return function()
      if not done then done = true; return first end
      return loader()
    end
  end
  if has_iter(loader) then return loader:iter() end
  if type(loader) == "table" then
    local i = 0
    return function() i = i + 1; return loader[i] end
  end
  error("doctor: train_loader must be a function, a DataLoader or an array of batches", 3)
end

function M.split(s, batch)
  if s.batch then return s.batch(batch) end
  if torch.is_tensor(batch) then error("doctor: a batch must be {x, y}; got a single tensor (pass setup.batch)", 3) end
  local x = batch.x or batch[1] or batch.input or batch.inputs
  local y = batch.y or batch[2] or batch.target or batch.targets or batch.label or batch.labels
  return x, y
end

-- Up to n batches, as {x, y} pairs.
function M.take(s, loader, n)
  local it = M.iterate(loader)
  local out = {}
  while #out < n do
    local b = it()
    if b == nil then break end
    local x, y = M.split(s, b)
    out[#out + 1] = { x = x, y = y }
  end
  return out
end

function M.call_loss(s, out, y)
  return s.loss_fn(out, y)
end

function M.loss_name(s)
  if is_module(s.loss_fn) then return s.loss_fn.__name end
  return s.loss_name or "function"
end

function M.new_model(s, seed)
  torch.manual_seed(seed or 0)
  local m = s.model()
  if not is_module(m) then error("doctor: setup.model() must return an nn.Module", 3) end
  return m
end

function M.new_optimizer(s, model)
  if s.optimizer then return s.optimizer(model:parameters()) end
  return torch.optim.SGD(model:parameters(), { lr = 0.01 })
end

-- The task, from the setup or guessed from the loss and the targets.
function M.task(s, y)
  if s.task then return s.task end
  local ln = M.loss_name(s)
  if ln == "CrossEntropyLoss" or ln == "NLLLoss" then return "classification" end
  if ln == "BCEWithLogitsLoss" or ln == "BCELoss" then return "binary" end
  if ln == "MSELoss" or ln == "L1Loss" or ln == "SmoothL1Loss" or ln == "HuberLoss" then return "regression" end
  if y and (y.dtype == torch.int64 or y.dtype == torch.int32) then return "classification" end
  return "regression"
end

return M
