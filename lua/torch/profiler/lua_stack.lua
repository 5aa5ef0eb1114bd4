--[[
  torch.profiler.lua_stack — Lua frames in the profile (torch.profiler.profile{with_stack = true}).

  PyTorch's with_stack records Python frames with a tracer; Lua has no such tracer in libtorch, so
  while a profile runs with with_stack this module sets a call/return debug hook and opens a
  record_function range (libtorch's at::RecordFunction, USER_SCOPE) for:
    * each call of a function defined outside ltorch's library — named as PyTorch names a
      Python frame, "<file>(<line defined>): <function>", e.g. "train.lua(12): step";
    * each call from such a function into the library (an op, a module call, a tensor method) —
      named by the call site, "<file>:<line>: <callee>", e.g. "train.lua:20: model": the Lua
      line that issued the ops beneath it.
  The ranges are ordinary profiler events: they nest in the Chrome trace, the ops inside them are
  their children, and their rows in key_averages() show Lua's own time as Self CPU (the time in
  that Lua code between ops). Each op's `stack` lists the frames around it, innermost first.
  The library's own Lua frames get no range: their time counts as the caller's Lua time.

  Tail calls replace a frame, and LuaJIT reports them as plain calls, so frames are matched by
  stack depth: a call or return at depth d closes every open range at depth >= d. Ranges still
  open at stop (the frames that called stop) close then. The hook slows Lua calls while it is set
  (as PyTorch's with_stack slows Python); another debug hook set meanwhile replaces it.

  Usage (internal): lua_stack.install(); ...; lua_stack.remove() -> set of frame names recorded.
]]
local native = require "torch.profiler._native"

local getinfo, sethook, gethook = debug.getinfo, debug.sethook, debug.gethook
local enter, exit = native.range_enter, native.range_exit

local M = {}

local open = {}        -- {depth =, h =} of open ranges, outermost first
local names = {}       -- names of the ranges this module opened
local depth_hint = 1

local function in_library(info)
  return info.what == "C" or info.source:find("/lua/torch/", 1, true) ~= nil or info.source:find("^@lua/torch/") ~= nil
end

-- The number of active stack levels, found from the last answer (depth moves by one per event).
local function depth()
  local d = depth_hint
  if getinfo(d, "") then
    while getinfo(d + 1, "") do d = d + 1 end
  else
    repeat d = d - 1 until d <= 1 or getinfo(d, "")
  end
  depth_hint = d
  return d
end

local function close_from(d)
  for i = #open, 1, -1 do
    if open[i].depth < d then break end
    exit(open[i].h)
    open[i] = nil
  end
end

local function hook(event)
  local d = depth()
  close_from(d + 1)
  local callee = getinfo(2, "Sn")
  local top = open[#open]
  if top and top.depth == d then
    -- a library frame tail-calling another keeps the call site's range; anything else ends it
    if event ~= "return" and top.site and in_library(callee) then return end
    close_from(d)
  end
  if event ~= "call" and event ~= "tail call" then return end
  local name, site
  if not in_library(callee) then
    site = false
    name = ("%s(%d): %s"):format(callee.short_src, callee.linedefined, callee.name or "<chunk>")
  else
    local caller = getinfo(3, "Sl")
    if caller == nil or in_library(caller) then return end
    name, site = ("%s:%d: %s"):format(caller.short_src, caller.currentline, callee.name or "?"), true
  end
  names[name] = true
  open[#open + 1] = { depth = d, h = enter(name), site = site }
end

function M.install()
  if gethook() ~= nil then
    error("with_stack: another debug hook is set (a debugger or line profiler); remove it first", 3)
  end
  open, names, depth_hint = {}, {}, 1
  sethook(hook, "cr")
end

function M.remove()
  if gethook() == hook then sethook() end
  close_from(0)
  local recorded = names
  names = {}
  return recorded
end

return M
