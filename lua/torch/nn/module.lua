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

  Usage: local nn = require "torch.nn"; see lua/torch/nn/*.lua for layers built on this.
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local pack = require("torch._args").pack

local istype, Ref = ffi.istype, _C.Ref

local M = {}

---------------------------------------------------------------- Parameter
-- Parameters are ordinary tensors remembered in a weak set (cdata cannot carry a tag).
local parameter_set = _C.state.parameter_set or setmetatable({}, { __mode = "k" })
_C.state.parameter_set = parameter_set

-- nn.Parameter(tensor, requires_grad=true): a leaf tensor that a Module registers on assignment.
function M.Parameter(t, requires_grad)
  if not istype(Ref, t) then
    error(("bad argument #1 to 'Parameter' (Tensor expected, got %s)"):format(type(t)), 2)
  end
  if requires_grad == nil then requires_grad = true end
  local p = t
  if not t.is_leaf then p = t:detach() end
  if p.requires_grad ~= requires_grad then p.requires_grad = requires_grad end
  parameter_set[p] = true
  return p
end

function M.is_parameter(v) return istype(Ref, v) and parameter_set[v] == true end

---------------------------------------------------------------- ordered maps
local function omap() return { names = {}, values = {} } end
local function oset(map, name, value)
  if map.values[name] == nil then map.names[#map.names + 1] = name end
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
  local args, args_n = pack(...)   -- not { ... }: see torch._args.pack
  if pre and #pre > 0 then
    for _, h in ipairs(pre) do
      local replaced = h.fn(self, args)
      if replaced ~= nil then args = type(replaced) == "table" and replaced or { replaced }; args_n = table.maxn(args) end
    end
  end
  local forward = rawget(self, "_class").forward
  if forward == nil then error(("%s has no forward method"):format(rawget(self, "_class").__name), 2) end
  local hooks = rawget(self, "_forward_hooks")
  if not hooks or #hooks == 0 then return forward(self, unpack(args, 1, args_n)) end
  local out = forward(self, unpack(args, 1, args_n))
  for _, h in ipairs(hooks) do
    local replaced = h.fn(self, args, out)
    if replaced ~= nil then out = replaced end
  end
  return out
end

-- Module:extend(name) -> a new class; calling the class constructs an instance via __init.
function Module.extend(base, name)
  if type(name) ~= "string" then error("bad argument #1 to 'extend' (class name string expected)", 2) end
  local class = setmetatable({ __name = name, __base = base }, { __index = base, __call = function(cls, ...)
    return cls:new(...)
  end, __tostring = function() return "<class " .. name .. ">" end })
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
  if init then init(self, ...) end
  return self
end

-- Calls the parent class's __init (PyTorch's super().__init__ is implicit here).
function Module.super(class) return rawget(class, "__base") end

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

---------------------------------------------------------------- named lists
--[[ named_parameters() & co. return an array of {name, value} pairs (ipairs and nv[1], nv[2]
     work) that is also an iterator, so PyTorch's loop ports word for word:
         for name, p in model:named_parameters() do ... end        -- registration order
     pairs() over the array would give 1, 2, ... and the pairs (LuaJIT ignores __pairs), so a
     pair used as if it were the value (pair.grad, pair:size()) is an error that says so. ]]
local cursor = setmetatable({}, { __mode = "k" })

local function named_next(list, _, previous)
  local i = previous == nil and 1 or (cursor[list] or 0) + 1
  local nv = rawget(list, i)
  cursor[list] = i
  if nv == nil then return nil end
  return nv[1], nv[2]
end

local named_mts, pair_mts = {}, {}
local function named_list(out, what)
  local pair_mt = pair_mts[what]
  if pair_mt == nil then
    pair_mt = { __index = function(_, k)
      error(("%s() gives {name, value} pairs, this one has no field '%s': write "
        .. "`for name, v in m:%s() do` (pairs() yields 1, 2, ... and the pairs), or nv[1], nv[2]")
        :format(what, tostring(k), what), 2)
    end }
    pair_mts[what], named_mts[what] = pair_mt, { __call = named_next }
  end
  for i = 1, #out do setmetatable(out[i], pair_mt) end
  return setmetatable(out, named_mts[what])
end
M.named_list = named_list   -- for other modules with PyTorch's named_* methods (torch.jit)

---------------------------------------------------------------- traversal
local function raw_named_children(self)
  local out = {}
  for _, n in ipairs(self._modules.names) do
    local m = self._modules.values[n]
    if m then out[#out + 1] = { n, m } end
  end
  return out
end

function Module:named_children() return named_list(raw_named_children(self), "named_children") end

function Module:children()
  local out = {}
  for _, nm in ipairs(raw_named_children(self)) do out[#out + 1] = nm[2] end
  return out
end

-- {{"", self}, {"fc1", fc1}, ...} depth-first, each module once.
local function raw_named_modules(self, prefix, seen, out)
  if seen[self] then return out end
  seen[self] = true
  out[#out + 1] = { prefix, self }
  for _, nm in ipairs(raw_named_children(self)) do
    raw_named_modules(nm[2], prefix == "" and nm[1] or (prefix .. "." .. nm[1]), seen, out)
  end
  return out
end

function Module:named_modules(prefix)
  return named_list(raw_named_modules(self, prefix or "", {}, {}), "named_modules")
end

function Module:modules()
  local out = {}
  for _, nm in ipairs(raw_named_modules(self, "", {}, {})) do out[#out + 1] = nm[2] end
  return out
end

local function named_members(self, field, recurse)
  local out, seen = {}, {}
  local list = recurse == false and { { "", self } } or raw_named_modules(self, "", {}, {})
  for _, nm in ipairs(list) do
    local prefix, m = nm[1], nm[2]
    local map = m[field]
    for _, n in ipairs(map.names) do
      local v = map.values[n]
      if v ~= nil and not seen[v] then
        seen[v] = true
        out[#out + 1] = { prefix == "" and n or (prefix .. "." .. n), v }
      end
    end
  end
  return out
end

function Module:named_parameters(recurse)
  return named_list(named_members(self, "_parameters", recurse), "named_parameters")
end
function Module:named_buffers(recurse)
  return named_list(named_members(self, "_buffers", recurse), "named_buffers")
end

function Module:parameters(recurse)
  local out = {}
  for _, nv in ipairs(named_members(self, "_parameters", recurse)) do out[#out + 1] = nv[2] end
  return out
end

function Module:buffers(recurse)
  local out = {}
  for _, nv in ipairs(named_members(self, "_buffers", recurse)) do out[#out + 1] = nv[2] end
  return out
end

-- Number of parameter elements (trainable only if asked).
function Module:num_parameters(trainable_only)
  local n = 0
  for _, p in ipairs(self:parameters()) do
    if not trainable_only or p.requires_grad then n = n + p:numel() end
  end
  return n
end

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

--[[ to(device) | to(dtype) | to(device, dtype) | to({device=, dtype=}): moves/casts parameters
     and buffers in place (x.data = ...), so optimizers keep referring to the same tensors.
     A dtype change applies to floating-point tensors only, as in PyTorch. ]]
function Module:to(...)
  local probe = torch.empty(0):to(...)
  local dev, dt = probe.device, probe.dtype
  local explicit_dtype = false
  for _, v in ipairs({ ... }) do
    if require("torch.dtype").is_dtype(v) or (type(v) == "table" and v.dtype) or
      (type(v) == "string" and require("torch.dtype").by_name[v]) then explicit_dtype = true end
  end
  torch.no_grad(function()
    for _, m in ipairs(self:modules()) do
      for _, map in ipairs({ m._parameters, m._buffers }) do
        for _, n in ipairs(map.names) do
          local t = map.values[n]
          if t ~= nil then
            local target = (explicit_dtype and t:is_floating_point()) and dt or t.dtype
            t.data = t:to(dev, target)
            local g = t.grad
            if g ~= nil then g.data = g:to(dev, target) end
          end
        end
      end
    end
  end)
  return self
end
function Module:cpu() return self:to("cpu") end
function Module:cuda(index) return self:to(index and ("cuda:" .. index) or "cuda") end
function Module:float() return self:to(torch.float32) end
function Module:double() return self:to(torch.float64) end
function Module:half() return self:to(torch.float16) end
function Module:bfloat16() return self:to(torch.bfloat16) end

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
-- fn(module, grad_input, grad_output) -> nil or replacement grad_input (torch.nn._backward_hook)
function Module:register_full_backward_hook(fn) return require("torch.nn._backward_hook").register(self, fn) end

---------------------------------------------------------------- state dict
-- Ordered names of the state: own parameters, own persistent buffers, then each child's.
function Module:state_dict_keys(prefix, out)
  prefix, out = prefix or "", out or {}
  for _, n in ipairs(self._parameters.names) do
    if self._parameters.values[n] ~= nil then out[#out + 1] = prefix .. n end
  end
  for _, n in ipairs(self._buffers.names) do
    if self._buffers.values[n] ~= nil and not self._non_persistent[n] then out[#out + 1] = prefix .. n end
  end
  for _, nm in ipairs(raw_named_children(self)) do nm[2]:state_dict_keys(prefix .. nm[1] .. ".", out) end
  return out
end

-- The module that holds `key` ("blocks.1.weight") and the key's last part.
local function owner(self, key)
  local m, parts = self, {}
  for part in key:gmatch("[^%.]+") do parts[#parts + 1] = part end
  for i = 1, #parts - 1 do
    m = m._modules.values[parts[i]]
    if m == nil then return nil end
  end
  return m, parts[#parts]
end

local function lookup(self, key)
  local m, leaf = owner(self, key)
  if m == nil then return nil end
  return m._parameters.values[leaf] or m._buffers.values[leaf]
end

-- A state dict is a plain name -> tensor table (pairs() gives any order); calling it as an
-- iterator gives PyTorch's order: `for name, t in m:state_dict() do`. The order lives beside it.
local sd_keys = setmetatable({}, { __mode = "k" })
local sd_mt = { __call = function(sd, _, previous)
  local keys = sd_keys[sd]
  local i = previous == nil and 0 or (cursor[sd] or 0)
  repeat
    i = i + 1
    local k = keys[i]
    if k == nil then cursor[sd] = i; return nil end
    local v = sd[k]
    if v ~= nil then cursor[sd] = i; return k, v end
  until false
end }

-- state_dict() -> { ["fc1.weight"] = tensor, ... } (detached, sharing storage, as PyTorch's)
function Module:state_dict()
  local sd, keys = {}, self:state_dict_keys()
  for _, key in ipairs(keys) do sd[key] = lookup(self, key):detach() end
  sd_keys[sd] = keys
  return setmetatable(sd, sd_mt)
end

local function shape_str(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

-- load_state_dict's (strict, assign) from PyTorch's positional or keyword forms.
local LOAD_OPTIONS = { strict = true, assign = true }
local function load_options(opts, assign)
  if opts == nil or type(opts) == "boolean" then
    if opts == nil then opts = true end
    return opts, assign == true
  end
  if type(opts) ~= "table" then
    error(("bad argument #2 to 'load_state_dict' (boolean or {strict =, assign =} expected, got %s)")
      :format(type(opts)), 3)
  end
  for k in pairs(opts) do
    if not LOAD_OPTIONS[k] then
      error(("bad argument #2 to 'load_state_dict' (unknown option '%s'; the options are strict and assign)")
        :format(tostring(k)), 3)
    end
  end
  return opts.strict ~= false, opts.assign == true
end

-- PyTorch's _IncompatibleKeys: the missing keys as an array, with both lists as fields.
local function incompatible_keys(sd, keys, expected)
  local missing, unexpected = {}, {}
  for _, k in ipairs(keys) do
    if sd[k] == nil then missing[#missing + 1] = k end
  end
  for k in pairs(sd) do
    if not expected[k] then unexpected[#unexpected + 1] = tostring(k) end
  end
  table.sort(unexpected)
  local result = { missing_keys = missing, unexpected_keys = unexpected }
  for i, k in ipairs(missing) do result[i] = k end
  return result
end

local function load_errors(self, sd, keys, result, strict)
  local errors = {}
  for _, k in ipairs(keys) do
    local src, dst = sd[k], lookup(self, k)
    if src ~= nil then
      if not istype(Ref, src) then
        errors[#errors + 1] = ("value for %s is a %s, not a Tensor"):format(k, type(src))
      elseif src:size() ~= dst:size() then
        errors[#errors + 1] = ("size mismatch for %s: copying a param with shape %s from checkpoint, the shape in current model is %s.")
          :format(k, shape_str(src), shape_str(dst))
      end
    end
  end
  if strict and #result.missing_keys > 0 then
    errors[#errors + 1] = "Missing key(s) in state_dict: " .. table.concat(result.missing_keys, ", ") .. "."
  end
  if strict and #result.unexpected_keys > 0 then
    errors[#errors + 1] = "Unexpected key(s) in state_dict: " .. table.concat(result.unexpected_keys, ", ") .. "."
  end
  return errors
end

-- assign = true: the module takes the state dict's tensors (parameters keep their requires_grad).
local function assign_tensor(self, key, src)
  local m, leaf = owner(self, key)
  local p = m._parameters.values[leaf]
  if p ~= nil then m._parameters.values[leaf] = M.Parameter(src:detach(), p.requires_grad)
  else m._buffers.values[leaf] = src end
end

--[[ load_state_dict(sd, strict=true, assign=false), also (sd, {strict =, assign =}) ->
     missing, unexpected. Copies values in place under no_grad (assign: takes the tensors).
     strict: any missing or unexpected key is an error listing them; a shape mismatch is always
     an error. The first result is PyTorch's named tuple: `r.missing_keys`, `r.unexpected_keys`,
     and it is itself the array of missing keys, so Python's
     `missing, unexpected = m.load_state_dict(sd, strict=False)` ports as
     `local missing, unexpected = m:load_state_dict(sd, false)`. ]]
function Module:load_state_dict(sd, opts, assign_arg)
  if type(sd) ~= "table" then error("load_state_dict: expected a table of tensors, got " .. type(sd), 2) end
  local strict, assign = load_options(opts, assign_arg)
  local keys, expected = self:state_dict_keys(), {}
  for _, k in ipairs(keys) do expected[k] = true end
  local result = incompatible_keys(sd, keys, expected)
  local errors = load_errors(self, sd, keys, result, strict)
  if #errors > 0 then
    error(("Error(s) in loading state_dict for %s:\n\t%s"):format(self._class.__name, table.concat(errors, "\n\t")), 2)
  end
  torch.no_grad(function()
    for _, k in ipairs(keys) do
      local src = sd[k]
      if src ~= nil then
        if assign then assign_tensor(self, k, src) else lookup(self, k):copy_(src) end
      end
    end
  end)
  return result, result.unexpected_keys
end

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
