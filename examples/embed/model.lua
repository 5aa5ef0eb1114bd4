--[[
  model.lua — the Lua half of the embedding example: builds the network, loads a checkpoint,
  classifies a batch for the C host (classify.c).

  Shapes: x [N, 4] float32 (the host's C array, wrapped without a copy) -> logits [N, 3];
  classify returns (classes [N] int64, probabilities [N] float32 of the chosen class).

  Usage from C (see classify.c):
      ltorch_call(rt, "model:load", {"model.pt"}, 1, NULL, 0)
      ltorch_call(rt, "model:classify", {x}, 1, {classes, probs}, 2)
  or from Lua: local m = require "model"; m.load("model.pt"); print(m.classify(x))
]]
local torch = require "torch"
local nn = torch.nn

local M = {}
local net

function M.build()
  return nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 3))
end

function M.load(path)
  net = M.build()
  net:load_state_dict(torch.load(path))
  net:eval()
  return true
end

function M.classify(x)
  if not net then error("classify: no model loaded (call load first)", 2) end
  if x:dim() ~= 2 or x:size(1) ~= 4 then
    error(("classify: expected input [N, 4], got %s"):format(tostring(x:size())), 2)
  end
  return torch.no_grad(function()
    local probs = net(x):softmax(1)
    local best, classes = probs:max(1)
    return classes, best
  end)
end

return M
