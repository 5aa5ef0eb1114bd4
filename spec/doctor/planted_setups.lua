--[[
  spec/doctor/planted_setups.lua — the planted-bug suite in the setup-table form (the protocol of
  torch.doctor.setup): one training bug each, on the synthetic data of spec/doctor/fixtures.lua,
  with the check that must name it; and the correct setups beside them. The doctor specs check
  single cases in detail (spec/doctor/doctor_spec.lua); tools/doctor_calibration.lua runs every
  case here through the whole doctor for the outcome and calibration tables.

    local cases = dofile("spec/doctor/planted_setups.lua")
    for _, c in ipairs(cases) do local setup = c.build(); ... c.expect ... end  -- expect nil: correct
  c.also lists other checks whose FAIL/WARN is a true statement about that bug (not a false alarm).
]]
local torch = require "torch"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional
local fx = dofile("spec/doctor/fixtures.lua")

local function step(model, x, y, loss_fn, opt)
  opt:zero_grad(); local l = loss_fn(model(x), y); l:backward(); opt:step(); return l
end

local function bn_net()
  return nn.Sequential(nn.Linear(8, 32, { bias = false }), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
end

local function with_loader(s, x, y)
  s.train_loader = function() return fx.batches(x, y, 64) end
  return s
end

return {
  { name = "softmax_ce", expect = "softmax_before_loss", build = function()
    return fx.classification({ model = function()
      return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4), nn.Softmax(1)) end })
  end },
  { name = "bad_head_init", expect = "init_loss", build = function()
    return fx.classification({ model = function()
      local m = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
      torch.no_grad(function() m:get(2).weight:mul_(60) end)
      return m
    end })
  end },
  { name = "one_based_labels", expect = "target_format", build = function()
    local s = fx.classification(); return with_loader(s, s.data.x, s.data.y + 1)
  end },
  { name = "mse_shape", expect = "target_format", build = function()
    local s = fx.regression(0); return with_loader(s, s.data.x, s.data.y:squeeze(1))
  end },
  -- the blind model's weights get no gradient and it cannot fit one batch: true findings too
  { name = "blind_model", expect = "input_independent", also = { "grad_flow", "overfit_batch" }, build = function()
    local Blind = fx.custom("Blind", function(self) self.fc = nn.Linear(8, 4) end,
      function(self, x) return self.fc(x * 0) end)
    return fx.classification({ model = function() return Blind() end })
  end },
  { name = "shuffled_labels", expect = "label_alignment", build = function()
    local s = fx.classification()
    torch.manual_seed(9)
    return with_loader(s, s.data.x, s.data.y:index_select(0, torch.randperm(s.data.y:size(0))))
  end },
  { name = "nan_input", expect = "nonfinite", build = function()
    local s = fx.classification()
    local xn = s.data.x:clone(); xn[{ 5, 2 }] = 0 / 0
    return with_loader(s, xn, s.data.y)
  end },
  { name = "dropout_in_eval", expect = "eval_mode", build = function()
    local Leaky = fx.custom("LeakyDrop", function(self)
      self.fc1 = nn.Linear(8, 32); self.fc2 = nn.Linear(32, 4)
    end, function(self, x) return self.fc2(F.dropout(self.fc1(x):relu(), 0.5, true)) end)
    return fx.classification({ model = function() return Leaky() end })
  end },
  { name = "evaluate_in_train", expect = "eval_mode", build = function()
    return fx.classification({ model = bn_net, evaluate = function(m, x) return m(x) end })
  end },
  { name = "no_zero_grad", expect = "zero_grad", build = function()
    return fx.classification({ train_step = function(model, x, y, loss_fn, opt)
      local l = loss_fn(model(x), y); l:backward(); opt:step(); return l
    end })
  end },
  { name = "eval_mode_training", expect = "train_mode", build = function()
    return fx.classification({ model = function() return bn_net():eval() end, train_step = step })
  end },
  { name = "tiny_lr", expect = "learning_rate", build = function()
    return fx.classification({ optimizer = function(p) return optim.SGD(p, { lr = 1e-12 }) end })
  end },
  { name = "constant_inputs", expect = "input_pipeline", build = function()
    local s = fx.classification(); s.val_loader = nil
    return with_loader(s, torch.zeros(512, 8), s.data.y)
  end },
  { name = "ignored_class", expect = "loss_coverage", build = function()
    return fx.classification({ loss_fn = nn.CrossEntropyLoss({ ignore_index = 0 }) })
  end },
  { name = "val_from_train", expect = "split_leak", build = function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    s.val_loader = function() return fx.batches(x:narrow(0, 0, 128), y:narrow(0, 0, 128), 64) end
    return s
  end },
  { name = "correct_classifier", build = function() return fx.classification() end },
  { name = "correct_regression", build = function() return fx.regression(0) end },
  { name = "correct_binary", build = function() return fx.binary(0.5) end },
  { name = "correct_bn_dropout", build = function() return fx.classification({ model = bn_net, train_step = step }) end },
}
