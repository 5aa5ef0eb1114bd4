--[[
  torch.repl.commands — the REPL's `:` commands shared by every session.

    :time expr   runs expr, prints its results and the wall-clock and CPU time it took
    :mem         torch.memory_stats() (live and peak tensor bytes, allocations) plus the
                 tensors reachable from the session's globals, with their bytes
    :who         the globals defined in this session (not the standard library), with a
                 one-line summary each (torch.repl.summary)
    :graph expr  a tensor's place in the autograd graph: the node that made it (grad_fn),
                 or whether it is a leaf requiring grad and its .grad; for a module, each
                 parameter; for a table, each tensor in it
    :help [cmd]  this list; :help <topic> is ?topic
    :q  :quit    end the session (in the debugger: continue / let the error unwind)
  Debugger sessions add their own (torch.repl.debugger).

  Usage: require("torch.repl.commands").install(require "torch.repl.session")
]]
local ffi = require "ffi"
local pretty = require "torch.repl.pretty"
local summary = require "torch.repl.summary"

local M = {}

-- Wall-clock seconds (CLOCK_MONOTONIC through the FFI; os.time's whole seconds otherwise).
local now = function() return os.time() end
do
  local ok = pcall(ffi.cdef, [[
    typedef struct ltorch_repl_timespec { long tv_sec; long tv_nsec; } ltorch_repl_timespec;
    int clock_gettime(int clk_id, ltorch_repl_timespec *tp);
  ]])
  local ts = ok and ffi.new("ltorch_repl_timespec")
  if ok and pcall(ffi.C.clock_gettime, 1, ts) then
    now = function() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end
  end
end

local function human_bytes(n)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local i = 1
  while n >= 1024 and i < #units do n = n / 1024; i = i + 1 end
  return i == 1 and ("%d B"):format(n) or ("%.1f %s"):format(n, units[i])
end
M.human_bytes = human_bytes

local function human_time(t)
  if t < 1e-3 then return ("%.1f µs"):format(t * 1e6) end
  if t < 1 then return ("%.2f ms"):format(t * 1e3) end
  return ("%.3f s"):format(t)
end

-- The standard library's globals, so :who shows only what the user defined.
local builtin = {}
for k in pairs(_G) do builtin[k] = true end
for _, k in ipairs({ "torch", "help", "_PROMPT", "_PROMPT2" }) do builtin[k] = true end

-- The autograd facts of one tensor: how it was made, whether it takes part, its grad.
local function graph_lines(name, x)
  local lines = { name .. ": " .. summary.line(x) }
  local grad_fn = x.grad_fn
  if grad_fn ~= nil then
    lines[#lines + 1] = ("  made by %s (a non-leaf: backward() flows through it to the leaves it came from)"):format(tostring(grad_fn))
  elseif x.requires_grad then
    local g = x.grad
    lines[#lines + 1] = "  a leaf that requires grad: backward() accumulates into its .grad = " .. (g ~= nil and summary.line(g) or "nil")
  else
    lines[#lines + 1] = "  not in an autograd graph (requires_grad=false, no grad_fn)"
  end
  return lines
end

-- The tensors :graph reports for v: itself, a module's named parameters, a table's tensors.
local function graph_targets(expr, v)
  if pretty.is_tensor(v) then return { { expr, v } } end
  local list = {}
  if summary.is_module(v) then
    for _, nv in ipairs(v:named_parameters()) do list[#list + 1] = { expr .. "." .. nv[1], nv[2] } end
  elseif type(v) == "table" then
    for k, x in next, v do if pretty.is_tensor(x) then list[#list + 1] = { expr .. "[" .. pretty.format(k, { nested = true }) .. "]", x } end end
  end
  return list
end

function M.install(session)
  local cmds = session.commands

  cmds.q = function() return "quit" end
  cmds.quit = cmds.q

  cmds.time = function(s, code)
    if code == "" then return session.report(":time needs an expression or statement") end
    local f, is_expr = session.compile(s, code)
    if not f then return is_expr and session.report(is_expr) end
    local c0, t0 = os.clock(), now()
    local function finish(ok, ...)
      local wall, cpu = now() - t0, os.clock() - c0
      if ok then session.print_results(select("#", ...), ...) else session.report((...)) end
      io.stdout:write(pretty.paint("meta", ("time: %s wall, %s CPU"):format(human_time(wall), human_time(cpu))), "\n")
    end
    finish(session.run_chunk(s, f, is_expr))
  end

  cmds.mem = function(s)
    local torch = package.loaded.torch
    if not torch then return io.stdout:write("torch is not loaded\n") end
    local st = torch.memory_stats()
    local count, bytes, seen = 0, 0, {}
    local function walk(v, depth)
      if depth > 6 or seen[v] then return end
      if pretty.is_tensor(v) then
        seen[v] = true
        count = count + 1
        local ok, n = pcall(function() return v:numel() * v.dtype.itemsize end)
        if ok then bytes = bytes + n end
      elseif type(v) == "table" and v ~= package.loaded then
        seen[v] = true
        for k, x in next, v do walk(k, depth + 1); walk(x, depth + 1) end
      end
    end
    for k, v in pairs(_G) do if not builtin[k] then walk(v, 0) end end
    if s.env ~= _G and s.names then for _, k in ipairs(s.names()) do walk(s.env[k], 0) end end
    io.stdout:write(("live tensor memory: %s (peak %s, %d allocations so far)\n"):format(
      human_bytes(st.live_bytes), human_bytes(st.peak_bytes), st.allocations))
    io.stdout:write(("tensors reachable from globals: %d, %s of elements\n"):format(count, human_bytes(bytes)))
  end

  cmds.who = function()
    local names = {}
    for k in pairs(_G) do if type(k) == "string" and not builtin[k] then names[#names + 1] = k end end
    table.sort(names)
    if #names == 0 then return io.stdout:write("(no globals defined)\n") end
    for _, k in ipairs(names) do
      local v = rawget(_G, k)
      io.stdout:write(pretty.paint("key", k), "\t", pretty.paint("meta", type(v)), "\t", summary.line(v), "\n")
    end
  end

  cmds.graph = function(s, expr)
    if expr == "" then return session.report(":graph needs a tensor, module or table expression") end
    local f, err = loadstring("return " .. expr, "=" .. expr)
    if not f then return session.report(err) end
    local ok, v = pcall(setfenv(f, s.env))
    if not ok then return session.report(v) end
    local list = graph_targets(expr, v)
    if #list == 0 then return session.report(expr .. " is a " .. type(v) .. ", not a tensor, module or table of tensors") end
    for _, t in ipairs(list) do
      local lok, lines = pcall(graph_lines, t[1], t[2])
      io.stdout:write(lok and table.concat(lines, "\n") or (t[1] .. ": " .. pretty.error_text(lines)), "\n")
    end
  end

  cmds.help = function(s, topic)
    if topic ~= nil and topic ~= "" then return require("torch.repl.help").show(s, topic) end
    local lines = {
      "expressions print their value; Tab completes; Ctrl-C interrupts; Ctrl-D or :q leaves",
      "?expr / help(x)   PyTorch's documentation (signature, summary, arguments), or a tensor's describe()",
      ":time code        run code and time it",
      ":mem              tensor memory (torch.memory_stats) and reachable tensors",
      ":who              globals defined in this session",
      ":graph expr       autograd facts of a tensor (or a module's parameters): grad_fn, leaf, grad",
      ":q                quit (in the debugger: continue)",
    }
    for _, l in ipairs(s.help_lines or {}) do lines[#lines + 1] = l end
    io.stdout:write(table.concat(lines, "\n"), "\n")
  end
end

return M
