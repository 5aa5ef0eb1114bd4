--[[
  model.lua — the network DDP replicates on every rank. new(config) -> nn.Module mapping
  (B, 784) normalised pixels to (B, 10) logits. Replace it with your own model: DDP needs
  nothing special from it (every parameter must get a gradient each step).
]]
local torch = require "torch"
local nn = torch.nn

return {
  new = function(config)
    return nn.Sequential(nn.Linear(784, config.hidden), nn.ReLU(), nn.Linear(config.hidden, 10))
  end,
}
