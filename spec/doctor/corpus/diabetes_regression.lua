-- spec/doctor/corpus/diabetes_regression.lua — a correct training script (doctor corpus): a small,
-- noisy regression shaped like scikit-learn's diabetes table (442 rows x 10 features, a target
-- that the features explain only in part), features standardised on the training split, an (N)
-- target with the model's output squeezed, a one-hidden-layer MLP, SGD with momentum and weight
-- decay, 40 epochs.
-- Passes alone when the validation MSE is below 0.8 of the variance of the validation targets
-- (predicting the mean scores ~1.0; the noise keeps the best model near 0.5).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(7)
local N, D = 442, 10
local x = torch.randn(N, D)
local w = torch.tensor({ 0.1, -0.2, 1.0, 0.6, -0.3, 0.2, -0.5, 0.3, 0.9, 0.2 })
local y = x:matmul(w) + 0.4 * x:select(1, 2):pow(2) + torch.randn(N) * 1.1
y = y * 77 + 152                                   -- the table's target scale (disease progression)

local perm = torch.randperm(N)
local ntr = 354
local tr, va = perm:narrow(0, 0, ntr), perm:narrow(0, ntr, N - ntr)
local xtr, xva = x:index_select(0, tr), x:index_select(0, va)
local mu, sd = xtr:mean(0), xtr:std(0)
xtr, xva = (xtr - mu) / sd, (xva - mu) / sd
local ytr, yva = y:index_select(0, tr), y:index_select(0, va)
local ym, ys = ytr:mean(), ytr:std()
ytr, yva = (ytr - ym) / ys, (yva - ym) / ys

local model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, 1))
local loss_fn = nn.MSELoss()
local opt = torch.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9, weight_decay = 1e-3 })
local bs = 32
for epoch = 1, 40 do
  model:train()
  local p = torch.randperm(ntr)
  for s = 0, ntr - 1, bs do
    local idx = p:narrow(0, s, math.min(bs, ntr - s))
    opt:zero_grad()
    local loss = loss_fn(model(xtr:index_select(0, idx)):squeeze(1), ytr:index_select(0, idx))
    loss:backward()
    opt:step()
  end
end
model:eval()
local mse = torch.no_grad(function() return loss_fn(model(xva):squeeze(1), yva):item() end)
local var = yva:var():item()
print(("val mse %.4f (variance of the targets %.4f)"):format(mse, var))
assert(mse < 0.8 * var, "diabetes_regression did not train")
