--[[
  torch.training_state — whole training state in one file, and a manager that keeps the last N
  checkpoints plus the best one by a metric.

      torch.training_state.save_training_state("ckpt.pt", {model = net, optimizer = opt,
        scheduler = sched, scaler = scaler, epoch = 3, step = 1200, best_metric = 0.41,
        config = {lr = 0.1}})
      local st = torch.training_state.load_training_state("ckpt.pt", {model = net, optimizer = opt})
      -- st.epoch, st.step, st.best_metric, st.config; the CPU and CUDA generators are restored too

      local mgr = torch.training_state.Manager("runs/a", {keep_last = 3, best_metric = "val_loss", mode = "min"})
      mgr:save(step, {model = net, optimizer = opt, epoch = e}, {val_loss = 0.3})
      mgr:load_latest({model = net, optimizer = opt})

  Objects (model, optimizer, scheduler, scaler) are saved through their state_dict() and
  restored through load_state_dict(); plain tables are saved as they are. The file is a `.pt`
  (PyTorch's zip): torch.load(path) in PyTorch reads it, keys "model", "optimizer", ...
  Saves are atomic (torch.save), and the manager's index is written after the checkpoint, so a
  crash never leaves the index pointing at a missing or partial file.
  Named for what it keeps: PyTorch has no torch.checkpoint, and torch.utils.checkpoint is
  activation recomputation; ltorch's earlier name torch.checkpoint raises an error naming this one.
]]
local torch = require "torch"
local serialization = require "torch.serialization"
local json = require "torch.serialization.json"
local warnings = require "torch._warnings"

local M = {}

local OBJECTS = { "model", "optimizer", "scheduler", "scaler" }
local PLAIN = { "epoch", "step", "best_metric", "config" }

local function state_of(v)
  if type(v) == "table" and type(v.state_dict) == "function" then return v:state_dict() end
  return v
end

-- The generators' states: the CPU's and, on a GPU machine, every visible CUDA device's (a list).
local function rng_states()
  local rng = { cpu = torch.get_rng_state() }
  if torch.cuda.device_count() > 0 then rng.cuda = torch.cuda.get_rng_state_all() end
  return rng
end

-- Puts the saved generator states back (as CPU tensors whatever map_location did to them); CUDA
-- states for the devices both the checkpoint and this machine have, with a warning when they differ.
local function restore_rng(rng)
  if torch.is_tensor(rng.cpu) then torch.set_rng_state(rng.cpu:cpu()) end
  local saved = type(rng.cuda) == "table" and rng.cuda or {}
  local visible = torch.cuda.device_count()
  if #saved ~= visible and (#saved > 0 or visible > 0) then
    warnings.warn(("load_training_state: the checkpoint has CUDA generator states for %d device(s), this machine " ..
      "sees %d: restoring the first %d"):format(#saved, visible, math.min(#saved, visible)), 3)
  end
  for i = 1, math.min(#saved, visible) do torch.cuda.set_rng_state(saved[i]:cpu(), i - 1) end
end

function M.save_training_state(path, parts)
  if type(path) ~= "string" then error("bad argument #1 to 'save_training_state' (string expected, got " .. type(path) .. ")", 2) end
  if type(parts) ~= "table" then error("bad argument #2 to 'save_training_state' (table expected, got " .. type(parts) .. ")", 2) end
  local known = {}
  for _, k in ipairs(OBJECTS) do known[k] = true end
  for _, k in ipairs(PLAIN) do known[k] = true end
  for k in pairs(parts) do
    if not known[k] then error(("save_training_state: unknown part '%s' (expected %s, %s)"):format(
      tostring(k), table.concat(OBJECTS, ", "), table.concat(PLAIN, ", ")), 2) end
  end
  local st = { format = "ltorch.training_state", version = 1, rng = rng_states() }
  for _, k in ipairs(OBJECTS) do if parts[k] ~= nil then st[k] = state_of(parts[k]) end end
  for _, k in ipairs(PLAIN) do if parts[k] ~= nil then st[k] = parts[k] end end
  local ok, err = pcall(torch.save, st, path)
  if not ok then error("save_training_state: " .. tostring(err), 2) end
end

-- Restores into the objects given in `into` (model, optimizer, scheduler, scaler) and the RNG
-- (unless restore_rng = false); returns the loaded table (epoch, step, best_metric, config, ...).
function M.load_training_state(path, into)
  into = into or {}
  local ok, st = pcall(torch.load, path, { map_location = into.map_location })
  if not ok then error("load_training_state: " .. tostring(st), 2) end
  if type(st) ~= "table" or st.format ~= "ltorch.training_state" then
    error("load_training_state: " .. path .. " is not a training-state checkpoint", 2)
  end
  for _, k in ipairs(OBJECTS) do
    local obj = into[k]
    if obj ~= nil then
      if st[k] == nil then error(("load_training_state: %s has no '%s' state"):format(path, k), 2) end
      if type(obj.load_state_dict) ~= "function" then error(("load_training_state: %s has no load_state_dict"):format(k), 2) end
      local lok, lerr = pcall(obj.load_state_dict, obj, st[k])
      if not lok then error(("load_training_state: restoring %s: %s"):format(k, tostring(lerr)), 2) end
    end
  end
  if into.restore_rng ~= false and type(st.rng) == "table" then restore_rng(st.rng) end
  return st
end

---------------------------------------------------------------- Manager
local Manager = {}
Manager.__index = Manager

local function index_path(self) return self.dir .. "/checkpoints.json" end

local function write_index(self)
  local text = json.encode({ checkpoints = self.entries, best = self.best_entry or json.null })
  serialization.write_file_atomic(index_path(self), text)
end

local function read_index(self)
  local f = io.open(index_path(self), "rb")
  if not f then return end
  local text = f:read("*a")
  f:close()
  local ok, idx = pcall(json.decode, text)
  if not ok or type(idx) ~= "table" or type(idx.checkpoints) ~= "table" then
    error("checkpoint.Manager: corrupt index " .. index_path(self), 3)
  end
  self.entries = idx.checkpoints
  if idx.best ~= json.null then self.best_entry = idx.best end
end

function M.Manager(dir, opts)
  if type(dir) ~= "string" then error("bad argument #1 to 'Manager' (string expected, got " .. type(dir) .. ")", 2) end
  opts = opts or {}
  local mode = opts.mode or "min"
  if mode ~= "min" and mode ~= "max" then error("Manager: mode must be 'min' or 'max', got " .. tostring(mode), 2) end
  local keep = opts.keep_last or 3
  if type(keep) ~= "number" or keep < 1 then error("Manager: keep_last must be a positive number", 2) end
  os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'")
  local self = setmetatable({ dir = dir, keep_last = keep, metric = opts.best_metric, mode = mode,
    prefix = opts.prefix or "checkpoint", entries = {} }, Manager)
  read_index(self)
  return self
end

local function better(self, a, b)
  if b == nil then return true end
  if self.mode == "min" then return a < b end
  return a > b
end

-- Saves the training state as <dir>/<prefix>-<step>.pt, records it, applies retention.
-- metrics: a table of numbers ({val_loss = 0.3}); the one named best_metric picks the best.
function Manager:save(step, parts, metrics)
  if type(step) ~= "number" then error("bad argument #1 to 'save' (number expected, got " .. type(step) .. ")", 2) end
  local name = ("%s-%08d.pt"):format(self.prefix, step)
  local path = self.dir .. "/" .. name
  parts = parts or {}
  local value = self.metric and metrics and metrics[self.metric]
  local copy = {}
  for k, v in pairs(parts) do copy[k] = v end
  copy.step = copy.step or step
  if value ~= nil and better(self, value, self.best_entry and self.best_entry.metric) then copy.best_metric = value end
  M.save_training_state(path, copy)
  for i = #self.entries, 1, -1 do if self.entries[i].file == name then table.remove(self.entries, i) end end
  local entry = { file = name, step = step, metric = value }
  self.entries[#self.entries + 1] = entry
  table.sort(self.entries, function(a, b) return a.step < b.step end)
  if value ~= nil and better(self, value, self.best_entry and self.best_entry.metric) then self.best_entry = entry end
  local removed = {}
  local function is_best(e) return self.best_entry ~= nil and e.file == self.best_entry.file end
  local others = 0
  for _, e in ipairs(self.entries) do if not is_best(e) then others = others + 1 end end
  while others > self.keep_last do   -- the oldest non-best goes first; the best always stays
    for i, e in ipairs(self.entries) do
      if not is_best(e) then
        removed[#removed + 1] = table.remove(self.entries, i).file
        break
      end
    end
    others = others - 1
  end
  write_index(self)   -- the index changes only after the new file is complete
  for _, f in ipairs(removed) do os.remove(self.dir .. "/" .. f) end
  return path
end

function Manager:checkpoints()
  local out = {}
  for i, e in ipairs(self.entries) do out[i] = self.dir .. "/" .. e.file end
  return out
end

function Manager:latest()
  local e = self.entries[#self.entries]
  return e and (self.dir .. "/" .. e.file) or nil
end

function Manager:best()
  return self.best_entry and (self.dir .. "/" .. self.best_entry.file) or nil
end

function Manager:load_latest(into)
  local p = self:latest()
  if not p then return nil end
  return M.load_training_state(p, into)
end

function Manager:load_best(into)
  local p = self:best()
  if not p then return nil end
  return M.load_training_state(p, into)
end

M.ManagerClass = Manager
return M
