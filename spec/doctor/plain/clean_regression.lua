-- spec/doctor/plain/clean_regression.lua — a correct training script (doctor fixture): a linear
-- target with noise, an MLP with (N, 1) outputs against (N, 1) targets, MSELoss, Adam, manual
-- batching (no DataLoader) and a validation loss per epoch. No planted bug.
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(4)
local w = torch.randn(8, 1)
local function make(n)
  local x = torch.randn(n, 8)
  return x, x:matmul(w) + torch.randn(n, 1) * 0.1
end
local x, y = make(512)
local vx, vy = make(128)

local model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
local loss_fn = nn.MSELoss()
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })
local bs = 32

for epoch = 1, 5 do
  model:train()
  local perm = torch.randperm(512)
  for s = 0, 512 - bs, bs do
    local idx = perm:narrow(0, s, bs)
    local xb, yb = x:index_select(0, idx), y:index_select(0, idx)
    opt:zero_grad()
    local loss = loss_fn(model(xb), yb)
    loss:backward()
    opt:step()
  end
  model:eval()
  local vloss = torch.no_grad(function() return loss_fn(model(vx), vy):item() end)
  print(("epoch %d: val mse %.4f"):format(epoch, vloss))
end
