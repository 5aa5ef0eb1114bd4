-- spec/doctor/corpus/fraud_binary.lua — a correct training script (doctor corpus): heavy class
-- imbalance in a binary task (about 3% positives, like a fraud table), 2000 rows x 12 features,
-- (N, 1) float targets, BCEWithLogitsLoss with pos_weight = negatives / positives, an MLP, Adam,
-- batches of 64 from a shuffled DataLoader.
-- Passes alone when the balanced accuracy on validation is above 0.8 (chance: 0.5).
local torch = require "torch"
local nn, data = torch.nn, torch.utils.data

torch.manual_seed(23)
local w = torch.randn(12, 1)
local thr = 2 * math.sqrt(w:pow(2):sum():item() + 0.25)   -- two sd of the score: ~3% positive
local function make(n)
  local x = torch.randn(n, 12)
  local score = x:matmul(w):squeeze(1) + 0.5 * x:select(1, 0) * x:select(1, 1)
  return x, score:gt(thr):float():unsqueeze(1)
end
local x, y = make(2000)
local vx, vy = make(1000)
local pos = y:sum():item()
local loader = data.DataLoader(data.TensorDataset(x, y), { batch_size = 64, shuffle = true, generator = 0 })
local model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1))
local loss_fn = nn.BCEWithLogitsLoss({ pos_weight = torch.tensor({ (2000 - pos) / pos }) })
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-3 })
for epoch = 1, 20 do
  model:train()
  for batch in loader:iter() do
    opt:zero_grad()
    local loss = loss_fn(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
end
model:eval()
local pred = torch.no_grad(function() return model(vx):gt(0):float() end)
local tpr = (pred * vy):sum():item() / vy:sum():item()
local tnr = ((1 - pred) * (1 - vy)):sum():item() / (1 - vy):sum():item()
print(("positives %d of 2000; val balanced accuracy %.3f (recall %.3f, specificity %.3f)"):format(pos, (tpr + tnr) / 2, tpr, tnr))
assert((tpr + tnr) / 2 > 0.8, "fraud_binary did not train")
