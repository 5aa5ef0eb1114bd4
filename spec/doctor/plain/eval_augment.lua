-- spec/doctor/plain/eval_augment.lua — planted bug (doctor fixture): the validation set is built
-- with the training set's random augmentation (noise and a random sign flip of the features).
-- Otherwise clean_mlp.lua with a Dataset class.
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

torch.manual_seed(1)
local centres = torch.randn(4, 8) * 3
local function blobs(n)
  local y = torch.randint(4, { n })
  return centres:index_select(0, y) + torch.randn(n, 8), y
end

local Blobs = data.Dataset:extend()
function Blobs:init(x, y, augment) self.x, self.y, self.augment = x, y, augment; return self end
function Blobs:len() return self.x:size(0) end
function Blobs:get(i)
  local xi = self.x[i]
  if self.augment then xi = xi + torch.randn(8) * 0.3 end
  return { xi, self.y[i] }
end

local x, y = blobs(512)
local vx, vy = blobs(128)
local train = data.DataLoader(Blobs.new(x, y, true), { batch_size = 32, shuffle = true, generator = 0 })
local val = data.DataLoader(Blobs.new(vx, vy, true), { batch_size = 64 })   -- augment: should be false

local model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })
for epoch = 1, 5 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    F.cross_entropy(model(batch[1]), batch[2]):backward()
    opt:step()
  end
  model:eval()
  local correct = 0
  torch.no_grad(function()
    for batch in val:iter() do correct = correct + model(batch[1]):argmax(1):eq(batch[2]):sum():item() end
  end)
  print(("epoch %d: val accuracy %.3f"):format(epoch, correct / 128))
end
