-- spec/doctor/corpus/fashion_mlp.lua — a correct training script (doctor corpus) on real images:
-- Fashion-MNIST (Debian dataset-fashion-mnist; scripts/setup.sh installs it), 3000 images of the
-- 10000-image test file split 2000 / 1000 (train / validation) to stay fast, pixels scaled to
-- [0, 1] and normalised with the dataset's mean and std, flattened; a two-layer MLP with dropout,
-- SGD with Nesterov momentum, a StepLR schedule, batches of 50 from a DataLoader.
-- Passes alone when the validation accuracy is above 0.72 (chance: 0.1).
local torch = require "torch"
local nn, F, data = torch.nn, torch.nn.functional, torch.utils.data
local fmnist = require "torch.data.fashion_mnist_files"

local images, labels = fmnist.load("test")
local x = (images:narrow(0, 0, 3000):float() / 255 - 0.2860) / 0.3530
x = x:flatten(1)
local y = labels:narrow(0, 0, 3000)
local xtr, ytr, xva, yva = x:narrow(0, 0, 2000), y:narrow(0, 0, 2000), x:narrow(0, 2000, 1000), y:narrow(0, 2000, 1000)

torch.manual_seed(41)
local train = data.DataLoader(data.TensorDataset(xtr, ytr), { batch_size = 50, shuffle = true, generator = 0 })
local model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 10))
local opt = torch.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9, nesterov = true })
local sched = torch.optim.lr_scheduler.StepLR(opt, 4, { gamma = 0.5 })
local acc
for epoch = 1, 8 do
  model:train()
  for batch in train:iter() do
    opt:zero_grad()
    local loss = F.cross_entropy(model(batch[1]), batch[2])
    loss:backward()
    opt:step()
  end
  sched:step()
  model:eval()
  acc = torch.no_grad(function() return model(xva):argmax(1):eq(yva):float():mean():item() end)
  print(("epoch %d: val accuracy %.3f"):format(epoch, acc))
end
assert(acc > 0.72, "fashion_mlp did not train")
