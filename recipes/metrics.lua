--[[
  recipes/metrics.lua — evaluation metrics for the recipes, computed from predictions.

  What:
    confusion(pred, target, k)      k x k Lua array (1-based rows = true class, cols = predicted)
                                    from int64 tensors of 0-based class indices
    classification_report(conf)     {accuracy, macro = {precision, recall, f1}, weighted = {...},
                                     per_class = {{precision, recall, f1, support}, ...}}
    roc_auc(scores, labels)         binary ROC-AUC (Mann-Whitney U, ties counted half);
                                    scores float tensor (N), labels 0/1 tensor (N)
    regression(pred, target)        {mae, rmse, r2} from float tensors (N)
    format_report(rep, conf, names) the text table printed at the end of a run

  Precision of a class with no predictions (and recall of one with no samples) is 0, as
  sklearn's zero_division=0.
]]
local torch = require "torch"

local M = {}

function M.confusion(pred, target, k)
  local flat = (target:long() * k + pred:long()):cpu()
  local counts = torch.bincount(flat, { minlength = k * k }):tolist()
  local conf = {}
  for i = 1, k do
    conf[i] = {}
    for j = 1, k do conf[i][j] = counts[(i - 1) * k + j] or 0 end
  end
  return conf
end

local function ratio(a, b) return b > 0 and a / b or 0 end

function M.classification_report(conf)
  local k, total, correct = #conf, 0, 0
  local col = {}
  for j = 1, k do col[j] = 0 end
  for i = 1, k do
    for j = 1, k do col[j] = col[j] + conf[i][j]; total = total + conf[i][j] end
    correct = correct + conf[i][i]
  end
  local rep = { per_class = {}, macro = { precision = 0, recall = 0, f1 = 0 },
    weighted = { precision = 0, recall = 0, f1 = 0 }, accuracy = ratio(correct, total), support = total }
  for i = 1, k do
    local support = 0
    for j = 1, k do support = support + conf[i][j] end
    local p, r = ratio(conf[i][i], col[i]), ratio(conf[i][i], support)
    local f1 = ratio(2 * p * r, p + r)
    rep.per_class[i] = { precision = p, recall = r, f1 = f1, support = support }
    for name, v in pairs({ precision = p, recall = r, f1 = f1 }) do
      rep.macro[name] = rep.macro[name] + v / k
      rep.weighted[name] = rep.weighted[name] + v * ratio(support, total)
    end
  end
  return rep
end

function M.roc_auc(scores, labels)
  local s, y = scores:double():cpu():tolist(), labels:double():cpu():tolist()
  local order = {}
  for i = 1, #s do order[i] = i end
  table.sort(order, function(a, b) return s[a] < s[b] end)
  -- average ranks over ties, then U = sum of positive ranks - npos (npos + 1) / 2
  local rank_sum, npos, i = 0, 0, 1
  while i <= #order do
    local j = i
    while j < #order and s[order[j + 1]] == s[order[i]] do j = j + 1 end
    local avg = (i + j) / 2
    for q = i, j do if y[order[q]] > 0.5 then rank_sum = rank_sum + avg; npos = npos + 1 end end
    i = j + 1
  end
  local nneg = #s - npos
  if npos == 0 or nneg == 0 then return 0 / 0 end
  return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg)
end

function M.regression(pred, target)
  local p, t = pred:double():flatten(), target:double():flatten()
  local err = p - t
  local ss_res = (err * err):sum():item()
  local centred = t - t:mean()
  local ss_tot = (centred * centred):sum():item()
  return { mae = err:abs():mean():item(), rmse = math.sqrt(ss_res / t:size(0)),
    r2 = ss_tot > 0 and 1 - ss_res / ss_tot or 0 / 0 }
end

function M.format_report(rep, conf, names)
  local lines, width = {}, 12
  for _, n in ipairs(names) do width = math.max(width, #n) end
  local row = "%-" .. width .. "s %9s %9s %9s %9s"
  lines[#lines + 1] = row:format("class", "precision", "recall", "f1", "support")
  for i, c in ipairs(rep.per_class) do
    lines[#lines + 1] = ("%-" .. width .. "s %9.4f %9.4f %9.4f %9d"):format(names[i], c.precision, c.recall, c.f1, c.support)
  end
  for _, avg in ipairs({ "macro", "weighted" }) do
    local a = rep[avg]
    lines[#lines + 1] = ("%-" .. width .. "s %9.4f %9.4f %9.4f %9d"):format(avg .. " avg", a.precision, a.recall, a.f1, rep.support)
  end
  lines[#lines + 1] = ("accuracy %.4f on %d samples"):format(rep.accuracy, rep.support)
  lines[#lines + 1] = "confusion matrix (rows: true class, columns: predicted)"
  local head = { ("%-" .. width .. "s"):format("") }
  for j = 1, #conf do head[#head + 1] = ("%6d"):format(j - 1) end
  lines[#lines + 1] = table.concat(head)
  for i = 1, #conf do
    local cells = { ("%-" .. width .. "s"):format(("%d %s"):format(i - 1, names[i]):sub(1, width)) }
    for j = 1, #conf do cells[#cells + 1] = ("%6d"):format(conf[i][j]) end
    lines[#lines + 1] = table.concat(cells)
  end
  return table.concat(lines, "\n")
end

return M
