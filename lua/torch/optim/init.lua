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
local lazy = require "torch._lazy_namespace"

-- Each file loads at the first read of one of its names (optim.AdamW loads torch.optim.adam):
-- a script keeps only the optimizers it uses in its Lua heap, which every collector cycle marks
-- (torch._lazy_namespace; docs/PERFORMANCE.md, optimisations 31 and 33). The index is checked
-- against the files by spec/torch/lazy_namespace_spec.lua.
local files = {   -- { module, its optimizer classes, its update function }
  { "torch.optim.optimizer", { "Optimizer" } },
  { "torch.optim.sgd", { "SGD" }, "sgd" },
  { "torch.optim.adam", { "Adam", "AdamW" }, "adam" },
  { "torch.optim.rmsprop", { "RMSprop" }, "rmsprop" },
  { "torch.optim.adagrad", { "Adagrad" }, "adagrad" },
  { "torch.optim.adadelta", { "Adadelta" }, "adadelta" },
  { "torch.optim.adamax", { "Adamax" }, "adamax" },
  { "torch.optim.nadam", { "NAdam" }, "nadam" },
  { "torch.optim.radam", { "RAdam" }, "radam" },
  { "torch.optim.asgd", { "ASGD" }, "asgd" },
  { "torch.optim.rprop", { "Rprop" }, "rprop" },
  { "torch.optim.adafactor", { "Adafactor" }, "adafactor" },
  { "torch.optim.muon", { "Muon" }, "muon" },
  { "torch.optim.lbfgs", { "LBFGS" }, "lbfgs" },
  { "torch.optim.sparse_adam", { "SparseAdam" }, "sparse_adam" },
}
local classes, functions = {}, {}
for _, f in ipairs(files) do
  classes[#classes + 1] = { f[1], f[2] }
  if f[3] then functions[#functions + 1] = { f[1], { f[3] } } end
end

-- optim.functional: each update as a plain function (optim.functional.adam, ...)
local functional = lazy.install({}, { name = "torch.optim.functional", parts = functions })

return lazy.install({ functional = functional }, {
  name = "torch.optim",
  parts = classes,
  fields = { lr_scheduler = "torch.optim.lr_scheduler" },   -- ~20 schedulers, loaded at first use too
})
