--[[
  spec/doctor/fixtures.lua — small synthetic training setups for the doctor specs: a correct one
  per task, and builders the specs break on purpose (one planted bug each).

  local fx = dofile("spec/doctor/fixtures.lua")
  local setup = fx.classification({ model = ..., loss_fn = ... })   -- overrides merged in
  setup.data.x, setup.data.y: the training tensors (to build broken loaders from)
]]
local torch = require "torch"
local nn, optim = torch.nn, torch.optim

local M = {}

-- N samples of D features around C class centres (separable): x float32 (N, D), y int64 (N).
function M.blobs(N, D, C, seed, probs)
  torch.manual_seed(seed or 1)
  local centres = torch.randn(C, D) * 3
  local y
  if probs then
    y = torch.multinomial(torch.tensor(probs, { dtype = torch.float64 }), N, { replacement = true })
  else
    y = torch.randint(C, { N })
  end
  local x = centres:index_select(0, y) + torch.randn(N, D)
  return x, y
end

-- batches of size bs over (x, y), as an array of {x, y}
function M.batches(x, y, bs)
  local out = {}
  for s = 0, x:size(0) - 1, bs do
    local len = math.min(bs, x:size(0) - s)
    out[#out + 1] = { x:narrow(0, s, len), y:narrow(0, s, len) }
  end
  return out
end

local function merge(base, over)
  for k, v in pairs(over or {}) do base[k] = v end
  return base
end

function M.classification(over)
  local x, y = M.blobs(512, 8, 4, 1)
  local vx, vy = M.blobs(256, 8, 4, 2)
  return merge({
    data = { x = x, y = y },
    model = function() return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4)) end,
    loss_fn = nn.CrossEntropyLoss(),
    optimizer = function(params) return optim.Adam(params, { lr = 1e-2 }) end,
    train_loader = function() return M.batches(x, y, 64) end,
    val_loader = function() return M.batches(vx, vy, 64) end,
    task = "classification", num_classes = 4, epochs = 5,
  }, over)
end

-- binary with a positive rate of `p`; targets float32 (N, 1) like the (N, 1) logits
function M.binary(p, over)
  local x, y = M.blobs(512, 8, 2, 3, { 1 - p, p })
  local yf = y:float():unsqueeze(1)
  return merge({
    data = { x = x, y = yf },
    model = function() return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)) end,
    loss_fn = nn.BCEWithLogitsLoss(),
    optimizer = function(params) return optim.Adam(params, { lr = 1e-2 }) end,
    train_loader = function() return M.batches(x, yf, 64) end,
    task = "binary",
  }, over)
end

-- regression y = x w + offset + noise, targets (N, 1)
function M.regression(offset, over)
  torch.manual_seed(4)
  local x = torch.randn(512, 8)
  local w = torch.randn(8, 1)
  local y = x:matmul(w) + offset + torch.randn(512, 1) * 0.1
  return merge({
    data = { x = x, y = y },
    model = function() return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)) end,
    loss_fn = nn.MSELoss(),
    optimizer = function(params) return optim.Adam(params, { lr = 1e-2 }) end,
    train_loader = function() return M.batches(x, y, 64) end,
    task = "regression",
  }, over)
end

-- a custom module: forward returns fn(self, x)
function M.custom(name, init, forward)
  local cls = nn.Module:extend(name)
  cls.__init = init
  cls.forward = forward
  return cls
end

M.quiet = { quiet = true, out_dir = false }
return M
