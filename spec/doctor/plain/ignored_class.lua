-- spec/doctor/plain/ignored_class.lua — planted bug (doctor fixture): cross_entropy is told to
-- ignore index 0 (meant as padding), but 0 is a real class: its samples never train.
-- Otherwise clean_mlp.lua.
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

local model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })
for _ = 1, 5 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    F.cross_entropy(model(batch[1]), batch[2], { ignore_index = 0 }):backward()
    opt:step()
  end
end
