-- spec/doctor/corpus/autoencoder.lua — a correct training script (doctor corpus), shaped like
-- the PyTorch autoencoder examples: 24-dimensional data on a 4-dimensional nonlinear manifold,
-- an encoder 24-16-4 and a decoder 4-16-24, MSELoss against the input itself, Adam.
-- Passes alone when the validation reconstruction MSE is below 0.3 of the data's variance.
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(51)
local mix = torch.randn(4, 24)
local function make(n) local z = torch.randn(n, 4); return torch.tanh(z:matmul(mix)) + torch.randn(n, 24) * 0.05 end
local x, vx = make(1024), make(256)

local model = nn.Sequential(nn.Linear(24, 16), nn.ReLU(), nn.Linear(16, 4), nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 24))
local loss_fn = nn.MSELoss()
local opt = torch.optim.Adam(model:parameters(), { lr = 3e-3 })
for epoch = 1, 20 do
  model:train()
  local perm = torch.randperm(1024)
  for s = 0, 1023, 64 do
    local xb = x:index_select(0, perm:narrow(0, s, 64))
    opt:zero_grad()
    local loss = loss_fn(model(xb), xb)
    loss:backward()
    opt:step()
  end
end
model:eval()
local mse = torch.no_grad(function() return loss_fn(model(vx), vx):item() end)
local var = vx:var(0):mean():item()
print(("val reconstruction mse %.4f (data variance %.4f)"):format(mse, var))
assert(mse < 0.3 * var, "autoencoder did not train")
