-- spec/doctor/corpus/imbalanced_classes.lua — a correct training script (doctor corpus): three
-- classes in proportions 90/8/2 from Gaussian blobs in 10 dimensions, an MLP, CrossEntropyLoss
-- with inverse-frequency class weights, Adam, DataLoader over a TensorDataset.
-- Passes alone when the validation balanced accuracy is above 0.8 (always-majority: 0.33).
local torch = require "torch"
local nn = torch.nn
local data = torch.utils.data

torch.manual_seed(21)
local centers = torch.randn(3, 10) * 1.5
local function make(n)
  local u = torch.rand(n)
  local y = (u:gt(0.90):long() + u:gt(0.98):long())
  return centers:index_select(0, y) + torch.randn(n, 10), y
end
local x, y = make(1500)
local vx, vy = make(600)
local counts = torch.bincount(y, { minlength = 3 }):float()
local weight = counts:sum() / (counts * 3)

local loader = data.DataLoader(data.TensorDataset(x, y), { batch_size = 64, shuffle = true })
local model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
local loss_fn = nn.CrossEntropyLoss({ weight = weight })
local opt = torch.optim.Adam(model:parameters(), { lr = 3e-3 })

for epoch = 1, 15 do
  model:train()
  for batch in loader:iter() do
    opt:zero_grad()
    local loss = loss_fn(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
end
model:eval()
local pred = torch.no_grad(function() return model(vx):argmax(1) end)
local recall = 0
for c = 0, 2 do
  local m = vy:eq(c)
  recall = recall + pred[m]:eq(c):float():mean():item() / 3
end
print(("balanced accuracy %.3f"):format(recall))
assert(recall > 0.8, "imbalanced_classes did not train")
