--[[
  torch.repl.session — one read-eval-print loop: the top-level REPL and every debugger
  session (a breakpoint or a post-mortem) are sessions over different environments.

  A line is, in order:
    :name args   a command (torch.repl.commands, plus the session's own: the debugger adds
                 :bt :up :down ...); `:q` ends the session
    ?expr        help on the value of expr (torch.repl.help)
    code         tried first as `return <code>` (so expressions print without `=`; a
                 leading `=` is accepted too), else compiled as a statement; code that ends
                 early (the parser stops at '<eof>') continues on the next line under the
                 `>>` prompt. Results print through torch.repl.pretty, errors go to stderr as
                 "ltorch: <message>" with a traceback cut at the REPL's own frames.
  Code runs with Ctrl-C armed ("interrupted!" comes back as an error and the loop goes on);
  chunks typed at the prompt run interpreted (jit.off on the chunk, not on the functions it
  defines), so a loop typed at the prompt always notices Ctrl-C (see runtime/interrupt.c).

  Usage:  local session = require "torch.repl.session"
          session.loop(session.new{ env = _G, prompt = "> " })   -- "eof" or "quit"
]]
local native = require "torch.repl.native"
local pretty = require "torch.repl.pretty"

local M = {}

M.stack = {}  -- active sessions, innermost last (the completer uses the top one)
M.commands = {}  -- shared commands, filled by torch.repl.commands
M.chunkname = "=stdin"

function M.current() return M.stack[#M.stack] end

function M.new(opts)
  local s = {
    env = opts.env or _G, prompt = opts.prompt or "> ", prompt2 = opts.prompt2 or ">> ",
    commands = opts.commands or {}, names = opts.names, data = opts.data or {},
  }
  return s
end

local function prompt_text(s, first)
  local p = first and (rawget(_G, "_PROMPT") or s.prompt) or (rawget(_G, "_PROMPT2") or s.prompt2)
  p = tostring(p)
  if pretty.enabled and native.has_readline then  -- \001 \002: invisible to readline's width
    return "\001" .. pretty.paint("prompt", "\002" .. p .. "\001") .. "\002"
  end
  return p
end

-- Reads a line (adding it to the history): string, nil at end of input, false on Ctrl-C.
function M.read(s, first)
  local line = native.readline(prompt_text(s, first))
  if line and line:find("%S") then native.history_add(line) end
  return line
end

---------------------------------------------------------------- errors and tracebacks
-- "\tfile:line: in function 'name'" lines of the stack from `level` (relative to the caller)
-- up to, not including, the frame of `stop` (a function) when given.
function M.traceback_lines(level, stop, limit)
  local lines = {}
  level = level + 1
  while #lines < (limit or 40) do
    local info = debug.getinfo(level, "Slnf")
    if not info or (stop and info.func == stop) then break end
    local where = info.currentline > 0 and (info.short_src .. ":" .. info.currentline) or info.short_src
    if info.what == "C" then where = "[C]" end
    local what
    if info.what == "main" then what = "main chunk"
    elseif info.name then what = ("function '%s'"):format(info.name)
    elseif info.what == "C" then what = "?"
    else what = ("function <%s:%d>"):format(info.short_src, info.linedefined) end
    lines[#lines + 1] = "\t" .. where .. ": in " .. what
    level = level + 1
  end
  return lines
end

-- An error value as text; never raises (an error object's own __tostring may).
local function message_of(e)
  if type(e) == "string" then return e end
  local mt = getmetatable(e)
  if type(mt) == "table" and rawget(mt, "__tostring") then
    local s, why = pretty.safe_tostring(e)
    return s or ("(error object whose __tostring failed: %s)"):format(why)
  end
  return ("(error object is a %s value)"):format(type(e))
end
M.message_of = message_of

-- The handler for code run at the prompt: message plus the traceback above the REPL.
function M.handler(e)
  if e == nil then return nil end
  local lines = M.traceback_lines(2, native.xpcall)
  return message_of(e) .. "\nstack traceback:\n" .. table.concat(lines, "\n")
end

function M.report(msg)
  if msg == nil then return end
  io.stdout:flush()
  local text = "ltorch: " .. pretty.error_text(msg)
  if pretty.enabled then text = pretty.paint("error", text) end
  io.stderr:write(text, "\n")
  io.stderr:flush()
end

---------------------------------------------------------------- evaluation
local function incomplete(err) return err:sub(-7) == "'<eof>'" end

local function pass(...) return ... end  -- keeps a call on the line from being a tail call

-- Compiles code (reading more lines while unfinished): chunk, is_expression | nil, error.
-- nil, nil when input ended or Ctrl-C abandoned the chunk.
function M.compile(s, code)
  while true do
    local expr = code:gsub("^%s*=", "", 1)
    local f = loadstring("local __ltorch_pass = ...; return __ltorch_pass(" .. expr .. "\n)", M.chunkname)
    if f then return f, true end
    local g, err = loadstring(code, M.chunkname)
    if g then return g, false end
    if not incomplete(err) then return nil, err end
    local more = M.read(s, false)
    if not more then return nil, nil end
    code = code .. "\n" .. more
  end
end

-- Runs a compiled chunk in the session's environment: true, results... | false, message.
function M.run_chunk(s, f, is_expr)
  setfenv(f, s.env)
  if jit and jit.off then jit.off(f) end
  if is_expr then return native.xpcall(f, M.handler, pass) end
  return native.xpcall(f, M.handler)
end

function M.print_results(n, ...)
  if n == 0 then return end
  local parts = {}
  for i = 1, n do parts[i] = pretty.format((select(i, ...))) end
  io.stdout:write(table.concat(parts, "\t"), "\n")
  io.stdout:flush()
end

-- Evaluates code and prints its results or error.
function M.eval(s, code)
  local f, is_expr = M.compile(s, code)  -- is_expr: the error message when f is nil
  if not f then
    if is_expr then M.report(is_expr) end
    return
  end
  local function finish(ok, ...)
    if ok then M.print_results(select("#", ...), ...) else M.report((...)) end
  end
  finish(M.run_chunk(s, f, is_expr))
end

-- One line of input: a command, a help request or code. Returns "quit" to end the session.
function M.handle(s, line)
  if not line:find("%S") then return end
  local name, rest = line:match("^%s*:(%a+)%s*(.-)%s*$")
  if name then
    local cmd = s.commands[name] or M.commands[name]
    if not cmd then
      M.report(("unknown command ':%s' (:help lists them)"):format(name))
      return
    end
    return cmd(s, rest)
  end
  local topic = line:match("^%s*%?%s*(.-)%s*$")
  if topic then return M.commands.help(s, topic) end
  M.eval(s, line)
end

-- Runs the session until end of input (returns "eof") or a command quits (returns "quit").
function M.loop(s)
  M.stack[#M.stack + 1] = s
  local result
  while true do
    local line = M.read(s, true)
    if line == nil then result = "eof"; break end
    if line then
      local ok, r = pcall(M.handle, s, line)
      if not ok then M.report("(REPL) " .. pretty.error_text(r))
      elseif r == "quit" then result = "quit"; break end
    end
  end
  table.remove(M.stack)
  return result
end

return M
