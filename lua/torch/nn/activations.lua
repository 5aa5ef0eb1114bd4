--[[
  torch.nn.activations — activation modules: ReLU, GELU ({approximate = "tanh"}), SiLU, Tanh,
  Sigmoid, LeakyReLU(negative_slope=0.01), ELU(alpha=1), Softmax(dim), LogSoftmax(dim), Flatten
  (start_dim=1, end_dim=-1). Each is a thin Module over the functional op; extra_repr prints
  PyTorch's settings line.

  Usage:  nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.LogSoftmax(1))
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local A = require "torch.nn._fargs"

local M = {}

local function simple(name, fn)
  local cls = Module:extend(name)
  function cls:forward(x) return fn(x) end
  M[name] = cls
  return cls
end

simple("ReLU", function(x) return x:relu() end)
simple("SiLU", function(x) return x:silu() end)
simple("Tanh", function(x) return x:tanh() end)
simple("Sigmoid", function(x) return x:sigmoid() end)

local GELU = Module:extend("GELU")
M.GELU = GELU
function GELU:__init(opts) self.approximate = opts and opts.approximate or "none" end
function GELU:forward(x)
  if self.approximate == "none" then return x:gelu() end
  return x:gelu({ approximate = self.approximate })
end
function GELU:extra_repr() return ("approximate='%s'"):format(self.approximate) end

local LeakyReLU = Module:extend("LeakyReLU")
M.LeakyReLU = LeakyReLU
function LeakyReLU:__init(negative_slope) self.negative_slope = negative_slope or 0.01 end
function LeakyReLU:forward(x) return x:leaky_relu(self.negative_slope) end
function LeakyReLU:extra_repr() return ("negative_slope=%s"):format(self.negative_slope) end

local ELU = Module:extend("ELU")
M.ELU = ELU
function ELU:__init(alpha) self.alpha = alpha or 1.0 end
function ELU:forward(x) return torch.nn.functional.elu(x, self.alpha) end
function ELU:extra_repr() return ("alpha=%s"):format(self.alpha) end

local function dim_module(name, method)
  local cls = Module:extend(name)
  function cls:__init(dim)
    if type(dim) ~= "number" then error(name .. ": dim is required (implicit dim choice is deprecated in PyTorch)", 3) end
    self.dim = dim
  end
  function cls:forward(x) return x[method](x, self.dim) end
  function cls:extra_repr() return ("dim=%d"):format(self.dim) end
  M[name] = cls
end
dim_module("Softmax", "softmax")
dim_module("LogSoftmax", "log_softmax")

local Flatten = Module:extend("Flatten")
M.Flatten = Flatten
function Flatten:__init(start_dim, end_dim) self.start_dim, self.end_dim = start_dim or 1, end_dim or -1 end
function Flatten:forward(x) return x:flatten(self.start_dim, self.end_dim) end
function Flatten:extra_repr() return ("start_dim=%d, end_dim=%d"):format(self.start_dim, self.end_dim) end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.ReLU, "inplace=False")
A.init(M.SiLU, "inplace=False")
A.init(M.GELU, "approximate='none'")
A.init(M.LeakyReLU, "negative_slope=0.01, inplace=False", "all")
A.init(M.ELU, "alpha=1.0, inplace=False", "all")
A.init(M.Softmax, "dim=None", "all")
A.init(M.LogSoftmax, "dim=None", "all")
A.init(M.Flatten, "start_dim=1, end_dim=-1", "all")

return M
