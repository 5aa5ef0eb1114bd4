--[[
  torch.repl.debugger — a REPL inside a stopped program: post-mortem (`ltorch --debug
  script.lua`, or `ltorch -i script.lua`, when the script fails) and torch.breakpoint().

      $ ltorch --debug train.lua
      train.lua:12: boom
      post-mortem at train.lua:12 in function 'step' (:help for commands)
      (debug) loss                    -- the failing frame's locals and upvalues are in scope
      (debug) :bt    :up    :down    :frame 3    :locals    :list
      (debug) :c                      -- (or :q, Ctrl-D) let the error unwind / continue

  How: the session runs *before* the stack unwinds — inside the error handler of the
  script's protected call (runtime/repl.c, ltorch_debug_pcall -> M.handler), or inside
  torch.breakpoint's call. Chunks typed at the (debug) prompt get an environment whose
  lookups go to debug.getlocal of the selected frame, then debug.getupvalue of its function,
  then that function's globals; assignments write back the same way. Frames are remembered
  by their distance from the bottom of the stack, which stays fixed while the session runs
  code above them. Frame 1 is the innermost (where it stopped); :up moves toward callers.
]]
local session = require "torch.repl.session"
local pretty = require "torch.repl.pretty"

local M = {}

-- Distance from the stack bottom of the frame at `level` (as seen by the caller).
local function bottom_of(level)
  local top = 1
  while debug.getinfo(top + 1, "l") do top = top + 1 end
  return top - level - 1
end

-- The level (as seen by the caller) of the frame `b` steps above the bottom.
local function level_of(b)
  local top = 1
  while debug.getinfo(top + 1, "l") do top = top + 1 end
  return top - b - 1
end

-- Locals then upvalues of frame b: a list of {name, value, kind} (later locals shadow).
local function variables(b)
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
  local vars = variables(b)
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
    local _, func = variables(b)
    debug.setupvalue(func, var.index, value)
  end
  return true
end

local function frame_globals(b)
  local _, func = variables(b)
  local ok, env = pcall(getfenv, func)
  return ok and type(env) == "table" and env or _G
end

local function frame_line(s, i)
  local info = debug.getinfo(level_of(s.frames[i]), "Sln")
  if not info then return "?" end
  local where = info.what == "C" and "[C]" or (info.short_src .. ":" .. info.currentline)
  local what = info.what == "main" and "main chunk" or (info.name and ("function '" .. info.name .. "'"))
    or (info.what == "C" and "?") or ("function <" .. info.short_src .. ":" .. info.linedefined .. ">")
  return where .. " in " .. what
end

local function show_frame(s)
  io.stdout:write(pretty.paint("meta", ("#%d "):format(s.sel)), frame_line(s, s.sel), "\n")
end

local commands = {}

function commands.bt(s)
  for i = 1, #s.frames do
    io.stdout:write(i == s.sel and "> " or "  ", pretty.paint("meta", ("#%d "):format(i)), frame_line(s, i), "\n")
  end
end
commands.where = commands.bt

local function move(s, to)
  if to < 1 or to > #s.frames then
    return session.report(("no frame %d (frames 1..%d; :bt lists them)"):format(to, #s.frames))
  end
  s.sel = to
  show_frame(s)
end
function commands.up(s, n) move(s, s.sel + (tonumber(n) or 1)) end
function commands.down(s, n) move(s, s.sel - (tonumber(n) or 1)) end
function commands.frame(s, n) move(s, tonumber(n) or s.sel) end

function commands.locals(s)
  local vars = variables(s.frames[s.sel])
  if #vars == 0 then return io.stdout:write("(no locals or upvalues)\n") end
  for _, v in ipairs(vars) do
    if not v.shadowed then
      local text = pretty.format(v.value, { depth = 2, nested = true }):gsub("\n", "\n    ")
      io.stdout:write(pretty.paint("key", v.name), pretty.paint("meta", v.kind == "upvalue" and " (upvalue)" or ""), " = ", text, "\n")
    end
  end
end

function commands.list(s)
  local info = debug.getinfo(level_of(s.frames[s.sel]), "Sl")
  if not info or info.source:sub(1, 1) ~= "@" then return io.stdout:write("(no source for this frame)\n") end
  local fh = io.open(info.source:sub(2))
  if not fh then return io.stdout:write("(cannot open " .. info.short_src .. ")\n") end
  local n = 0
  for line in fh:lines() do
    n = n + 1
    if n >= info.currentline - 5 and n <= info.currentline + 5 then
      io.stdout:write(n == info.currentline and "->" or "  ", ("%4d  "):format(n), line, "\n")
    end
  end
  fh:close()
end

function commands.c() return "quit" end
commands.continue = commands.c

local HELP = {
  "debugger: code sees the selected frame's locals and upvalues (assignments write them)",
  ":bt               the frames (> marks the selected one)",
  ":up [n] :down [n] :frame n   select a frame",
  ":locals           the selected frame's locals and upvalues",
  ":list             source around the selected frame's line",
  ":c  :q  Ctrl-D    leave (a breakpoint continues; a post-mortem lets the error unwind)",
}

-- Runs a debugger session at the frame `b` steps above the stack bottom.
function M.enter(b, headline, kind)
  require("torch.repl").setup()
  local s
  local env = setmetatable({}, {
    __index = function(_, k)
      local var = lookup(s.frames[s.sel], k)
      if var then return var.value end
      local v = frame_globals(s.frames[s.sel])[k]
      if v == nil and k == "help" then return require("torch.repl.help").help end
      return v
    end,
    __newindex = function(_, k, v)
      if not assign(s.frames[s.sel], k, v) then frame_globals(s.frames[s.sel])[k] = v end
    end,
  })
  local frames = {}
  for f = b, 0, -1 do frames[#frames + 1] = f end
  s = session.new({ env = env, prompt = "(debug) ", prompt2 = "(debug) >> ", commands = commands })
  s.frames, s.sel, s.help_lines = frames, 1, HELP
  s.names = function()
    local names = {}
    for _, v in ipairs(variables(s.frames[s.sel])) do names[#names + 1] = v.name end
    for k in pairs(frame_globals(s.frames[s.sel])) do if type(k) == "string" then names[#names + 1] = k end end
    return names
  end
  io.stdout:write(pretty.paint("heading", kind .. " at " .. frame_line(s, 1)), pretty.paint("meta", "  (:help for commands, :c to leave)"), "\n")
  if headline then io.stdout:write(headline, "\n") end
  io.stdout:flush()
  return session.loop(s)
end

-- torch.breakpoint(): a session at the frame `level` levels above the caller (1: the caller).
function M.breakpoint(level)
  level = (level or 1) + 1
  local b = bottom_of(level)
  return M.enter(b, nil, "breakpoint")
end

-- The message handler of ltorch_debug_pcall: debug, then return message + traceback.
function M.handler(e)
  if e == nil then return nil end
  local msg = session.message_of(e)
  local text = msg .. "\nstack traceback:\n" .. table.concat(session.traceback_lines(2), "\n")
  local level = 2
  while true do  -- the innermost Lua frame (skip error() and other C functions)
    local info = debug.getinfo(level, "S")
    if not info then level = nil; break end
    if info.what ~= "C" then break end
    level = level + 1
  end
  if level then
    io.stdout:flush()
    io.stderr:write(pretty.paint("error", msg), "\n")
    io.stderr:flush()
    local ok, err = pcall(M.enter, bottom_of(level), nil, "post-mortem")
    if not ok then session.report("debugger failed: " .. tostring(err)) end
  end
  return text
end

return M
