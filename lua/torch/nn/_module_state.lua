--[[
  torch.nn._module_state — nn.Module's state dict: state_dict_keys, state_dict and
  load_state_dict, with PyTorch's key order, messages and results.

  A state dict is a plain name -> tensor table that is also an iterator in PyTorch's order
  (`for name, t in m:state_dict() do`). load_state_dict(sd, strict=true, assign=false), also
  (sd, {strict =, assign =}), checks every key and shape first and then copies (or takes, with
  assign) the tensors under no_grad; it returns PyTorch's (missing_keys, unexpected_keys).

  Usage:  local state = require "torch.nn._module_state"
          for k, f in pairs(state.methods) do Module[k] = f end   -- torch.nn.module does this
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"
local Parameter = require("torch.nn._parameter").Parameter
local traversal = require "torch.nn._module_traversal"

local raw_named_children, raw_named_modules = traversal.raw_named_children, traversal.raw_named_modules

local istype, Ref = ffi.istype, _C.Ref

local M = {}
local Methods = {}
M.methods = Methods
local cursor = setmetatable({}, { __mode = "k" })   -- a state dict -> the iterator's last index

-- Ordered names of the state: own parameters, own persistent buffers, then each child's.
function Methods:state_dict_keys(prefix, out)
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

-- A lazy module's UninitializedParameter / UninitializedBuffer for key (torch.nn.lazy), or nil.
local function uninitialized(self, key)
  local m, leaf = owner(self, key)
  local u = m and rawget(m, "_uninit")
  return u and u[leaf]
end

local function is_uninitialized(v) return type(v) == "table" and rawget(v, "uninitialized") == true end

--[[ state_dict() -> { ["fc1.weight"] = tensor, ... } (detached, sharing storage, as PyTorch's); a lazy
     module's entries before its first forward are its UninitializedParameter / UninitializedBuffer. ]]
function Methods:state_dict()
  local sd, keys = {}, self:state_dict_keys()
  for _, key in ipairs(keys) do sd[key] = uninitialized(self, key) or lookup(self, key):detach() end
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
    local dst_uninit = uninitialized(self, k)
    if is_uninitialized(src) then   -- uninitialized into uninitialized matches: nothing to copy
      if not dst_uninit then
        errors[#errors + 1] = ("value for %s is an uninitialized parameter or buffer (a lazy module's before its "
          .. "first forward): it cannot be loaded into an initialized one"):format(k)
      end
    elseif src ~= nil and dst_uninit and istype(Ref, src) then
      errors[#errors + 1] = ("value for %s: its lazy module was not materialized"):format(k)
    elseif src ~= nil then
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
  if p ~= nil then m._parameters.values[leaf] = Parameter(src:detach(), p.requires_grad)
  else m._buffers.values[leaf] = src end
end

-- The modules' load_state_dict pre-hooks run on a copy of sd (the caller's table stays as it was).
local function run_pre_hooks(self, sd, strict)
  local copied = sd
  for _, nm in ipairs(raw_named_modules(self, "", {}, {})) do
    local hooks = rawget(nm[2], "_load_state_dict_pre_hooks")
    if hooks and #hooks > 0 then
      if copied == sd then
        copied = {}
        for k, v in pairs(sd) do copied[k] = v end
      end
      for _, h in ipairs(hooks) do h.fn(copied, nm[1] == "" and "" or (nm[1] .. "."), strict) end
    end
  end
  return copied
end

--[[ load_state_dict(sd, strict=true, assign=false), also (sd, {strict =, assign =}) ->
     missing, unexpected. Copies values in place under no_grad (assign: takes the tensors).
     strict: any missing or unexpected key is an error listing them; a shape mismatch is always
     an error. The first result is PyTorch's named tuple: `r.missing_keys`, `r.unexpected_keys`,
     and it is itself the array of missing keys, so Python's
     `missing, unexpected = m.load_state_dict(sd, strict=False)` ports as
     `local missing, unexpected = m:load_state_dict(sd, false)`. ]]
function Methods:load_state_dict(sd, opts, assign_arg)
  if type(sd) ~= "table" then error("load_state_dict: expected a table of tensors, got " .. type(sd), 2) end
  local strict, assign = load_options(opts, assign_arg)
  sd = run_pre_hooks(self, sd, strict)
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
      if src ~= nil and not is_uninitialized(src) then
        if assign then assign_tensor(self, k, src) else lookup(self, k):copy_(src) end
      end
    end
  end)
  return result, result.unexpected_keys
end

return M
