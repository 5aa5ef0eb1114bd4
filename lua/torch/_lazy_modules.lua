--[[
  torch._lazy_modules — the `torch.X` names that are library modules rather than ops, loaded on
  first access: torch.nn, torch.optim, torch.distributed, torch.serialization, torch.jit,
  torch.random, torch.training_state, torch.profiler, torch.accelerator, torch.masked, torch.signal (windows), torch.utils (data, checkpoint); and torch.breakpoint, a function that
  loads the REPL's debugger when called. PyTorch's `torch/__init__.py` imports its subpackages
  the same way.

  Why a table in the core names modules above it: those modules require torch themselves, so
  torch cannot load them while it loads; it names them here and loads each when first asked.
  This file is the one sanctioned upward edge (ARCHITECTURE.md, "Allowed dependencies";
  spec/architecture/dependencies_spec.lua lets torch._lazy_modules name any library module and
  nothing else do so). A name ltorch users could have written that ltorch renamed stays in
  RENAMED: reading it raises an error that says what to write.

  Usage: torch._ops_lookup's `torch` __index asks M.load(name) for a name it lacks;
  M.names() lists them (REPL completion); torch/init.lua sets torch.breakpoint = M.breakpoint.
]]
local M = {}

local loaders = {
  nn = function() return require "torch.nn" end,
  optim = function() return require "torch.optim" end,
  distributed = function() return require "torch.distributed" end,
  serialization = function() return require "torch.serialization" end,
  training_state = function() return require "torch.training_state" end,
  jit = function() return require "torch.jit" end,
  profiler = function() return require "torch.profiler" end,
  random = function() return require "torch.random" end,
  accelerator = function() return require "torch.accelerator" end,
  masked = function() return require "torch.masked" end,
  signal = function() return { windows = require "torch.signal.windows" } end,
  utils = function() return { data = require "torch.data", checkpoint = require "torch.utils.checkpoint" } end,
  Generator = function() return require("torch._generator").Generator end,
}

local RENAMED = {
  checkpoint = "torch.checkpoint is now torch.training_state (save_training_state, load_training_state, "
    .. "Manager); activation checkpointing is torch.utils.checkpoint",
}

-- load(name) -> the module (or value) torch.<name> stands for, or nil when name is not one.
-- A renamed name raises its message at the caller of the `torch` lookup (`level` frames up).
function M.load(name, level)
  local loader = loaders[name]
  if loader then return loader(), true end
  if RENAMED[name] then error(RENAMED[name], (level or 1) + 1) end
  return nil
end

-- torch.breakpoint(): a debugger REPL at the caller (needs the ltorch executable). Not a tail
-- call: level 2 is torch.breakpoint's caller.
function M.breakpoint()
  require("torch.repl.debugger").breakpoint(2)
end

function M.names()
  local out = {}
  for k in pairs(loaders) do out[#out + 1] = k end
  table.sort(out)
  return out
end

return M
