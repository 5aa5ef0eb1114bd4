-- spec/doctor/plain/clean_cnn.lua — a correct training script (doctor fixture): a small CNN with
-- BatchNorm and dropout on 1x8x8 synthetic images (the class is the bright quadrant), SGD with
-- momentum and a StepLR stepped per epoch, validation in eval mode. No planted bug.
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

torch.manual_seed(2)
local function images(n)
  local y = torch.randint(4, { n })
  local x = torch.randn(n, 1, 8, 8) * 0.3
  for i = 0, n - 1 do
    local q = y[i]:item()
    local r, c = math.floor(q / 2) * 4, (q % 2) * 4
    x[i]:narrow(1, r, 4):narrow(2, c, 4):add_(1)
  end
  return x, y
end
local x, y = images(256)
local vx, vy = images(64)
local train = data.DataLoader(data.TensorDataset(x, y), { batch_size = 32, shuffle = true, generator = 0 })
local val = data.DataLoader(data.TensorDataset(vx, vy), { batch_size = 64 })

local model = nn.Sequential(
  nn.Conv2d(1, 8, 3, { padding = 1, bias = false }), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
  nn.Flatten(), nn.Dropout(0.2), nn.Linear(8 * 4 * 4, 4))
local opt = torch.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
local sched = torch.optim.lr_scheduler.StepLR(opt, 10, { gamma = 0.5 })

for epoch = 1, 8 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    local loss = F.cross_entropy(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
  sched:step()
  model:eval()
  local correct = 0
  torch.no_grad(function()
    for batch in val:iter() do correct = correct + model(batch[1]):argmax(1):eq(batch[2]):sum():item() end
  end)
  print(("epoch %d: val accuracy %.3f"):format(epoch, correct / 64))
end
