-- spec/doctor/diagnose_spec.lua — torch.doctor.diagnose on hand-made findings: severity and
-- confidence on every finding, symptoms explained by the cause that produced them, the rest
-- ranked by severity x confidence.
local D = require "torch.doctor.diagnose"

local function f(id, verdict, confidence) return { id = id, verdict = verdict, title = id, confidence = confidence } end

describe("torch.doctor.diagnose", function()
  it("gives every finding a severity and a confidence", function()
    local list = { f("init_loss", "ok"), f("bn_after_bias", "warn"), f("zero_grad", "fail", 0.97) }
    D.rank(list)
    assert.are.same({ "none", "medium", "high" }, { list[1].severity, list[2].severity, list[3].severity })
    assert.are.equal(D.default_confidence.init_loss, list[1].confidence)
    assert.are.equal(0.97, list[3].confidence)
  end)

  it("lets a learning rate that is too small explain the input-independent failure", function()
    local list = { f("overfit_batch", "warn"), f("learning_rate", "fail", 0.95), f("input_independent", "fail") }
    local ranked, top = D.rank(list)
    assert.are.equal("learning_rate", top.id)
    assert.are.equal(1, #ranked)
    assert.are.equal("learning_rate", list[1].explained_by)
    assert.are.equal("learning_rate", list[3].explained_by)
  end)

  it("puts constant inputs before the symptoms they cause, and a softmax before an LR finding", function()
    local list = { f("grad_reach", "fail", 0.9), f("input_pipeline", "fail", 0.97), f("split_leak", "fail"),
      f("label_alignment", "fail", 0.9) }
    local ranked, top = D.rank(list)
    assert.are.equal("input_pipeline", top.id)
    assert.are.equal(1, #ranked)
    list = { f("learning_rate", "fail", 0.9), f("softmax_before_loss", "fail") }
    top = select(2, D.rank(list))
    assert.are.equal("softmax_before_loss", top.id)
    assert.are.equal("softmax_before_loss", list[1].explained_by)
  end)

  it("ranks unrelated findings by severity x confidence, and a warning never explains", function()
    local list = { f("bn_after_bias", "warn"), f("zero_grad", "fail", 0.97), f("train_mode", "fail", 0.8),
      f("learning_rate", "warn", 0.9), f("overfit_batch", "fail") }
    local ranked, top = D.rank(list)
    assert.are.equal("zero_grad", top.id)
    local ids = {}
    for i, x in ipairs(ranked) do ids[i] = x.id end
    assert.are.same({ "zero_grad", "train_mode", "overfit_batch", "learning_rate", "bn_after_bias" }, ids)
  end)

  it("finds no cause when nothing failed or warned", function()
    local ranked, top = D.rank({ f("init_loss", "ok"), f("zero_grad", "skip") })
    assert.are.equal(0, #ranked)
    assert.is_nil(top)
  end)
end)
