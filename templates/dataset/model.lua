--[[
  model.lua — a small network for the images dataset.lua yields.
  new(config, num_classes) -> nn.Module mapping x (B, C, H, W) normalised to (B, K) logits
  (no softmax: CrossEntropyLoss takes logits):
      Conv 3x3 (C -> 16) -> ReLU -> MaxPool 2 -> Conv 3x3 (16 -> 32) -> ReLU -> global average
      pool -> Linear(32, hidden) -> ReLU -> Linear(hidden, K)
  Works for any image size; edit it for your data.
]]
local torch = require "torch"
local nn = torch.nn

local M = {}

function M.new(config, num_classes)
  return nn.Sequential(
    nn.Conv2d(config.channels, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Linear(32, config.hidden), nn.ReLU(), nn.Linear(config.hidden, num_classes))
end

return M
