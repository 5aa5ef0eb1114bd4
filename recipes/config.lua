--[[
  recipes/config.lua — a recipe's configuration as plain data: defaults, command-line flags,
  config files, and one checking pass.

  What:
    config.parse(argv, defaults [, extra_types]) -> config table (a fresh copy of defaults
        overridden by --config FILE, then by the flags, in that order)
    config.positional(argv, defaults) -> first positional argument (or nil), the other args:
                                  for scripts taking `SCRIPT FILE [flags]`, in any order
    config.load_file(path)        a plain Lua file: `return { epochs = 3 }` or `epochs = 3`
                                  lines; it runs with no globals (no os, io, require)
    config.UsageError             errors raised for bad input are {usage_error = "one line"};
    config.main(name, usage, fn)  runs fn() and turns a usage error into one line + usage on
                                  stderr and exit status 2 (no stack trace); --help exits 0

  Flags: `--batch-size 64` or `--batch-size=64` (dashes become underscores); a boolean key
  takes no value (`--amp`, `--no-amp`). Every key must be in `defaults`, and a value must have
  the default's type (numbers are converted, so `--lr abc` is an error that says so).
]]
local M = {}

local function usage_error(fmt, ...)
  error({ usage_error = fmt:format(...) }, 0)
end
M.usage_error = usage_error

local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = type(v) == "table" and copy(v) or v end
  return out
end
M.copy = copy

function M.load_file(path)
  local f = io.open(path, "rb")
  if not f then usage_error("config file not found: %s", path) end
  local text = f:read("*a")
  f:close()
  local chunk, err = loadstring(text, "@" .. path)
  if not chunk then usage_error("config file %s: %s", path, err) end
  local env = {}
  setfenv(chunk, env)
  local ok, ret = pcall(chunk)
  if not ok then usage_error("config file %s: %s", path, tostring(ret)) end
  if ret ~= nil and type(ret) ~= "table" then usage_error("config file %s must return a table, got %s", path, type(ret)) end
  return ret or env
end

-- Checks one key/value against the defaults; `from` says where it came from.
local function check(defaults, key, value, from)
  local want = defaults[key]
  if want == nil then
    local known = {}
    for k in pairs(defaults) do known[#known + 1] = k end
    table.sort(known)
    usage_error("unknown %s '%s' (known: %s)", from, key, table.concat(known, ", "))
  end
  if type(want) == "number" and type(value) == "string" and from == "flag" then
    local n = tonumber(value)
    if n == nil then usage_error("%s '%s' expects a number, got '%s'", from, key, value) end
    value = n
  end
  if type(value) ~= type(want) then
    usage_error("%s '%s' expects a %s, got %s", from, key, type(want), type(value))
  end
  return value
end

function M.parse(argv, defaults)
  local cfg = copy(defaults)
  local flags, i = {}, 1
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then error({ help = true }, 0) end
    local key, value = a:match("^%-%-([%w%-_]+)=(.*)$")
    if not key then key = a:match("^%-%-([%w%-_]+)$") end
    if not key then usage_error("unexpected argument '%s'", a) end
    key = key:gsub("%-", "_")
    local negated = false
    if defaults[key] == nil and key:match("^no_") and type(defaults[key:sub(4)]) == "boolean" then
      key, negated = key:sub(4), true
    end
    if key ~= "config" then check(defaults, key, defaults[key], "flag") end   -- unknown: fail now
    if value == nil then
      if type(defaults[key]) == "boolean" then
        value = not negated
      elseif key == "config" or defaults[key] ~= nil then
        i = i + 1
        value = argv[i]
        if value == nil then usage_error("flag --%s needs a value", key:gsub("_", "-")) end
      end
    elseif type(defaults[key]) == "boolean" then
      if value ~= "true" and value ~= "false" then usage_error("flag --%s expects true or false, got '%s'", key, value) end
      value = value == "true"
    end
    flags[#flags + 1] = { key, value }
    i = i + 1
  end
  for _, kv in ipairs(flags) do
    if kv[1] == "config" then
      for k, v in pairs(M.load_file(kv[2])) do cfg[k] = check(defaults, k, v, "config key") end
    end
  end
  for _, kv in ipairs(flags) do
    if kv[1] ~= "config" then cfg[kv[1]] = check(defaults, kv[1], kv[2], "flag") end
  end
  return cfg
end

-- A positional argument is one that is not a flag nor the value of the flag before it
-- (booleans and --no-KEY take no value).
function M.positional(argv, defaults)
  local rest, path, i = {}, nil, 1
  while i <= #argv do
    local a = argv[i]
    local key = a:match("^%-%-([%w%-_]+)$")
    key = key and key:gsub("%-", "_")
    if path == nil and not a:match("^%-") then
      path = a
    else
      rest[#rest + 1] = a
      if key and key ~= "help" and type(defaults[key]) ~= "boolean" and not (key:match("^no_") and type(defaults[key:sub(4)]) == "boolean")
          and argv[i + 1] ~= nil then
        rest[#rest + 1], i = argv[i + 1], i + 1
      end
    end
    i = i + 1
  end
  return path, rest
end

-- Runs fn; usage errors become one line plus the usage text and exit status 2.
function M.main(name, usage, fn)
  local ok, err = xpcall(fn, function(e)
    if type(e) == "table" then return e end
    return debug.traceback(tostring(e), 2)
  end)
  if ok then return end
  if type(err) == "table" and err.help then io.stdout:write(usage); os.exit(0) end
  if type(err) == "table" and err.usage_error then
    io.stderr:write(("%s: %s\n%s"):format(name, err.usage_error, usage))
    os.exit(2)
  end
  io.stderr:write(("%s: %s\n"):format(name, tostring(err)))
  os.exit(1)
end

return M
