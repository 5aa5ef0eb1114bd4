--[[
  flags.lua — config.lua overridden by command-line flags, for every script of this project.
      local config = require("flags").parse(arg, "train.lua")
      local mp = require("flags").amp(config, "train.lua")   -- device + mixed precision (amp.lua)
  `--key value` (dashes become underscores: --batch-size 32) replaces config[key]; the value
  must have the type of config.lua's default (number, string, or true/false). A true/false key
  also takes no value: `--amp` sets it, `--no-amp` clears it. An unknown flag, a value of the
  wrong type, or a bad device / amp setting prints one line and the usage, and exits with
  status 2; --help prints the keys and their defaults.
]]
local M = {}

function M.fail(script, msg)
  io.stderr:write(("%s: %s\nusage: ltorch %s [--KEY VALUE ...]  (keys: see config.lua, or --help)\n")
    :format(script, msg, script))
  os.exit(2)
end

local function usage(script, config)
  local keys = {}
  for k in pairs(config) do keys[#keys + 1] = k end
  table.sort(keys)
  print(("usage: ltorch %s [--KEY VALUE ...]; keys (config.lua's defaults):"):format(script))
  for _, k in ipairs(keys) do print(("  --%-18s %s"):format(k:gsub("_", "-"), tostring(config[k]))) end
  os.exit(0)
end

local function convert(script, key, default, v)
  local t = type(default)
  if t == "number" then
    return tonumber(v) or M.fail(script, ("flag --%s expects a number, got '%s'"):format(key, v))
  elseif t == "boolean" then
    if v == "true" or v == "false" then return v == "true" end
    M.fail(script, ("flag --%s expects true or false, got '%s'"):format(key, v))
  end
  return v
end

function M.parse(argv, script)
  local config = dofile("config.lua")
  local i = 1
  while i <= #argv do
    if argv[i] == "--help" or argv[i] == "-h" then usage(script, config) end
    local key = argv[i]:match("^%-%-([%w%-_]+)$")
    if not key then M.fail(script, "unexpected argument '" .. argv[i] .. "'") end
    key = key:gsub("%-", "_")
    local flag = key:gsub("_", "-")
    local off = key:match("^no_(.+)$")
    if config[key] == nil and off and type(config[off]) == "boolean" then
      config[off], i = false, i + 1
    elseif config[key] == nil then
      M.fail(script, "unknown flag --" .. flag)
    elseif type(config[key]) == "boolean" and argv[i + 1] ~= "true" and argv[i + 1] ~= "false" then
      config[key], i = true, i + 1
    else
      if argv[i + 1] == nil then M.fail(script, "flag --" .. flag .. " needs a value") end
      config[key], i = convert(script, flag, config[key], argv[i + 1]), i + 2
    end
  end
  return config
end

-- The run's device and mixed precision from config.device / amp / amp_dtype (amp.lua); a bad
-- value (a CUDA device this machine lacks, an unknown dtype) fails like a bad flag.
function M.amp(config, script, opts)
  local mp, err = require("amp").new(config, opts)
  if not mp then M.fail(script, err) end
  return mp
end

return M
