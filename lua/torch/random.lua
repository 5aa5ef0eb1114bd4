--[[
  torch.random — PyTorch's torch.random: the global seeding functions and fork_rng, which saves
  the CPU generator's state and the states of the given devices' generators, runs a function and
  restores them all, whatever it returned or raised.

  PyTorch's `with torch.random.fork_rng(devices=[0]):` block is a function here:

      torch.random.fork_rng(function() ... end)                       -- CPU + every CUDA device
      torch.random.fork_rng({devices = {0}, enabled = true, device_type = "cuda"}, function() ... end)

  returns fn's results. As in PyTorch: devices defaults to every visible device of device_type
  (with a warning, once, when there are several); enabled = false runs fn without forking;
  device_type "meta" forks nothing. Device indices are 0-based, as everywhere in ltorch.

  Usage:  local random = require "torch.random"   (also torch.random)
]]
local torch = require "torch"
local device_mod = require "torch.device"
local warnings = require "torch._warnings"
local guard = require "torch._guard"

local M = {}

function M.manual_seed(seed) return torch.manual_seed(seed) end
function M.seed() return torch.seed() end
function M.initial_seed() return torch.initial_seed() end
function M.get_rng_state() return torch.get_rng_state() end
function M.set_rng_state(state) return torch.set_rng_state(state) end

local FORK_OPTIONS = { devices = true, enabled = true, device_type = true }
local warned_many_devices = false

-- The device module (torch.cuda, torch.mps) of a device type name, as fork_rng finds it.
local function device_module(device_type)
  local name = device_mod.resolve(device_type, "fork_rng", 4).type
  local mod = torch[name]
  if type(mod) ~= "table" or mod.get_rng_state == nil then
    error(("fork_rng: torch has no module of `%s` with get_rng_state"):format(name), 4)
  end
  return mod, name
end

local function all_devices(mod, name)
  local n = mod.device_count()
  if n > 1 and not warned_many_devices then
    warned_many_devices = true
    warnings.warn(("%s reports that you have %d available devices, and you have used fork_rng without explicitly " ..
      "specifying which devices are being used. For safety, we initialize *every* %s device by default, which can " ..
      "be quite slow. Pass {devices = {...}} with the devices you use to silence this."):format(name:upper(), n, name:upper()), 4)
  end
  local devices = {}
  for i = 0, n - 1 do devices[#devices + 1] = i end
  return devices
end

--[[ fork_rng([opts,] fn, ...) — fn(...)'s results, with every forked generator's state restored
     afterwards. ]]
function M.fork_rng(opts, fn, ...)
  if type(opts) == "function" then return M.fork_rng({}, opts, fn, ...) end
  if type(opts) ~= "table" or type(fn) ~= "function" then
    error("bad argument to 'fork_rng' (expected fork_rng([{devices =, enabled =, device_type =},] fn))", 2)
  end
  for k in pairs(opts) do
    if not FORK_OPTIONS[k] then error(("fork_rng() got an unexpected keyword argument '%s'"):format(tostring(k)), 2) end
  end
  local device_type = opts.device_type or "cuda"
  if opts.enabled == false or device_type == "meta" then return fn(...) end
  local mod, name = device_module(device_type)
  local devices = opts.devices
  if devices == nil then
    devices = all_devices(mod, name)
  elseif type(devices) ~= "table" then
    error(("bad argument 'devices' to 'fork_rng' (table of device indices expected, got %s)"):format(type(devices)), 2)
  end
  -- every state is put back in one guarded call, whatever fn raised (torch._guard)
  local code = device_mod.type_codes[name]
  local states = { 0, -1, torch.get_rng_state() }
  for i, d in ipairs(devices) do
    states[3 * i + 1], states[3 * i + 2], states[3 * i + 3] = code, d, mod.get_rng_state(d)
  end
  return guard.fork(states, fn, ...)
end

return M
