--[[
  torch._ops_lookup — wires the generated op surface (torch._dispatch) into the namespaces, each
  name looked up on first use and then cached:
    torch.X          any schema function not written by hand
    x:X              any schema method not written by hand (through the Tensor metatype)
    torch.linalg.X, torch.special.X, torch.fft.X   the schema's linalg_X, special_X, fft_X
    torch._nn.X      the schema's python_module: nn ops (what torch.nn.functional builds on)
    torch._ops       the array of bound overloads found in the loaded libtorch
  and, before the ops, the library modules torch.X stands for (torch.nn, torch.optim, ...:
  torch._lazy_modules). Hand-written functions and methods stay first: they are the fast paths
  and keep ltorch's own argument conventions; the generated ones fill everything else.
  Hand-written itself: what it wires in is generated (lua/torch/_gen/ops.lua).

  Usage: require("torch._ops_lookup").install(torch), done by torch/init.lua.
]]
local _C = require "torch._C"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"
local lazy_modules = require "torch._lazy_modules"

local M = {}

local function lazy_namespace(prefix, display)
  return setmetatable({}, {
    __index = function(t, k)
      if type(k) ~= "string" then return nil end
      local f = dispatch.function_for(prefix .. k, display .. k)
      if f then rawset(t, k, f) end
      return f
    end,
  })
end

function M.install(torch)
  local Tensor = T.Tensor
  _C.state.generated_method = function(k)
    local f = dispatch.method_for(k)
    if f then rawset(Tensor, k, f) end
    return f
  end
  torch.linalg = lazy_namespace("linalg_", "torch.linalg.")
  torch.special = lazy_namespace("special_", "torch.special.")
  torch.fft = lazy_namespace("fft_", "torch.fft.")
  torch._nn = lazy_namespace("", "torch._nn.")
  setmetatable(torch, {
    __index = function(t, k)
      if type(k) ~= "string" then return nil end
      if k == "_ops" then
        local ops = dispatch.all_ops()
        rawset(t, k, ops)
        return ops
      end
      local m, found = lazy_modules.load(k, 2)
      if found then
        rawset(t, k, m)
        return m
      end
      local f = dispatch.function_for(k)
      if f then rawset(t, k, f) end
      return f
    end,
  })
end

return M
