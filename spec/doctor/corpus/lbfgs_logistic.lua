-- spec/doctor/corpus/lbfgs_logistic.lua — a correct training script (doctor corpus): logistic
-- regression with a closure optimizer, LBFGS, as in PyTorch's examples: 400 rows, 5 features,
-- a (N, 1) float target, BCEWithLogitsLoss, full-batch closure steps.
-- Passes alone when the validation accuracy is above 0.75 (chance: ~0.5).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(61)
local w = torch.randn(5, 1) * 2
local function make(n)
  local x = torch.randn(n, 5)
  return x, torch.bernoulli(torch.sigmoid(x:matmul(w)))
end
local x, y = make(400)
local vx, vy = make(200)
local model = nn.Linear(5, 1)
local loss_fn = nn.BCEWithLogitsLoss()
local opt = torch.optim.LBFGS(model:parameters(), { lr = 1, max_iter = 20 })
for epoch = 1, 10 do
  model:train()
  opt:step(function()
    opt:zero_grad()
    local loss = loss_fn(model(x), y)
    loss:backward()
    return loss
  end)
end
model:eval()
local acc = torch.no_grad(function() return model(vx):gt(0):float():eq(vy):float():mean():item() end)
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.75, "lbfgs_logistic did not train")
