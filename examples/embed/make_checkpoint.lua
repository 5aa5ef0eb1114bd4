--[[
  make_checkpoint.lua — writes the checkpoint the embedding example loads.

  A 4 -> 4 -> 3 MLP (Linear, ReLU, Linear) with hand-set weights, so its answers are known:
  the first layer is the identity, the second picks features 0, 1, 2 as the logits of
  classes 0, 1, 2. The input's class is therefore the largest of its first three features
  (the fourth is ignored), which is what classify.c's inputs exercise.

  Usage:  ltorch examples/embed/make_checkpoint.lua /tmp/model.pt
]]
local torch = require "torch"
-- model.lua lives beside this script: put its directory on the path.
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path
local model = require "model"

local path = assert(arg and arg[1], "usage: make_checkpoint.lua <checkpoint.pt>")
local net = model.build()
torch.no_grad(function()
  local w1, w2 = torch.eye(4), torch.zeros(3, 4)
  for c = 0, 2 do w2[{c, c}] = 1 end
  net:get(0).weight:copy_(w1)
  net:get(0).bias:zero_()
  net:get(2).weight:copy_(w2)
  net:get(2).bias:zero_()
end)
torch.save(net:state_dict(), path)
print("wrote " .. path)
