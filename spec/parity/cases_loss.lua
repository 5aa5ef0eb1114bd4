--[[
  spec/parity/cases_loss.lua — parity cases for losses, softmax variants, attention pieces and
  dropout: binary_cross_entropy(_with_logits), smooth_l1/huber/l1/mse, kl_div, margin losses,
  nll/cross_entropy (class indices and probabilities, weights, ignore_index, smoothing),
  cosine_embedding/triplet/poisson/ctc; softmax/log_softmax forms; scaled dot-product attention
  (baddbmm -> masked_fill -> softmax -> bmm, and F.scaled_dot_product_attention); dropout with p = 0, in
  eval mode, and seeded in training mode (the same CPU generator draws the same mask).

  Reductions are ATen's ints (0 none, 1 mean, 2 sum) for ATen ops, always passed: PyTorch
  1.13's Python bindings read the schema default `reduction=Mean` as 0 (torch._C._nn.l1_loss(x, t)
  is unreduced there, torch.ops.aten.l1_loss(x, t) is the mean, as in ltorch).
  torch.nn.functional's hand-written losses take PyTorch's strings.
  Tolerance: F32 (rtol 1e-5, atol 1e-6), for outputs and input gradients.
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local torch = require "torch"
local d = require "spec.parity.desc"
local T, V, N, D = d.T, d.V, d.N, d.D
local F32 = d.F32
local add, cases = d.group({ tol = F32 })
local NONE, MEAN, SUM = 0, 1, 2

-- Regression and probability losses, each with the three reductions somewhere.
add("binary_cross_entropy", { T({ 3, 4 }, "prob"), T({ 3, 4 }, "rand nograd"), N, MEAN })
add("binary_cross_entropy", { T({ 3, 4 }, "prob"), T({ 3, 4 }, "rand nograd"), T({ 4 }, "pos nograd"), NONE })
add("binary_cross_entropy_with_logits", { T({ 3, 4 }), T({ 3, 4 }, "rand"), N, N, MEAN })
add("binary_cross_entropy_with_logits", { T({ 3, 4 }), T({ 3, 4 }, "rand"), N, T({ 4 }, "pos nograd"), SUM })
add("smooth_l1_loss", { T({ 3, 4 }), T({ 3, 4 }), MEAN })
add("smooth_l1_loss", { T({ 3, 4 }), T({ 3, 4 }), NONE, 0.5 })
add("huber_loss", { T({ 3, 4 }), T({ 3, 4 }), SUM, 0.7 })
add("huber_loss", { T({ 3, 4 }, "t"), T({ 3, 4 }), MEAN })
add("l1_loss", { T({ 3, 4 }), T({ 3, 4 }), MEAN })
add("mse_loss", { T({ 3, 4 }), T({ 3, 4 }), NONE })
add("kl_div", { T({ 3, 4 }), T({ 3, 4 }, "prob"), MEAN })
add("kl_div", { T({ 3, 4 }), T({ 3, 4 }), SUM, { log_target = true } })
add("soft_margin_loss", { T({ 3, 4 }), V({ { 1, -1, 1, 1 }, { -1, -1, 1, -1 }, { 1, 1, -1, 1 } }, "float32", "nograd"), MEAN })
add("margin_ranking_loss", { T({ 5 }), T({ 5 }), V({ 1, -1, 1, -1, 1 }), 0.2, MEAN })
add("hinge_embedding_loss", { T({ 5 }), V({ 1, -1, 1, -1, -1 }), 0.5, SUM })
add("multi_margin_loss", { T({ 3, 4 }), T({ 3 }, "idx4"), 1, 1, N, MEAN })
add("multi_margin_loss", { T({ 3, 4 }), T({ 3 }, "idx4"), 2, 0.5, T({ 4 }, "pos nograd"), SUM })
add("multilabel_margin_loss", { T({ 2, 4 }), V({ { 3, 0, -1, 1 }, { 1, 2, 3, -1 } }, "int64"), MEAN })
add("cosine_embedding_loss", { T({ 3, 4 }), T({ 3, 4 }), V({ 1, -1, 1 }), 0.1, MEAN })
add("triplet_margin_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }), 1.0, 2, 1e-6, false, MEAN })
add("triplet_margin_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }), 0.5, 1, 1e-6, true, NONE })
add("poisson_nll_loss", { T({ 3, 4 }), T({ 3, 4 }, "pos"), true, false, 1e-8, MEAN })
add("poisson_nll_loss", { T({ 3, 4 }, "pos"), T({ 3, 4 }, "pos"), false, true, 1e-8, SUM })

-- Classification: nll / cross entropy (ATen and torch.nn.functional), 2-d targets.
add("nll_loss", { T({ 4, 5 }), T({ 4 }, "idx5"), N, MEAN })
add("nll_loss", { T({ 4, 5 }), V({ 0, 4, 2, 2 }, "int64"), T({ 5 }, "pos nograd"), SUM, 2 })
add("nll_loss2d", { T({ 2, 3, 2, 2 }), T({ 2, 2, 2 }, "idx3"), N, MEAN })
add("nll_loss_nd", { T({ 2, 3, 4 }), T({ 2, 4 }, "idx3"), N, NONE })
add("cross_entropy_loss", { T({ 4, 5 }), T({ 4 }, "idx5"), N, MEAN })
add("cross_entropy_loss", { T({ 4, 5 }), T({ 4 }, "idx5"), T({ 5 }, "pos nograd"), MEAN, -100, 0.1 })
add("cross_entropy_loss", { T({ 4, 5 }), T({ 4, 5 }, "prob"), N, SUM })
add("F.cross_entropy", { T({ 4, 5 }), T({ 4 }, "idx5") })
add("F.cross_entropy", { T({ 4, 5 }, "t"), T({ 4 }, "idx5"), { reduction = "sum", label_smoothing = 0.2 } })
add("F.cross_entropy", { T({ 2, 3, 4 }), T({ 2, 4 }, "idx3"), { reduction = "none", ignore_index = 1 } })
add("F.nll_loss", { T({ 4, 5 }), T({ 4 }, "idx5"), { reduction = "sum" } })
add("F.mse_loss", { T({ 3, 4 }), T({ 3, 4 }), { reduction = "none" } })
add("F.mse_loss", { T({ 3, 4 }), T({ 3, 4 }) })
add("ctc_loss", { T({ 6, 2, 4 }), V({ { 1, 2, 3 }, { 2, 2, 0 } }, "int64"), { 6, 5 }, { 3, 2 } }, {
  name = "ctc_loss(log_softmax(x), targets, lengths)",
  fn = function(x, tg, il, tl) return torch.ctc_loss(x:log_softmax(2), tg, il, tl, 0, MEAN) end,
  py = "lambda x, tg, il, tl: torch.ctc_loss(x.log_softmax(2), tg, il, tl, 0, 1)" })

-- Softmax family.
add("softmax", { T({ 3, 4 }), 1 })
add("softmax", { T({ 3, 4 }, "t"), 0 })
add(":softmax", { T({ 2, 3, 4 }), -1 })
add("softmax", { T({ 3, 4 }), 1, { dtype = D "float64" } })
add("log_softmax", { T({ 3, 4 }), 1 })
add(":log_softmax", { T({ 2, 3, 4 }, "s"), 0 })
add("log_softmax", { T({ 3, 4 }), -1, D "float64" })
add("_softmax", { T({ 3, 4 }), 1, false })
add("_log_softmax", { T({ 3, 4 }), 0, false })
add("F.softmax", { T({ 3, 4 }), 1 })
add("F.log_softmax", { T({ 3, 4 }), 0 })
add("softmax", { T({ 7 }, "special"), 0 }, { grad = false })
add("softmax", { T({ 0, 4 }), 1 })
add("softmax", { T({}), 0 })

-- Attention pieces: scores = baddbmm(mask bias, q, kᵀ, alpha = 1/sqrt(d)); probs; probs @ v.
add("baddbmm", { T({ 3, 4, 2 }), T({ 3, 2, 4 }), T({ 3, 4, 2 }), T({ 3, 4, 4 }, "bool nograd") }, {
  name = "attention: baddbmm, masked_fill(-inf), softmax, bmm",
  fn = function(q, k, v, mask)
    local scores = torch.baddbmm(torch.zeros(3, 4, 4), q, k, { alpha = 0.5 })
    scores = scores:masked_fill(mask, -math.huge):masked_fill(torch.eye(4, { dtype = torch.bool }), 0)
    return torch.bmm(scores:softmax(-1), v)
  end,
  py = "lambda q, k, v, mask: torch.bmm(torch.baddbmm(torch.zeros(3, 4, 4), q, k, alpha=0.5)"
    .. ".masked_fill(mask, -float('inf')).masked_fill(torch.eye(4, dtype=torch.bool), 0).softmax(-1), v)" })
add("F.scaled_dot_product_attention", { T({ 2, 3, 4 }), T({ 2, 5, 4 }), T({ 2, 5, 4 }), N, 0.0, false })
add("F.scaled_dot_product_attention", { T({ 2, 3, 4 }), T({ 2, 3, 4 }), T({ 2, 3, 4 }), N, 0.0, true })
add("_masked_softmax", { T({ 2, 3, 4 }), T({ 2, 3, 4 }, "bool"), -1, 2 }, { grad = false })

-- Dropout: identity at p = 0 and in eval mode; seeded masks in training mode.
add("dropout", { T({ 3, 4 }), 0.0, true })
add("dropout", { T({ 3, 4 }), 0.5, false })
add("feature_dropout", { T({ 2, 3, 4 }), 0.0, true })
add("alpha_dropout", { T({ 3, 4 }), 0.3, false })
add("feature_alpha_dropout", { T({ 2, 3, 4 }), 0.0, true })
add("native_dropout", { T({ 3, 4 }), 0.0, true })
for _, op in ipairs({ "dropout", "feature_dropout", "alpha_dropout", "native_dropout" }) do
  add(op, { T({ 2, 3, 4 }) }, { name = op .. "(x, 0.5, train) after manual_seed(7)",
    fn = function(x) torch.manual_seed(7); return torch[op](x, 0.5, true) end,
    py = "lambda x: (torch.manual_seed(7), torch." .. op .. "(x, 0.5, True))[1]" })
end
add("rrelu", { T({ 3, 4 }) }, { name = "rrelu(x, training) after manual_seed(7)",
  fn = function(x) torch.manual_seed(7); return torch.rrelu(x, 0.1, 0.3, true) end,
  py = "lambda x: (torch.manual_seed(7), torch.rrelu(x, 0.1, 0.3, True))[1]" })

return cases
