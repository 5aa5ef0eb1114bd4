--[[
  torch.nn.deprecated — the torch.nn classes PyTorch 2.11 still has but deprecates: each works as
  PyTorch's and prints PyTorch's FutureWarning (once per line of the caller, torch._warnings).

    nn.NLLLoss2d(weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean')
        is nn.NLLLoss under its old name (NLLLoss takes N-d input itself).
    nn.Container(**modules): a Module holding the given named children; subclass nn.Module instead.
        In Lua the children come as one table: nn.Container({encoder = enc, head = head}); their
        order is the table's key order sorted by name (Python keeps keyword order, which Lua's
        tables do not have).
]]
local Module = require("torch.nn.module").Module
local loss = require "torch.nn.loss"
local warnings = require "torch._warnings"

local M = {}

local NLLLoss = loss.NLLLoss
local NLLLoss2d = NLLLoss:extend("NLLLoss2d")
M.NLLLoss2d = NLLLoss2d
function NLLLoss2d:__init(...)
  warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
    .. "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", nil, "FutureWarning")
  return NLLLoss.__init(self, ...)
end

local Container = Module:extend("Container")
M.Container = Container
function Container:__init(modules, ...)
  warnings.warn("`nn.Container` is deprecated. All of it's functionality is now implemented in `nn.Module`. "
    .. "Subclass that instead.", nil, "FutureWarning")
  if select("#", ...) > 0 or (modules ~= nil and (type(modules) ~= "table" or getmetatable(modules) ~= nil
    or modules[1] ~= nil)) then
    error("Container: expected one table of named modules, Container({name = module, ...})", 3)
  end
  local names = {}
  for name in pairs(modules or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do self:add_module(name, modules[name]) end
end

return M
