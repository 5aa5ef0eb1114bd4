--[[
  torch.optim.optimizer — the base of every optimizer, with PyTorch 2.11's behaviour
  (https://pytorch.org/docs/2.11/optim.html): parameter groups with per-group hyper-parameters,
  per-parameter state, zero_grad, step(closure), state_dict/load_state_dict.

      local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
      local opt = optim.SGD({ { params = net.fc1:parameters() },            -- lr from the defaults
                              { params = net.fc2:parameters(), lr = 1e-3 } }, {lr = 0.1})
      opt:zero_grad(); loss:backward(); opt:step()

  Layout (as PyTorch's, so checkpoints carry over): opt.param_groups is an array of tables, each
  { params = {tensors...}, lr = ..., <other hyper-parameters> }; opt.state[p] is the table of
  per-parameter state (e.g. { momentum_buffer = t } or { step = t, exp_avg = t, ... }).
  opt:state_dict() -> { state = { [0] = {...}, [1] = {...} }, param_groups = { { params = {0, 1},
  lr = ..., ... } } } with parameters numbered 0.. across groups in order.

  A subclass (sgd.lua, adam.lua, ...) is made with Optimizer:extend(name, defaults, check) and
  defines :update_group(group); the update itself is a plain function beside it.
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local unscoped = require("torch._scope").unscoped
local U = require "torch.optim._util"
local P = require "torch._pysig"

local istype, Ref = ffi.istype, _C.Ref
local table_new = require "table.new"
local copy, typename = U.copy, U.typename

local M = {}

-- The default of a hyper-parameter the user must give (SGD's lr).
M.required = U.required

---------------------------------------------------------------- the class
local Optimizer = { __name = "Optimizer" }
Optimizer.__index = Optimizer
M.Optimizer = Optimizer

--[[ The arguments of a call to class as (params, opts). A class with PyTorch's signature binds
     them as Python does (optim.SGD(params, 0.1, 0.9), optim.SGD{params = ps, lr = 0.1}); an
     argument of that signature this optimizer does not implement (fused, ...) is an error. ]]
local function lua_args(class, ...)
  local sig = class.__signature
  if sig == nil then return ... end
  local a = P.bind_given(sig, ...)
  local opts = {}
  for k, v in pairs(a) do
    if k ~= "params" then
      if class.defaults[k] == nil then
        P.fail("%s: argument '%s' is not supported by ltorch's %s", class.__name, k, class.__name)
      end
      opts[k] = v
    end
  end
  return a.params, opts
end

--[[ Optimizer:extend(name, defaults, check[, signature]) -> a class; Class(params, opts) makes an
     instance. defaults: every option and its default (M.required when it has none). check(o)
     returns an error message for a bad hyper-parameter, or nil. signature: PyTorch's Python
     signature of the constructor, "params, lr=0.001, ..."; with it, positional, keyword and
     mixed calls bind as in Python. ]]
local None = require "torch.serialization.none"

--[[ PyTorch's implementation switches (capturable, differentiable, fused), for the optimizers
     whose signature has them: their PyTorch defaults join the class's defaults (so param_groups
     and state_dict carry them, as PyTorch's), and the default values are all ltorch runs; asking
     for the others is an error that says so. ]]
local SWITCHES = { capturable = false, differentiable = false, fused = None }
local SWITCH_USE = {
  capturable = "capture in CUDA graphs",
  differentiable = "autograd through the optimizer step",
  fused = "a fused kernel; foreach = true is ltorch's multi-tensor path",
}

-- class.supported_switches: the switches a class implements (Adam and AdamW: capturable)
local function check_switches(name, o, class)
  local supported = class and rawget(class, "supported_switches") or {}
  for k in pairs(SWITCH_USE) do
    local v = o[k]
    if v ~= nil and v ~= None and type(v) ~= "boolean" then
      return ("invalid %s: expected a boolean, got %s"):format(k, typename(v))
    end
    if v == true and not supported[k] then
      return ("%s=True (%s) is not supported by ltorch's %s: leave %s out (PyTorch's default)")
        :format(k, SWITCH_USE[k], name, k)
    end
  end
end

function Optimizer.extend(base, name, defaults, check, signature)
  local own_check = check or function() end
  check = own_check
  local class
  if signature then
    local has = false
    for k, default in pairs(SWITCHES) do
      if defaults[k] == nil and signature:find("%f[%w_]" .. k .. "=") then defaults[k], has = default, true end
    end
    if has then check = function(o, given) return check_switches(name, o, class) or own_check(o, given) end end
  end
  class = setmetatable({ __name = name, __base = base, defaults = defaults, check = check,
    __signature = signature and P.signature(name, signature) },
    { __index = base, __call = function(cls, ...) return cls.new(cls, lua_args(cls, ...)) end,
      __tostring = function() return "<class " .. name .. ">" end })
  class.__index = class
  class.__tostring = base.__tostring
  return class
end

local function fail(self, msg, level) error(self.__name .. ": " .. msg, level + 1) end

local add_group

function Optimizer.new(class, params, opts)
  local self = setmetatable({ state = {}, param_groups = {}, _step_count = 0 }, class)
  if opts ~= nil and type(opts) ~= "table" then fail(self, "options must be a table, got " .. typename(opts), 2) end
  local defaults = {}
  for k, v in pairs(class.defaults) do defaults[k] = copy(v) end
  for k, v in pairs(opts or {}) do
    if class.defaults[k] == nil then fail(self, ("unknown option '%s'"):format(tostring(k)), 2) end
    defaults[k] = copy(v)
  end
  local msg = class.check(defaults, opts or {})   -- opts: what the caller gave (PyTorch's None where not)
  if msg then fail(self, msg, 2) end
  self.defaults = defaults
  if type(params) ~= "table" or rawget(params, "_modules") then
    local hint = typename(params) == "Module" and " (pass model:parameters())" or ""
    fail(self, "params argument given to the optimizer should be an array of Tensors or of parameter group "
      .. "tables, but got " .. typename(params) .. hint, 2)
  end
  if #params == 0 then fail(self, "optimizer got an empty parameter list", 2) end
  local groups = params
  if istype(Ref, params[1]) then groups = { { params = params } } end
  for i = 1, #groups do add_group(self, groups[i], 2) end
  if self.init_state_eagerly then self:init_state_eagerly() end
  return self
end

local function device_name(p) return tostring(p.device) end

-- Validates a group table, fills its defaults, appends it to param_groups. Errors blame the
-- caller of the function that called add_group (level 2 from there).
function add_group(self, group, level)
  if type(group) ~= "table" or istype(Ref, group) or rawget(group, "_modules") then
    fail(self, "a parameter group must be a table with a 'params' field, got " .. typename(group), level + 1)
  end
  local list = group.params
  if istype(Ref, list) then list = { list } end
  if type(list) ~= "table" or rawget(list, "_modules") then
    fail(self, "a parameter group's 'params' must be an array of Tensors, got " .. typename(list), level + 1)
  end
  local g = {}
  for k, v in pairs(group) do if k ~= "params" then g[k] = copy(v) end end
  g.params = {}
  local seen, device = {}, nil
  for i = 1, table.maxn(list) do
    local p = list[i]
    if not istype(Ref, p) then
      local msg = ("optimizer can only optimize Tensors, but parameter %d is a %s"):format(i - 1, typename(p))
      fail(self, msg, level + 1)
    end
    if not p.is_leaf then fail(self, "can't optimize a non-leaf Tensor (parameter " .. (i - 1) .. ")", level + 1) end
    if seen[p] then fail(self, ("parameter %d appears twice in one parameter group"):format(i - 1), level + 1) end
    seen[p] = true
    local d = device_name(p)
    if device == nil then device = d
    elseif d ~= device then
      fail(self, ("all parameters of a group must be on one device: parameter 0 is on %s, parameter %d on %s")
        :format(device, i - 1, d), level + 1)
    end
    g.params[i] = p
  end
  for k, v in pairs(self.defaults) do
    if g[k] == nil then
      if v == M.required then
        fail(self, "parameter group didn't specify a value of required optimization parameter " .. k, level + 1)
      end
      g[k] = copy(v)
    end
  end
  local msg = self.check(g)
  if msg then fail(self, msg, level + 1) end
  for _, other in ipairs(self.param_groups) do
    for _, p in ipairs(other.params) do
      if seen[p] then fail(self, "some parameters appear in more than one parameter group", level + 1) end
    end
  end
  self.param_groups[#self.param_groups + 1] = g
  return g
end

-- add_param_group({params = {...}, lr = ...}): e.g. unfreezing layers while training.
function Optimizer:add_param_group(group)
  local g = add_group(self, group, 2)
  if self.init_state_eagerly then self:init_state_eagerly() end
  return g
end

---------------------------------------------------------------- stepping
-- Every group's update, run under no_grad by step (a named function: a closure made per step
-- would keep the step's Lua code out of LuaJIT's traces, NYI FNEW).
local function update_groups(self)
  for _, group in ipairs(self.param_groups) do self:update_group(group) end
end

--[[ step(closure) -> loss or nil. closure (optional) re-evaluates the model under enable_grad
     and returns the loss. The update runs under no_grad, one group at a time. ]]
function Optimizer:step(closure)
  local loss
  if closure ~= nil then
    if type(closure) ~= "function" then
      error(("bad argument #1 to 'step' (function or nil expected, got %s)"):format(typename(closure)), 2)
    end
    loss = torch.enable_grad(closure)
  end
  torch.no_grad(update_groups, self)
  self._step_count = self._step_count + 1
  return loss
end

--[[ The parameters of `group` that have a gradient, their gradients, and their state tables
     (made by self:init_state(p, group) on first use). Arrays of equal length n.
     stateless = true: states is empty and no state is made (SGD without momentum). ]]
function Optimizer:collect(group, stateless)
  local all = group.params
  local size = #all
  local params, grads, states, n = table_new(size, 0), table_new(size, 0), table_new(stateless and 0 or size, 0), 0
  local state = self.state
  for _, p in ipairs(all) do
    local g = p.grad
    if g ~= nil then
      n = n + 1
      params[n], grads[n] = p, g
      if not stateless then
        local s = state[p]
        if s == nil then
          s = unscoped(self.init_state, self, p, group)
          state[p] = s
        end
        states[n] = s
      end
    end
  end
  return params, grads, states, n
end

function Optimizer:init_state() return {} end

-- A subclass's update of one group (under no_grad); see sgd.lua for the pattern.
function Optimizer:update_group()
  error(self.__name .. " does not define update_group(group)", 3)
end

--[[ zero_grad(set_to_none = true): drops every gradient (PyTorch 2.x's default), or with false
     zeroes them in place (one _foreach_zero_ per group). ]]
function Optimizer:zero_grad(set_to_none)
  if set_to_none == nil then set_to_none = true end
  for _, group in ipairs(self.param_groups) do
    local grads = {}
    for _, p in ipairs(group.params) do
      if set_to_none then
        p.grad = nil   -- no read first: a read would wrap a handle only to drop it
      else
        local g = p.grad
        if g ~= nil then grads[#grads + 1] = g:detach(); g:free() end
      end
    end
    if #grads > 0 then
      torch.no_grad(torch._foreach_zero_, grads)
      U.free(grads)
    end
  end
end

---------------------------------------------------------------- state dict
-- state_dict() -> {state = {[index] = state table}, param_groups = {...}}; tensors are shared.
function Optimizer:state_dict()
  local index, n = {}, 0
  local groups = {}
  for gi, group in ipairs(self.param_groups) do
    local packed = {}
    for k, v in pairs(group) do if k ~= "params" then packed[k] = copy(v) end end
    packed.params = {}
    for i, p in ipairs(group.params) do
      index[p] = n
      packed.params[i] = n
      n = n + 1
    end
    groups[gi] = packed
  end
  local state = {}
  for p, s in pairs(self.state) do
    if index[p] ~= nil then
      local c = {}
      for k, v in pairs(s) do c[k] = v end
      state[index[p]] = c
    end
  end
  return { state = state, param_groups = groups }
end

-- A deep copy of one saved state value for parameter p: tensors moved to p's device, and
-- floating-point ones cast to p's dtype, except `step` (PyTorch keeps step as saved).
local function cast(p, v, key)
  if istype(Ref, v) then
    if key ~= "step" then
      if p:is_floating_point() and v:is_floating_point() then v = v:to(p.dtype) end
      v = v:to(p.device)
    end
    return v:clone()
  elseif type(v) == "table" then
    local t = {}
    for k, x in pairs(v) do t[k] = cast(p, x, k) end
    return t
  end
  return v
end

--[[ load_state_dict(sd): restores state and hyper-parameters from state_dict()'s layout (or
     PyTorch's). Groups must match in number and size; state tensors are copied. ]]
function Optimizer:load_state_dict(sd)
  if type(sd) ~= "table" or type(sd.param_groups) ~= "table" or type(sd.state) ~= "table" then
    fail(self, "load_state_dict expects a table with 'state' and 'param_groups', got " .. typename(sd), 2)
  end
  local saved = sd.param_groups
  if #saved ~= #self.param_groups then
    fail(self, ("loaded state dict has %d parameter groups, the optimizer has %d"):format(#saved, #self.param_groups),
      2)
  end
  local id_map = {}
  for gi, group in ipairs(self.param_groups) do
    local ids = saved[gi].params or {}
    if #ids ~= #group.params then
      fail(self, ("loaded state dict's parameter group %d has %d parameters, the optimizer's has %d")
        :format(gi - 1, #ids, #group.params), 2)
    end
    for i, id in ipairs(ids) do id_map[tonumber(id)] = group.params[i] end
  end
  local state = {}
  for k, v in pairs(sd.state) do
    local p = id_map[tonumber(k)]
    if p == nil then
      fail(self, ("loaded state dict has state for parameter %s, which no group lists"):format(tostring(k)), 2)
    end
    state[p] = unscoped(cast, p, v)
  end
  for gi, group in ipairs(self.param_groups) do
    local g = {}
    for k, v in pairs(saved[gi]) do if k ~= "params" then g[k] = copy(v) end end
    for k, v in pairs(group) do if g[k] == nil then g[k] = v end end
    g.params = group.params
    local msg = self.check(g)
    if msg then fail(self, ("loaded parameter group %d: %s"):format(gi - 1, msg), 2) end
    self.param_groups[gi] = g
  end
  self.state = state
end

---------------------------------------------------------------- repr
-- PyTorch's repr: "SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.1\n ...)".
function Optimizer:__tostring()
  local lines = { self.__name .. " (" }
  for i, group in ipairs(self.param_groups) do
    lines[#lines + 1] = "Parameter Group " .. (i - 1)
    local keys = {}
    for k in pairs(group) do if k ~= "params" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = group[k]
      if type(v) == "table" then
        local parts = {}
        for j, x in ipairs(v) do parts[j] = tostring(x) end
        v = "(" .. table.concat(parts, ", ") .. ")"
      end
      lines[#lines + 1] = "    " .. k .. ": " .. tostring(v)
    end
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

return M
