-- spec/doctor/corpus/conv1d_signals.lua — a correct training script (doctor corpus): sequence
-- classification with a 1-D CNN: noisy signals of 64 steps (N, 1, 64), four kinds (sine, square,
-- sawtooth, noise bursts) at random frequency and phase; Conv1d + BatchNorm1d + ReLU twice,
-- global average pooling, a linear head; CrossEntropyLoss with label smoothing, Adam, a cosine
-- schedule stepped per epoch.
-- Passes alone when the validation accuracy is above 0.85 (chance: 0.25).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(53)
local T = 64
local function make(n)
  local kind = torch.randint(4, { n })
  local t = torch.arange(T):float():unsqueeze(0)
  local freq = torch.rand(n, 1) * 0.15 + 0.05
  local phase = torch.rand(n, 1) * 6.283
  local arg = t * freq * 6.283 + phase
  local sine = torch.sin(arg)
  local square = sine:sign()
  local saw = (arg / 6.283):frac() * 2 - 1
  local burst = torch.randn(n, T) * torch.sin(t * 0.05):abs()
  local all = torch.stack({ sine, square, saw, burst }, 1)                 -- (n, 4, T)
  local x = all:gather(1, kind:view(n, 1, 1):expand(n, 1, T))               -- (n, 1, T)
  return x + torch.randn(n, 1, T) * 0.4, kind
end
local x, y = make(768)
local vx, vy = make(256)

local model = nn.Sequential(
  nn.Conv1d(1, 16, 5, { padding = 2, bias = false }), nn.BatchNorm1d(16), nn.ReLU(),
  nn.Conv1d(16, 32, 5, { padding = 2, bias = false }), nn.BatchNorm1d(32), nn.ReLU(),
  nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 4))
local loss_fn = nn.CrossEntropyLoss({ label_smoothing = 0.05 })
local epochs = 12
local opt = torch.optim.Adam(model:parameters(), { lr = 3e-3 })
local sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, { T_max = epochs })
for epoch = 1, epochs do
  model:train()
  local perm = torch.randperm(768)
  for s = 0, 767, 32 do
    local idx = perm:narrow(0, s, 32)
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
assert(acc > 0.85, "conv1d_signals did not train")
