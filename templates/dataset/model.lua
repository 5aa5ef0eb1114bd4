--[[
  model.lua — a small network for the images dataset.lua yields.
  new(config, num_classes) -> nn.Module mapping x (B, C, H, W) normalised to (B, K) logits
  (no softmax: CrossEntropyLoss takes logits):
      Conv 3x3 (C -> 16) -> ReLU -> MaxPool 2      (B, 16, S/2, S/2)    S = config.size
      Conv 3x3 (16 -> 32) -> ReLU -> MaxPool 2     (B, 32, S/4, S/4)
      Flatten -> Linear(32 (S/4)^2, hidden) -> ReLU -> Dropout -> Linear(hidden, K)
  Edit it for your data (for large images, add stages or end with AdaptiveAvgPool2d).
]]
local torch = require "torch"
local nn = torch.nn

local M = {}

function M.new(config, num_classes)
  return nn.Sequential(
    nn.Conv2d(config.channels, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
    nn.Linear(32 * math.floor(config.size / 4) ^ 2, config.hidden), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(config.hidden, num_classes))
end

return M
