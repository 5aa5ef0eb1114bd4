--[[
  torch.nn.parametrize — torch.nn.utils.parametrize: a module's tensor computed from other
  tensors on each access (torch/nn/utils/parametrize.py), as PyTorch does it:

      parametrize.register_parametrization(m, "weight", P)   -- P: a Module, P(X) -> the weight
      m.weight          -- P(m.parametrizations.weight.original), recomputed on every access
      m.weight = W      -- sets original = P:right_inverse(W) (P must have right_inverse)
      parametrize.remove_parametrizations(m, "weight", leave_parametrized=true)
      parametrize.is_parametrized(m[, "weight"])
      parametrize.cached(function() ... end)   -- within fn, each parametrized tensor is computed once

  The original tensor moves to m.parametrizations.weight.original (a Parameter stays one, a
  buffer a buffer): state dict keys "parametrizations.weight.original" (original0, original1, ...
  when right_inverse returns several tensors), the parametrization's own state after it
  ("parametrizations.weight.0._u"). Gradients flow from m.weight to the originals. Several
  parametrizations on one tensor chain: the first registered is applied first.

  The module's class becomes Parametrized<Class> (PyTorch's name, seen in its repr) whose
  instance metatable resolves the parametrized names before the usual lookup; modules that are
  not parametrized keep the plain lookup and pay nothing.

  A right_inverse that cannot invert (Python raises NotImplementedError, which registration
  skips) raises parametrize.NotImplementedError(msg) here.

  Usage:  local parametrize = torch.nn.utils.parametrize
]]
local torch = require "torch"
local P = require "torch._pysig"
local module = require "torch.nn.module"
local containers = require "torch.nn.containers"

local is_module, is_parameter, Parameter = module.is_module, module.is_parameter, module.Parameter
local ModuleList, ModuleDict = containers.ModuleList, containers.ModuleDict

local M = {}

---------------------------------------------------------------- NotImplementedError
local not_implemented_mt = { __tostring = function(e) return "NotImplementedError: " .. e.message end }
function M.NotImplementedError(msg) error(setmetatable({ message = msg or "" }, not_implemented_mt), 2) end
local function is_not_implemented(e) return getmetatable(e) == not_implemented_mt end

-- Calls m:right_inverse(value): its results as an array, or nil when m has none or it raised
-- NotImplementedError and `skip` allows that.
local function right_inverse(m, value, skip)
  if type(m.right_inverse) ~= "function" then return nil end
  local res = { pcall(m.right_inverse, m, value) }
  if res[1] then return { unpack(res, 2, table.maxn(res)) } end
  if skip and is_not_implemented(res[2]) then return nil end
  error(res[2], 0)
end

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end
local function register(m, name, t)
  if is_parameter(t) then m:register_parameter(name, t) else m:register_buffer(name, t) end
end

---------------------------------------------------------------- ParametrizationList
local ParametrizationList = ModuleList:extend("ParametrizationList")
M.ParametrizationList = ParametrizationList

-- The results of right_inverse as (is_tensor, list of tensors).
local function as_tensors(res)
  local one = res[1]
  if #res == 1 and torch.is_tensor(one) then return true, { one } end
  if #res == 1 and type(one) == "table" and not is_module(one) then res = one end
  for i = 1, math.max(#res, 1) do
    if not torch.is_tensor(res[i]) then
      P.fail("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got element %d of type %s.",
        i - 1, type(res[i]))
    end
  end
  return false, res
end

function ParametrizationList:__init(modules, original, unsafe)
  ModuleList.__init(self, modules)
  self.unsafe = unsafe == true
  local original_shape, original_dtype = shape(original), original.dtype
  local new = torch.no_grad(function()
    local res = { original }
    for i = #modules, 1, -1 do res = right_inverse(modules[i], res[1], true) or res end
    return res
  end)
  local is_tensor, tensors = as_tensors(new)
  self.is_tensor, self.ntensors = is_tensor, #tensors
  if is_tensor then
    if tensors[1].dtype ~= original.dtype then
      P.fail("When `right_inverse` outputs one tensor, it may not change the dtype.\noriginal.dtype: %s\n"
        .. "right_inverse(original).dtype: %s", tostring(original.dtype), tostring(tensors[1].dtype))
    end
    if not rawequal(tensors[1], original) then torch.no_grad(function() original:set_(tensors[1]) end) end
    register(self, "original", original)
  else
    for i, t in ipairs(tensors) do
      if is_parameter(original) then t = Parameter(t, original.requires_grad) end
      t:requires_grad_(original.requires_grad)
      register(self, "original" .. (i - 1), t)
    end
  end
  if not self.unsafe then
    local z = self()
    if not torch.is_tensor(z) then P.fail("A parametrization must return a tensor. Got %s.", type(z)) end
    if z.dtype ~= original_dtype then
      P.fail("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is "
        .. "enabled.\nunparametrized dtype: %s\nparametrized dtype: %s", tostring(original_dtype), tostring(z.dtype))
    end
    if shape(z) ~= original_shape then
      P.fail("Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is "
        .. "enabled.\nunparametrized shape: %s\nparametrized shape: %s", original_shape, shape(z))
    end
  end
end

-- The parametrized tensor: the chain applied to the original(s).
function ParametrizationList:forward()
  local mods = self._modules
  local x
  if self.is_tensor then
    x = mods.values["0"](self.original)
  else
    local originals = {}
    for i = 1, self.ntensors do originals[i] = self["original" .. (i - 1)] end
    x = mods.values["0"](unpack(originals, 1, self.ntensors))
  end
  for i = 2, #mods.names do x = mods.values[mods.names[i]](x) end
  return x
end

-- Sets the original(s) so that the chain gives `value` (module.weight = value).
function ParametrizationList:right_inverse(value)
  torch.no_grad(function()
    local res = { value }
    local list = self:children()
    for i = #list, 1, -1 do
      local m = list[i]
      res = right_inverse(m, res[1], false)
      if res == nil then P.fail("parametrization %s does not implement right_inverse.", m._class.__name) end
    end
    local is_tensor, tensors = as_tensors(res)
    if is_tensor ~= self.is_tensor or (not is_tensor and #tensors ~= self.ntensors) then
      P.fail("'right_inverse' must return %s", self.is_tensor and "a tensor" or
        ("a sequence of tensors of length %d. Got a sequence of length %d."):format(self.ntensors, #tensors))
    end
    for i, t in ipairs(tensors) do
      local original = self.is_tensor and self.original or self["original" .. (i - 1)]
      if t.dtype ~= original.dtype then
        P.fail("The tensor returned by `right_inverse` has dtype %s while `original` has dtype %s",
          tostring(t.dtype), tostring(original.dtype))
      end
      original:set_(t)
    end
  end)
end

function ParametrizationList:__repr()
  return (ModuleList.__repr(self):gsub("^ModuleList", "ParametrizationList"))
end

---------------------------------------------------------------- caching
local cache_depth, cache = 0, {}

--[[ cached(fn, ...) -> fn(...)'s results; meanwhile each parametrized tensor is computed once
     (PyTorch's `with parametrize.cached():`). ]]
function M.cached(fn, ...)
  if type(fn) ~= "function" then
    P.fail("bad argument #1 to 'cached' (function expected: parametrize.cached(function() ... end))")
  end
  cache_depth = cache_depth + 1
  local res = { pcall(fn, ...) }
  cache_depth = cache_depth - 1
  if cache_depth == 0 then cache = {} end
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, table.maxn(res))
end

local function parametrized_value(self, plist, k)
  if cache_depth == 0 then return plist() end
  local mine = cache[self]
  if mine == nil then mine = {}; cache[self] = mine end
  local t = mine[k]
  if t == nil then t = plist(); mine[k] = t end
  return t
end

---------------------------------------------------------------- the parametrized class
local function plist_of(self, k)
  local dict = rawget(self, "_modules").values.parametrizations
  return dict and dict._modules.values[k]
end

local parametrized_classes = setmetatable({}, { __mode = "k" })   -- class -> Parametrized<class>

local function parametrized_class(class)
  local pclass = parametrized_classes[class]
  if pclass then return pclass end
  pclass = class:extend("Parametrized" .. class.__name)
  local base = class.__instance_mt
  local index, newindex = base.__index, base.__newindex
  pclass.__instance_mt.__index = function(self, k)
    local plist = type(k) == "string" and plist_of(self, k)
    if plist then return parametrized_value(self, plist, k) end
    return index(self, k)
  end
  pclass.__instance_mt.__newindex = function(self, k, v)
    local plist = type(k) == "string" and plist_of(self, k)
    if plist then return plist:right_inverse(v) end
    return newindex(self, k, v)
  end
  parametrized_classes[class] = pclass
  return pclass
end

local function set_class(m, class)
  rawset(m, "_class", class)
  setmetatable(m, class.__instance_mt)
end

---------------------------------------------------------------- the public functions
local IS = P.signature("is_parametrized", "module, tensor_name=None")
function M.is_parametrized(...)
  local a = P.bind(IS, ...)
  local m = a.module
  if not is_module(m) then return false end
  local dict = rawget(m, "_modules").values.parametrizations
  if dict == nil or rawget(dict, "_class") ~= ModuleDict then return false end
  if a.tensor_name == nil then return #dict._modules.names > 0 end
  return dict._modules.values[a.tensor_name] ~= nil
end

local function check_chained(m, name, p)
  local y = m[name]
  local x = p(y)
  if not torch.is_tensor(x) then P.fail("A parametrization must return a tensor. Got %s.", type(x)) end
  if x.dtype ~= y.dtype or shape(x) ~= shape(y) then
    P.fail("Registering a parametrization may not change the dtype or shape of the tensor, unless the `unsafe` "
      .. "flag is enabled.\nmodule.%s: %s %s\nparametrization(module.%s): %s %s", name, tostring(y.dtype), shape(y),
      name, tostring(x.dtype), shape(x))
  end
  local z = right_inverse(p, x, true)
  if z ~= nil and (not torch.is_tensor(z[1]) or z[1].dtype ~= y.dtype or shape(z[1]) ~= shape(y)) then
    P.fail("The tensor returned by parametrization.right_inverse must have the same dtype and shape as module.%s, "
      .. "unless the `unsafe` flag is enabled.", name)
  end
end

local REGISTER = P.signature("register_parametrization", "module, tensor_name, parametrization, *, unsafe=False")
function M.register_parametrization(...)
  local a = P.bind(REGISTER, ...)
  local m, name, p = a.module, a.tensor_name, a.parametrization
  if not is_module(m) then P.fail("bad argument #1 to 'register_parametrization' (Module expected, got %s)", type(m)) end
  if type(name) ~= "string" then P.fail("bad argument #2 to 'register_parametrization' (string expected)") end
  if not is_module(p) then
    P.fail("bad argument #3 to 'register_parametrization' (Module expected, got %s)", type(p))
  end
  p:train(m.training)
  if M.is_parametrized(m, name) then
    if not a.unsafe then check_chained(m, name, p) end
    local plist = m.parametrizations._modules.values[name]
    plist:append(p)
    plist.unsafe = plist.unsafe or a.unsafe
    return m
  end
  local params, buffers = rawget(m, "_parameters").values, rawget(m, "_buffers").values
  local original = params[name] or buffers[name]
  if original == nil then
    P.fail("Module '%s' does not have a parameter, a buffer, or a parametrized element with name '%s'",
      m._class.__name, name)
  end
  local plist = ParametrizationList({ p }, original, a.unsafe)
  m[name] = nil
  if not M.is_parametrized(m) then
    set_class(m, parametrized_class(rawget(m, "_class")))
    m.parametrizations = ModuleDict()
  end
  m.parametrizations:add_module(name, plist)
  return m
end

local REMOVE = P.signature("remove_parametrizations", "module, tensor_name, leave_parametrized=True")
function M.remove_parametrizations(...)
  local a = P.bind(REMOVE, ...)
  local m, name = a.module, a.tensor_name
  if not M.is_parametrized(m, name) then
    P.fail("Module %s does not have a parametrization on %s", is_module(m) and m._class.__name or type(m), tostring(name))
  end
  local dict = m.parametrizations
  local plist = dict._modules.values[name]
  local original
  if plist.is_tensor then
    original = plist.original
    if a.leave_parametrized then
      torch.no_grad(function() original:set_(m[name]) end)
    end
  elseif a.leave_parametrized then
    local t = m[name]
    original = t.requires_grad and Parameter(t) or t
  else
    P.fail("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of "
      .. "a sequence of tensors.")
  end
  dict[name] = nil
  if #dict._modules.names == 0 then
    m.parametrizations = nil
    set_class(m, rawget(rawget(m, "_class"), "__base"))
  end
  register(m, name, original)
  return m
end

--[[ type_before_parametrizations(module) -> the module's class before parametrization. ]]
function M.type_before_parametrizations(m)
  if M.is_parametrized(m) then return rawget(rawget(m, "_class"), "__base") end
  return rawget(m, "_class")
end

return M
