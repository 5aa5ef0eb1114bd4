--[[
  torch._ops_generated — wires the generated op surface (torch._dispatch) into the namespaces:
    torch.X          any schema function not written by hand (looked up on first use, then cached)
    x:X              any schema method not written by hand (through the Tensor metatype)
    torch.linalg.X, torch.special.X, torch.fft.X   the schema's linalg_X, special_X, fft_X
    torch._nn.X      the schema's python_module: nn ops (what torch.nn.functional builds on)
    torch._ops       the array of bound overloads found in the loaded libtorch
    torch.nn         loaded on first use (lua/torch/nn/init.lua); torch.distributed likewise
  Hand-written functions and methods stay first: they are the fast paths and keep ltorch's own
  argument conventions; the generated ones fill everything else.

  Usage: require("torch._ops_generated").install(torch), done by torch/init.lua.
]]
local _C = require "torch._C"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"

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

-- Namespaces that load on first use: their modules require torch itself.
local lazy_modules = {
  nn = function() return require "torch.nn" end,
  optim = function() return require "torch.optim" end,
  distributed = function() return require "torch.distributed" end,
  serialization = function() return require "torch.serialization" end,
  checkpoint = function() return require "torch.checkpoint" end,
  jit = function() return require "torch.jit" end,
  _ops = function() return dispatch.all_ops() end,
  utils = function() return { data = require "torch.data", checkpoint = require "torch.utils.checkpoint" } end,
}

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
      local loader = lazy_modules[k]
      if loader then
        local m = loader()
        rawset(t, k, m)
        return m
      end
      if type(k) ~= "string" then return nil end
      local f = dispatch.function_for(k)
      if f then rawset(t, k, f) end
      return f
    end,
  })
end

return M
