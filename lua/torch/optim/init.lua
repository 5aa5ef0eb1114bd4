--[[
  torch.optim — optimizers and learning-rate schedulers with PyTorch 2.11's names, options and
  numerics (https://pytorch.org/docs/2.11/optim.html). One optimizer family per file; this one
  only gathers them.

      local optim = torch.optim                -- or require "torch.optim"
      local opt = optim.AdamW(model:parameters(), {lr = 3e-4, weight_decay = 0.01})
      local sched = optim.lr_scheduler.CosineAnnealingLR(opt, 100)
      for step = 1, 100 do
        opt:zero_grad(); loss_fn():backward(); opt:step(); sched:step()
      end

  Optimizers: SGD, Adam, AdamW, RMSprop, Adagrad (base class: Optimizer). Each update is also a
  plain function (optim.functional.sgd, .adam, .rmsprop, .adagrad) with the algorithm in its
  doc comment. Schedulers: see lua/torch/optim/lr_scheduler.lua.
]]
local base = require "torch.optim.optimizer"
local sgd = require "torch.optim.sgd"
local adam = require "torch.optim.adam"
local rmsprop = require "torch.optim.rmsprop"
local adagrad = require "torch.optim.adagrad"

return {
  Optimizer = base.Optimizer,
  SGD = sgd.SGD,
  Adam = adam.Adam,
  AdamW = adam.AdamW,
  RMSprop = rmsprop.RMSprop,
  Adagrad = adagrad.Adagrad,
  functional = { sgd = sgd.sgd, adam = adam.adam, rmsprop = rmsprop.rmsprop, adagrad = adagrad.adagrad },
  lr_scheduler = require "torch.optim.lr_scheduler",
}
