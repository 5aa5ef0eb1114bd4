-- spec/doctor/plain_spec.lua — torch.doctor on ordinary training scripts (spec/doctor/plain/*.lua):
-- each planted bug is named as the most likely cause, with no unexplained FAIL beside it, and the
-- clean twins (an MLP, a CNN with BatchNorm/dropout/StepLR, a regression) raise no alarm. Each
-- script is a few seconds of synthetic data; doctor runs it at its default step budget.
local doctor = require "torch.doctor"

local reports = {}
local function run(name)
  reports[name] = reports[name] or doctor.run("spec/doctor/plain/" .. name .. ".lua", { quiet = true, out_dir = false })
  return reports[name]
end

local function alarms(r)
  local out = {}
  for _, f in ipairs(r.findings) do
    if (f.verdict == "fail" or f.verdict == "warn") and not f.explained_by then
      out[#out + 1] = f.id .. ": " .. f.title .. " | " .. tostring(f.evidence)
    end
  end
  return out
end

describe("doctor on clean plain scripts", function()
  for _, name in ipairs({ "clean_mlp", "clean_cnn", "clean_regression" }) do
    it("raises no alarm on " .. name, function()
      local r = run(name)
      assert.are.same({}, alarms(r))
      assert.is_nil(r.cause)
      assert.matches("no training bug found", r:diagnosis())
      -- the checks that judge the script's own loop ran and passed
      for _, id in ipairs({ "train_mode", "zero_grad", "grad_reach", "lr_applied", "eval_data", "loss_coverage",
        "input_pipeline", "learning_rate", "label_alignment" }) do
        assert.is_table(r:get(id), id)
      end
    end)
  end
end)

-- script -> the id of the finding that must be the most likely cause, and a pattern of its evidence
local planted = {
  softmax_ce = { "softmax_before_loss", "every row sums to 1" },
  no_zero_grad = { "zero_grad", "found the previous step's gradients still there" },
  mse_shape = { "target_format", "broadcast" },
  eval_mode = { "train_mode", "optimizer steps taken with the model in eval mode" },
  shuffled_labels = { "label_alignment", "labels shuffled %d" },
  zero_inputs = { "input_pipeline", "all zero" },
  tiny_lr = { "learning_rate", "lr 1e%-12" },
  lr_overwritten = { "lr_applied", "overwritten" },
  detached = { "grad_reach", "fc1.weight" },
  ignored_class = { "loss_coverage", "class 0 is ignored" },
  eval_augment = { "eval_data", "random augmentation is applied at evaluation" },
}

describe("doctor names the planted bug of a plain script as the most likely cause", function()
  local names = {}
  for name in pairs(planted) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local want = planted[name]
    it(name .. " -> " .. want[1], function()
      local r = run(name)
      assert.is_table(r.cause, "no cause; findings: " .. table.concat(alarms(r), "\n"))
      assert.are.equal(want[1], r.cause.id, table.concat(alarms(r), "\n"))
      assert.are.equal("fail", r.cause.verdict)
      assert.are.equal("high", r.cause.severity)
      assert.is_true(r.cause.confidence >= 0.75, "confidence " .. r.cause.confidence)
      assert.matches(want[2], r.cause.evidence)
      -- one precise cause: every other FAIL is explained by a stronger finding
      assert.are.equal(1, r.failed, table.concat(alarms(r), "\n"))
      assert.matches("^most likely cause: ", r:diagnosis())
    end)
  end
end)

describe("the differential diagnosis of an input-independent model", function()
  it("explains the baseline failure by the cause that produced it", function()
    local r = run("tiny_lr")
    local ii = r:get("input_independent")
    -- held-out baselines (#38): either a failure explained by the cause, or undecided beside it
    if ii.verdict == "fail" or ii.verdict == "warn" then
      assert.are.equal("learning_rate", ii.explained_by)
    else
      assert.are.equal("inconclusive", ii.verdict)
    end
    assert.are.equal("learning_rate", r.cause.id)
    assert.matches("1e%-02: ", r:get("learning_rate").evidence)   -- the sweep's numbers
    r = run("zero_inputs")
    assert.are.equal("input_pipeline", r:get("input_independent").explained_by)
    assert.are.equal("skip", r:get("label_alignment").verdict)
  end)
end)
