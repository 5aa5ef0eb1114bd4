--[[
  torch.nn.linear — nn.Linear(in_features, out_features, {bias = true, dtype =, device =}) and
  nn.Identity. Linear computes y = x W^T + b for x (*, in_features) -> (*, out_features);
  weight (out_features, in_features), bias (out_features), initialised as PyTorch does
  (kaiming_uniform_ with a = sqrt(5) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias).

  Usage:  local fc = nn.Linear(784, 10); local y = fc(x)
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local A = require "torch.nn._fargs"
local U = require "torch.nn._layer_util"

local M = {}

local function factory_opts(o)
  return { dtype = o and o.dtype, device = o and o.device }
end

local Linear = Module:extend("Linear")
M.Linear = Linear

function Linear:__init(in_features, out_features, opts)
  if type(in_features) ~= "number" or type(out_features) ~= "number" then
    error(("Linear: expected in_features and out_features as integers, got %s, %s"):format(type(in_features), type(out_features)), 3)
  end
  self.in_features, self.out_features = in_features, out_features
  local f = factory_opts(opts)
  self.weight = Parameter(torch.empty(out_features, in_features, f))
  U.optional_bias(self, opts == nil or opts.bias ~= false, out_features, f)
  self:reset_parameters()
end

A.init(Linear, "in_features, out_features, bias=True, device=None, dtype=None")

function Linear:reset_parameters()
  -- a = sqrt(5) gives bound 1/sqrt(fan_in): PyTorch's long-standing default for Linear.
  init.kaiming_uniform_(self.weight, { a = math.sqrt(5) })
  if self.bias ~= nil then
    local fan_in = init.calculate_fan_in_and_fan_out(self.weight)
    local bound = fan_in > 0 and 1 / math.sqrt(fan_in) or 0
    init.uniform_(self.bias, -bound, bound)
  end
end

function Linear:forward(x)
  if not torch.is_tensor(x) then
    error(("Linear(%d->%d): expected a Tensor input, got %s"):format(self.in_features, self.out_features, type(x)), 2)
  end
  if x:dim() == 0 or x:size(-1) ~= self.in_features then
    error(("Linear(%d->%d): expected input with last dim %d, got [%s]"):format(self.in_features, self.out_features,
      self.in_features, table.concat(x:size(), ", ")), 2)
  end
  return torch.nn.functional.linear(x, self.weight, self.bias)
end

function Linear:extra_repr()
  return ("in_features=%d, out_features=%d, bias=%s"):format(self.in_features, self.out_features,
    self.bias ~= nil and "True" or "False")
end

local Identity = Module:extend("Identity")
M.Identity = Identity
function Identity:forward(x) return x end

return M
