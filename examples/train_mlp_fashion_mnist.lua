--[[
  examples/train_mlp_fashion_mnist.lua — the foundation's main job: a 2-layer MLP trained on
  Fashion-MNIST with plain SGD written out in Lua (no nn or optim modules), printing the loss
  and the test accuracy.

  Model:  x (B, 784) -> Linear(784, 256) -> ReLU -> Linear(256, 10) -> logits (B, 10)
  Data:   Debian's dataset-fashion-mnist, pixels scaled to [0, 1] and normalised with the
          training set's mean/std; labels int64 in 0..9.
  Checks built in, as the project's training habits ask:
    * loss at init is printed next to its expected value ln(10) = 2.303;
    * the test accuracy is printed next to the chance baseline (10 %).

  Run:    build/ltorch examples/train_mlp_fashion_mnist.lua [epochs] [batch_size] [lr] [seed]
          defaults: 3 epochs, batch 128, lr 0.1, seed 0. It reaches ~86-88 % test accuracy.
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local fashion_mnist = require "torch.data.fashion_mnist_files"

local epochs = tonumber(arg and arg[1]) or 3
local batch_size = tonumber(arg and arg[2]) or 128
local lr = tonumber(arg and arg[3]) or 0.1
local seed = tonumber(arg and arg[4]) or 0

torch.manual_seed(seed)

-- (N, 28, 28) uint8 -> (N, 784) float32 normalised with the training statistics.
local function prepare(images, mean, std)
  local x = images:float():div(255):view(images:size(0), 784)
  if mean == nil then mean, std = x:mean():item(), x:std():item() end
  return x:sub(mean):div(std), mean, std
end

local train_images, train_labels = fashion_mnist.load("train")
local test_images, test_labels = fashion_mnist.load("test")
local x_train, mean, std = prepare(train_images)
local x_test = prepare(test_images, mean, std)
local n_train = x_train:size(0)

-- Parameters, initialised like nn.Linear (Kaiming-uniform bound 1/sqrt(fan_in)).
local function linear_params(fan_in, fan_out)
  local bound = 1 / math.sqrt(fan_in)
  local w = (torch.rand(fan_in, fan_out) * 2 - 1):mul_(bound):requires_grad_()
  local b = (torch.rand(fan_out) * 2 - 1):mul_(bound):requires_grad_()
  return w, b
end
local w1, b1 = linear_params(784, 256)
local w2, b2 = linear_params(256, 10)
local params = { w1, b1, w2, b2 }

local function forward(x)
  return (x:matmul(w1) + b1):relu():matmul(w2) + b2
end

local function accuracy(x, y)
  return torch.no_grad(function()
    local correct = 0
    for start = 0, x:size(0) - 1, 1000 do
      local len = math.min(1000, x:size(0) - start)
      local pred = forward(x:narrow(0, start, len)):argmax(1)
      correct = correct + pred:eq(y:narrow(0, start, len)):sum():item()
    end
    return correct / x:size(0)
  end)
end

local init_loss = torch.no_grad(function()
  return F.cross_entropy(forward(x_train:narrow(0, 0, 1000)), train_labels:narrow(0, 0, 1000)):item()
end)
print(("loss at init %.4f (expected about ln(10) = %.4f)"):format(init_loss, math.log(10)))

for epoch = 1, epochs do
  local order = torch.randperm(n_train)
  local total, batches = 0, 0
  for start = 0, n_train - 1, batch_size do
    local len = math.min(batch_size, n_train - start)
    local idx = order:narrow(0, start, len)
    local loss = F.cross_entropy(forward(x_train:index_select(0, idx)), train_labels:index_select(0, idx))
    loss:backward()
    torch.no_grad(function()
      for _, p in ipairs(params) do
        p:sub_(p.grad, { alpha = lr })
        p.grad = nil
      end
    end)
    total, batches = total + loss:item(), batches + 1
  end
  print(("epoch %d  train loss %.4f  test accuracy %.2f %%"):format(epoch, total / batches, 100 * accuracy(x_test, test_labels)))
end

local acc = accuracy(x_test, test_labels)
print(("final test accuracy %.2f %% (chance baseline 10.00 %%)"):format(100 * acc))
