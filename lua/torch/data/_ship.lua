--[[
  torch.data._ship — a script's dataset object, sent to DataLoader worker states and rebuilt there.

  Why: a worker is a thread with its own Lua state (runtime/workers.c), and Lua values cannot be
  shared between states, only bytes. PyTorch's forked workers inherit the script's dataset
  object; here it is serialized once per iteration and rebuilt in each worker, as Torch7's
  `threads` did:
    - tables with their metatables; shared references and cycles stay shared and cyclic;
    - Lua functions as bytecode (string.dump) with their upvalues sent the same way (LuaJIT's
      bytecode keeps no upvalue values: they are restored with debug.setupvalue, and an upvalue
      two functions share stays shared, debug.upvaluejoin), and the globals their bytecode reads
      or writes (GGET/GSET), set in the worker's globals: a function whose environment is the
      main state's _G runs with the worker's _G;
    - library values BY NAME: the tables a loaded module reaches through fields and metatables,
      the functions written in a module's file it reaches also through upvalues, _G's C
      functions. The worker requires the module and follows the same path, so `torch`, `math`,
      torch.utils.data.Dataset or an nn class arrive as the worker's own, never as copies
      (changes a script made to a library's tables are not seen, as in PyTorch's spawned
      workers); a library function copied as bytecode keeps its own upvalues' values;
    - tensors by handle: each worker gets its own second handle to the same tensor
      (lt_tensor_shallow_copy), no data is copied;
    - Lua proxies (newproxy userdata whose metatable holds only Lua values, such as Dataset
      instances), rebuilt with their metatable; strings, numbers, booleans as themselves.
  Anything else is an error naming its path: C functions no module names, file handles and other
  C userdata, coroutines, cdata other than tensors, e.g.
    "DataLoader: dataset.transform.upvalue 'fh' (a file handle) cannot be sent to a worker state"

  The payload is one string (string.buffer's encoding of plain node records: no size limit, no
  compiling), which the worker config carries.

  Use (torch.data.dataloader in the main state, torch.data._worker in worker w, 0-based):
    local s = ship.pack({{"dataset", ds}, {"worker_init_fn", fn}}, num_workers)
    local roots = ship.unpack(s, w)     --> {dataset = <its own copy>, worker_init_fn = ...}
  Worker w's tensor handles are its own once unpack starts; a worker that never runs (its thread
  could not be created) leaves its handles unreleased.
]]
local ffi = require "ffi"
local bit = require "bit"
local jutil = require "jit.util"
require "torch._C"   -- declares lt_tensor_shallow_copy and lt_tensor_free
local T = require "torch._tensor"
local memory = require "torch._memory"
local buffer = require "string.buffer"

local C = ffi.C
local funcbc, funck, funcinfo = jutil.funcbc, jutil.funck, jutil.funcinfo
local band, rshift = bit.band, bit.rshift

local M = {}

---------------------------------------------------------------- globals in bytecode
-- The opcode of a global read or write, found by compiling one (they differ between versions).
local function opcode_of(src)
  local f = assert(loadstring(src))
  for pc = 1, 16 do
    local ins = funcbc(f, pc)
    if ins == nil then break end
    if funck(f, -rshift(ins, 16) - 1) == "__ltorch_probe" then return band(ins, 0xff) end
  end
  error("torch.data._ship: cannot find LuaJIT's global access opcodes", 0)
end
local GGET, GSET = opcode_of("return __ltorch_probe"), opcode_of("__ltorch_probe = true")

-- The global names a function (or prototype), and the functions nested in it, read or write.
local function globals_of(f, names)
  for pc = 1, math.huge do
    local ins = funcbc(f, pc)
    if ins == nil then break end
    local op = band(ins, 0xff)
    if op == GGET or op == GSET then names[funck(f, -rshift(ins, 16) - 1)] = true end
  end
  local info = funcinfo(f)
  if info.children then
    for i = -1, -info.gcconsts, -1 do
      local k = funck(f, i)
      if type(k) == "proto" then globals_of(k, names) end
    end
  end
  return names
end

---------------------------------------------------------------- names of library values
local function is_c(f) return debug.getinfo(f, "S").what == "C" end

local CORE = { "coroutine", "string", "table", "math", "io", "os", "debug", "bit", "jit", "ffi", "package" }
local HOST_GLOBALS = { _LTORCH = true }   -- tables every ltorch state has in _G
local META = { m = true }                 -- path step: the metatable

-- Module names, the standard libraries first, then torch's, then the rest in order.
local function module_names()
  local names, rest, core = {}, {}, {}
  for _, n in ipairs(CORE) do names[#names + 1] = n; core[n] = true end
  for n, m in pairs(package.loaded) do
    if type(n) == "string" and not core[n] and n ~= "_G" and (type(m) == "table" or type(m) == "function") then
      rest[#rest + 1] = n
    end
  end
  table.sort(rest, function(a, b)
    local ta, tb = a:match("^torch") ~= nil, b:match("^torch") ~= nil
    if ta ~= tb then return ta end
    return a < b
  end)
  for _, n in ipairs(rest) do names[#names + 1] = n end
  return names
end

-- Whether a Lua function was written in a loaded module's file (".../torch/data/dataset.lua"
-- for torch.data.dataset, ".../x/init.lua" for x), not in a script or a spec.
local function module_code(f)
  local src = debug.getinfo(f, "S").source
  if src:sub(1, 1) ~= "@" then return false end
  local parts = {}
  for part in src:sub(2):gsub("%.lua$", ""):gmatch("[^/\\]+") do parts[#parts + 1] = part end
  if parts[#parts] == "init" then parts[#parts] = nil end
  local name
  for k = #parts, 1, -1 do
    name = name and parts[k] .. "." .. name or parts[k]
    if package.loaded[name] ~= nil then return true end
  end
  return false
end

--[[ value -> path {module, step, ...} for each table and function a loaded module reaches:
     steps are field keys, META and {u = i} (upvalue i); breadth first, so a value's path is its
     shortest. Only module code is named and walked into, and tables only through fields and
     metatables: a library's runtime state (a test runner's, say) holds a script's functions
     and tables in its upvalues, and a worker's copy of that library has none of them. _G
     gives only its C functions and host tables: a script's own globals live there too, and a
     worker's _G lacks them. Weak tables (caches of user objects) are not walked. ]]
local function library_index()
  local index, queue = { [_G] = { "_G" } }, {}
  local function add(v, path, step)
    local tv = type(v)
    if index[v] == nil and (tv == "table" and type(step) ~= "table" or step == META
      or tv == "function" and (is_c(v) or module_code(v))) then
      local p = { unpack(path) }
      p[#p + 1] = step
      index[v] = p
      queue[#queue + 1] = v
    end
  end
  for k, v in pairs(_G) do
    if type(k) == "string" and (HOST_GLOBALS[k] or type(v) == "function" and is_c(v)) then add(v, { "_G" }, k) end
  end
  for _, n in ipairs(module_names()) do add(package.loaded[n], {}, n) end
  local head = 1
  while head <= #queue do
    local v = queue[head]
    head = head + 1
    local path = index[v]
    if type(v) == "table" then
      local mt = debug.getmetatable(v)
      if not (type(mt) == "table" and type(rawget(mt, "__mode")) == "string") then
        for k, x in next, v do
          local tk = type(k)
          if tk == "string" or tk == "number" or tk == "boolean" then add(x, path, k) end
        end
      end
      if mt ~= nil then add(mt, path, META) end
    elseif not is_c(v) then
      for i = 1, math.huge do
        local name, x = debug.getupvalue(v, i)
        if name == nil then break end
        add(x, path, { u = i })
      end
    end
  end
  return index
end

---------------------------------------------------------------- main state: pack
local function what_is(v)
  local tv = type(v)
  if tv == "userdata" then return io.type(v) and "a file handle" or "a userdata" end
  if tv == "thread" then return "a coroutine" end
  if tv == "function" then return "a C function no loaded module names" end
  if tv == "cdata" then return "a cdata of type " .. tostring(ffi.typeof(v)):match("^ctype<(.*)>$") .. ", not a tensor" end
  return "a " .. tv
end

-- Where the value being packed is, from the stack of steps taken to reach it (built only for
-- a message): a root name, then field keys, table keys, metatables, upvalues and globals.
local function where(P)
  local s = P.keys[1]
  for d = 2, P.depth do
    local kind, k = P.kinds[d], P.keys[d]
    if kind == "field" then
      if type(k) == "string" and k:match("^[%a_][%w_]*$") then s = s .. "." .. k
      elseif type(k) == "string" then s = ("%s[%q]"):format(s, k)
      elseif type(k) == "number" or type(k) == "boolean" then s = ("%s[%s]"):format(s, tostring(k))
      else s = s .. "[<" .. type(k) .. " key>]" end
    elseif kind == "key" then s = s .. "[<key>]"
    elseif kind == "meta" then s = "getmetatable(" .. s .. ")"
    elseif kind == "proxy" then s = "the metatable of " .. s
    elseif kind ~= "same" then s = ("%s.%s '%s'"):format(s, kind, k) end
  end
  return s
end

local function refuse(P, v, what)
  error(("DataLoader: %s (%s) cannot be sent to a worker state"):format(where(P), what or what_is(v)), 0)
end

local ref

-- ref(P, v) one step further: kind "field" (key k), "key", "meta", "upvalue" or "global"
-- (name k), "proxy" (a proxy's metatable) or "same" (a proxy's own fields).
local function sub(P, v, kind, k)
  local d = P.depth + 1
  P.depth, P.kinds[d], P.keys[d] = d, kind, k
  local item = ref(P, v)
  P.depth = d - 1
  return item
end

local function pack_table(P, t, node)
  node.k, node.kv = "t", {}
  local kv = node.kv
  for k, v in next, t do
    kv[#kv + 1] = type(k) == "table" and sub(P, k, "key") or ref(P, k)
    kv[#kv + 1] = sub(P, v, "field", k)
  end
  local mt = debug.getmetatable(t)
  if mt ~= nil then node.mt = sub(P, mt, "meta") end
end

-- The environment of f (one node per distinct table; the main state's _G becomes the worker's)
-- with the globals f's bytecode uses that have a value here.
local function pack_env(P, f)
  local env = getfenv(f)
  local id = P.envs[env]
  if id == nil then
    id = #P.nodes + 1
    P.nodes[id], P.envs[env], P.env_has[id] = { k = "e", G = rawequal(env, _G), kv = {} }, id, {}
  end
  local node, has = P.nodes[id], P.env_has[id]
  for name in pairs(globals_of(f, {})) do
    if not has[name] then
      has[name] = true
      local ok, v = pcall(function() return env[name] end)
      if ok and v ~= nil then
        node.kv[#node.kv + 1] = name
        node.kv[#node.kv + 1] = sub(P, v, "global", name)
      end
    end
  end
  return { id }
end

local function pack_function(P, f, node, id)
  if is_c(f) then refuse(P, f) end
  node.k, node.code, node.up, node.join = "f", string.dump(f), {}, {}
  for i = 1, math.huge do
    local name, v = debug.getupvalue(f, i)
    if name == nil then break end
    local uid = debug.upvalueid(f, i)
    local leader = P.upvalues[uid]
    if leader then
      node.join[i] = leader                 -- shared with an earlier function: set through it
    else
      P.upvalues[uid] = { id, i }
      if v ~= nil then node.up[i] = sub(P, v, "upvalue", name) end
    end
  end
  node.env = pack_env(P, f)
end

-- A newproxy userdata whose metatable holds only Lua values; its field table (__newindex, as in
-- Dataset instances) reads as the proxy itself in messages.
local function pack_proxy(P, u, node)
  local mt = debug.getmetatable(u)
  if io.type(u) or type(mt) ~= "table" or P.index[mt] then refuse(P, u) end
  for k, v in next, mt do
    local tv = type(v)
    if type(k) ~= "string" or tv == "userdata" or tv == "thread" or tv == "cdata"
      or (tv == "function" and is_c(v) and not P.index[v]) then
      refuse(P, u)
    end
  end
  node.k = "u"
  if type(rawget(mt, "__newindex")) == "table" then sub(P, rawget(mt, "__newindex"), "same") end
  if rawget(mt, "__metatable") ~= nil then sub(P, rawget(mt, "__metatable"), "meta") end
  node.mt = sub(P, mt, "proxy")
end

-- An item: a string, number or boolean as itself, anything else as {node id}.
function ref(P, v)
  local tv = type(v)
  if tv == "number" or tv == "string" or tv == "boolean" then return v end
  local id = P.ids[v]
  if id then return { id } end
  id = #P.nodes + 1
  local node = {}
  P.nodes[id], P.ids[v] = node, id
  if P.index[v] then
    node.k, node.path = "n", P.index[v]
  elseif tv == "table" then
    pack_table(P, v, node)
  elseif tv == "function" then
    pack_function(P, v, node, id)
  elseif tv == "cdata" and T.is_tensor(v) then
    if v.h == nil then refuse(P, v, "a freed tensor") end
    P.tensors[#P.tensors + 1] = v
    node.k, node.i = "T", #P.tensors
  elseif tv == "userdata" then
    pack_proxy(P, v, node)
  else
    refuse(P, v)
  end
  return { id }
end

local function free_handles(handles)
  for _, hs in pairs(handles) do
    for _, addr in ipairs(hs) do C.lt_tensor_free(ffi.cast("lt_tensor*", addr)) end
  end
end

-- Per worker, a second handle to each tensor, as addresses (a worker takes its own).
local function worker_handles(tensors, n)
  local out, box = {}, ffi.new("lt_tensor*[1]")
  for w = 1, n do
    local hs = {}
    out[w] = hs
    for i, t in ipairs(tensors) do
      if C.lt_tensor_shallow_copy(box, t.h) ~= 0 then
        free_handles(out)
        error("DataLoader: cannot send a tensor to the workers (lt_tensor_shallow_copy failed)", 0)
      end
      hs[i] = tonumber(ffi.cast("uintptr_t", box[0]))
    end
  end
  return out
end

function M.pack(roots, num_workers)
  local P = { nodes = {}, ids = {}, envs = {}, env_has = {}, upvalues = {}, tensors = {},
    index = library_index(), depth = 0, kinds = {}, keys = {} }
  local items = {}
  for _, r in ipairs(roots) do
    if r[2] ~= nil then items[r[1]] = sub(P, r[2], "root", r[1]) end
  end
  local handles = worker_handles(P.tensors, num_workers)
  return buffer.encode({ nodes = P.nodes, roots = items, handles = handles })
end

---------------------------------------------------------------- worker state: unpack
local function show(path)
  local out = { path[1] }
  for s = 2, #path do
    local step = path[s]
    if step == META or type(step) == "table" and step.m then out[#out + 1] = " (metatable)"
    elseif type(step) == "table" then out[#out + 1] = (" (upvalue %d)"):format(step.u)
    else out[#out + 1] = "." .. tostring(step) end
  end
  return table.concat(out)
end

-- A library value by its path: the module required here, then the same steps.
local function resolve(path)
  local ok, v = pcall(function()
    local cur = path[1] == "_G" and _G or require(path[1])
    for s = 2, #path do
      local step = path[s]
      if type(step) ~= "table" then cur = cur[step]
      elseif step.m then cur = debug.getmetatable(cur)
      else cur = select(2, debug.getupvalue(cur, step.u)) end
    end
    return cur
  end)
  if not ok or v == nil then
    error(("DataLoader worker: the dataset refers to %s, sent by name, which this worker state "
      .. "does not have%s"):format(show(path), ok and "" or ": " .. tostring(v)), 0)
  end
  return v
end

-- Every node's object, created empty (tables, proxies, fresh closures, environments).
local function create(nodes, tensors)
  local objs = {}
  for id = 1, #nodes do
    local n = nodes[id]
    local k = n.k
    if k == "n" then objs[id] = resolve(n.path)
    elseif k == "T" then objs[id] = tensors[n.i]
    elseif k == "t" then objs[id] = {}
    elseif k == "u" then objs[id] = newproxy(false)
    elseif k == "f" then objs[id] = assert(loadstring(n.code))
    elseif k == "e" then objs[id] = n.G and _G or setmetatable({}, { __index = _G }) end
  end
  return objs
end

function M.unpack(s, worker)
  local p = buffer.decode(s)
  local tensors = {}   -- taken first: from here on this state's GC owns them
  for i, addr in ipairs(p.handles[worker + 1] or {}) do tensors[i] = memory.wrap(ffi.cast("lt_tensor*", addr)) end
  local nodes = p.nodes
  local objs = create(nodes, tensors)
  local function val(item) if type(item) == "table" then return objs[item[1]] end return item end
  for id = 1, #nodes do
    local n, o = nodes[id], objs[id]
    if n.k == "t" or n.k == "e" then
      for j = 1, #n.kv, 2 do rawset(o, val(n.kv[j]), val(n.kv[j + 1])) end
      if n.mt then debug.setmetatable(o, val(n.mt)) end
    elseif n.k == "u" then
      debug.setmetatable(o, val(n.mt))
    elseif n.k == "f" then
      setfenv(o, val(n.env))
      for i, leader in pairs(n.join) do debug.upvaluejoin(o, i, objs[leader[1]], leader[2]) end
    end
  end
  for id = 1, #nodes do   -- after the joins: a shared upvalue is set once, through its leader
    local n = nodes[id]
    if n.k == "f" then
      for i, item in pairs(n.up) do debug.setupvalue(objs[id], i, val(item)) end
    end
  end
  local roots = {}
  for name, item in pairs(p.roots) do roots[name] = val(item) end
  return roots
end

return M
