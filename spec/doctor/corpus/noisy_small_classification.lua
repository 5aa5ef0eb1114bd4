-- spec/doctor/corpus/noisy_small_classification.lua — a correct training script (doctor corpus):
-- a small noisy table (300 rows, 6 features, 3 classes from a nonlinear rule, 15% of the labels
-- flipped at random), features standardised, an MLP with dropout, CrossEntropyLoss, SGD with
-- momentum and StepLR, manual mini-batches.
-- Passes alone when the validation accuracy is above 0.6 (the majority class: ~0.36).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(31)
local function make(n)
  local x = torch.randn(n, 6) * torch.tensor({ 1, 3, 0.5, 2, 1, 10 }) + 4
  local s = x:select(1, 0) - 4 + (x:select(1, 1) - 4) / 3
  local y = s:gt(-0.6):long() + s:gt(0.6):long()
  local flip = torch.rand(n):lt(0.15)
  y[flip] = torch.randint(0, 3, { flip:sum():item() })
  return x, y
end
local x, y = make(300)
local vx, vy = make(200)
local mu, sd = x:mean(0), x:std(0)
x, vx = (x - mu) / sd, (vx - mu) / sd

local model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
local loss_fn = nn.CrossEntropyLoss()
local opt = torch.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
local sched = torch.optim.lr_scheduler.StepLR(opt, { step_size = 20, gamma = 0.5 })
local bs = 32
for epoch = 1, 40 do
  model:train()
  local perm = torch.randperm(300)
  for s = 0, 299, bs do
    local idx = perm:narrow(0, s, math.min(bs, 300 - s))
    opt:zero_grad()
    local loss = loss_fn(model(x:index_select(0, idx)), y:index_select(0, idx))
    loss:backward()
    opt:step()
  end
  sched:step()
end
model:eval()
local acc = torch.no_grad(function() return model(vx):argmax(1):eq(vy):float():mean():item() end)
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.6, "noisy_small_classification did not train")
