-- spec/doctor/doctor_spec.lua — torch.doctor names each planted training bug, and stays quiet on
-- correct setups. Synthetic data (spec/doctor/fixtures.lua), a few seconds in all.
local torch = require "torch"
local doctor = require "torch.doctor"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional
local fx = dofile("spec/doctor/fixtures.lua")

local function run(setup, opts)
  local o = { quiet = true, out_dir = false }
  for k, v in pairs(opts or {}) do o[k] = v end
  return doctor.run(setup, o)
end

local function verdict(report, id)
  local f = report:get(id)
  assert(f, "no finding " .. id)
  return f.verdict
end

local function not_flagged(report)
  local bad = {}
  for _, f in ipairs(report.findings) do
    if f.verdict == "fail" or f.verdict == "warn" then bad[#bad + 1] = f.id .. ": " .. f.title .. " " .. tostring(f.evidence) end
  end
  return bad
end

describe("torch.doctor on correct setups", function()
  it("raises no alarm on a correct classifier", function()
    local r = run(fx.classification())
    assert.are.same({}, not_flagged(r))
    assert.is_true(r.ok)
    assert.are.equal("ok", verdict(r, "init_loss"))
    assert.are.equal("ok", verdict(r, "overfit_batch"))
    assert.are.equal("ok", verdict(r, "input_independent"))
    assert.are.equal("ok", verdict(r, "split_leak"))
  end)

  it("raises no alarm on a correct regression with centred targets", function()
    local r = run(fx.regression(0))
    assert.are.same({}, not_flagged(r))
  end)

  it("raises no alarm on a balanced binary task", function()
    local r = run(fx.binary(0.5))
    assert.are.same({}, not_flagged(r))
  end)

  it("accepts a train_step that zeroes grads and a schedule that fits", function()
    local r = run(fx.classification({
      train_step = function(model, x, y, loss_fn, opt)
        opt:zero_grad(); local l = loss_fn(model(x), y); l:backward(); opt:step(); return l
      end,
      scheduler = function(opt) return optim.lr_scheduler.CosineAnnealingLR(opt, 5) end,
    }))
    assert.are.equal("ok", verdict(r, "zero_grad"))
    assert.are.equal("ok", verdict(r, "lr_schedule"))
  end)
end)

describe("torch.doctor on correct setups with their own conventions", function()
  it("accepts a loss function that reshapes the output itself (the recipe's binary loss)", function()
    local bce = nn.BCEWithLogitsLoss()
    local s = fx.binary(0.5, { loss_fn = function(out, y) return bce(out:view(-1), y) end })
    local x, y = s.data.x, s.data.y:view(-1)
    s.train_loader = function() return fx.batches(x, y, 64) end
    local r = run(s)
    assert.are.same({}, not_flagged(r))
  end)

  it("accepts an output bias that already holds the log-prior (no init_loss or output_bias alarm)", function()
    local p = 0.05
    local s = fx.binary(p)
    local build = s.model
    s.model = function()
      local m = build()
      torch.no_grad(function() m:get(2).bias:fill_(math.log(p / (1 - p))) end)
      return m
    end
    local r = run(s, { checks = { "init_loss", "output_bias" } })
    assert.are.same({}, not_flagged(r))
    assert.matches("already fits", r:get("output_bias").title)
  end)
end)

describe("torch.doctor finds planted bugs", function()
  it("softmax before cross_entropy", function()
    local r = run(fx.classification({
      model = function() return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4), nn.Softmax(1)) end,
    }))
    assert.are.equal("fail", verdict(r, "softmax_before_loss"))
    assert.matches("sums to 1", r:get("softmax_before_loss").evidence)
  end)

  it("a bad head init (loss at init far above -log(1/C))", function()
    local r = run(fx.classification({
      model = function()
        local m = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
        torch.no_grad(function() m:get(2).weight:mul_(60) end)
        return m
      end,
    }), { checks = { "init_loss" } })
    assert.are.equal("fail", verdict(r, "init_loss"))
    assert.matches("1.386", r:get("init_loss").evidence, 1, true)
  end)

  it("1-based labels", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    local y1 = y + 1
    s.train_loader = function() return fx.batches(x, y1, 64) end
    local r = run(s)
    assert.are.equal("fail", verdict(r, "target_format"))
    assert.matches("1%-based", r:get("target_format").evidence)
    assert.is_false(r.ok)
  end)

  it("float targets given to cross_entropy as class indices of the wrong shape", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    s.train_loader = function() return fx.batches(x, y:float(), 64) end
    local r = run(s)
    assert.are.equal("fail", verdict(r, "target_format"))
  end)

  it("(N, 1) outputs against (N) regression targets", function()
    local s = fx.regression(0); local x, y = s.data.x, s.data.y
    local flat = y:squeeze(1)
    s.train_loader = function() return fx.batches(x, flat, 64) end
    local r = run(s)
    assert.are.equal("fail", verdict(r, "target_format"))
    assert.matches("broadcast", r:get("target_format").evidence)
  end)

  it("a model that ignores its inputs (input-independent, cannot overfit)", function()
    local Blind = fx.custom("Blind", function(self) self.fc = nn.Linear(8, 4) end,
      function(self, x) return self.fc(x * 0) end)
    local r = run(fx.classification({ model = function() return Blind() end }))
    assert.are.equal("fail", verdict(r, "input_independent"))
    assert.are.equal("fail", verdict(r, "overfit_batch"))
    -- neither the labels nor the LR are to blame: the baseline failure stays unexplained
    assert.is_nil(r:get("input_independent").explained_by)
    assert.are_not.equal("fail", verdict(r, "label_alignment"))
    assert.are_not.equal("fail", verdict(r, "learning_rate"))
  end)

  it("labels unrelated to the inputs (shuffled separately)", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    torch.manual_seed(9)
    local ys = y:index_select(0, torch.randperm(y:size(0)))
    s.train_loader = function() return fx.batches(x, ys, 64) end
    local r = run(s)
    assert.are.equal("label_alignment", r.cause.id)
    -- the input-independence probe is not a second failure: explained by the cause, or undecided
    local ii = r:get("input_independent")
    assert.is_true(ii.explained_by == "label_alignment" or ii.verdict == "inconclusive", tostring(ii.verdict))
    assert.matches("shuffled, sorted or filtered separately", r.cause.cause, 1, true)
    assert.are.equal(1, r.failed)
  end)

  it("NaN in the inputs", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    local xn = x:clone()
    xn[{ 5, 2 }] = 0 / 0
    s.train_loader = function() return fx.batches(xn, y, 64) end
    local r = run(s, { checks = { "nonfinite" } })
    assert.are.equal("fail", verdict(r, "nonfinite"))
    assert.matches("batch 0 inputs", r:get("nonfinite").evidence)
  end)

  it("NaN/Inf in a gradient (sqrt at 0)", function()
    local Sqrt = fx.custom("SqrtGate", function(self)
      self.fc = nn.Linear(8, 4); self.s = nn.Parameter(torch.zeros(1))
    end, function(self, x) return self.fc(x) * self.s:sqrt() end)
    local r = run(fx.classification({ model = function() return Sqrt() end }), { checks = { "nonfinite", "grad_flow" } })
    assert.are.equal("fail", verdict(r, "nonfinite"))
    assert.matches("grad of s", r:get("nonfinite").evidence, 1, true)
    assert.are.equal("fail", verdict(r, "grad_flow"))
  end)

  it("dropout left active in eval mode", function()
    local Leaky = fx.custom("LeakyDrop", function(self)
      self.fc1 = nn.Linear(8, 32); self.fc2 = nn.Linear(32, 4)
    end, function(self, x) return self.fc2(F.dropout(self.fc1(x):relu(), 0.5, true)) end)
    local r = run(fx.classification({ model = function() return Leaky() end }), { checks = { "eval_mode" } })
    assert.are.equal("fail", verdict(r, "eval_mode"))
  end)

  it("a correct Dropout/BatchNorm model passes the eval check", function()
    local r = run(fx.classification({ model = function()
      return nn.Sequential(nn.Linear(8, 32, { bias = false }), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 4))
    end }), { checks = { "eval_mode", "bn_after_bias" } })
    assert.are.equal("ok", verdict(r, "eval_mode"))
    assert.are.equal("ok", verdict(r, "bn_after_bias"))
  end)

  it("an evaluation function that forgets model:eval()", function()
    local model = function()
      return nn.Sequential(nn.Linear(8, 32, { bias = false }), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    end
    local r = run(fx.classification({ model = model, evaluate = function(m, x) return m(x) end }),
      { checks = { "eval_mode" } })
    assert.are.equal("fail", verdict(r, "eval_mode"))
    assert.matches("evaluation runs in training mode", r:get("eval_mode").title)
    r = run(fx.classification({ model = model, evaluate = function(m, x) m:eval(); return m(x) end }),
      { checks = { "eval_mode" } })
    assert.are.equal("ok", verdict(r, "eval_mode"))
  end)

  it("a missing zero_grad in the user's train_step", function()
    local r = run(fx.classification({
      train_step = function(model, x, y, loss_fn, opt)
        local l = loss_fn(model(x), y); l:backward(); opt:step(); return l
      end,
    }), { checks = { "zero_grad" } })
    assert.are.equal("fail", verdict(r, "zero_grad"))
  end)

  it("training in eval mode, in the setup form (as the plain-script form catches it)", function()
    local net = function()
      return nn.Sequential(nn.Linear(8, 32, { bias = false }), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    end
    local step = function(model, x, y, loss_fn, opt)
      opt:zero_grad(); local l = loss_fn(model(x), y); l:backward(); opt:step(); return l
    end
    -- model:eval() in the factory, a train_step that never calls model:train()
    local r = run(fx.classification({ model = function() return net():eval() end, train_step = step }),
      { checks = { "train_mode" } })
    assert.are.equal("fail", verdict(r, "train_mode"))
    assert.matches("3 of 3 optimizer steps", r:get("train_mode").evidence)
    assert.are.equal("train_mode", r.cause.id)
    -- model:eval() inside the user's step
    r = run(fx.classification({ model = net, train_step = function(m, ...) m:eval(); return step(m, ...) end }),
      { checks = { "train_mode" } })
    assert.are.equal("fail", verdict(r, "train_mode"))
    -- handed over in eval mode, no train_step
    r = run(fx.classification({ model = function() return net():eval() end }), { checks = { "train_mode" } })
    assert.are.equal("fail", verdict(r, "train_mode"))
    -- the correct twins
    r = run(fx.classification({ model = function() return net():eval() end,
      train_step = function(m, ...) m:train(); return step(m, ...) end }), { checks = { "train_mode" } })
    assert.are.equal("ok", verdict(r, "train_mode"))
    r = run(fx.classification({ model = net, train_step = step }), { checks = { "train_mode" } })
    assert.are.equal("ok", verdict(r, "train_mode"))
  end)

  it("BatchNorm after a biased Linear", function()
    local r = run(fx.classification({ model = function()
      return nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4))
    end }), { checks = { "bn_after_bias" } })
    assert.are.equal("warn", verdict(r, "bn_after_bias"))
    assert.matches("0 %(Linear%) %-> 1", r:get("bn_after_bias").evidence)
  end)

  it("a layer outside the loss's path (grad flow)", function()
    local Unused = fx.custom("Unused", function(self)
      self.fc = nn.Linear(8, 4); self.extra = nn.Linear(8, 8)
    end, function(self, x) return self.fc(x) end)
    local r = run(fx.classification({ model = function() return Unused() end }), { checks = { "grad_flow" } })
    assert.are.equal("fail", verdict(r, "grad_flow"))
    assert.matches("extra.weight no grad", r:get("grad_flow").evidence, 1, true)
  end)

  it("an imbalanced binary task whose model learns the prior in its first steps is advised, not warned", function()
    -- the bias lowers the early loss, but without it the model has caught up by the last steps
    local r = run(fx.binary(0.08), { fix = true })
    assert.are.equal("ok", verdict(r, "output_bias"))
    assert.is_nil(r.fix_bias)
    -- the evidence shows the first-steps and last-steps loss with and without
    assert.matches("as is, [%d.]+ with the bias; last 5 steps: [%d.e-]+ as is", r:get("output_bias").evidence)
  end)

  it("an imbalanced multiclass task needs log-prior biases; apply_bias sets them", function()
    local x, y = fx.blobs(512, 8, 4, 5, { 0.85, 0.05, 0.05, 0.05 })
    local r = run(fx.classification({ train_loader = function() return fx.batches(x, y, 64) end }),
      { checks = { "output_bias" }, fix = true })
    assert.are.equal("warn", verdict(r, "output_bias"))
    assert.are.equal(4, #r.fix_bias)
    assert.is_true(r.fix_bias[1] > r.fix_bias[2] + 2)
    local m = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    assert.are.equal("2", doctor.apply_bias(m, r.fix_bias))
    assert.is_true(math.abs(m:get(2).bias[0]:item() - r.fix_bias[1]) < 1e-5)
  end)

  it("a regression target with mean 50 needs the output bias", function()
    local r = run(fx.regression(50), { checks = { "output_bias" } })
    assert.are.equal("warn", verdict(r, "output_bias"))
    local ev = r:get("output_bias").evidence
    local plain, fixed = ev:match("([%d.e+]+) as is, ([%d.e+]+) with the bias")
    assert.is_true(tonumber(fixed) < tonumber(plain), ev)
  end)

  it("an LR schedule with milestones beyond the run / decaying to ~0 early", function()
    local r = run(fx.classification({
      epochs = 10,
      scheduler = function(opt) return optim.lr_scheduler.MultiStepLR(opt, { 30, 60 }) end,
    }), { checks = { "lr_schedule" } })
    assert.are.equal("warn", verdict(r, "lr_schedule"))
    assert.matches("milestones 30, 60", r:get("lr_schedule").evidence)
    r = run(fx.classification({
      epochs = 20,
      scheduler = function(opt) return optim.lr_scheduler.StepLR(opt, 2, { gamma = 0.1 }) end,
    }), { checks = { "lr_schedule" } })
    assert.are.equal("warn", verdict(r, "lr_schedule"))
    assert.matches("below 1%% of its start", r:get("lr_schedule").evidence)
  end)

  it("validation samples copied from train, and duplicates", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    s.val_loader = function() return fx.batches(x:narrow(0, 0, 128), y:narrow(0, 0, 128), 64) end
    local r = run(s, { checks = { "split_leak" } })
    assert.are.equal("fail", verdict(r, "split_leak"))
    assert.matches("128 also in train", r:get("split_leak").evidence)
    local xd = torch.cat({ x:narrow(0, 0, 256), x:narrow(0, 0, 256) })
    local yd = torch.cat({ y:narrow(0, 0, 256), y:narrow(0, 0, 256) })
    s.train_loader = function() return fx.batches(xd, yd, 64) end
    s.val_loader = nil
    r = run(s, { checks = { "split_leak" } })
    assert.are.equal("fail", verdict(r, "split_leak"))
    assert.matches("256 exact duplicates", r:get("split_leak").evidence)
  end)
end)

describe("torch.doctor tells apart the causes of an input-independent model", function()
  it("a learning rate too small: the loss barely moves, a larger LR fits", function()
    local r = run(fx.classification({ optimizer = function(p) return optim.SGD(p, { lr = 1e-12 }) end }))
    assert.are.equal("learning_rate", r.cause.id)
    assert.matches("too small", r.cause.title)
    assert.matches("1e%-02: ", r.cause.evidence)                 -- the sweep's numbers
    assert.are.equal("learning_rate", r:get("overfit_batch").explained_by)
    assert.are_not.equal("fail", verdict(r, "label_alignment"))  -- not blamed on the labels
    assert.are.equal(1, r.failed)
  end)

  it("constant inputs: every sample of a batch is the same tensor", function()
    local s = fx.classification(); local y = s.data.y
    local zeros = torch.zeros(512, 8)
    s.train_loader = function() return fx.batches(zeros, y, 64) end
    s.val_loader = nil
    local r = run(s)
    assert.are.equal("input_pipeline", r.cause.id)
    assert.matches("all zero", r.cause.evidence)
    assert.are.equal("input_pipeline", r:get("input_independent").explained_by)
    assert.are.equal(1, r.failed)
  end)

  it("a clean twin passes all three (inputs vary, the LR trains, labels beat shuffled ones)", function()
    local r = run(fx.classification(), { checks = { "input_pipeline", "overfit_batch", "learning_rate",
      "input_independent", "label_alignment" } })
    for _, id in ipairs({ "input_pipeline", "learning_rate", "label_alignment" }) do
      assert.are.equal("ok", verdict(r, id), id)
    end
    assert.is_nil(r.cause)
  end)
end)

describe("torch.doctor loss coverage", function()
  it("flags an ignore_index that is a real class, and passes padding-only ignore_index", function()
    local r = run(fx.classification({ loss_fn = nn.CrossEntropyLoss({ ignore_index = 0 }) }),
      { checks = { "loss_coverage" } })
    assert.are.equal("fail", verdict(r, "loss_coverage"))
    assert.matches("class 0 is ignored", r:get("loss_coverage").evidence)
    r = run(fx.classification(), { checks = { "loss_coverage" } })
    assert.are.equal("ok", verdict(r, "loss_coverage"))
  end)
end)

describe("torch.doctor batch view", function()
  it("writes an image grid PNG for image inputs, with labels", function()
    torch.manual_seed(0)
    local x, y = torch.rand(32, 1, 12, 12), torch.randint(3, { 32 })
    local dir = os.tmpname(); os.remove(dir)
    local r = doctor.run({
      model = function() return nn.Sequential(nn.Flatten(), nn.Linear(144, 3)) end,
      loss_fn = nn.CrossEntropyLoss(),
      train_loader = function() return fx.batches(x, y, 16) end,
    }, { quiet = true, out_dir = dir, checks = { "batch_view" } })
    local f = r:get("batch_view")
    assert.matches("written to", f.evidence)
    assert.matches("labels row 1:", f.evidence)
    local img = require "torch.data.image"
    local png = img.read(dir .. "/batch.png")
    assert.are.equal(2 * 14, png:size(0))      -- 16 images: 2 rows x 8 columns of 12 + 2 pixels
    assert.are.equal(8 * 14, png:size(1))
    os.remove(dir .. "/batch.png"); os.remove(dir)
  end)

  it("decodes text inputs with setup.decode and summarises tabular ones", function()
    local s = fx.classification({ decode = function(row) return "row of " .. row:numel() end })
    local r = run(s, { checks = { "batch_view" } })
    assert.matches("row of 8", r:get("batch_view").evidence)
    r = run(fx.classification(), { checks = { "batch_view" } })
    assert.matches("features: mean", r:get("batch_view").evidence)
  end)
end)

describe("torch.doctor setup protocol", function()
  it("rejects an incomplete setup with a clear message", function()
    assert.has_error(function() doctor.run({ model = function() end }, fx.quiet) end,
      "doctor: setup is missing loss_fn, train_loader (see torch.doctor.setup for the protocol)")
  end)

  it("accepts a builder returning a torch.utils.data.DataLoader", function()
    local s = fx.classification()
    local data = torch.utils.data
    s.train_loader = function()
      return data.DataLoader(data.TensorDataset(s.data.x, s.data.y), { batch_size = 64, shuffle = true, generator = 0 })
    end
    local r = run(s)
    assert.are.same({}, not_flagged(r))
  end)

  it("accepts an iterator function and a script path", function()
    local s = fx.classification(); local x, y = s.data.x, s.data.y
    local bs = fx.batches(x, y, 64)
    s.train_loader = function() local i = 0; return function() i = i + 1; return bs[i] end end
    local r = run(s, { checks = { "init_loss" } })
    assert.are.equal("ok", verdict(r, "init_loss"))
    local path = os.tmpname()
    local f = io.open(path, "w")
    f:write([[local fx = dofile("spec/doctor/fixtures.lua"); return fx.classification()]])
    f:close()
    r = run(path, { checks = { "init_loss" } })
    assert.are.equal("ok", verdict(r, "init_loss"))
    os.remove(path)
  end)
end)

describe("torch.doctor LR schedules stepped per batch", function()
  it("plans OneCycleLR over epochs x batches and finds it fits", function()
    local r = doctor.run(fx.classification({
      epochs = 3, scheduler_step = "step",
      scheduler = function(opt)
        return optim.lr_scheduler.OneCycleLR(opt, 0.01, { total_steps = 24 })
      end,
    }), { quiet = true, out_dir = false, checks = { "lr_schedule" } })
    local f = r:get("lr_schedule")
    assert.are.equal("ok", f.verdict, f.evidence)
    assert.matches("24 steps", f.evidence)
  end)

  it("flags a per-batch cosine whose T_max counts epochs (LR at ~0 after the first epoch)", function()
    local r = doctor.run(fx.classification({
      epochs = 10, scheduler_step = "step", steps_per_epoch = 100,
      scheduler = function(opt) return optim.lr_scheduler.CosineAnnealingLR(opt, 10) end,
    }), { quiet = true, out_dir = false, checks = { "lr_schedule" } })
    assert.are.equal("warn", r:get("lr_schedule").verdict)
    assert.matches("T_max 10 < the planned 1000 steps", r:get("lr_schedule").evidence)
  end)
end)

describe("torch.doctor on token inputs and ignored labels", function()
  it("handles an embedding classifier with ignore_index labels", function()
    torch.manual_seed(3)
    local x = torch.randint(50, { 256, 12 })
    local y = x:select(1, 0):remainder(3)          -- label = first token mod 3 (learnable)
    y[{ 5 }] = -100
    local Bag = fx.custom("Bag", function(self) self.emb = nn.Embedding(50, 16); self.fc = nn.Linear(16, 3) end,
      function(self, t) return self.fc(self.emb(t):select(1, 0)) end)
    local r = run({
      model = function() return Bag() end, loss_fn = nn.CrossEntropyLoss(),
      optimizer = function(p) return optim.Adam(p, { lr = 3e-2 }) end,
      train_loader = function() return fx.batches(x, y, 32) end, task = "classification", num_classes = 3,
    })
    assert.are.equal("ok", verdict(r, "target_format"))
    assert.are.equal("ok", verdict(r, "input_independent"))
    assert.matches("integer inputs", r:get("batch_view").evidence)
  end)
end)

describe("torch.doctor leaves the caller's state alone", function()
  it("restores the global RNG state and rejects non-tensor model outputs clearly", function()
    local s = fx.classification()          -- (the fixture seeds its own data)
    torch.manual_seed(123)
    local expect = torch.rand(3)
    torch.manual_seed(123)
    run(s, { checks = { "init_loss", "overfit_batch" } })
    assert.is_true(torch.equal(expect, torch.rand(3)))
    local Tup = fx.custom("Tup", function(self) self.fc = nn.Linear(8, 4) end,
      function(self, x) return { logits = self.fc(x) } end)
    assert.has_error(function() run(fx.classification({ model = function() return Tup() end })) end,
      "doctor: model(x) must return a tensor of outputs, got a table (wrap the model so it returns the logits/predictions the loss takes)")
  end)
end)
