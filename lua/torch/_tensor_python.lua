--[[
  torch._tensor_python — Tensor methods PyTorch writes in Python (torch/_tensor.py): resize and
  resize_as (deprecated there: they warn once per call site, then work), module_load (what
  nn.Module.load_state_dict calls per tensor), dim_order and register_post_accumulate_grad_hook.

      local y = x:resize(2, 3)        -- UserWarning: non-inplace resize is deprecated; y views x
      local y = x:resize_as(z)        -- the same, to z's shape
      p:module_load(v)                --> p:copy_(v):detach()   ({assign = true}: v:detach())
      x:dim_order()                   --> {0, 1, 2}: dims from outermost to innermost in memory
      local h = p:register_post_accumulate_grad_hook(function(p) p.grad = nil end)   -- h:remove()

  Usage (internal): require("torch._tensor_python").install(Tensor), done by torch/init.lua.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local T = require "torch._tensor"
local args = require "torch._args"
local warnings = require "torch._warnings"
require "torch.autograd_function"   -- its hook state, in the registry

local C, check = _C.C, _C.check
local registry = debug.getregistry()

local M = {}

--[[ PyTorch's autograd Resize function: the same elements in a new shape (a view of a contiguous
     x; the gradient flows back reshaped), refusing a different number of elements. ]]
local function resize(self, sizes, level)
  local n = 1
  for _, s in ipairs(sizes) do n = n * s end
  local have = self:numel()
  if have ~= n then
    local shown = {}
    for i, s in ipairs(sizes) do shown[i] = tostring(s) end
    error(("resize: requested resize to %s (%d elements in total), but the given tensor has a size of %s " ..
      "(%d elements). autograd's resize can only change the shape of a given tensor, while preserving " ..
      "the number of elements."):format(table.concat(shown, "x"), n, table.concat(self:size(), "x"), have), level + 1)
  end
  return self:contiguous():view(sizes)
end

local function sizes_of(fname, ...)
  local first = ...
  local sizes = (type(first) == "table" and select("#", ...) == 1) and first or { ... }
  for k in pairs(sizes) do
    if not args.is_int(k) or k < 1 or k > #sizes then
      error(("%s(): argument 'sizes' must be a sequence of ints, got a table with key %s"):format(fname, tostring(k)), 3)
    end
  end
  for i = 1, #sizes do
    if not args.is_int(sizes[i]) then
      error(("%s(): argument 'sizes' must be a sequence of ints, got %s at %d"):format(
        fname, args.typename(sizes[i]), i - 1), 3)
    end
  end
  return sizes
end

function M.resize(self, ...)
  T.handle("resize", 1, self)
  local sizes = sizes_of("resize", ...)
  warnings.warn("non-inplace resize is deprecated", 2)
  local r = resize(self, sizes, 2)   -- not a tail call: its errors blame our caller
  return r
end

local RESIZE_AS = P.signature("resize_as", "self, tensor")
function M.resize_as(...)
  local a = W.bind(RESIZE_AS, 2, ...)
  local self, other = W.tensor(RESIZE_AS, a, "self", 2), W.tensor(RESIZE_AS, a, "tensor", 2)
  warnings.warn("non-inplace resize_as is deprecated", 2)
  local r = resize(self, other:size(), 2)
  return r
end

local LOAD = P.signature("module_load", "self, other, assign=False")
function M.module_load(...)
  local a = W.bind(LOAD, 2, ...)
  W.tensor(LOAD, a, "self", 2)
  W.tensor(LOAD, a, "other", 2)
  W.bool(LOAD, a, "assign", 2)
  if a.assign then return a.other:detach() end
  return W.call(2, function() return a.self:copy_(a.other):detach() end)
end

---------------------------------------------------------------- dim_order
-- c10's contiguity for a memory format: dims in `order` (1-based) have strides 1, size, ...
local ORDERS = { contiguous_format = nil, channels_last = { 4, { 2, 4, 3, 1 } }, channels_last_3d = { 5, { 2, 5, 4, 3, 1 } } }
local function contiguous_as(sizes, strides, format)
  local order
  if format == "contiguous_format" then
    order = {}
    for d = #sizes, 1, -1 do order[#order + 1] = d end
  else
    local o = ORDERS[format]
    if #sizes ~= o[1] then return false end
    order = o[2]
  end
  local expected = 1
  for _, d in ipairs(order) do
    if sizes[d] ~= 1 then
      if strides[d] ~= expected then return false end
      expected = expected * sizes[d]
    end
  end
  return true
end

--[[ torch._prims_common.compute_elementwise_output_logical_to_physical_perm for one tensor:
     dims sorted by stride, outermost first (insertion sort, ambiguous pairs left in place). ]]
local function physical_perm(sizes, strides, ambiguity_check)
  local ndim = #sizes
  if ndim == 0 then return {}, false end
  if ndim == 1 then return { 0 }, false end
  local contiguous, channels_last = contiguous_as(sizes, strides, "contiguous_format"),
    ndim == 4 and contiguous_as(sizes, strides, "channels_last")
  local perm = {}
  if contiguous and not channels_last then
    for i = 1, ndim do perm[i] = i - 1 end
    return perm, false
  end
  if channels_last and not contiguous then return { 0, 2, 3, 1 }, false end
  local function ge(x, y) return y == 0 or (x ~= 0 and (x >= y or x % y == 0)) end
  local function should_swap(a, b)   -- 0-based dims
    local sa, sb = strides[a + 1], strides[b + 1]
    if sa == 0 or sb == 0 then return 0 end
    if sa == sb then return ge(sizes[b + 1], sizes[a + 1]) and 0 or 1 end
    if ge(sb, sa) then return -1 end
    if ge(sa, sb) then return 1 end
    return 0
  end
  for i = 1, ndim do perm[i] = ndim - i end
  for i = 2, ndim do
    local d1 = i
    for d0 = i - 1, 1, -1 do
      local c = should_swap(perm[d0], perm[d1])
      if c > 0 then perm[d0], perm[d1] = perm[d1], perm[d0]; d1 = d0
      elseif c < 0 then break end
    end
  end
  local ambiguous = false
  if ambiguity_check then
    for i = 1, ndim - 1 do
      if should_swap(perm[i], perm[i + 1]) ~= -1 then ambiguous = true; break end
    end
  end
  local out = {}
  for i = 1, ndim do out[i] = perm[ndim + 1 - i] end
  return out, ambiguous
end

local DIM_ORDER = P.signature("dim_order", "self, *, ambiguity_check=False")
--[[ x:dim_order({ambiguity_check = false}) -> the dims from outermost to innermost in memory (a
     Lua list of 0-based dims: PyTorch's tuple). ambiguity_check = true raises when the order is
     not unique; a list of memory formats ('contiguous_format', 'channels_last', ...) raises unless
     x is contiguous in exactly one of them. ]]
function M.dim_order(...)
  local a = W.bind(DIM_ORDER, 2, ...)
  local x = W.tensor(DIM_ORDER, a, "self", 2)
  local ambiguity = a.ambiguity_check
  local formats = {}
  if type(ambiguity) == "table" then
    for _, f in ipairs(ambiguity) do
      if f ~= "contiguous_format" and f ~= "channels_last" and f ~= "channels_last_3d" then
        error("dim_order: ambiguity_check must be a bool or a list of memory formats", 2)
      end
      formats[#formats + 1] = f
    end
  elseif type(ambiguity) ~= "boolean" then
    error("dim_order: ambiguity_check must be a bool or a list of memory formats", 2)
  end
  local sizes, strides = x:size(), x:stride()
  local multiple = false
  for i = 1, #sizes do
    if sizes[i] == 1 or (i > 1 and strides[i] == strides[i - 1]) then multiple = true end
  end
  local legal = 0
  for _, f in ipairs(formats) do if contiguous_as(sizes, strides, f) then legal = legal + 1 end end
  local check_multiple = type(ambiguity) == "boolean" and ambiguity or type(ambiguity) == "table"
  if check_multiple and multiple and legal ~= 1 then
    error("dim_order: The tensor does not have unique dim order, or cannot map to exact one of the given memory formats.", 2)
  end
  local perm, ambiguous = physical_perm(sizes, strides, ambiguity == true or (type(ambiguity) == "table" and #ambiguity > 0))
  if ambiguous then error("dim_order: The tensor does not have unique dim order.", 2) end
  return perm
end

---------------------------------------------------------------- post-accumulate-grad hooks
-- Hooks run by torch.autograd_function's service loop (its state's `hooks`, id -> function).
local hook_state = registry["ltorch.autograd_function"]
local id_out = ffi.new("int64_t[1]")
local lists = registry["ltorch.post_accumulate_hooks"] or {}   -- hook id -> ordered list of hooks
registry["ltorch.post_accumulate_hooks"] = lists

local Handle = {}
Handle.__index = Handle
-- h:remove(): the hook no longer runs (the tensor's last one also leaves libtorch's).
function Handle.remove(h)
  local list = lists[h._id]
  if list == nil then return end
  for i, fn in ipairs(list) do
    if fn == h._fn then table.remove(list, i); break end
  end
  if #list == 0 then
    lists[h._id], hook_state.hooks[h._id] = nil, nil
    if h._tensor.h ~= nil then check(C.lt_tensor_remove_post_accumulate_hook(h._tensor.h), "remove") end
  end
end

--[[ p:register_post_accumulate_grad_hook(hook): hook(p) runs during backward once p.grad has been
     accumulated (a leaf that requires grad; hooks run in registration order; what they return is
     ignored). Returns a handle with :remove(). ]]
local POST_HOOK = P.signature("register_post_accumulate_grad_hook", "self, hook")
function M.register_post_accumulate_grad_hook(...)
  local a = W.bind(POST_HOOK, 2, ...)
  local self, hook = W.tensor(POST_HOOK, a, "self", 2), a.hook
  local h = self.h
  local mt = type(hook) == "table" and getmetatable(hook)
  if type(hook) ~= "function" and not (mt and mt.__call) then
    args.bad("register_post_accumulate_grad_hook", 2, "function", args.typename(hook))
  end
  if not self.requires_grad then error("cannot register a hook on a tensor that doesn't require gradient", 2) end
  if self.grad_fn ~= nil then error("post accumulate grad hooks cannot be registered on non-leaf tensors", 2) end
  hook_state.next_id = hook_state.next_id + 1
  check(C.lt_tensor_post_accumulate_hook(h, hook_state.next_id, id_out), "register_post_accumulate_grad_hook")
  local id = tonumber(id_out[0])
  local list = lists[id]
  if list == nil then
    list = {}
    lists[id] = list
    hook_state.hooks[id] = function(p)
      for _, fn in ipairs({ unpack(list) }) do fn(p) end
    end
  end
  list[#list + 1] = hook
  return setmetatable({ _id = id, _fn = hook, _tensor = self }, Handle)
end

function M.install(Tensor)
  Tensor.register_post_accumulate_grad_hook = M.register_post_accumulate_grad_hook
  Tensor.dim_order = M.dim_order
  Tensor.resize = M.resize
  Tensor.resize_as = M.resize_as
  Tensor.module_load = M.module_load
end

return M
