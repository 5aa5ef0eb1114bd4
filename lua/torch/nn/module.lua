--[[
  torch.nn.module — nn.Module, the base of every layer and model, with PyTorch's behaviour:

      local Net = nn.Module:extend("Net")
      function Net:__init(hidden)
        self.fc1 = nn.Linear(784, hidden)     -- a Module: registered as a child
        self.fc2 = nn.Linear(hidden, 10)
        self.scale = nn.Parameter(torch.ones(1))   -- a Parameter: registered as a parameter
        self:register_buffer("steps", torch.zeros(1, {dtype = torch.int64}))
      end
      function Net:forward(x) return self.fc2(self.fc1(x):relu()) * self.scale end
      local net = Net(128); local y = net(x)

  Parameters, buffers and children are registered by assignment (parameters must be wrapped in
  nn.Parameter, as in PyTorch; plain tensors stay plain attributes) and kept in insertion order,
  which gives state_dict keys PyTorch's names: "fc1.weight", "0.bias", "layers.2.norm.weight".
  `net(x)` runs forward hooks around `forward`. tostring(net) prints PyTorch's module repr.

  Ported idioms: `for name, p in net:named_parameters() do` (likewise named_buffers,
  named_modules, named_children) iterates in registration order; the result is also an array of
  {name, value} pairs for ipairs; `for name, t in net:state_dict() do` likewise (pairs() over
  the state dict works too, in no particular order). `net:load_state_dict(sd, false)` or `(sd, {strict = false,
  assign = true})`; it returns PyTorch's (missing_keys, unexpected_keys).

  The parts: this file is the class system (extend/new, the instance metatable that registers
  on assignment and runs forward hooks), registration, modes and bulk changes (train, to, ...),
  hooks and repr; nn.Parameter is torch.nn._parameter, traversal (named_parameters, modules, ...)
  torch.nn._module_traversal, the state dict (state_dict, load_state_dict)
  torch.nn._module_state.

  Usage: local nn = require "torch.nn"; see lua/torch/nn/*.lua for layers built on this.
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local pack = require("torch._args").pack
local parameter = require "torch.nn._parameter"
local traversal = require "torch.nn._module_traversal"
local state = require "torch.nn._module_state"
local forward_keywords = require "torch.nn._forward_keywords"

local istype, Ref = ffi.istype, _C.Ref
local raw_named_children = traversal.raw_named_children

local M = {}
M.Parameter, M.is_parameter = parameter.Parameter, parameter.is_parameter
M.named_list = traversal.named_list   -- for other modules with PyTorch's named_* methods (torch.jit)

---------------------------------------------------------------- ordered maps
local function omap() return { names = {}, values = {} } end
local function oset(map, name, value)
  if map.values[name] == nil then
    -- a name registered with a nil value (register_buffer(name, nil)) keeps its place
    local known = false
    for _, n in ipairs(map.names) do known = known or n == name end
    if not known then map.names[#map.names + 1] = name end
  end
  map.values[name] = value
end
local function odel(map, name)
  if map.values[name] == nil then
    -- a name may be registered with a nil value (register_buffer(name, nil)); drop it too
    for i, n in ipairs(map.names) do
      if n == name then table.remove(map.names, i) return end
    end
    return
  end
  map.values[name] = nil
  for i, n in ipairs(map.names) do
    if n == name then table.remove(map.names, i) return end
  end
end

---------------------------------------------------------------- the class system
local Module = {}
M.Module = Module
Module.__name = "Module"

local function instance_index(self, k)
  local p = rawget(self, "_parameters").values[k]
  if p ~= nil then return p end
  local b = rawget(self, "_buffers").values[k]
  if b ~= nil then return b end
  local m = rawget(self, "_modules").values[k]
  if m ~= nil then return m end
  local class = rawget(self, "_class")
  if type(k) == "number" and class.__getitem then return class.__getitem(self, k) end   -- a tail call
  return class[k]
end

local function is_module(v) return type(v) == "table" and rawget(v, "_modules") ~= nil end
M.is_module = is_module

local function instance_newindex(self, k, v)
  local params, buffers, modules = rawget(self, "_parameters"), rawget(self, "_buffers"), rawget(self, "_modules")
  local class = rawget(self, "_class")
  if type(k) == "number" and class.__setitem then
    return class.__setitem(self, k, v)   -- containers: seq[0] = nn.Linear(...) (a tail call)
  elseif M.is_parameter(v) then
    odel(buffers, k); odel(modules, k)
    oset(params, k, v)
  elseif is_module(v) then
    odel(params, k); odel(buffers, k)
    oset(modules, k, v)
  elseif params.values[k] ~= nil then
    if v ~= nil and not istype(Ref, v) then
      error(("cannot assign '%s' as parameter '%s' (nn.Parameter or nil expected)"):format(type(v), k), 2)
    end
    if v == nil then odel(params, k) else params.values[k] = M.Parameter(v) end
  elseif buffers.values[k] ~= nil then
    if v ~= nil and not istype(Ref, v) then
      error(("cannot assign '%s' as buffer '%s' (Tensor or nil expected)"):format(type(v), k), 2)
    end
    if v == nil then odel(buffers, k) else buffers.values[k] = v end
  elseif modules.values[k] ~= nil then
    if v ~= nil then error(("cannot assign '%s' as child module '%s' (Module or nil expected)"):format(type(v), k), 2) end
    odel(modules, k)
  else
    rawset(self, k, v)
  end
end

local function instance_call(self, ...)
  local pre = rawget(self, "_forward_pre_hooks")
  local class = rawget(self, "_class")
  local forward = class.forward
  local hooks = rawget(self, "_forward_hooks")
  local n = select("#", ...)
  -- the usual call, no hooks and no keyword table: forward gets the arguments as they are
  if forward ~= nil and (pre == nil or #pre == 0) and (hooks == nil or #hooks == 0) then
    local last = n > 0 and select(n, ...) or nil
    if not (type(last) == "table" and getmetatable(last) == nil) then return forward(self, ...) end
  end
  local args, args_n = pack(...)   -- not { ... }: see torch._args.pack
  local last = args[args_n]
  if type(last) == "table" and getmetatable(last) == nil and forward ~= nil then   -- m({input = x})
    args, args_n = forward_keywords.bind(class, forward, args, args_n)
  end
  if pre and #pre > 0 then
    for _, h in ipairs(pre) do
      local replaced = h.fn(self, args)
      if replaced ~= nil then args = type(replaced) == "table" and replaced or { replaced }; args_n = table.maxn(args) end
    end
  end
  if forward == nil then error(("%s has no forward method"):format(class.__name), 2) end
  if not hooks or #hooks == 0 then return forward(self, unpack(args, 1, args_n)) end
  local out = forward(self, unpack(args, 1, args_n))
  for _, h in ipairs(hooks) do
    local replaced = h.fn(self, args, out)
    if replaced ~= nil then out = replaced end
  end
  return out
end

--[[ The base-constructor check. PyTorch raises "cannot assign module before Module.__init__() call"
     when a subclass's __init__ forgets super().__init__(); here the instance's state exists before
     any __init runs, so the same mistake (a subclass of nn.Transformer whose __init never calls
     nn.Transformer.__init) would leave a module without its base's parameters. Every __init a
     class defines is wrapped to record that it ran for the instance under construction; after
     construction, a class whose __init ran while the nearest ancestor defining one did not is an
     error. The library's own classes (an __init defined under lua/torch/, e.g. the Lazy modules,
     which build their placeholders themselves) are checked by their specs instead. ]]
local constructing = setmetatable({}, { __mode = "k" })   -- instance -> set of classes whose __init ran
local library_init = setmetatable({}, { __mode = "k" })   -- class -> true when its __init is the library's
local LIBRARY = debug.getinfo(1, "S").source:gsub("nn/module%.lua$", "")   -- "@<dir>/torch/"

local function record_init(class, fn)
  local source = debug.getinfo(fn, "S").source
  if source:sub(1, #LIBRARY) == LIBRARY then library_init[class] = true end
  return function(self, ...)
    local ran = constructing[self]
    if ran then ran[class] = true end
    return fn(self, ...)
  end
end

local function nearest_init_owner(class)
  local c = rawget(class, "__base")
  while c ~= nil and c ~= Module and rawget(c, "__init") == nil do c = rawget(c, "__base") end
  if c == Module then return nil end
  return c
end

local function check_base_inits(class, ran)
  local c = class
  while c ~= nil and c ~= Module do
    if ran[c] and not library_init[c] then
      local b = nearest_init_owner(c)
      if b ~= nil and not ran[b] then
        error(("%s:__init did not call its base class's constructor: call %s.__init(self, ...) in it (Python's "
          .. "super().__init__(...); without it PyTorch raises 'cannot assign module before Module.__init__() call')")
          :format(c.__name, b.__name), 3)
      end
    end
    c = rawget(c, "__base")
  end
end

-- Module:extend(name) -> a new class; calling the class constructs an instance via __init.
function Module.extend(base, name)
  if type(name) ~= "string" then error("bad argument #1 to 'extend' (class name string expected)", 2) end
  local class = setmetatable({ __name = name, __base = base }, { __index = base, __call = function(cls, ...)
    return cls:new(...)
  end, __tostring = function() return "<class " .. name .. ">" end, __newindex = function(cls, k, v)
    if k == "__init" and type(v) == "function" then v = record_init(cls, v) end
    rawset(cls, k, v)
  end })
  class.__instance_mt = {
    __index = instance_index,
    __newindex = instance_newindex,
    __call = instance_call,
    __tostring = function(self) return self:__repr() end,
  }
  return class
end

function Module.new(class, ...)
  local self = setmetatable({
    _parameters = omap(), _buffers = omap(), _modules = omap(), _non_persistent = {},
    _forward_hooks = {}, _forward_pre_hooks = {}, _class = class, training = true,
  }, class.__instance_mt)
  if class.__init__ ~= nil then
    error(("%s defines __init__: in Lua the constructor is function %s:__init(...)"):format(class.__name, class.__name), 2)
  end
  local init = class.__init
  if init then
    local ran = {}
    constructing[self] = ran
    init(self, ...)
    constructing[self] = nil
    check_base_inits(class, ran)
  end
  return self
end

-- Calls the parent class's __init (PyTorch's super().__init__ is implicit here).
function Module.super(class) return rawget(class, "__base") end

-- Traversal (named_parameters, modules, ...) and the state dict live in their own files.
for k, f in pairs(traversal.methods) do Module[k] = f end
for k, f in pairs(state.methods) do Module[k] = f end

---------------------------------------------------------------- registration
function Module:register_parameter(name, p)
  if p ~= nil then p = M.Parameter(p, p.requires_grad) end
  odel(self._buffers, name); odel(self._modules, name)
  if p == nil then odel(self._parameters, name) else oset(self._parameters, name, p) end
end

function Module:register_buffer(name, t, persistent)
  if t ~= nil and not istype(Ref, t) then
    error(("register_buffer: '%s' must be a Tensor or nil, got %s"):format(name, type(t)), 2)
  end
  odel(self._parameters, name); odel(self._modules, name)
  oset(self._buffers, name, t)
  self._non_persistent[name] = (persistent == false) or nil
end

function Module:add_module(name, m)
  if m ~= nil and not is_module(m) then error(("add_module: '%s' is not a Module"):format(tostring(name)), 2) end
  odel(self._parameters, name); odel(self._buffers, name)
  oset(self._modules, name, m)
end
Module.register_module = Module.add_module

---------------------------------------------------------------- modes and bulk changes
function Module:train(mode)
  if mode == nil then mode = true end
  for _, m in ipairs(self:modules()) do rawset(m, "training", mode) end
  return self
end

function Module:eval() return self:train(false) end

function Module:apply(fn)
  for _, m in ipairs(self:children()) do m:apply(fn) end
  fn(self)
  return self
end

function Module:requires_grad_(flag)
  if flag == nil then flag = true end
  for _, p in ipairs(self:parameters()) do p:requires_grad_(flag) end
  return self
end

-- zero_grad(set_to_none=true): PyTorch 2.x's default.
function Module:zero_grad(set_to_none)
  for _, p in ipairs(self:parameters()) do
    local g = p.grad
    if g ~= nil then
      if set_to_none == false then
        torch.no_grad(function() g:detach():zero_() end)
      else
        p.grad = nil
      end
    end
  end
  return self
end

--[[ _apply(fn[, recurse=true]): PyTorch's Module._apply. fn maps each parameter, gradient and
     buffer to its converted tensor (children first). A parameter whose new tensor can share its
     TensorImpl type (CPU <-> CUDA, any dtype) is changed in place (param.data = new), so
     optimizers keep referring to it; otherwise (to or from "meta") it is replaced by a new
     nn.Parameter, as PyTorch does. Buffers are replaced by what fn gives (kept when it changed
     nothing, as PyTorch's to() then returns the tensor itself). ]]
function Module:_apply(fn, recurse)
  if recurse ~= false then
    for _, m in ipairs(self:children()) do m:_apply(fn) end
  end
  local params, buffers = self._parameters, self._buffers
  torch.no_grad(function()
    for _, n in ipairs(params.names) do
      local p = params.values[n]
      if p ~= nil then
        local applied = fn(p)
        local g = p.grad
        local out = p
        if torch._has_compatible_shallow_copy_type(p, applied) then
          p.data = applied
        else
          out = M.Parameter(applied, p.requires_grad)
          params.values[n] = out
        end
        if g ~= nil then
          local g_applied = fn(g)
          if torch._has_compatible_shallow_copy_type(g, g_applied) and out == p then
            g.data = g_applied
          else
            out.grad = g_applied
          end
        end
      end
    end
    for _, n in ipairs(buffers.names) do
      local b = buffers.values[n]
      if b ~= nil then
        local applied = fn(b)
        -- a conversion with nothing to do gives the tensor itself in PyTorch: keep the same object
        if not (applied.dtype == b.dtype and applied.device == b.device and applied:data_ptr() == b:data_ptr()) then
          buffers.values[n] = applied
        end
      end
    end
  end)
  return self
end

local views = require "torch._views"

--[[ to(device) | to(dtype) | to(device, dtype) | to(tensor) | to({device=, dtype=, non_blocking=,
     memory_format=}): moves and casts parameters and buffers (Module._apply). Only a device given:
     every tensor moves; only a dtype given: floating-point and complex tensors are cast and each
     keeps its device, as in PyTorch. ]]
function Module:to(a, b, c)
  local dt, dev, opts = views._parse_to("to", a, b, c)
  if dt and not (dt.is_floating_point or dt.is_complex) then
    error("nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=" .. tostring(dt), 2)
  end
  if dev ~= nil and dev.type ~= "meta" then
    for _, list in ipairs({ self:parameters(), self:buffers() }) do
      for _, t in ipairs(list) do
        if t.device.type == "meta" then
          error("Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of " ..
            "torch.nn.Module.to() when moving module from meta to a different device.", 2)
        end
      end
    end
  end
  local convert = { device = dev, non_blocking = opts and opts.non_blocking or nil }
  local memory_format = opts and opts.memory_format
  return self:_apply(function(t)
    convert.dtype = (dt and (t:is_floating_point() or t:is_complex())) and dt or nil
    convert.memory_format = (memory_format ~= nil and (t:dim() == 4 or t:dim() == 5)) and memory_format or nil
    return t:to(convert)
  end)
end

-- to_empty({device=[, recurse=true]}): moves every parameter and buffer to `device` without
-- copying its values (uninitialized memory), e.g. to materialize a model built on "meta".
function Module:to_empty(opts)
  if type(opts) ~= "table" or getmetatable(opts) ~= nil or opts.device == nil then
    error("bad argument #1 to 'to_empty' ({device = ...} expected: Module.to_empty takes device as a keyword)", 2)
  end
  local dev = require("torch.device").resolve(opts.device, "to_empty", 2)
  return self:_apply(function(t) return torch.empty_like(t, { device = dev }) end, opts.recurse)
end

local function floating_only(method)
  return function(self)
    return self:_apply(function(t) return t:is_floating_point() and t[method](t) or t end)
  end
end
function Module:cpu() return self:_apply(function(t) return t:cpu() end) end
function Module:cuda(device) return self:_apply(function(t) return t:cuda(device) end) end
Module.float = floating_only("float")
Module.double = floating_only("double")
Module.half = floating_only("half")
Module.bfloat16 = floating_only("bfloat16")

---------------------------------------------------------------- hooks
local function add_hook(list, fn)
  if type(fn) ~= "function" then error("bad argument #1 to 'register_forward_hook' (function expected)", 3) end
  local h = { fn = fn }
  list[#list + 1] = h
  return { remove = function()
    for i, x in ipairs(list) do if x == h then table.remove(list, i) break end end
  end }
end
-- fn(module, args, output) -> nil or a replacement output
function Module:register_forward_hook(fn) return add_hook(self._forward_hooks, fn) end
-- fn(module, args) -> nil or replacement args (a table, or one value)
function Module:register_forward_pre_hook(fn) return add_hook(self._forward_pre_hooks, fn) end
--[[ fn(state_dict, prefix, strict): runs before load_state_dict reads this module's keys
     (prefix .. name) and may rename or rewrite entries of the state dict it is given (a copy
     of the caller's); PyTorch's private hook, used by nn.utils.parametrizations.weight_norm. ]]
function Module:_register_load_state_dict_pre_hook(fn)
  local list = rawget(self, "_load_state_dict_pre_hooks")
  if list == nil then list = {}; rawset(self, "_load_state_dict_pre_hooks", list) end
  return add_hook(list, fn)
end
-- fn(module, grad_input, grad_output) -> nil or replacement grad_input (torch.nn._backward_hook)
function Module:register_full_backward_hook(fn) return require("torch.nn._backward_hook").register(self, fn) end

---------------------------------------------------------------- repr
-- One line of key=value settings; layers override (Linear: "in_features=4, out_features=2, bias=True").
function Module:extra_repr() return "" end

function Module:__repr()
  local name = self._class.__name
  local extra = self:extra_repr()
  local children = raw_named_children(self)
  if #children == 0 then return name .. "(" .. extra .. ")" end
  local lines = { name .. "(" }
  if extra ~= "" then lines[#lines + 1] = "  " .. extra end
  for _, nm in ipairs(children) do
    local child = tostring(nm[2]):gsub("\n", "\n  ")
    lines[#lines + 1] = "  (" .. nm[1] .. "): " .. child
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

return M
