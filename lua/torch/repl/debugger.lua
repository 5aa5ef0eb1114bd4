--[[
  torch.repl.debugger — a REPL inside a stopped program: post-mortem (`ltorch --debug
  script.lua`, or `ltorch -i script.lua`, when the script fails) and torch.breakpoint().

      $ ltorch --debug train.lua
      train.lua:12: matmul: mat1 and mat2 shapes cannot be multiplied (2x2 and 3x4)
      post-mortem at train.lua:12 in function 'step'  (:help for commands, :c to leave)
      (2 library frames folded: :frames all shows them)
          11    local w = torch.randn(3, 4)
      ->  12    local y = x:matmul(w)
          13    return y
      (debug) x                       -- the selected frame's locals and upvalues are in scope
      (debug) :locals                 -- one line each: tensors as shape/dtype/stats summaries
      (debug) :p w                    -- one value in full
      (debug) :bt  :up  :down  :frame 3  :frames all  :list  :graph loss
      (debug) :c                      -- (or :q, Ctrl-D) let the error unwind / continue

  User frames first: frames whose code lives in the torch library (the directory this file
  sits in, lua/torch/) or in C are "library frames". The session opens in the innermost user
  frame; :bt, :up and :down skip library frames until `:frames all` shows them (`:frames
  user` folds them again); `:frame n` selects any frame by its number in the full stack.

  How: the session runs *before* the stack unwinds — inside the error handler of the
  script's protected call (runtime/repl.c, ltorch_debug_pcall -> M.handler), or inside
  torch.breakpoint's call. Chunks typed at the (debug) prompt get an environment whose
  lookups go to debug.getlocal of the selected frame, then debug.getupvalue of its function,
  then that function's globals; assignments write back the same way (torch.repl.frames).
  Frame 1 is the innermost (where it stopped); :up moves toward callers.
]]
local session = require "torch.repl.session"
local pretty = require "torch.repl.pretty"
local summary = require "torch.repl.summary"
local frames = require "torch.repl.frames"

local M = {}

local level_of, variables = frames.level_of, frames.variables

local function out(...) io.stdout:write(...) end

local function frame_line(s, i)
  local info = debug.getinfo(level_of(s.frames[i]), "Sln")
  if not info then return "?" end
  return frames.describe(info)
end

-- Whether frame i is listed and reachable by :up/:down.
local function shown(s, i) return s.all or not s.library[i] end

local function show_frame(s)
  out(pretty.paint("meta", ("#%d "):format(s.sel)), frame_line(s, s.sel), "\n")
end

local commands = {}

function commands.bt(s)
  local folded = 0
  local function flush()
    if folded > 0 then out(pretty.paint("meta", ("  ... %d library frame%s (:frames all)\n"):format(folded, folded == 1 and "" or "s"))) end
    folded = 0
  end
  for i = 1, #s.frames do
    if shown(s, i) or i == s.sel then
      flush()
      out(i == s.sel and "> " or "  ", pretty.paint("meta", ("#%d "):format(i)), frame_line(s, i), "\n")
    else
      folded = folded + 1
    end
  end
  flush()
end

-- The n-th shown frame from the selected one in direction step (+1 callers, -1 callees).
local function step_frames(s, n, step)
  local i, moved = s.sel, 0
  while moved < n do
    local j = i + step
    while s.frames[j] and not shown(s, j) do j = j + step end
    if not s.frames[j] then
      return nil, step > 0 and "already at the outermost frame" or "already at the innermost frame"
    end
    i, moved = j, moved + 1
  end
  return i
end

local function move(s, n, step)
  local to, why = step_frames(s, tonumber(n) or 1, step)
  if not to then return session.report(why .. " (:bt lists the frames)") end
  s.sel = to
  show_frame(s)
end
function commands.up(s, n) move(s, n, 1) end
function commands.down(s, n) move(s, n, -1) end

function commands.frame(s, n)
  local to = tonumber(n) or s.sel
  if not s.frames[to] then
    return session.report(("no frame %d (frames 1..%d; :bt lists them)"):format(to, #s.frames))
  end
  s.sel = to
  show_frame(s)
end

function commands.frames(s, mode)
  if mode == "all" then s.all = true
  elseif mode == "user" then s.all = false
  elseif mode == "" then s.all = not s.all
  else return session.report(":frames takes 'all' or 'user'") end
  out(s.all and "showing all frames\n" or "library frames folded\n")
  commands.bt(s)
end

function commands.locals(s)
  local vars = variables(s.frames[s.sel])
  if #vars == 0 then return out("(no locals or upvalues)\n") end
  for _, v in ipairs(vars) do
    if not v.shadowed then
      out(pretty.paint("key", v.name), pretty.paint("meta", v.kind == "upvalue" and " (upvalue)" or ""),
        " = ", summary.line(v.value), "\n")
    end
  end
end

-- Evaluates expr in the selected frame: true, value | false, message.
local function evaluate(s, expr)
  local f, err = loadstring("return " .. expr, "=" .. expr)
  if not f then return false, err end
  setfenv(f, s.env)
  return pcall(f)
end

-- :p expr — one value in full (a tensor: PyTorch's repr and its describe()).
function commands.p(s, expr)
  if expr == "" then return session.report(":p needs a name or expression") end
  local ok, v = evaluate(s, expr)
  if not ok then return session.report(v) end
  if v == nil and expr:match("^[%a_][%w_]*$") then
    return out(expr, " = nil (no local, upvalue or global of that name has a value)\n")
  end
  out(pretty.format(v, { depth = 8, items = 1000, budget = 20000 }), "\n")
  if pretty.is_tensor(v) then
    local dok, d = pcall(v.describe, v)
    if dok then out(d, "\n") end
  end
end
commands.print = commands.p

function commands.list(s, n)
  local info = debug.getinfo(level_of(s.frames[s.sel]), "Sl")
  local lines, why = frames.context(info, tonumber(n) or 5)
  out((lines or ("(" .. why .. ")")), "\n")
end

-- :where with no argument is :bt (as in gdb); with an expression it is :graph.
function commands.where(s, expr)
  if expr == "" then return commands.bt(s) end
  return session.commands.graph(s, expr)
end

function commands.c() return "quit" end
commands.continue = commands.c

local HELP = {
  "debugger: code sees the selected frame's locals and upvalues (assignments write them)",
  ":bt (:where)      the frames (> marks the selected one; library frames folded)",
  ":up [n] :down [n] select a caller / callee among the shown frames",
  ":frame n          select frame n of the full stack",
  ":frames all|user  show library frames (lua/torch, C) or fold them again",
  ":locals           one line per local and upvalue (tensors and modules summarised)",
  ":p expr           one value in full (tensors: repr and describe())",
  ":list [n]         source around the selected frame's line (n lines each side)",
  ":where expr       the autograd graph of a tensor (same as :graph expr)",
  ":c  :q  Ctrl-D    leave (a breakpoint continues; a post-mortem lets the error unwind)",
}

local function new_session(b)
  local s
  local env = frames.environment(function() return s.frames[s.sel] end)
  s = session.new({ env = env, prompt = "(debug) ", prompt2 = "(debug) >> ", commands = commands })
  s.frames, s.library, s.all, s.help_lines = {}, {}, false, HELP
  for f = b, 0, -1 do
    s.frames[#s.frames + 1] = f
    s.library[#s.frames] = frames.is_library(debug.getinfo(level_of(f), "S"))
  end
  s.sel = 1
  while s.frames[s.sel] and s.library[s.sel] do s.sel = s.sel + 1 end
  if not s.frames[s.sel] then s.sel, s.all = 1, true end  -- no user frame: show everything
  s.names = function()
    local names = {}
    for _, v in ipairs(variables(s.frames[s.sel])) do names[#names + 1] = v.name end
    for k in pairs(frames.globals(s.frames[s.sel])) do if type(k) == "string" then names[#names + 1] = k end end
    return names
  end
  return s
end

-- The banner: where it stopped, how many library frames were folded, the line in context.
local function banner(s, kind, headline)
  out(pretty.paint("heading", kind .. " at " .. frame_line(s, s.sel)), pretty.paint("meta", "  (:help for commands, :c to leave)"), "\n")
  if s.sel > 1 then
    out(pretty.paint("meta", ("(%d library frame%s folded: :frames all shows them)"):format(s.sel - 1, s.sel == 2 and "" or "s")), "\n")
  end
  if headline then out(headline, "\n") end
  local lines = frames.context(debug.getinfo(level_of(s.frames[s.sel]), "Sl"), 2)
  if lines then out(lines, "\n") end
end

-- Runs a debugger session at the frame `b` steps above the stack bottom.
function M.enter(b, headline, kind)
  require("torch.repl").setup()
  local s = new_session(b)
  banner(s, kind, headline)
  io.stdout:flush()
  return session.loop(s)
end

-- torch.breakpoint(): a session at the frame `level` levels above the caller (1: the caller).
function M.breakpoint(level)
  level = (level or 1) + 1
  return M.enter(frames.bottom_of(level), nil, "breakpoint")
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
    local ok, err = pcall(M.enter, frames.bottom_of(level), nil, "post-mortem")
    if not ok then session.report("debugger failed: " .. pretty.error_text(err)) end
  end
  return text
end

return M
