--[[
  torch.doctor.diagnose — turns the checks' findings into a differential diagnosis: each finding
  gets a severity (high for a fail, medium for a warn, none otherwise) and a confidence (its
  check's own, or the default for its id below); a failed cause marks the symptoms it accounts
  for as explained (they no longer count as failures); what is left is ranked by
  severity x confidence, and the first is the most likely cause.

    local ranked, top = require("torch.doctor.diagnose").rank(findings)

  The order of the defaults puts root causes (a constant input pipeline, targets that do not fit
  the loss, a softmax before the loss, a model in eval mode, a missing zero_grad) before the
  symptoms they produce (a model that cannot overfit, one no better than its zeroed-input
  baseline).
]]
local M = {}

M.default_confidence = {
  nonfinite = 0.95, target_format = 0.95, softmax_before_loss = 0.95, input_pipeline = 0.97,
  train_mode = 0.95, zero_grad = 0.95, learning_rate = 0.9, lr_applied = 0.9, label_alignment = 0.85,
  grad_reach = 0.85, eval_data = 0.85, eval_mode = 0.85, split_leak = 0.8, loss_coverage = 0.7,
  init_loss = 0.6, grad_flow = 0.6, lr_schedule = 0.6, overfit_batch = 0.5, input_independent = 0.45,
  output_bias = 0.4, bn_after_bias = 0.35, batch_view = 0.1,
}

local probes = { "init_loss", "overfit_batch", "input_independent", "label_alignment", "learning_rate", "output_bias" }
local function list(...)
  local out = {}
  for _, l in ipairs({ ... }) do for _, id in ipairs(l) do out[#out + 1] = id end end
  return out
end

-- cause id -> the ids of the findings a failure of it accounts for
M.explains = {
  nonfinite = list(probes, { "grad_flow", "loss_coverage" }),
  target_format = list(probes, { "softmax_before_loss", "loss_coverage" }),
  input_pipeline = list(probes, { "grad_flow", "grad_reach", "split_leak", "loss_coverage" }),
  softmax_before_loss = list(probes),
  learning_rate = { "overfit_batch", "input_independent", "label_alignment", "output_bias", "init_loss" },
  label_alignment = { "input_independent", "overfit_batch", "init_loss", "output_bias" },
  grad_reach = { "grad_flow" },
  train_mode = { "eval_mode" },
}

local severity = { fail = "high", warn = "medium" }
local weight = { fail = 1, warn = 0.5 }

local function score(f) return (weight[f.verdict] or 0) * f.confidence end

-- Annotates findings in place (severity, confidence, explained_by); returns the unexplained
-- fails and warns, most likely first, and the first of them.
function M.rank(findings)
  local by_id = {}
  for _, f in ipairs(findings) do
    f.severity = severity[f.verdict] or "none"
    f.confidence = f.confidence or M.default_confidence[f.id] or 0.5
    by_id[f.id] = f
  end
  -- strongest causes explain first; an explained finding explains nothing further
  local causes = {}
  for _, f in ipairs(findings) do if f.verdict == "fail" and M.explains[f.id] then causes[#causes + 1] = f end end
  table.sort(causes, function(a, b) return a.confidence > b.confidence end)
  for _, c in ipairs(causes) do
    if not c.explained_by then
      for _, id in ipairs(M.explains[c.id]) do
        local f = by_id[id]
        if f and f ~= c and (f.verdict == "fail" or f.verdict == "warn") and not f.explained_by then
          f.explained_by = c.id
        end
      end
    end
  end
  local ranked = {}
  for _, f in ipairs(findings) do
    if (f.verdict == "fail" or f.verdict == "warn") and not f.explained_by then ranked[#ranked + 1] = f end
  end
  table.sort(ranked, function(a, b)
    local sa, sb = score(a), score(b)
    if sa ~= sb then return sa > sb end
    return a.id < b.id
  end)
  return ranked, ranked[1]
end

return M
