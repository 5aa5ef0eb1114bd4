-- spec/doctor/corpus/cnn_bars.lua — a correct training script (doctor corpus), shaped like the
-- PyTorch MNIST example: 1x12x12 noisy images of a horizontal bar, a vertical bar, a diagonal or
-- a cross (4 classes), Conv2d-BatchNorm-ReLU-MaxPool twice, dropout, Linear; CrossEntropyLoss,
-- Adadelta as in the example, a DataLoader.
-- Passes alone when the validation accuracy is above 0.9 (chance: 0.25).
local torch = require "torch"
local nn = torch.nn
local data = torch.utils.data

torch.manual_seed(41)
local function make(n)
  local y = torch.randint(0, 4, { n })
  local x = torch.randn(n, 1, 12, 12) * 0.5
  for i = 0, n - 1 do
    local c, p = y[i]:item(), math.random(2, 9)
    local img = x[i][0]
    if c == 0 or c == 3 then img:narrow(0, p, 2):add_(1.5) end
    if c == 1 or c == 3 then img:narrow(1, p, 2):add_(1.5) end
    if c == 2 then img:add_(torch.eye(12) * 1.5) end
  end
  return x, y
end
math.randomseed(41)
local x, y = make(800)
local vx, vy = make(200)

local model = nn.Sequential(
  nn.Conv2d(1, 8, 3, { padding = 1, bias = false }), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
  nn.Conv2d(8, 16, 3, { padding = 1, bias = false }), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
  nn.Flatten(), nn.Dropout(0.25), nn.Linear(16 * 9, 4))
local loss_fn = nn.CrossEntropyLoss()
local opt = torch.optim.Adadelta(model:parameters(), { lr = 1.0 })
local loader = data.DataLoader(data.TensorDataset(x, y), { batch_size = 32, shuffle = true })
for epoch = 1, 4 do
  model:train()
  for b in loader:iter() do
    opt:zero_grad()
    local loss = loss_fn(model(b[1]), b[2])
    loss:backward()
    opt:step()
  end
end
model:eval()
local acc = torch.no_grad(function() return model(vx):argmax(1):eq(vy):float():mean():item() end)
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.9, "cnn_bars did not train")
