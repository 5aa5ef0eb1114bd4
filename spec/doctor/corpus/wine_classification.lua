-- spec/doctor/corpus/wine_classification.lua — a correct training script (doctor corpus): a tiny
-- table shaped like scikit-learn's wine data (178 rows x 13 features of very different scales,
-- 3 classes of 59/71/48), standardised, an MLP with dropout, Adam, batches of 16 from a
-- DataLoader, validation accuracy each epoch.
-- Passes alone when the final validation accuracy is above 0.85 (chance: ~0.4).
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data

torch.manual_seed(13)
local counts = { 59, 71, 48 }
local scale = torch.tensor({ 0.8, 1.1, 0.3, 3.3, 14, 0.6, 1.0, 0.1, 0.6, 2.3, 0.2, 0.7, 315 })
local offset = torch.tensor({ 13, 2.3, 2.4, 19.5, 100, 2.3, 2.0, 0.36, 1.6, 5.1, 0.96, 2.6, 747 })
local centres = torch.randn(3, 13) * 0.7
local xs, ys = {}, {}
for c = 1, 3 do
  xs[c] = (centres:narrow(0, c - 1, 1) + torch.randn(counts[c], 13)) * scale + offset
  ys[c] = torch.full({ counts[c] }, c - 1, { dtype = torch.int64 })
end
local x, y = torch.cat(xs), torch.cat(ys)
local perm = torch.randperm(178)
x, y = x:index_select(0, perm), y:index_select(0, perm)
local ntr = 134
local xtr, ytr, xva, yva = x:narrow(0, 0, ntr), y:narrow(0, 0, ntr), x:narrow(0, ntr, 178 - ntr), y:narrow(0, ntr, 178 - ntr)
local mu, sd = xtr:mean(0), xtr:std(0)
xtr, xva = (xtr - mu) / sd, (xva - mu) / sd

local train = data.DataLoader(data.TensorDataset(xtr, ytr), { batch_size = 16, shuffle = true, generator = 0 })
local model = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
local opt = torch.optim.Adam(model:parameters(), { lr = 3e-3 })
local acc
for epoch = 1, 30 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    local loss = F.cross_entropy(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
  model:eval()
  acc = torch.no_grad(function() return model(xva):argmax(1):eq(yva):float():mean():item() end)
end
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.85, "wine_classification did not train")
