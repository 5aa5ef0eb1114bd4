-- spec/doctor/plain/lr_overwritten.lua — planted bug (doctor fixture): a cosine schedule is
-- stepped every epoch, but a leftover line resets the LR before every step, so the schedule is
-- never applied. Otherwise clean_mlp.lua.
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

local base_lr = 1e-2
torch.manual_seed(1)
local centres = torch.randn(4, 8) * 3
local function blobs(n)
  local y = torch.randint(4, { n })
  return centres:index_select(0, y) + torch.randn(n, 8), y
end
local x, y = blobs(512)
local train = data.DataLoader(data.TensorDataset(x, y), { batch_size = 32, shuffle = true, generator = 0 })

local model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
local opt = torch.optim.Adam(model:parameters(), { lr = base_lr })
local sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 5)

for _ = 1, 5 do
  model:train()
  for batch in train:iter() do
    opt.param_groups[1].lr = base_lr          -- left over from a manual warm-up
    opt:zero_grad()
    local loss = F.cross_entropy(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
  sched:step()
end
