-- spec/doctor/plain/detached.lua — planted bug (doctor fixture): the model's forward detaches
-- the hidden features, so no gradient reaches the first layer. Otherwise clean_mlp.lua.
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

torch.manual_seed(1)
local centres = torch.randn(4, 8) * 3
local function blobs(n)
  local y = torch.randint(4, { n })
  return centres:index_select(0, y) + torch.randn(n, 8), y
end
local x, y = blobs(512)
local train = data.DataLoader(data.TensorDataset(x, y), { batch_size = 32, shuffle = true, generator = 0 })

local Net = nn.Module:extend("Net")
function Net:__init()
  self.fc1 = nn.Linear(8, 32)
  self.fc2 = nn.Linear(32, 4)
end
function Net:forward(t)
  local h = self.fc1(t):relu():detach()       -- meant for logging only
  return self.fc2(h)
end

local model = Net()
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })
for _ = 1, 5 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    F.cross_entropy(model(batch[1]), batch[2]):backward()
    opt:step()
  end
end
