-- spec/doctor/corpus/slow_start.lua — a correct training script (doctor corpus) whose model needs
-- many steps before it beats the constant baseline: the target is the sign of the product of two
-- of 6 features (XOR), a deep narrow tanh MLP, plain SGD at a modest LR; the loss sits at log 2
-- for the first few hundred steps, then falls.
-- Passes alone when the validation accuracy is above 0.85 (chance: 0.5).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(101)
local function make(n)
  local x = torch.randn(n, 6)
  return x, (x:select(1, 0) * x:select(1, 1)):gt(0):long()
end
local x, y = make(1024)
local vx, vy = make(256)
local model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
  nn.Linear(16, 2))
local loss_fn = nn.CrossEntropyLoss()
local opt = torch.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
for epoch = 1, 60 do
  model:train()
  local perm = torch.randperm(1024)
  for s = 0, 1023, 32 do
    local idx = perm:narrow(0, s, 32)
    opt:zero_grad()
    local loss = loss_fn(model(x:index_select(0, idx)), y:index_select(0, idx))
    loss:backward()
    opt:step()
  end
end
model:eval()
local acc = torch.no_grad(function() return model(vx):argmax(1):eq(vy):float():mean():item() end)
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.85, "slow_start did not train")
