--[[
  torch.nn._backward_hook — Module:register_full_backward_hook(fn), PyTorch's way: identity
  autograd Functions around the module's tensor inputs and outputs. In backward the output wrapper
  sees grad_output first; the input wrapper then sees grad_input and calls
  fn(module, grad_input, grad_output), where both are Lua arrays of Tensors (nil where there is no
  gradient). fn may return an array to replace grad_input. When no input requires grad, fn is
  called from the output wrapper with an empty grad_input.

  Both wrappers are torch.autograd.Functions, so fn runs on the Lua thread through the backward
  queue (torch.autograd_function) like any tensor hook; an error in fn is raised at backward().

  Usage:  local h = net:register_full_backward_hook(function(m, gin, gout) print(gout[1]:norm()) end)
          ...; h:remove()
]]
local ffi = require "ffi"
local _C = require "torch._C"
local af = require "torch.autograd_function"

local Ref = _C.Ref
local istype = ffi.istype

local M = {}

local function identity_forward(_, ...) return ... end

function M.register(module, fn)
  if type(fn) ~= "function" then error("bad argument #1 to 'register_full_backward_hook' (function expected)", 3) end
  local current   -- the call being recorded: forward pre-hook -> forward hook

  local pre = module:register_forward_pre_hook(function(mod, args)
    local call = { grad_output = nil, has_inputs = false }
    current = call
    if not af.grad_enabled() then return nil end
    local idx, tensors = {}, {}
    for i = 1, table.maxn(args) do
      local a = args[i]
      if istype(Ref, a) and a.requires_grad then idx[#idx + 1] = i; tensors[#tensors + 1] = a end
    end
    if #idx == 0 then return nil end
    call.has_inputs = true
    local n = #tensors
    local In = af.Function("BackwardHookFunctionBackward")
    In.forward = identity_forward
    function In.backward(_, ...)
      local grad_input = { ... }
      local r = fn(mod, grad_input, call.grad_output or {})
      if r ~= nil then return unpack(r, 1, n) end
      return ...
    end
    local wrapped = { In.apply(unpack(tensors, 1, n)) }
    local new = {}
    for i = 1, table.maxn(args) do new[i] = args[i] end
    for k, i in ipairs(idx) do new[i] = wrapped[k] end
    return new
  end)

  local post = module:register_forward_hook(function(mod, _, out)
    local call = current
    current = nil
    if call == nil or not af.grad_enabled() then return nil end
    local list = istype(Ref, out) and { out } or (type(out) == "table" and out or {})
    local idx, tensors = {}, {}
    for i = 1, table.maxn(list) do
      local o = list[i]
      if istype(Ref, o) and o.requires_grad then idx[#idx + 1] = i; tensors[#tensors + 1] = o end
    end
    if #idx == 0 then return nil end
    local Out = af.Function("BackwardHookFunctionBackward")
    Out.forward = identity_forward
    function Out.backward(_, ...)
      call.grad_output = { ... }
      if not call.has_inputs then fn(mod, {}, call.grad_output) end
      return ...
    end
    local wrapped = { Out.apply(unpack(tensors, 1, #tensors)) }
    if istype(Ref, out) then return wrapped[1] end
    local new = {}
    for i = 1, table.maxn(list) do new[i] = list[i] end
    for k, i in ipairs(idx) do new[i] = wrapped[k] end
    return new
  end)

  return { remove = function() pre.remove(); post.remove() end }
end

return M
