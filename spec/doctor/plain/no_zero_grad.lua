-- spec/doctor/plain/no_zero_grad.lua — planted bug (doctor fixture): the loop never calls
-- zero_grad, so gradients pile up across steps. Otherwise clean_mlp.lua.
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

local epochs = tonumber(arg and arg[1]) or 5
torch.manual_seed(1)
local centres = torch.randn(4, 8) * 3
local function blobs(n)
  local y = torch.randint(4, { n })
  return centres:index_select(0, y) + torch.randn(n, 8), y
end
local x, y = blobs(512)
local vx, vy = blobs(128)
local train = data.DataLoader(data.TensorDataset(x, y), { batch_size = 32, shuffle = true, generator = 0 })
local val = data.DataLoader(data.TensorDataset(vx, vy), { batch_size = 64 })

local model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 4))
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })

for epoch = 1, epochs do
  model:train()
  for batch in train:iter() do
    local xb, yb = batch[1], batch[2]
    local loss = F.cross_entropy(model(xb), yb)
    loss:backward()
    opt:step()
  end
  model:eval()
  local correct = 0
  torch.no_grad(function()
    for batch in val:iter() do
      local out = model(batch[1])
      correct = correct + out:argmax(1):eq(batch[2]):sum():item()
    end
  end)
  print(("epoch %d: val accuracy %.3f"):format(epoch, correct / vx:size(0)))
end
