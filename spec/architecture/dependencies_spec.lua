--[==[
  spec/architecture/dependencies_spec.lua — the dependency rules of ARCHITECTURE.md, checked on
  the tree: every `require` in lua/ (top level and inside function bodies) and every
  `#include` in runtime/ and bindings/.

  What it reads:
    Lua  comments are stripped (strings kept), then `require "m"`, `require("m")`,
         `require [[m]]` and `pcall(require, "m")` give the edges; a file with a computed
         `require(name)` also gets an edge to every "torch.*" module name written in it as a
         string (the lists such loops walk: nn/init.lua, optim/lr_scheduler.lua, ...). Loading a
         file outside lua/ (`loadfile`/`dofile` of a path into tools/, recipes/, templates/) and
         assigning `package.path` count as edges too.
    C    `#include "x"` and `#include <x>` lines.
  The rules (ARCHITECTURE.md, "Allowed dependencies"): the Lua library's layers are
    core (torch, torch._*, dtype, device, backends, autograd*, gradcheck, jit, amp, serialization,
    random)
      < subsystems (nn, optim, data, distributed, utils, training_state, profiler)
      < developer tools (repl, doctor, tools, cli);
  a module may require its own layer and the ones below; among subsystems only the pairs in
  SUBSYSTEM_EDGES; one core module, LAZY_LOADER (torch._lazy_modules: what `torch.X` loads on
  first access, as PyTorch's torch/__init__.py imports its subpackages), may name any module of
  the library; lua/ requires nothing above it (recipes, templates, tools/, bench, spec) and
  no Lua module but LuaJIT's own (EXTERNAL); recipes/ and templates/ use no private torch._*
  module. runtime/ includes its own headers and, of the bindings, only the C ABI lt.h, and no
  libtorch header; bindings/ includes no runtime header and no Lua header.
  KNOWN_DEBT lists each edge that breaks a rule today, with its reason: the same list is in
  ARCHITECTURE.md ("Known debt"); an entry that no longer occurs fails too, so the list shrinks
  as the debt is paid.

  Run: build/ltorch /usr/bin/busted spec/architecture/dependencies_spec.lua
]==]

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/architecture/[^/]*$") or ".")

---------------------------------------------------------------- the rules

local CORE = { dtype = true, device = true, backends = true, autograd = true, autograd_function = true,
  gradcheck = true, jit = true, amp = true, serialization = true, random = true,
  accelerator = true, masked = true, signal = true }
local SUBSYSTEMS = { nn = true, optim = true, data = true, distributed = true, utils = true, training_state = true,
  profiler = true }
local DEV_TOOLS = { repl = true, doctor = true, tools = true, cli = true }
local RANK = { core = 1, subsystem = 2, devtool = 3 }

-- Subsystem -> subsystem edges that are allowed (anything else between subsystems fails).
local SUBSYSTEM_EDGES = {
  ["nn -> distributed"] = "nn.parallel.DistributedDataParallel runs on torch.distributed's process group",
}

-- The one sanctioned upward edge: the table of the library modules `torch.X` stands for
-- (torch.nn, torch.optim, ..., torch.breakpoint's debugger), loaded on first access. They
-- require torch themselves, so torch names them and loads each when first asked.
local LAZY_LOADER = "torch._lazy_modules"

-- Modules lua/ may require that are not its own: LuaJIT's built-in and bundled modules.
local EXTERNAL = { ffi = true, bit = true, jit = true, ["jit.util"] = true, ["jit.opt"] = true,
  ["jit.profile"] = true, ["table.new"] = true, ["table.clear"] = true, ["string.buffer"] = true }

-- Edges that break a rule today. Key: "<from> -> <to>" (module names; files for C and paths).
-- (None today: add an entry, with its reason, only beside the same row in ARCHITECTURE.md.)
local KNOWN_DEBT = {
}

-- Not a layer edge: the worker state takes the main state's search path, adding no location.
local PACKAGE_PATH_OK = { ["torch.data._worker"] = true }

---------------------------------------------------------------- reading files

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function files(dir, pattern)
  local out = {}
  local p = assert(io.popen(("cd '%s' && find %s -type f -name '%s' | sort"):format(ROOT, dir, pattern)))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- A long bracket's end ("]==]") from its opening level at `i` (pointing at "[").
local function long_end(src, i)
  local eq = src:match("^%[(=*)%[", i)
  if not eq then return nil end
  local _, e = src:find("]" .. eq .. "]", i + 2 + #eq, true)
  return e or #src
end

local function quoted_end(src, i, q)
  local j = i + 1
  while j <= #src do
    local c = src:sub(j, j)
    if c == "\\" then j = j + 2
    elseif c == q or c == "\n" then return j
    else j = j + 1 end
  end
  return #src
end

-- Lua source without its comments (strings kept; newlines kept so line numbers stay).
local function strip_comments(src)
  local out, i, n = {}, 1, #src
  while i <= n do
    local j = src:find("[-\"'%[]", i) or n + 1
    out[#out + 1] = src:sub(i, j - 1)
    if j > n then break end
    local c = src:sub(j, j)
    if c == "-" and src:sub(j + 1, j + 1) == "-" then
      local e = long_end(src, j + 2) or (src:find("\n", j, true) or n + 1) - 1
      out[#out + 1] = (src:sub(j, e):gsub("[^\n]", ""))
      i = e + 1
    elseif c == '"' or c == "'" then
      local e = quoted_end(src, j, c)
      out[#out + 1] = src:sub(j, e)
      i = e + 1
    elseif c == "[" and long_end(src, j) then
      local e = long_end(src, j)
      out[#out + 1] = src:sub(j, e)
      i = e + 1
    else
      out[#out + 1] = c
      i = j + 1
    end
  end
  return table.concat(out)
end

local REQUIRE_PATTERNS = {
  "require%s*%(?%s*[\"']([%w_%.]+)[\"']",
  "require%s*%(?%s*%[=*%[([%w_%.]+)%]=*%]",
  "pcall%(%s*require%s*,%s*[\"']([%w_%.]+)[\"']",
}

-- "lua/torch/nn/init.lua" -> "torch.nn"
local function module_of(path)
  return (path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))
end

-- Every edge a Lua file makes: {to = module or path, line = n}.
local function lua_edges(path)
  local code = strip_comments(read(ROOT .. "/" .. path))
  local edges, seen = {}, {}
  local function add(to, pos)
    if seen[to] then return end
    seen[to] = true
    local _, line = code:sub(1, pos):gsub("\n", "")
    edges[#edges + 1] = { to = to, line = line + 1 }
  end
  for _, pat in ipairs(REQUIRE_PATTERNS) do
    for pos, m in code:gmatch("()" .. pat) do add(m, pos) end
  end
  if code:find("require%s*%(%s*[%a_][%w_%.]*%s*%)") then   -- a computed require: the listed names
    for pos, m in code:gmatch("()[\"'](torch%.[%w_%.]+)[\"']") do add(m, pos) end
  end
  for pos, m in code:gmatch("()[\"'][^\"'\n]-/(%.%./[%w_]+/[%w_%.]+%.lua)[\"']") do
    add((m:gsub("^%.%./", "")), pos)   -- "<lua_dir>/../tools/run.lua" -> tools/run.lua
  end
  -- a statement assigning package.path (alone or in a list: `package.path, package.cpath = ...`)
  for pos in ("\n" .. code):gmatch("\n%s*()package%.path[%w_%.,%s]*=[^=]") do add("package.path", pos - 1) end
  return edges
end

local function layer_of(mod)
  if mod == "torch" then return "core", "core" end
  local top = mod:match("^torch%.([%w_]+)")
  if not top then return nil end
  if top:sub(1, 1) == "_" or CORE[top] then return "core", "core" end
  if SUBSYSTEMS[top] then return "subsystem", top end
  if DEV_TOOLS[top] then return "devtool", top end
  return "unknown", top
end

-- Why a lua/ edge is forbidden, or nil when it is allowed.
local function lua_violation(from, to)
  if to == "package.path" then
    return not PACKAGE_PATH_OK[from] and "assigns package.path (the library's own path is the runtime's job)" or nil
  end
  if to:find("/", 1, true) then return "loads a file from " .. to:match("^[^/]+") .. "/, above lua/" end
  if not to:match("^torch%.") and to ~= "torch" then
    if EXTERNAL[to] then return nil end
    local top = to:match("^[^.]+")
    if top == "recipes" or top == "templates" or top == "tools" or top == "bench" or top == "spec" then
      return "requires " .. top .. "/, a layer above lua/"
    end
    return "requires a module outside lua/ and LuaJIT (" .. to .. ")"
  end
  local fl, fg = layer_of(from)
  local tl, tg = layer_of(to)
  if tl == "unknown" then return "torch." .. tg .. " is in no layer of ARCHITECTURE.md" end
  if from == LAZY_LOADER then return nil end
  if fl == "unknown" then return "torch." .. fg .. " is in no layer of ARCHITECTURE.md" end
  if RANK[tl] > RANK[fl] then return ("%s (%s) requires %s (%s), a higher layer"):format(from, fl, to, tl) end
  if fl == "subsystem" and tl == "subsystem" and fg ~= tg and not SUBSYSTEM_EDGES[fg .. " -> " .. tg] then
    return ("subsystem %s requires subsystem %s (not in SUBSYSTEM_EDGES)"):format(fg, tg)
  end
  return nil
end

-- Every `#include` of a C/C++ file: {name, quoted, line}.
local function c_includes(path)
  local out, n = {}, 0
  for line in (read(ROOT .. "/" .. path) .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local q, name = line:match("^%s*#%s*include%s*([\"<])([^\">]+)[\">]")
    if q then out[#out + 1] = { name = name, quoted = q == '"', line = n } end
  end
  return out
end

local function exists(path)
  local f = io.open(ROOT .. "/" .. path, "rb")
  if f then f:close() end
  return f ~= nil
end

local LIBTORCH_HEADER = { "^ATen/", "^torch/", "^c10/", "^caffe2/" }
local LUA_HEADER = { ["lua.h"] = true, ["lauxlib.h"] = true, ["lualib.h"] = true, ["luajit.h"] = true,
  ["lua.hpp"] = true }

local function c_violation(dir, inc)
  if inc.quoted then
    if dir == "runtime" then
      if inc.name == "lt.h" then return nil end   -- the bindings' C ABI
      if exists("bindings/" .. inc.name) then return "includes bindings' internal header " .. inc.name end
      if not exists("runtime/" .. inc.name) then return "includes " .. inc.name .. ", not a runtime header" end
    elseif dir == "bindings" then
      if exists("runtime/" .. inc.name) then return "includes runtime header " .. inc.name end
      if not exists("bindings/" .. inc.name) then return "includes " .. inc.name .. ", not a bindings header" end
    end
    return nil
  end
  if dir == "runtime" then
    for _, p in ipairs(LIBTORCH_HEADER) do
      if inc.name:match(p) then return "includes libtorch's " .. inc.name .. " (only bindings/ may)" end
    end
  elseif dir == "bindings" and LUA_HEADER[inc.name] then
    return "includes " .. inc.name .. " (bindings/ knows nothing of Lua)"
  end
  return nil
end

---------------------------------------------------------------- the checks

-- {violations = {"file:line: from -> to: why"}, debt_seen = {key = true}}
local function check_lua()
  local violations, debt_seen = {}, {}
  for _, path in ipairs(files("lua", "*.lua")) do
    local from = module_of(path)
    for _, e in ipairs(lua_edges(path)) do
      local why = lua_violation(from, e.to)
      local key = from .. " -> " .. e.to
      if why and KNOWN_DEBT[key] then
        debt_seen[key] = true
      elseif why then
        violations[#violations + 1] = ("%s:%d: %s: %s"):format(path, e.line, key, why)
      end
    end
  end
  return violations, debt_seen
end

describe("ARCHITECTURE.md dependency rules", function()
  local violations, debt_seen
  setup(function() violations, debt_seen = check_lua() end)

  it("the comment stripper and the require reader see what they should", function()
    local code = strip_comments("local a = require 'x' -- require 'y'\n--[==[ require 'z' ]==]\nlocal s = '--'")
    assert.are.equal("local a = require 'x' \n\nlocal s = '--'", code)
    assert.are.equal("torch.nn", module_of("lua/torch/nn/init.lua"))
    assert.is_nil(lua_violation("torch.nn.parallel", "torch.distributed"))
    assert.is_nil(lua_violation("torch.repl.help", "torch._dispatch"))
    assert.truthy(lua_violation("torch.nn.linear", "torch.optim"))
    assert.truthy(lua_violation("torch.data.x", "package.path"))
    assert.is_nil(lua_violation("torch.data._worker", "package.path"))
    assert.truthy(lua_violation("torch._tensor", "torch.nn"))
    assert.is_nil(lua_violation("torch._lazy_modules", "torch.nn"))
    assert.is_nil(lua_violation("torch._lazy_modules", "torch.repl.debugger"))
    assert.truthy(lua_violation("torch._lazy_modules", "recipes.config"))
    assert.truthy(lua_violation("torch._ops_lookup", "torch.optim"))
    assert.truthy(lua_violation("torch.tools.env", "recipes.config"))
    assert.truthy(lua_violation("torch.cli.x", "tools/x.lua"))
    assert.truthy(c_violation("runtime", { name = "lt_internal.hpp", quoted = true }))
    assert.truthy(c_violation("bindings", { name = "ltorch.h", quoted = true }))
    assert.truthy(c_violation("runtime", { name = "ATen/ATen.h", quoted = false }))
    assert.truthy(c_violation("bindings", { name = "lua.h", quoted = false }))
  end)

  it("every require in lua/ goes down the layers (or is listed debt)", function()
    assert.are.same({}, violations)
  end)

  it("every KNOWN_DEBT entry still occurs (delete the ones paid off)", function()
    local stale = {}
    for key in pairs(KNOWN_DEBT) do
      if not debt_seen[key] then stale[#stale + 1] = key end
    end
    table.sort(stale)
    assert.are.same({}, stale)
  end)

  it("ARCHITECTURE.md lists the same known debt", function()
    local doc = read(ROOT .. "/ARCHITECTURE.md")
    local missing = {}
    for key in pairs(KNOWN_DEBT) do
      if not doc:find("`" .. key .. "`", 1, true) then missing[#missing + 1] = key end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("recipes/ and templates/ use only the public torch API (no torch._* module)", function()
    local bad = {}
    for _, dir in ipairs({ "recipes", "templates" }) do
      for _, path in ipairs(files(dir, "*.lua")) do
        for _, e in ipairs(lua_edges(path)) do
          if e.to:match("^torch%._") then bad[#bad + 1] = ("%s:%d: requires %s"):format(path, e.line, e.to) end
        end
      end
    end
    assert.are.same({}, bad)
  end)

  it("runtime/ includes only its own headers, lt.h and no libtorch; bindings/ no runtime or Lua header", function()
    local bad = {}
    for _, dir in ipairs({ "runtime", "bindings" }) do
      for _, ext in ipairs({ "*.c", "*.h", "*.cpp", "*.hpp" }) do
        for _, path in ipairs(files(dir, ext)) do
          for _, inc in ipairs(c_includes(path)) do
            local why = c_violation(dir, inc)
            if why then bad[#bad + 1] = ("%s:%d: %s"):format(path, inc.line, why) end
          end
        end
      end
    end
    assert.are.same({}, bad)
  end)
end)
