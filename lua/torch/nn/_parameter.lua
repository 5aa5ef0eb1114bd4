--[[
  torch.nn._parameter — nn.Parameter: a leaf tensor that nn.Module registers as a parameter when
  it is assigned to a module's field (torch.nn.module), and the test for one.

  Usage:  local parameter = require "torch.nn._parameter"
          local p = parameter.Parameter(torch.randn(3, 4))   -- also nn.Parameter
          parameter.is_parameter(p) --> true
]]
local ffi = require "ffi"
local _C = require "torch._C"

local istype, Ref = ffi.istype, _C.Ref

local M = {}

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

return M
