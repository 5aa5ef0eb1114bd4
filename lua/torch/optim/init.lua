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

  Optimizers: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop,
  Adafactor, Muon, LBFGS, SparseAdam (base class: Optimizer). Each update is also a plain function
  (optim.functional.sgd, .adam, ...; LBFGS's is .lbfgs(opt, closure)) with the algorithm in its
  doc comment. Schedulers: see lua/torch/optim/lr_scheduler.lua.
]]
local base = require "torch.optim.optimizer"
local sgd = require "torch.optim.sgd"
local adam = require "torch.optim.adam"
local rmsprop = require "torch.optim.rmsprop"
local adagrad = require "torch.optim.adagrad"
local adadelta = require "torch.optim.adadelta"
local adamax = require "torch.optim.adamax"
local nadam = require "torch.optim.nadam"
local radam = require "torch.optim.radam"
local asgd = require "torch.optim.asgd"
local rprop = require "torch.optim.rprop"
local adafactor = require "torch.optim.adafactor"
local muon = require "torch.optim.muon"
local lbfgs = require "torch.optim.lbfgs"
local sparse_adam = require "torch.optim.sparse_adam"

local optim = {
  Optimizer = base.Optimizer,
  SGD = sgd.SGD,
  Adam = adam.Adam,
  AdamW = adam.AdamW,
  RMSprop = rmsprop.RMSprop,
  Adagrad = adagrad.Adagrad,
  Adadelta = adadelta.Adadelta,
  Adamax = adamax.Adamax,
  NAdam = nadam.NAdam,
  RAdam = radam.RAdam,
  ASGD = asgd.ASGD,
  Rprop = rprop.Rprop,
  Adafactor = adafactor.Adafactor,
  Muon = muon.Muon,
  LBFGS = lbfgs.LBFGS,
  SparseAdam = sparse_adam.SparseAdam,
  functional = { sgd = sgd.sgd, adam = adam.adam, rmsprop = rmsprop.rmsprop, adagrad = adagrad.adagrad,
    adadelta = adadelta.adadelta, adamax = adamax.adamax, nadam = nadam.nadam, radam = radam.radam,
    asgd = asgd.asgd, rprop = rprop.rprop, adafactor = adafactor.adafactor, muon = muon.muon,
    lbfgs = lbfgs.lbfgs, sparse_adam = sparse_adam.sparse_adam },
}
-- optim.lr_scheduler is loaded at its first use: loaded with the optimizers, its ~20 schedulers
-- kept ~100 KB more of Lua heap alive in every script that trains without one, and each
-- collector cycle marks the whole heap (docs/PERFORMANCE.md, optimisation 31).
return setmetatable(optim, { __index = function(t, k)
  if k ~= "lr_scheduler" then return nil end
  local schedulers = require "torch.optim.lr_scheduler"
  rawset(t, k, schedulers)
  return schedulers
end })
