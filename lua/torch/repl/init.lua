--[[
  torch.repl — ltorch's interactive prompt (`ltorch`, `ltorch -i`); runtime/repl.c calls run().

      $ ltorch
      > x = torch.randn(2, 3)
      > x:mean(0)                  -- expressions print their value (no `=` needed)
      > torch.ma<TAB><TAB>         -- completes globals, fields, module members, Tensor methods
      > ?torch.matmul              -- PyTorch's doc: signature, summary, arguments; help(x) too
      > :time x:matmul(x:t())      :mem   :who   :graph y   :help   :q

  What run() sets up: `torch` as a global (when the library loads), `help`, colours (stdout a
  terminal, NO_COLOR unset, TERM not "dumb"), the persistent history ($LTORCH_HISTORY, else
  ~/.ltorch_history; only when stdin is a terminal) and the completer, then runs the loop
  (torch.repl.session). Debugger sessions (torch.repl.debugger) reuse the same loop.
]]
local native = require "torch.repl.native"
local session = require "torch.repl.session"
local pretty = require "torch.repl.pretty"
local complete = require "torch.repl.complete"
local commands = require "torch.repl.commands"

local M = {}

local function colors_wanted()
  local no_color = os.getenv("NO_COLOR")
  local term = os.getenv("TERM")
  return native.isatty(1) and (no_color == nil or no_color == "") and term ~= "dumb"
end

function M.history_path()
  local p = os.getenv("LTORCH_HISTORY")
  if p and p ~= "" then return p end
  local home = os.getenv("HOME")
  return home and (home .. "/.ltorch_history") or nil
end

local configured = false

-- Colours, history and completion; once per process.
function M.setup()
  if configured then return end
  configured = true
  pretty.enabled = colors_wanted()
  if native.isatty(0) then
    local path = M.history_path()
    if path then
      local ok, err = native.history_open(path)
      if ok == nil then session.report("history " .. path .. ": " .. tostring(err)) end
    end
  end
  native.set_completer(function(word, line, start)
    local s = session.current()
    return complete.candidates(word, line, start, s and s.env or _G, s and s.names)
  end)
  commands.install(session)
end

function M.run()
  M.setup()
  if rawget(_G, "torch") == nil then
    local ok, torch = pcall(require, "torch")
    if ok then rawset(_G, "torch", torch) end
  end
  if rawget(_G, "help") == nil then rawset(_G, "help", require("torch.repl.help").help) end
  return session.loop(session.new({ env = _G }))
end

return M
