--[[
  torch.repl.commands — the REPL's `:` commands shared by every session.

    :time expr   runs expr, prints its results and the wall-clock and CPU time it took
    :mem         torch.memory_stats() (live and peak tensor bytes, allocations) plus the
                 tensors reachable from the session's globals, with their bytes
    :who         the globals defined in this session (not the standard library), with a
                 one-line summary each (torch.repl.summary)
    :graph expr  a tensor's place in the autograd graph: the node that made it (grad_fn)
                 and the whole graph above it as an indented tree of grad_fn names (PyTorch's
                 next_functions), down to the AccumulateGrad leaves, each shown with the
                 leaf's summary and, when a module in scope owns it, its parameter name; a node
                 reached twice is printed once (then "(see above)"), and the tree stops at 32
                 levels / 400 lines with a note; for a leaf, whether it requires grad and its
                 .grad; for a module, each parameter; for a table, each tensor in it
    :help [cmd]  this list; :help <topic> is ?topic
    :q  :quit    end the session (in the debugger: continue / let the error unwind)
  Debugger sessions add their own (torch.repl.debugger).

  Size: install is one table of command closures sharing the session, 84 lines, over the
  80-line guideline (spec/architecture/sizes_spec.lua allows it by name); splitting it into
  one named function per command is issue #27's remaining work.

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
    int ltorch_repl_clock_gettime(int clk_id, ltorch_repl_timespec *tp) __asm__("clock_gettime");
  ]])
  local ts = ok and ffi.new("ltorch_repl_timespec")
  if ok and pcall(ffi.C.ltorch_repl_clock_gettime, 1, ts) then
    now = function() ffi.C.ltorch_repl_clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end
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

-- The graph tree's limits: levels below the tensor's grad_fn, and lines in all.
local GRAPH_DEPTH, GRAPH_LINES = 32, 400
M.GRAPH_DEPTH, M.GRAPH_LINES = GRAPH_DEPTH, GRAPH_LINES

-- A leaf in the tree: shape, dtype, device, requires_grad and whether .grad is set (no statistics).
local function leaf_line(x)
  local parts = { "Tensor[" .. table.concat(x.shape, ", ") .. "]", (tostring(x.dtype):gsub("^torch%.", "")),
    tostring(x.device) }
  if x.requires_grad then parts[#parts + 1] = "requires_grad" end
  if x.grad ~= nil then parts[#parts + 1] = "(.grad set)" end
  return table.concat(parts, " ")
end

--[[ The autograd graph above grad_fn as indented lines (two spaces a level, starting at
     `indent`): each node's name, its edges' nodes below it in next_functions order, an
     input_nr other than 0 as "(input_nr=1)", None for an input that needs no grad,
     AccumulateGrad with its leaf ("-> name: Tensor[2, 3] float32 cpu requires_grad"; leaf_name(t)
     names parameters and variables). A node
     reached again prints "(see above)" instead of its subtree. Returns lines, node and leaf counts. ]]
local function graph_tree(grad_fn, indent, leaf_name)
  local lines, seen, nodes, leaves, cut_depth, cut_lines = {}, {}, 0, 0, false, false
  local function leaf_text(node)
    local ok, v = pcall(function() return node.variable end)
    if not ok or v == nil then return "" end
    local label = leaf_name and leaf_name(v) or nil
    local lok, line = pcall(leaf_line, v)
    return " -> " .. (label and (label .. ": ") or "") .. (lok and line or "?")
  end
  local function walk(node, input_nr, depth)
    if #lines >= GRAPH_LINES then cut_lines = true; return end
    local pad = indent .. ("  "):rep(depth)
    if node == nil then
      lines[#lines + 1] = pad .. "None" .. (input_nr ~= 0 and (" (input_nr=%d)"):format(input_nr) or "")
        .. " (needs no grad)"
      return
    end
    local name = node:name():gsub("^torch::autograd::", "")
    local text = pad .. name .. (input_nr ~= 0 and (" (input_nr=%d)"):format(input_nr) or "")
    local is_leaf = name == "AccumulateGrad"
    if is_leaf then text = text .. leaf_text(node) end
    local id = node:id()
    if seen[id] then
      lines[#lines + 1] = text .. " (see above)"
      return
    end
    seen[id] = node  -- holds the node, so its address is not reused while we walk
    nodes = nodes + 1
    if is_leaf then leaves = leaves + 1 end
    lines[#lines + 1] = text
    local next_fns = node.next_functions
    if #next_fns == 0 then return end
    if depth + 1 > GRAPH_DEPTH then
      cut_depth = true
      lines[#lines + 1] = pad .. ("  ... (%d input%s below the depth limit of %d levels)"):format(#next_fns,
        #next_fns == 1 and "" or "s", GRAPH_DEPTH)
      return
    end
    for _, e in ipairs(next_fns) do walk(e[1], e[2], depth + 1) end
  end
  walk(grad_fn, 0, 0)
  if cut_lines then
    lines[#lines + 1] = indent .. ("... (the graph goes on: only the first %d lines are shown)"):format(GRAPH_LINES)
  end
  return lines, nodes, leaves, cut_depth or cut_lines
end
M.graph_tree = graph_tree

--[[ A function naming leaf tensors after the parameters of modules in scope: `v` itself when it
     is a module (named from `expr`), then the modules among the session's variables (a module
     in a table one level down too, as "t.key"), then the session's tensor variables by name.
     Built on first use; the function returns nil for a tensor it cannot name. ]]
local function param_namer(s, expr, v)
  local params, built = nil, false
  local function add_module(prefix, m)
    local ok, list = pcall(function() return m:named_parameters() end)
    if not ok then return end
    for _, nv in ipairs(list) do
      if #params >= 5000 then return end
      params[#params + 1] = { prefix .. "." .. nv[1], nv[2] }
    end
  end
  local function build()
    built, params = true, {}
    if summary.is_module(v) then add_module(expr, v) end
    local names, env = {}, s.env or _G
    if s.names then
      for _, k in ipairs(s.names()) do names[#names + 1] = k end
    end
    if env == _G or not s.names then
      for k in pairs(_G) do if type(k) == "string" and not builtin[k] then names[#names + 1] = k end end
    end
    table.sort(names)
    local done, tensors = {}, {}
    for _, k in ipairs(names) do
      if not done[k] then
        done[k] = true
        local ok, x = pcall(function() return env[k] end)
        if ok and pretty.is_tensor(x) then
          tensors[#tensors + 1] = { k, x }
        elseif ok and summary.is_module(x) then
          add_module(k, x)
        elseif ok and type(x) == "table" and not pretty.is_tensor(x) and x ~= package.loaded and k ~= "torch" then
          for key, y in next, x do
            if type(key) == "string" and summary.is_module(y) then add_module(k .. "." .. key, y) end
          end
        end
      end
    end
    for _, kx in ipairs(tensors) do params[#params + 1] = kx end
  end
  return function(t)
    if not built then build() end
    for _, p in ipairs(params) do
      local ok, same = pcall(t.is_same, t, p[2])
      if ok and same then return p[1] end
    end
    return nil
  end
end

-- The autograd facts of one tensor: how it was made (and the graph above it), whether it
-- takes part, its grad.
local function graph_lines(name, x, leaf_name)
  local lines = { name .. ": " .. summary.line(x) }
  local grad_fn = x.grad_fn
  if grad_fn ~= nil then
    lines[#lines + 1] = ("  made by %s (a non-leaf: backward() flows through it to the leaves it came from)"):format(tostring(grad_fn))
    local tree, nodes, leaves, cut = graph_tree(grad_fn, "    ", leaf_name)
    lines[#lines + 1] = ("  autograd graph (%d node%s, %d leaf tensor%s%s):"):format(nodes, nodes == 1 and "" or "s",
      leaves, leaves == 1 and "" or "s", cut and ", cut short" or "")
    for _, l in ipairs(tree) do lines[#lines + 1] = l end
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
    local leaf_name = param_namer(s, expr, v)
    for _, t in ipairs(list) do
      local lok, lines = pcall(graph_lines, t[1], t[2], leaf_name)
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
      ":graph expr       autograd facts of a tensor (or a module's parameters): the graph of grad_fn nodes above it, leaf, grad",
      ":q                quit (in the debugger: continue)",
    }
    for _, l in ipairs(s.help_lines or {}) do lines[#lines + 1] = l end
    io.stdout:write(table.concat(lines, "\n"), "\n")
  end
end

return M
