-- spec/doctor/corpus/tabular_regression.lua — a correct training script (doctor corpus): a
-- Boston-shaped table (506 rows x 13 features of mixed scales, a nonlinear target with noise),
-- features standardised with the training split's statistics, the target standardised, (N, 1)
-- targets, an MLP, MSELoss, AdamW with a cosine schedule over 30 epochs.
-- Passes alone when the validation MSE is below 0.5 (predicting the mean scores ~1.0).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(11)
local N, D = 506, 13
local scale = torch.tensor({ 8, 20, 7, 0.3, 0.1, 0.7, 28, 2, 9, 170, 2, 90, 7 })
local raw = torch.randn(N, D):matmul(torch.eye(D) + torch.randn(D, D) * 0.3) * scale + 3
local z = (raw - raw:mean(0)) / raw:std(0)
local y = (z:narrow(1, 0, 1) * 0.5 - z:narrow(1, 5, 1):pow(2) + z:narrow(1, 12, 1) * z:narrow(1, 2, 1)
  + torch.tanh(z:narrow(1, 7, 1) * 2) + torch.randn(N, 1) * 0.6) * 5 + 22

local perm = torch.randperm(N)
local tr, va = perm:narrow(0, 0, 404), perm:narrow(0, 404, N - 404)
local xtr, ytr, xva, yva = raw:index_select(0, tr), y:index_select(0, tr), raw:index_select(0, va), y:index_select(0, va)
local mu, sd = xtr:mean(0), xtr:std(0)
xtr, xva = (xtr - mu) / sd, (xva - mu) / sd
local ym, ys = ytr:mean(), ytr:std()
ytr, yva = (ytr - ym) / ys, (yva - ym) / ys

local model = nn.Sequential(nn.Linear(D, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
local loss_fn = nn.MSELoss()
local epochs, bs = 30, 32
local steps_per_epoch = math.ceil(404 / bs)
local opt = torch.optim.AdamW(model:parameters(), { lr = 5e-4, weight_decay = 1e-2 })
local sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, { T_max = epochs * steps_per_epoch })

local vloss
for epoch = 1, epochs do
  model:train()
  local p = torch.randperm(404)
  for s = 0, 403, bs do
    local idx = p:narrow(0, s, math.min(bs, 404 - s))
    opt:zero_grad()
    local loss = loss_fn(model(xtr:index_select(0, idx)), ytr:index_select(0, idx))
    loss:backward()
    opt:step()
    sched:step()
  end
  model:eval()
  vloss = torch.no_grad(function() return loss_fn(model(xva), yva):item() end)
end
print(("val mse %.4f (predicting the mean: %.4f)"):format(vloss, yva:var():item()))
assert(vloss < 0.5, "tabular_regression did not train")
