--[[
  model.lua — the network. new(config) -> nn.Module mapping (B, 784) normalised pixels to
  (B, 10) logits (no softmax: CrossEntropyLoss takes logits).
]]
local torch = require "torch"
local nn = torch.nn

local M = {}

function M.new(config)
  local h = config.hidden
  return nn.Sequential(
    nn.Linear(784, h), nn.ReLU(), nn.Dropout(config.dropout),
    nn.Linear(h, math.floor(h / 2)), nn.ReLU(), nn.Dropout(config.dropout),
    nn.Linear(math.floor(h / 2), 10))
end

return M
