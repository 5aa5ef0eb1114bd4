--[[
  torch.repl.frames — the stack as the debugger sees it: frames named by their distance from
  the stack bottom (which stays fixed while a session runs code above them), their variables,
  an environment that reads and writes them, their source in context, and which of them are
  the torch library's own.

      local b = frames.bottom_of(1)             -- the caller's frame, as a distance
      local env = frames.environment(function() return b end)
      env.x                                     -- local x of that frame (else upvalue, global)
      frames.context(debug.getinfo(1, "Sl"), 2) -- "    10  ...\n->  12  ...\n ..."

  Levels: bottom_of(level) takes a level as seen by its caller, and level_of(b) returns one
  as seen by its caller — so call level_of in the function that uses the level, never in a
  tail call. Library frames: C functions and Lua code under the directory holding this
  package (lua/torch/), found from this file's own path.
]]
local M = {}

-- "@/path/to/lua/torch/": sources that start with it are library code.
local LIBRARY = debug.getinfo(1, "S").source:match("^(@.*/)repl/frames%.lua$")

-- Distance from the stack bottom of the frame at `level` (as seen by the caller).
function M.bottom_of(level)
  local top = 1
  while debug.getinfo(top + 1, "l") do top = top + 1 end
  return top - level - 1
end

-- The level (as seen by the caller) of the frame `b` steps above the bottom.
function M.level_of(b)
  local top = 1
  while debug.getinfo(top + 1, "l") do top = top + 1 end
  return top - b - 1
end
local level_of = M.level_of

-- Whether a frame (debug.getinfo with "S") is C or code of the torch library.
function M.is_library(info)
  if not info or info.what == "C" then return true end
  return LIBRARY ~= nil and info.source:sub(1, #LIBRARY) == LIBRARY
end

-- "file:line in function 'name'" for a frame's debug.getinfo ("Sln").
function M.describe(info)
  local where = info.what == "C" and "[C]" or (info.short_src .. ":" .. info.currentline)
  local what = info.what == "main" and "main chunk" or (info.name and ("function '" .. info.name .. "'"))
    or (info.what == "C" and "?") or ("function <" .. info.short_src .. ":" .. info.linedefined .. ">")
  return where .. " in " .. what
end

-- Locals then upvalues of frame b: a list of {name, value, kind, index} (later locals shadow
-- earlier ones of the same name), and the frame's function.
function M.variables(b)
  local level = level_of(b)
  local info = debug.getinfo(level, "f")
  local vars, at = {}, {}
  local i = 1
  while true do
    local n, v = debug.getlocal(level, i)
    if not n then break end
    if n:sub(1, 1) ~= "(" then
      if at[n] then vars[at[n]].shadowed = true end
      vars[#vars + 1] = { name = n, value = v, kind = "local", index = i }
      at[n] = #vars
    end
    i = i + 1
  end
  if info and info.func then
    i = 1
    while true do
      local n, v = debug.getupvalue(info.func, i)
      if not n then break end
      if not at[n] then vars[#vars + 1] = { name = n, value = v, kind = "upvalue", index = i }; at[n] = #vars end
      i = i + 1
    end
  end
  return vars, info and info.func
end

local function lookup(b, name)
  local vars = M.variables(b)
  for j = #vars, 1, -1 do
    local v = vars[j]
    if v.name == name and not v.shadowed then return v end
  end
end

local function assign(b, name, value)
  local var = lookup(b, name)
  if not var then return false end
  if var.kind == "local" then
    debug.setlocal(level_of(b), var.index, value)
  else
    local _, func = M.variables(b)
    debug.setupvalue(func, var.index, value)
  end
  return true
end

-- The globals table of frame b's function.
function M.globals(b)
  local _, func = M.variables(b)
  local ok, env = pcall(getfenv, func)
  return ok and type(env) == "table" and env or _G
end

-- An environment for chunks run "in" the frame current() returns (a bottom distance).
function M.environment(current)
  return setmetatable({}, {
    __index = function(_, k)
      local var = lookup(current(), k)
      if var then return var.value end
      local v = M.globals(current())[k]
      if v == nil and k == "help" then return require("torch.repl.help").help end
      return v
    end,
    __newindex = function(_, k, v)
      if not assign(current(), k, v) then M.globals(current())[k] = v end
    end,
  })
end

-- The source lines around a frame's current line (radius each side, "->" marks it), or
-- nil and why not.
function M.context(info, radius)
  if not info or info.source:sub(1, 1) ~= "@" or info.currentline < 1 then return nil, "no source for this frame" end
  local fh = io.open(info.source:sub(2))
  if not fh then return nil, "cannot open " .. info.short_src end
  local lines, n = {}, 0
  for line in fh:lines() do
    n = n + 1
    if n > info.currentline + radius then break end
    if n >= info.currentline - radius then
      lines[#lines + 1] = (n == info.currentline and "->" or "  ") .. ("%4d  "):format(n) .. line
    end
  end
  fh:close()
  return table.concat(lines, "\n")
end

return M
