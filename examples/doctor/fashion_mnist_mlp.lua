--[[
  examples/doctor/fashion_mnist_mlp.lua — a doctor setup (see lua/torch/doctor/setup.lua) for the
  main job: a 2-layer MLP on Fashion-MNIST with SGD. It should pass every check.

  Run:  build/ltorch tools/doctor.lua examples/doctor/fashion_mnist_mlp.lua
]]
local torch = require "torch"
local nn, optim = torch.nn, torch.optim
local fashion_mnist = require "torch.data.fashion_mnist_files"

-- (N, 28, 28) uint8 -> (N, 784) float32 normalised with the training statistics
local function prepare(images, mean, std)
  local x = images:float():div(255):view(images:size(0), 784)
  if mean == nil then mean, std = x:mean():item(), x:std():item() end
  return x:sub(mean):div(std), mean, std
end

local images, labels = fashion_mnist.load("train")
local x, mean, std = prepare(images)
local tx, ty = fashion_mnist.load("test")
local vx = prepare(tx, mean, std)

local function loader(xs, ys, bs)
  return function()
    local b, n = -1, xs:size(0)
    return function()
      b = b + 1
      if b * bs >= n then return nil end
      local len = math.min(bs, n - b * bs)
      return { xs:narrow(0, b * bs, len), ys:narrow(0, b * bs, len) }
    end
  end
end

return {
  model = function() return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)) end,
  loss_fn = nn.CrossEntropyLoss(),
  optimizer = function(params) return optim.SGD(params, { lr = 0.1 }) end,
  train_loader = loader(x, labels, 128),
  val_loader = loader(vx, ty, 500),
  task = "classification",
  num_classes = 10,
  epochs = 3,
}
