--[[
  torch.nn.containers — Sequential, ModuleList and ModuleDict, with PyTorch's child names (so
  state_dict keys read "0.weight", "layers.3.bias", "heads.cls.weight").

      local net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
      local blocks = nn.ModuleList({ nn.Linear(4, 4), nn.Linear(4, 4) })
      local heads = nn.ModuleDict({ cls = nn.Linear(4, 3) })

  Indices into Sequential/ModuleList are 0-based like PyTorch's and like tensor indices:
  `net[0]` (or `net:get(0)`) is the first layer, `net[-1]` the last, `net[0] = m` replaces one;
  an index out of range is an error saying so (never a silent nil). `#net` is 0 (LuaJIT ignores
  __len on tables): use net:len(). An error inside Sequential's forward says where:
  "in module 2 (Linear) of Sequential".

  Usage: see above; net:len(), net:append(m), net[i], ipairs(list:list()).
]]
local Module = require("torch.nn.module").Module
local is_module = require("torch.nn.module").is_module

local M = {}

local function check_module(name, i, m)
  if not is_module(m) then
    error(("%s: item %d is not a Module (got %s)"):format(name, i, type(m)), 4)
  end
end

---------------------------------------------------------------- Sequential
local Sequential = Module:extend("Sequential")
M.Sequential = Sequential

function Sequential:__init(...)
  local n = select("#", ...)
  local first = ...
  if n == 1 and type(first) == "table" and not is_module(first) then
    -- nn.Sequential({name = module, ...}) is an OrderedDict in PyTorch; Lua tables are unordered,
    -- so a list of {name, module} pairs keeps the order.
    for i, pair in ipairs(first) do
      check_module("Sequential", i, pair[2])
      self:add_module(pair[1], pair[2])
    end
    return
  end
  for i = 1, n do
    local m = select(i, ...)
    check_module("Sequential", i, m)
    self:add_module(tostring(i - 1), m)
  end
end

-- Extra arguments go to the first module only; each later module gets its predecessor's output.
function Sequential:forward(...)
  local names, values = self._modules.names, self._modules.values
  if #names == 0 then return ... end
  local x, first = nil, true
  for _, name in ipairs(names) do
    local m = values[name]
    if m then
      local ok, out
      if first then ok, out = pcall(m, ...) else ok, out = pcall(m, x) end
      first = false
      if not ok then
        error(("in module %s (%s) of Sequential: %s"):format(name, m._class.__name, tostring(out)), 2)
      end
      x = out
    end
  end
  return x
end

function Sequential:append(m)
  check_module("append", 1, m)
  self:add_module(tostring(#self._modules.names), m)
  return self
end

-- The child name at a 0-based index (negative counts from the end), or nil and an error message.
local function name_at(self, i)
  local names, kind = self._modules.names, self._class.__name
  if type(i) ~= "number" or i ~= math.floor(i) then
    return nil, ("%s indices are integers, got %s"):format(kind, tostring(i))
  end
  local n = #names
  local j = i < 0 and i + n or i
  if j < 0 or j >= n then
    return nil, ("index %d is out of range for a %s of %d modules (indices are 0-based, as in "
      .. "PyTorch: [0] is the first module, [-1] the last)"):format(i, kind, n)
  end
  return names[j + 1]
end

function Sequential:get(i)
  local name, why = name_at(self, i)
  if name == nil then error(why, 2) end
  return self._modules.values[name]
end

-- net[i] and net[i] = m (tail-called from Module's __index/__newindex: level 2 is the user's line).
function Sequential:__getitem(i)
  local name, why = name_at(self, i)
  if name == nil then error(why, 2) end
  return self._modules.values[name]
end

function Sequential:__setitem(i, m)
  local name, why = name_at(self, i)
  if name == nil then error(why, 2) end
  if not is_module(m) then
    error(("%s[%d] = value: a Module expected, got %s"):format(self._class.__name, i, type(m)), 2)
  end
  self:add_module(name, m)
end

-- The number of modules (Lua 5.1 tables ignore __len, so this is a method).
function Sequential:len() return #self._modules.names end

---------------------------------------------------------------- ModuleList
local ModuleList = Module:extend("ModuleList")
M.ModuleList = ModuleList

function ModuleList:__init(list)
  for i, m in ipairs(list or {}) do
    check_module("ModuleList", i, m)
    self:add_module(tostring(i - 1), m)
  end
end

ModuleList.append = Sequential.append
ModuleList.get = Sequential.get
ModuleList.len = Sequential.len
ModuleList.__getitem, ModuleList.__setitem = Sequential.__getitem, Sequential.__setitem

function ModuleList:extend_with(list)
  for _, m in ipairs(list) do self:append(m) end
  return self
end

-- The modules as a Lua array (1-based), for ipairs.
function ModuleList:list() return self:children() end
function ModuleList:forward() error("ModuleList is a container; call its modules, not the list", 2) end

-- PyTorch 2.x's ModuleList repr: a run of children that print the same shows once, as
-- "(0-5): 6 x Linear(...)" (torch/nn/modules/container.py, ModuleList.__repr__).
function ModuleList:__repr()
  local children = self:children()
  if #children == 0 then return "ModuleList()" end
  local runs = {}   -- { first index, last index, repr }
  for i, m in ipairs(children) do
    local r, last = tostring(m), runs[#runs]
    if last and last[3] == r then last[2] = i - 1 else runs[#runs + 1] = { i - 1, i - 1, r } end
  end
  local lines = { "ModuleList(" }
  for _, run in ipairs(runs) do
    local body = run[3]:gsub("\n", "\n  ")
    local head = run[1] == run[2] and ("(%d): "):format(run[1])
      or ("(%d-%d): %d x "):format(run[1], run[2], run[2] - run[1] + 1)
    lines[#lines + 1] = "  " .. head .. body
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

---------------------------------------------------------------- ModuleDict
local ModuleDict = Module:extend("ModuleDict")
M.ModuleDict = ModuleDict

-- Keys are added in sorted order (Lua tables have no order); pass {{name, module}, ...} to choose.
function ModuleDict:__init(dict)
  dict = dict or {}
  if dict[1] ~= nil then
    for i, pair in ipairs(dict) do
      check_module("ModuleDict", i, pair[2])
      self:add_module(pair[1], pair[2])
    end
    return
  end
  local keys = {}
  for k in pairs(dict) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    check_module("ModuleDict", i, dict[k])
    self:add_module(k, dict[k])
  end
end

function ModuleDict:get(key) return self._modules.values[key] end
function ModuleDict:keys()
  local out = {}
  for i, n in ipairs(self._modules.names) do out[i] = n end
  return out
end
function ModuleDict:forward() error("ModuleDict is a container; call its modules, not the dict", 2) end

return M
