--[[
  torch.nn.containers — Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict, with
  PyTorch's child names (so state_dict keys read "0.weight", "layers.3.bias", "heads.cls.weight",
  "scales.0", "gains.alpha").

      local net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
      local blocks = nn.ModuleList({ nn.Linear(4, 4), nn.Linear(4, 4) })
      local heads = nn.ModuleDict({ cls = nn.Linear(4, 3) })

  Indices into Sequential/ModuleList are 0-based like PyTorch's and like tensor indices:
  `net[0]` (or `net:get(0)`) is the first layer, `net[-1]` the last, `net[0] = m` replaces one;
  an index out of range is an error saying so (never a silent nil). `#net` is 0 (LuaJIT ignores
  __len on tables): use net:len(). An error inside Sequential's forward says where:
  "in module 2 (Linear) of Sequential".

  ParameterList / ParameterDict hold parameters (a plain Tensor is wrapped in nn.Parameter, as
  PyTorch does; other values are kept as attributes):
      local ps = nn.ParameterList({ torch.randn(3), nn.Parameter(torch.zeros(2)) })
      ps:append(torch.ones(4)); ps:extend({ ... }); ps[0]; ps[-1] = t; ps:len(); ipairs(ps:list())
      local pd = nn.ParameterDict({ alpha = torch.ones(1) })   -- keys sorted; {{name, t}, ...} keeps order
      pd.beta = torch.zeros(2)        -- as pd["beta"] = ...: registered as a Parameter
      pd:keys(), pd:values(), pd:items() ({{k, v}, ...}), pd:get(k, default), pd:pop(k), pd:popitem(),
      pd:update(other), pd:setdefault(k, default), pd:clear(), pd:copy(), pd:len(), pd:contains(k)
      pd:fromkeys({"a", "b"}, default)   -- a new ParameterDict

  Usage: see above; net:len(), net:append(m), net[i], ipairs(list:list()).
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local is_module = require("torch.nn.module").is_module
local Parameter, is_parameter = require("torch.nn.module").Parameter, require("torch.nn.module").is_parameter
local P = require "torch._pysig"
local release = require "torch.nn._release"
local pack = require("torch._args").pack

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

--[[ Extra arguments go to the first module only; each later module gets its predecessor's output.
     An intermediate output is released as soon as the next module has returned (x:free(): the
     handle lets go of its tensor at once, as C++'s `x = layer(x)` does; what autograd saved
     stays alive through autograd's own reference), where nothing but Sequential can hold it:
     producer and consumer keep no tensor (release.lua's rule: the library's own modules, no
     hooks, all the way down), it is none of Sequential's arguments, and the consumer returned
     a new tensor. Otherwise a conv's output, which ReLU does not save, lived until the next Lua
     collection (docs/PERFORMANCE.md, peak live bytes). ]]
function Sequential:forward(...)
  local names, values = self._modules.names, self._modules.values
  if #names == 0 then return ... end
  -- the arguments for release.intermediate_of and the first module, read once: no `...` in the
  -- loop below, so that the loop compiles (a vararg there stopped every call's first iteration
  -- from running compiled); one argument, the usual call, makes no table
  local nargs, a1 = select("#", ...), ...
  local packed = nargs ~= 1 and pack(...) or nil
  -- x starts as the one argument, so that it holds a tensor on every iteration (a nil on the
  -- first one made the loop's trace unstable) and every module is called the same way
  local x, first, producer_ok = a1, true, false
  for _, name in ipairs(names) do
    local m = values[name]
    if m then
      local ok, out
      if nargs == 1 or not first then ok, out = pcall(m, x)
      else ok, out = pcall(m, unpack(packed, 1, nargs)) end
      if not ok then
        error(("in module %s (%s) of Sequential: %s"):format(name, m._class.__name, tostring(out)), 2)
      end
      local ok_m = release.keeps_nothing(m)
      if not first and release.intermediate_of(x, out, producer_ok, ok_m, nargs, a1, packed) then x:free() end
      first = false
      x, producer_ok = out, ok_m
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

---------------------------------------------------------------- ParameterList, ParameterDict
-- A plain Tensor becomes an nn.Parameter (requires_grad = true), as PyTorch's containers do.
local function as_param(v)
  if torch.is_tensor(v) and not is_parameter(v) then return Parameter(v) end
  return v
end

-- "Parameter containing: [torch.float32 of size 3x4]" (typename: ParameterDict's torch.FloatTensor form).
local function describe_item(k, v, typename)
  if not torch.is_tensor(v) then
    local kind = type(v) == "number" and (v == math.floor(v) and "int" or "float")
      or ({ string = "str", boolean = "bool" })[type(v)] or type(v)
    return ("  (%s): Object of type: %s"):format(k, is_module(v) and v._class.__name or kind)
  end
  local dev = v.device.type == "cuda" and (" (" .. tostring(v.device) .. ")") or ""
  return ("  (%s): %s containing: [%s of size %s%s]"):format(k, is_parameter(v) and "Parameter" or "Tensor",
    typename and v:type() or tostring(v.dtype), table.concat(v:size(), "x"), dev)
end

-- PyTorch's repr of a parameter container: one line per item, indented under the class name.
local function container_repr(self, keys, typename)
  if #keys == 0 then return self._class.__name .. "()" end
  if #keys == 1 then return self._class.__name .. "(" .. describe_item(keys[1], self[keys[1]], typename) .. ")" end
  local lines = { self._class.__name .. "(" }
  for _, k in ipairs(keys) do lines[#lines + 1] = "  " .. describe_item(k, self[k], typename) end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

local ParameterList = Module:extend("ParameterList")
M.ParameterList = ParameterList

function ParameterList:__init(values)
  rawset(self, "_size", 0)
  if values ~= nil then self:extend(values) end
end

function ParameterList:len() return rawget(self, "_size") end

-- The attribute name of a 0-based index (negative counts from the end), or raises.
local function list_key(self, i)
  local n = rawget(self, "_size")
  if type(i) ~= "number" or i ~= math.floor(i) then P.fail("ParameterList indices are integers, got %s", tostring(i)) end
  local j = i < 0 and i + n or i
  if j < 0 or j >= n then P.fail("index %d is out of range", i) end
  return tostring(j)
end

function ParameterList:__getitem(i) return self[list_key(self, i)] end
function ParameterList:__setitem(i, v) self[list_key(self, i)] = as_param(v) end
ParameterList.get = ParameterList.__getitem

function ParameterList:append(v)
  local n = rawget(self, "_size")
  rawset(self, "_size", n + 1)
  self[tostring(n)] = as_param(v)
  return self
end

function ParameterList:extend(values)
  if type(values) ~= "table" or torch.is_tensor(values) or is_module(values) then
    P.fail("ParameterList.extend should be called with an iterable, but got %s",
      torch.is_tensor(values) and "Tensor" or type(values))
  end
  for _, v in ipairs(values) do self:append(v) end
  return self
end

-- The items as a Lua array (1-based), for ipairs.
function ParameterList:list()
  local out = {}
  for i = 1, rawget(self, "_size") do out[i] = self[tostring(i - 1)] end
  return out
end

function ParameterList:forward() P.fail("ParameterList should not be called.") end

function ParameterList:__repr()
  local keys = {}
  for i = 1, rawget(self, "_size") do keys[i] = tostring(i - 1) end
  return container_repr(self, keys, false)
end

local ParameterDict = Module:extend("ParameterDict")
M.ParameterDict = ParameterDict

-- d["name"] = v and d.name = v are PyTorch's d["name"] = v (the two are one operation in Lua).
local base_newindex = ParameterDict.__instance_mt.__newindex
local function dict_set(self, k, v)
  local keys = rawget(self, "_keys")
  if v == nil then
    for i, key in ipairs(keys) do
      if key == k then table.remove(keys, i) break end
    end
  else
    local found = false
    for _, key in ipairs(keys) do found = found or key == k end
    if not found then keys[#keys + 1] = k end
    v = as_param(v)
  end
  base_newindex(self, k, v)
  if v == nil then rawset(self, k, nil) end
end
ParameterDict.__instance_mt.__newindex = function(self, k, v)
  if type(k) == "string" and rawget(self, "_keys") ~= nil and k:sub(1, 1) ~= "_" and k ~= "training" then
    return dict_set(self, k, v)
  end
  return base_newindex(self, k, v)
end

--[[ ParameterDict(parameters): PyTorch's signature, bound by hand: a table of key = value is the
     dict itself, not keywords; only {parameters = x} alone is the keyword form. ]]
ParameterDict.__signature = P.signature("ParameterDict", "parameters=None")
function ParameterDict:__init(...)
  local n, parameters = select("#", ...), ...
  if n > 1 then P.fail("ParameterDict: takes from 0 to 1 positional arguments but %d were given", n) end
  if P.is_keywords(parameters) and next(parameters) == "parameters" and next(parameters, "parameters") == nil then
    parameters = parameters.parameters
  end
  rawset(self, "_keys", {})
  if parameters ~= nil then self:update(parameters) end
end

--[[ update(parameters): another ParameterDict (its order), an array of {key, value} pairs (that
     order), or a table of key = value (sorted keys, as PyTorch sorts a plain dict's). ]]
function ParameterDict:update(parameters)
  if type(parameters) ~= "table" or torch.is_tensor(parameters) then
    P.fail("ParametersDict.update should be called with an iterable of key/value pairs, but got %s",
      torch.is_tensor(parameters) and "Tensor" or type(parameters))
  end
  if getmetatable(parameters) == ParameterDict.__instance_mt then
    for _, kv in ipairs(parameters:items()) do self[kv[1]] = kv[2] end
  elseif parameters[1] ~= nil then
    for j, kv in ipairs(parameters) do
      if type(kv) ~= "table" or torch.is_tensor(kv) or table.maxn(kv) ~= 2 then
        P.fail("ParameterDict update sequence element #%d should be a {key, value} pair", j - 1)
      end
      self[kv[1]] = kv[2]
    end
  else
    local keys = {}
    for k in pairs(parameters) do
      if type(k) ~= "string" then P.fail("ParameterDict keys are strings, got %s", type(k)) end
      keys[#keys + 1] = k
    end
    table.sort(keys)
    for _, k in ipairs(keys) do self[k] = parameters[k] end
  end
end

function ParameterDict:len() return #rawget(self, "_keys") end
function ParameterDict:contains(key) return self:get(key) ~= nil end
function ParameterDict:keys() return { unpack(rawget(self, "_keys")) } end
function ParameterDict:values()
  local out = {}
  for i, k in ipairs(rawget(self, "_keys")) do out[i] = self[k] end
  return out
end
function ParameterDict:items()
  local out = {}
  for i, k in ipairs(rawget(self, "_keys")) do out[i] = { k, self[k] } end
  return out
end

function ParameterDict:get(key, default)
  for _, k in ipairs(rawget(self, "_keys")) do
    if k == key then return self[k] end
  end
  return default
end

function ParameterDict:pop(key)
  local v = self:get(key)
  if v == nil then P.fail("ParameterDict has no key '%s'", tostring(key)) end
  dict_set(self, key, nil)
  return v
end

-- Removes and returns the last inserted key and its value.
function ParameterDict:popitem()
  local keys = rawget(self, "_keys")
  if #keys == 0 then P.fail("popitem(): ParameterDict is empty") end
  local k = keys[#keys]
  return k, self:pop(k)
end

function ParameterDict:setdefault(key, default)
  if self:get(key) == nil then self[key] = default end
  return self[key]
end

function ParameterDict:clear()
  for _, k in ipairs(self:keys()) do dict_set(self, k, nil) end
end

function ParameterDict:copy() return ParameterDict(self:items()) end

-- A new ParameterDict with each of keys set to default (a method, as PyTorch's).
function ParameterDict:fromkeys(keys, default)
  local d = ParameterDict()
  for _, k in ipairs(keys) do d[k] = default end
  return d
end

function ParameterDict:forward() P.fail("ParameterDict should not be called.") end
function ParameterDict:__repr() return container_repr(self, rawget(self, "_keys"), true) end

P.init(ParameterList, "values=None", "all")

return M
