--[[
  torch.optim._util — small helpers the optimizers share: hyper-parameter checks that return an
  error message (a class's check(o) chains them with `or`), deep copies of option values, and
  the multi-tensor bookkeeping of an update (releasing temporaries at once, splitting a group by
  step count, making state tensors that outlive a torch.scope).

  Usage (internal):  local U = require "torch.optim._util"
                     return U.lr(o, "learning rate") or U.boolean(o, "foreach")
]]
local torch = require "torch"
local ffi = require "ffi"
local _C = require "torch._C"

local istype, Ref = ffi.istype, _C.Ref
local table_new = require "table.new"

local M = {}

-- The default of a hyper-parameter the user must give (SGD's lr).
M.required = setmetatable({}, { __tostring = function() return "<required parameter>" end })

-- A deep copy of an option value; a table with a metatable (M.required, torch.None) is a
-- sentinel and stays itself.
local function copy(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end
M.copy = copy

function M.typename(v)
  if istype(Ref, v) then return "Tensor" end
  if type(v) == "table" and rawget(v, "_modules") then return "Module" end
  return type(v)
end

---------------------------------------------------------------- hyper-parameter checks
-- o[key] must be a number (not NaN) with ok(v); nil when it is, else the message.
function M.number(o, key, what, ok)
  local v = o[key]
  if v == M.required then return nil end
  if type(v) ~= "number" then return ("invalid %s: expected a number, got %s"):format(what, M.typename(v)) end
  if v ~= v or not ok(v) then return ("invalid %s: %s"):format(what, tostring(v)) end
end

function M.boolean(o, key)
  if type(o[key]) ~= "boolean" then
    return ("invalid %s: expected a boolean, got %s"):format(key, M.typename(o[key]))
  end
end

function M.non_negative(v) return v >= 0 end

--[[ The learning rate, a number or (PyTorch's lr: float | Tensor) a 1-element tensor, >= 0; nil
     when it is one, else the message. An optimizer that takes a tensor lr reads it with
     M.scalar at each step, so an in-place change (lr:fill_(...)) takes effect as in PyTorch. ]]
function M.lr(o, what)
  local v = o.lr
  if istype(Ref, v) then
    if v:numel() ~= 1 then return "Tensor lr must be 1-element" end
    local x = v:item()
    if not (x >= 0) then return ("invalid %s: %s"):format(what, tostring(x)) end
    return nil
  end
  return M.number(o, "lr", what, M.non_negative)
end

--[[ PyTorch's Adam/AdamW check of a tensor hyper-parameter `what` (lr, betas[0], betas[1]): a
     Tensor runs only on the per-parameter path (ltorch's foreach = true is PyTorch's foreach=True,
     which refuses it unless capturable) and must hold one element. given: the options the caller
     gave (foreach left out is PyTorch's None: the per-parameter path on CPU). ]]
function M.tensor_hp(v, what, given)
  if not istype(Ref, v) then return nil end
  if given and given.foreach == true and not given.capturable then
    return ("%s as a Tensor is not supported for capturable=False and foreach=True"):format(what)
  end
  if v:numel() ~= 1 then return ("Tensor %s must be 1-element"):format(what) end
end

-- Whether a group's lr or betas is a Tensor (the per-parameter path then runs, as PyTorch's).
function M.has_tensor_hp(o)
  return istype(Ref, o.lr) or (type(o.betas) == "table" and (istype(Ref, o.betas[1]) or istype(Ref, o.betas[2])))
end

-- A tensor hyper-parameter as the Python number PyTorch's scalar arguments take (alpha=-lr).
function M.scalar(v)
  if istype(Ref, v) then return v:item() end
  return v
end

-- PyTorch's _to_scalar: a 1-element Tensor hyper-parameter as a 0-dim one (it then flows through
-- the update's scalar expressions as tensor arithmetic in its dtype, as in PyTorch); a number stays.
function M.hp(v)
  if istype(Ref, v) then return v:reshape({}) end
  return v
end

-- lr * x and lr / x as PyTorch computes them: in the tensor's dtype for a tensor lr (then its
-- value, as a scalar argument takes it), else in Lua numbers.
function M.lr_times(lr, x)
  if istype(Ref, lr) then return (lr:reshape({}) * x):item() end
  return lr * x
end

function M.lr_div(lr, x)
  if istype(Ref, lr) then return (lr:reshape({}) / x):item() end
  return lr / x
end
function M.any(_) return true end

-- The checks Adam's family (Adamax, NAdam, RAdam) shares: lr, eps, betas in [0, 1),
-- weight_decay, maximize, foreach.
function M.check_adam_family(o)
  local nn = M.non_negative
  local msg = M.lr(o, "learning rate") or M.number(o, "eps", "epsilon value", nn)
  if msg then return msg end
  if type(o.betas) ~= "table" or #o.betas ~= 2 then
    return "invalid betas: expected a table of two numbers, e.g. {0.9, 0.999}"
  end
  local in_range = function(v) return v >= 0 and v < 1 end
  return M.number(o.betas, 1, "beta parameter at index 0", in_range)
    or M.number(o.betas, 2, "beta parameter at index 1", in_range)
    or M.number(o, "weight_decay", "weight_decay value", nn)
    or M.boolean(o, "maximize") or M.boolean(o, "foreach")
end

---------------------------------------------------------------- multi-tensor bookkeeping
--[[ State tensors are made outside any torch.scope (torch._scope.unscoped): a training step
     wrapped in torch.scope frees its temporaries, never the optimizer's state. ]]
M.unscoped = require("torch._scope").unscoped
function M.zeros_like(p) return M.unscoped(torch.zeros_like, p) end
function M.clone(t) return M.unscoped(t.clone, t) end

-- Releases the handles of temporaries at once (the tensors they view are unaffected).
function M.free(list, n)
  for i = 1, n or #list do
    local t = list[i]
    if t ~= nil then t:free() end
  end
end

--[[ Splits 1..n by a per-parameter value (e.g. each Adagrad step count), keeping order:
     -> { {value = v, idx = {i, ...}}, ... }. Parameters of one group usually share one value. ]]
function M.buckets(values, n)
  local out, by = {}, {}
  for i = 1, n do
    local v = values[i]
    local b = by[v]
    if b == nil then
      b = { value = v, idx = table_new(n, 0) }
      by[v] = b
      out[#out + 1] = b
    end
    b.idx[#b.idx + 1] = i
  end
  return out
end

-- pick(list, idx) -> the entries of list at idx (a new array).
function M.pick(list, idx)
  local out = table_new(#idx, 0)
  for j, i in ipairs(idx) do out[j] = list[i] end
  return out
end

return M
