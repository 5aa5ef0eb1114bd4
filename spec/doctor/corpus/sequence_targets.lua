-- spec/doctor/corpus/sequence_targets.lua — a correct training script (doctor corpus): a target
-- per time step (N, T) — the running sum of a noisy 1-d signal — predicted by a GRU
-- (batch_first) and a Linear head squeezed to (N, T); MSELoss, Adam, gradient clipping.
-- Passes alone when the validation MSE is below 0.2 of the targets' variance.
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(81)
local T = 12
local function make(n)
  local x = torch.randn(n, T, 1)
  return x, x:squeeze(2):cumsum(1) / 2
end
local x, y = make(512)
local vx, vy = make(128)

local Net = nn.Module:extend("SeqNet")
function Net:__init()
  self.rnn = nn.GRU(1, 32, { batch_first = true })
  self.head = nn.Linear(32, 1)
end
function Net:forward(inp)
  local h = self.rnn(inp)
  return self.head(h):squeeze(2)
end
local model = Net()
local loss_fn = nn.MSELoss()
local opt = torch.optim.Adam(model:parameters(), { lr = 5e-3 })
for epoch = 1, 12 do
  model:train()
  local perm = torch.randperm(512)
  for s = 0, 511, 32 do
    local idx = perm:narrow(0, s, 32)
    opt:zero_grad()
    local loss = loss_fn(model(x:index_select(0, idx)), y:index_select(0, idx))
    loss:backward()
    nn.utils.clip_grad_norm_(model:parameters(), 1.0)
    opt:step()
  end
end
model:eval()
local mse = torch.no_grad(function() return loss_fn(model(vx), vy):item() end)
print(("val mse %.4f (target variance %.4f)"):format(mse, vy:var():item()))
assert(mse < 0.2 * vy:var():item(), "sequence_targets did not train")
