-- spec/doctor/corpus/multi_output_regression.lua — a correct training script (doctor corpus):
-- three targets per row (N, 3) from 8 features, nonlinear, with noise; an MLP with a 3-wide
-- head, MSELoss, Adam with OneCycleLR stepped per batch.
-- Passes alone when the validation MSE is below 0.4 of the targets' variance.
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(71)
local w = torch.randn(8, 3)
local function make(n)
  local x = torch.randn(n, 8)
  local h = x:matmul(w)
  return x, torch.cat({ h:narrow(1, 0, 1), torch.sin(h:narrow(1, 1, 1)), h:narrow(1, 2, 1):abs() }, 1)
    + torch.randn(n, 3) * 0.1
end
local x, y = make(768)
local vx, vy = make(256)
local model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 3))
local loss_fn = nn.MSELoss()
local epochs, bs = 25, 32
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-3 })
local sched = torch.optim.lr_scheduler.OneCycleLR(opt, { max_lr = 1e-2, total_steps = epochs * 768 / bs })
for epoch = 1, epochs do
  model:train()
  local perm = torch.randperm(768)
  for s = 0, 767, bs do
    local idx = perm:narrow(0, s, bs)
    opt:zero_grad()
    local loss = loss_fn(model(x:index_select(0, idx)), y:index_select(0, idx))
    loss:backward()
    opt:step()
    sched:step()
  end
end
model:eval()
local mse = torch.no_grad(function() return loss_fn(model(vx), vy):item() end)
local var = vy:var(0):mean():item()
print(("val mse %.4f (target variance %.4f)"):format(mse, var))
assert(mse < 0.4 * var, "multi_output_regression did not train")
