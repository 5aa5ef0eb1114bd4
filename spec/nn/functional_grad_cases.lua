--[[
  spec/nn/functional_grad_cases.lua — the generated cases of spec/nn/functional_grad_parity_spec.lua:
  every loss of torch.nn.functional under every reduction (and the legacy size_average / reduce),
  the element-wise losses on broadcasting shapes ((N, 1) vs (N), (4) vs (3, 1)), their options,
  and the activations, normalizations, embedding, pools, unpools, interpolate, vision helpers and
  dropout / gumbel_softmax / rrelu (eval, p = 0, and seeded) that torch.nn.functional writes in
  Python; and every loss module.

  A case is { fn, args, kw }: fn a torch.nn.functional name, args its positional arguments, kw
  its keywords (the trailing table in Lua, **kw in Python); or { module, args, kw }: the loss
  module nn[module](kw) (nn.X(**kw) in Python) called on args; refuses = true marks a call that
  PyTorch raises an error for (so must ltorch). A tensor argument is
  T(shape, kind, grad): kind says how its values are drawn (below), grad whether it requires
  grad (default true for floating kinds). Values come from a fixed generator (MINSTD) seeded per
  case, rounded to 6 decimals so that the JSON text both sides read is exact. NONE is Python's None.

  Kinds: randn (uniform in [-2, 2]), prob (0.05..0.95), pos (0.1..2), sign (+-1), binary (0/1),
  idx<C> (int64 in [0, C)), and V(values, shape, dtype) for literal values.
]]
local M = {}

local NONE = { none = true }
M.NONE = NONE

local function T(shape, kind, grad) return { tensor = true, shape = shape, kind = kind or "randn", grad = grad } end
local function V(values, shape, dtype) return { tensor = true, shape = shape, values = values, dtype = dtype, grad = false } end

local cases = {}
M.cases = cases
local function add(fn, args, kw) cases[#cases + 1] = { fn = fn, args = args, kw = kw or {} } end

local REDUCTIONS = { "none", "mean", "sum" }

---------------------------------------------------------------- element-wise losses, broadcasting
local PAIRS = { { { 3, 4 }, { 3, 4 } }, { { 5, 1 }, { 5 } }, { { 4 }, { 3, 1 } }, { { 2, 3 }, { 3 } } }
for _, fn in ipairs({ "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss" }) do
  for _, pair in ipairs(PAIRS) do
    for _, r in ipairs(REDUCTIONS) do add(fn, { T(pair[1]), T(pair[2]) }, { reduction = r }) end
  end
  add(fn, { T({ 5, 1 }), T({ 5 }) })   -- the default reduction
end
for _, r in ipairs(REDUCTIONS) do
  add("smooth_l1_loss", { T({ 5, 1 }), T({ 5 }) }, { reduction = r, beta = 0.5 })
  add("smooth_l1_loss", { T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r, beta = 0 })
  add("huber_loss", { T({ 5, 1 }), T({ 5 }) }, { reduction = r, delta = 0.7 })
  for _, fn in ipairs({ "l1_loss", "mse_loss", "huber_loss" }) do
    add(fn, { T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r, weight = T({ 3, 4 }, "pos") })
  end
end
-- positional forms and the legacy size_average / reduce
add("mse_loss", { T({ 3, 4 }), T({ 3, 4 }), NONE, NONE, "sum" })
add("huber_loss", { T({ 3, 4 }), T({ 3, 4 }), "sum", 0.5 })
add("smooth_l1_loss", { T({ 3, 4 }), T({ 4 }), false })
for _, legacy in ipairs({ { size_average = false }, { reduce = false }, { size_average = true, reduce = true } }) do
  add("mse_loss", { T({ 5, 1 }), T({ 5 }) }, legacy)
  add("l1_loss", { T({ 3, 4 }), T({ 3, 4 }) }, legacy)
end

---------------------------------------------------------------- probabilities
for _, r in ipairs({ "none", "mean", "sum", "batchmean" }) do
  add("kl_div", { T({ 3, 4 }), T({ 3, 4 }, "prob") }, { reduction = r })
  add("kl_div", { T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r, log_target = true })
  add("kl_div", { T({ 3, 4 }), T({ 4 }, "prob") }, { reduction = r })
end
for _, r in ipairs(REDUCTIONS) do
  add("binary_cross_entropy", { T({ 3, 4 }, "prob"), T({ 3, 4 }, "prob") }, { reduction = r })
  add("binary_cross_entropy", { T({ 3, 4 }, "prob"), T({ 3, 4 }, "prob", false), T({ 4 }, "pos", false) }, { reduction = r })
  add("binary_cross_entropy_with_logits", { T({ 3, 4 }), T({ 3, 4 }, "prob") }, { reduction = r })
  add("binary_cross_entropy_with_logits", { T({ 3, 4 }), T({ 3, 4 }, "prob") },
    { reduction = r, weight = T({ 4 }, "pos", false), pos_weight = T({ 4 }, "pos", false) })
  add("poisson_nll_loss", { T({ 3, 4 }), T({ 3, 4 }, "pos") }, { reduction = r })
  add("poisson_nll_loss", { T({ 3, 4 }, "pos"), T({ 3, 4 }, "pos"), false, true }, { reduction = r })
  add("poisson_nll_loss", { T({ 3, 4 }), T({ 4 }, "pos") }, { reduction = r, full = true, eps = 1e-6 })
  add("gaussian_nll_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }, "pos") }, { reduction = r })
  add("gaussian_nll_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3 }, "pos") }, { reduction = r, full = true })
  add("gaussian_nll_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 1 }, "pos") }, { reduction = r, eps = 0.2 })
  add("gaussian_nll_loss", { T({ 3, 4 }), T({ 3, 4 }), 0.5 }, { reduction = r })
end
add("poisson_nll_loss", { T({ 3, 4 }), T({ 3, 4 }, "pos") })
add("poisson_nll_loss", { T({ 3, 4 }), T({ 3, 4 }, "pos") }, { reduce = false })

---------------------------------------------------------------- class targets
for _, r in ipairs(REDUCTIONS) do
  add("cross_entropy", { T({ 4, 5 }), T({ 4 }, "idx5") }, { reduction = r })
  add("cross_entropy", { T({ 4, 5 }), T({ 4 }, "idx5"), T({ 5 }, "pos", false) }, { reduction = r, label_smoothing = 0.1 })
  add("cross_entropy", { T({ 4, 5 }), T({ 4, 5 }, "prob") }, { reduction = r })
  add("cross_entropy", { T({ 2, 3, 4 }), T({ 2, 4 }, "idx3") }, { reduction = r, ignore_index = 1 })
  add("nll_loss", { T({ 4, 5 }), T({ 4 }, "idx5") }, { reduction = r })
  add("nll_loss", { T({ 4, 5 }), T({ 4 }, "idx5"), T({ 5 }, "pos", false) }, { reduction = r, ignore_index = 2 })
  add("nll_loss", { T({ 2, 3, 2, 2 }), T({ 2, 2, 2 }, "idx3") }, { reduction = r })
  add("multi_margin_loss", { T({ 3, 4 }), T({ 3 }, "idx4") }, { reduction = r })
  add("multi_margin_loss", { T({ 3, 4 }), T({ 3 }, "idx4"), 2, 0.5, T({ 4 }, "pos", false) }, { reduction = r })
  add("multilabel_margin_loss", { T({ 2, 4 }), V({ 3, 0, -1, 1, 1, 2, 3, -1 }, { 2, 4 }, "int64") }, { reduction = r })
  add("multilabel_soft_margin_loss", { T({ 3, 4 }), T({ 3, 4 }, "binary") }, { reduction = r })
  add("multilabel_soft_margin_loss", { T({ 3, 4 }), T({ 3, 4 }, "prob"), T({ 4 }, "pos") }, { reduction = r })
end
add("cross_entropy", { T({ 4, 5 }), T({ 4 }, "idx5"), NONE, NONE, -100, false })   -- legacy reduce=False

-- shapes that broadcast in losses whose Python wrapper does not broadcast_tensors (PyTorch's
-- result either way; binary_cross_entropy refuses them, as PyTorch does)
for _, r in ipairs(REDUCTIONS) do
  add("soft_margin_loss", { T({ 3, 4 }), T({ 4 }, "sign") }, { reduction = r })
  add("hinge_embedding_loss", { T({ 3, 4 }), T({ 4 }, "sign") }, { reduction = r })
  add("margin_ranking_loss", { T({ 3, 1 }), T({ 1, 4 }), T({ 3, 4 }, "sign") }, { reduction = r })
  add("binary_cross_entropy_with_logits", { T({ 3, 4 }), T({ 3, 1 }, "prob") }, { reduction = r })
  cases[#cases].refuses = true
  add("binary_cross_entropy", { T({ 3, 1 }, "prob"), T({ 3, 4 }, "prob") }, { reduction = r })
  cases[#cases].refuses = true
  add("multilabel_soft_margin_loss", { T({ 3, 4 }), T({ 4 }, "binary") }, { reduction = r })
end

---------------------------------------------------------------- margins and embeddings
for _, r in ipairs(REDUCTIONS) do
  add("margin_ranking_loss", { T({ 5 }), T({ 5 }), T({ 5 }, "sign") }, { reduction = r, margin = 0.2 })
  add("hinge_embedding_loss", { T({ 5 }), T({ 5 }, "sign") }, { reduction = r })
  add("hinge_embedding_loss", { T({ 2, 3 }), T({ 2, 3 }, "sign"), 0.5 }, { reduction = r })
  add("soft_margin_loss", { T({ 3, 4 }), T({ 3, 4 }, "sign") }, { reduction = r })
  add("cosine_embedding_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3 }, "sign") }, { reduction = r, margin = 0.1 })
  add("triplet_margin_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r })
  add("triplet_margin_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }), 0.5, 1, 1e-6, true }, { reduction = r })
  add("triplet_margin_with_distance_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r })
  add("triplet_margin_with_distance_loss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }) },
    { reduction = r, margin = 2.0, swap = true })
  add("ctc_loss", { T({ 6, 2, 4 }), V({ 1, 2, 2, 3, 1, 0 }, { 2, 3 }, "int64"), V({ 6, 5 }, { 2 }, "int64"),
    V({ 3, 2 }, { 2 }, "int64") }, { reduction = r })
end

---------------------------------------------------------------- activations and normalizations
for _, fn in ipairs({ "softsign", "tanhshrink", "logsigmoid", "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu" }) do
  add(fn, { T({ 3, 4 }) })
end
for _, fn in ipairs({ "elu", "celu", "selu", "relu6", "hardtanh", "hardsigmoid", "hardswish", "mish" }) do
  add(fn, { T({ 3, 4 }) })
end
add("elu", { T({ 3, 4 }), 0.5 })
add("celu", { T({ 3, 4 }) }, { alpha = 2.0 })
add("hardtanh", { T({ 3, 4 }), -0.5, 0.7 })
add("threshold", { T({ 3, 4 }), 0.1, -3.0 })
add("rrelu", { T({ 3, 4 }) })
add("rrelu", { T({ 3, 4 }), 0.1, 0.3, true })   -- seeded: the same slopes
add("glu", { T({ 3, 4 }) })
add("glu", { T({ 4, 3 }), 0 })
add("softmin", { T({ 3, 4 }), 1 })
add("softmin", { T({ 3, 4 }) }, { dim = 0 })
add("softmax", { T({ 3, 4 }), 1 })
add("log_softmax", { T({ 3, 4 }), 0 })
add("normalize", { T({ 3, 4 }) })
add("normalize", { T({ 3, 4 }), 1, 0 })
add("normalize", { T({ 2, 3, 2 }) }, { p = 3.0, dim = -1, eps = 0.5 })
add("batch_norm", { T({ 4, 3 }), T({ 3 }, "randn", false), T({ 3 }, "pos", false), T({ 3 }), T({ 3 }) })
add("batch_norm", { T({ 4, 3, 2 }), NONE, NONE, T({ 3 }), T({ 3 }) }, { training = true })
add("batch_norm", { T({ 4, 3, 2 }), T({ 3 }, "randn", false), T({ 3 }, "pos", false) }, { training = true, momentum = 0.3 })
add("instance_norm", { T({ 2, 3, 4 }) })
add("instance_norm", { T({ 2, 3, 4 }), NONE, NONE, T({ 3 }), T({ 3 }) }, { eps = 1e-3 })
add("layer_norm", { T({ 2, 3, 4 }), { 4 }, T({ 4 }), T({ 4 }) })
add("layer_norm", { T({ 2, 3, 4 }), { 3, 4 } }, { eps = 1e-3 })
add("group_norm", { T({ 2, 4, 3 }), 2, T({ 4 }), T({ 4 }) })
add("group_norm", { T({ 2, 4, 3, 2 }), 4 })
add("embedding", { T({ 2, 3 }, "idx5"), T({ 5, 3 }) })
add("embedding", { T({ 4 }, "idx5"), T({ 5, 3 }) }, { padding_idx = -1 })
add("embedding", { T({ 4 }, "idx5"), T({ 5, 3 }), 0 }, { scale_grad_by_freq = true })
add("embedding", { T({ 4 }, "idx5"), T({ 5, 3 }) }, { max_norm = 1.0 })
add("embedding", { T({ 4 }, "idx5"), T({ 5, 3 }) }, { max_norm = 0.5, norm_type = 1.0 })

---------------------------------------------------------------- pools, interpolate, dropout
add("max_pool1d", { T({ 1, 2, 6 }), 2 }, { return_indices = true })
add("max_pool2d", { T({ 1, 2, 4, 4 }), 2 }, { return_indices = true })
add("max_pool2d", { T({ 1, 2, 5, 5 }), 3, 2, 1, 1, true, true })
add("max_pool3d", { T({ 1, 1, 4, 4, 4 }), 2 }, { return_indices = true })
add("max_pool2d", { T({ 1, 2, 4, 4 }), { 2, 2 } }, { stride = 1 })
add("max_unpool1d", { T({ 1, 2, 3 }), V({ 1, 2, 5, 0, 3, 4 }, { 1, 2, 3 }, "int64"), 2 })
add("max_unpool2d", { T({ 1, 1, 2, 2 }), V({ 0, 3, 9, 14 }, { 1, 1, 2, 2 }, "int64"), 2 })
add("max_unpool2d", { T({ 1, 1, 2, 2 }), V({ 0, 3, 10, 24 }, { 1, 1, 2, 2 }, "int64"), 2 }, { output_size = { 5, 5 } })
add("max_unpool3d", { T({ 1, 1, 1, 2, 2 }), V({ 0, 3, 9, 30 }, { 1, 1, 1, 2, 2 }, "int64"), 2 })
add("lp_pool1d", { T({ 1, 2, 6 }, "pos"), 2, 3 })
add("lp_pool2d", { T({ 1, 2, 4, 4 }, "pos"), 3.0, 2 }, { stride = 1 })
add("lp_pool2d", { T({ 1, 1, 5, 5 }, "pos"), 1.5, { 2, 3 } }, { ceil_mode = true })
add("lp_pool3d", { T({ 1, 1, 4, 4, 4 }, "pos"), 2, 2 })
add("gumbel_softmax", { T({ 3, 4 }) })   -- seeded: the same Gumbel noise
add("gumbel_softmax", { T({ 3, 4 }), 0.5, true })
add("gumbel_softmax", { T({ 3, 4 }) }, { tau = 2.0, dim = 0 })
add("adaptive_max_pool1d", { T({ 1, 2, 6 }), 3 }, { return_indices = true })
add("adaptive_max_pool2d", { T({ 1, 2, 4, 4 }), 2, true })
add("adaptive_max_pool3d", { T({ 1, 1, 4, 4, 4 }), 2 })
add("interpolate", { T({ 1, 2, 3 }) }, { size = 5 })
add("interpolate", { T({ 1, 2, 3 }) }, { scale_factor = 2, mode = "linear" })
add("interpolate", { T({ 1, 2, 3 }) }, { size = 7, mode = "linear", align_corners = true })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { scale_factor = 2, mode = "nearest" })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { size = { 4, 5 }, mode = "nearest-exact" })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { scale_factor = 1.5, mode = "bilinear" })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { size = { 5, 4 }, mode = "bilinear", align_corners = true })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { scale_factor = 2, mode = "bicubic" })
add("interpolate", { T({ 1, 1, 5, 5 }) }, { size = 3, mode = "bilinear", antialias = true })
add("interpolate", { T({ 1, 1, 5, 5 }) }, { size = { 3, 2 }, mode = "bicubic", antialias = true, align_corners = true })
add("interpolate", { T({ 1, 2, 5 }) }, { scale_factor = 0.6, mode = "nearest-exact" })
add("interpolate", { T({ 1, 2, 6 }) }, { size = 4, mode = "area" })
add("interpolate", { T({ 1, 1, 6, 6 }) }, { size = { 3, 2 }, mode = "area" })
add("interpolate", { T({ 1, 1, 6, 6 }) }, { scale_factor = 0.5, mode = "area" })
add("interpolate", { T({ 1, 1, 2, 2, 2 }) }, { scale_factor = 2, mode = "trilinear" })
add("interpolate", { T({ 1, 1, 2, 2, 2 }) }, { size = 3, mode = "nearest" })
add("interpolate", { T({ 1, 1, 3, 3 }) }, { scale_factor = 1.7, mode = "bilinear", recompute_scale_factor = true })
add("dropout", { T({ 3, 4 }) }, { training = false })
add("dropout", { T({ 3, 4 }), 0.0 })
add("dropout", { T({ 3, 4 }), 0.3 })   -- seeded: the same CPU generator draws the same mask
add("dropout1d", { T({ 3, 4, 2 }), 0.5 })
add("dropout2d", { T({ 2, 3, 2, 2 }), 0.5 })
add("dropout3d", { T({ 3, 2, 2, 2 }), 0.5 })
add("alpha_dropout", { T({ 3, 4 }), 0.3, true })
add("feature_alpha_dropout", { T({ 2, 3, 4 }), 0.3, true })
add("alpha_dropout", { T({ 3, 4 }) })

---------------------------------------------------------------- vision
add("unfold", { T({ 2, 3, 4, 5 }), 2 })
add("unfold", { T({ 1, 2, 5, 5 }), { 2, 3 } }, { dilation = 1, padding = 1, stride = 2 })
add("fold", { T({ 2, 12, 12 }), { 4, 5 }, 2 })
add("fold", { T({ 1, 12, 9 }), 5, { 2, 3 } }, { padding = 1, stride = 2 })
for _, mode in ipairs({ "bilinear", "nearest", "bicubic" }) do
  for _, padding in ipairs({ "zeros", "border", "reflection" }) do
    add("grid_sample", { T({ 1, 2, 3, 4 }), T({ 1, 2, 3, 2 }) }, { mode = mode, padding_mode = padding, align_corners = false })
  end
end
add("grid_sample", { T({ 1, 2, 3, 4 }), T({ 1, 2, 3, 2 }) }, { align_corners = true })
add("grid_sample", { T({ 1, 1, 2, 3, 4 }), T({ 1, 2, 2, 2, 3 }) }, { align_corners = false })
add("affine_grid", { T({ 2, 2, 3 }), { 2, 1, 3, 4 } }, { align_corners = false })
add("affine_grid", { T({ 1, 3, 4 }), { 1, 1, 2, 3, 2 } }, { align_corners = true })
add("local_response_norm", { T({ 2, 5, 3 }), 3 })
add("local_response_norm", { T({ 2, 6, 3, 2 }), 4 }, { alpha = 0.1, beta = 0.5, k = 2.0 })
add("upsample", { T({ 1, 1, 2, 3 }) }, { scale_factor = 2, mode = "bilinear" })
add("upsample_nearest", { T({ 1, 1, 2, 3 }) }, { size = { 3, 4 } })
add("upsample_bilinear", { T({ 1, 1, 2, 3 }) }, { scale_factor = 2 })

---------------------------------------------------------------- the ATen-backed functions
-- torch.nn.functional's names that PyTorch binds straight to ATen (convolutions, linear, pools,
-- shuffles, distances, in-place activations): one or more cases each, so that every name of the
-- namespace is run against PyTorch (conformance: M.NOT_CASED lists the ones that cannot be).
add("linear", { T({ 3, 4 }), T({ 2, 4 }) })
add("linear", { T({ 2, 3, 4 }), T({ 5, 4 }), T({ 5 }) })
add("bilinear", { T({ 3, 2 }), T({ 3, 4 }), T({ 5, 2, 4 }), T({ 5 }) })
add("conv1d", { T({ 2, 3, 7 }), T({ 4, 3, 3 }), T({ 4 }) }, { stride = 2, padding = 1 })
add("conv1d", { T({ 1, 4, 6 }), T({ 4, 2, 3 }) }, { padding = "same", dilation = 2, groups = 2 })
add("conv2d", { T({ 1, 2, 5, 5 }), T({ 3, 2, 3, 3 }), T({ 3 }) }, { padding = { 1, 0 } })
add("conv2d", { T({ 1, 2, 5, 4 }), T({ 2, 2, 2, 2 }) }, { padding = "valid", stride = { 2, 1 } })
add("conv3d", { T({ 1, 2, 4, 4, 3 }), T({ 2, 2, 2, 2, 2 }), T({ 2 }) }, { padding = 1 })
add("conv_transpose1d", { T({ 1, 2, 5 }), T({ 2, 3, 3 }), T({ 3 }) }, { stride = 2, output_padding = 1 })
add("conv_transpose2d", { T({ 1, 2, 3, 3 }), T({ 2, 2, 2, 2 }) }, { stride = 2, padding = 1, dilation = 2 })
add("conv_transpose3d", { T({ 1, 2, 2, 2, 2 }), T({ 2, 1, 2, 2, 2 }), T({ 1 }) }, { stride = 2 })
add("conv_tbc", { T({ 5, 2, 3 }), T({ 3, 3, 4 }), T({ 4 }), 1 })
add("adaptive_avg_pool1d", { T({ 1, 2, 7 }), 3 })
add("adaptive_avg_pool2d", { T({ 1, 2, 5, 4 }), { 2, 3 } })
add("adaptive_avg_pool3d", { T({ 1, 1, 4, 3, 4 }), 2 })
add("adaptive_max_pool1d_with_indices", { T({ 1, 2, 6 }), 4 })
add("adaptive_max_pool2d_with_indices", { T({ 1, 2, 5, 5 }), { 2, 3 } })
add("adaptive_max_pool3d_with_indices", { T({ 1, 1, 4, 4, 3 }), 2 })
add("avg_pool1d", { T({ 1, 2, 7 }), 3 }, { stride = 2, padding = 1, ceil_mode = true, count_include_pad = false })
add("avg_pool2d", { T({ 1, 2, 5, 5 }), 2 })
add("avg_pool2d", { T({ 1, 1, 5, 5 }), 3, 2, 1 }, { divisor_override = 4 })
add("avg_pool3d", { T({ 1, 1, 4, 4, 4 }), 2 }, { stride = 1 })
add("max_pool1d_with_indices", { T({ 1, 2, 7 }), 3, 2 })
add("max_pool2d_with_indices", { T({ 1, 1, 5, 5 }), 2 }, { ceil_mode = true })
add("max_pool3d_with_indices", { T({ 1, 1, 4, 4, 4 }), 2 })
add("fractional_max_pool2d", { T({ 1, 2, 6, 6 }), 2 }, { output_size = 3, _random_samples = T({ 1, 2, 2 }, "prob", false) })
add("fractional_max_pool2d", { T({ 1, 1, 7, 7 }), { 2, 3 } },
  { output_ratio = { 0.5, 0.5 }, return_indices = true, _random_samples = T({ 1, 1, 2 }, "prob", false) })
add("fractional_max_pool2d_with_indices", { T({ 1, 2, 5, 5 }), 2, 3 }, { _random_samples = T({ 1, 2, 2 }, "prob", false) })
add("fractional_max_pool3d_with_indices", { T({ 1, 1, 4, 4, 4 }), 2 },
  { output_ratio = { 0.5, 0.5, 0.5 }, _random_samples = T({ 1, 1, 3 }, "prob", false) })
add("fractional_max_pool3d", { T({ 1, 1, 5, 5, 5 }), 2 }, { output_size = 3, _random_samples = T({ 1, 1, 3 }, "prob", false) })
add("channel_shuffle", { T({ 1, 6, 2 }), 3 })
add("native_channel_shuffle", { T({ 2, 4, 2, 2 }, "randn", false), 2 })   -- no derivative in ATen
add("pixel_shuffle", { T({ 1, 8, 2, 3 }), 2 })
add("pixel_unshuffle", { T({ 1, 2, 4, 6 }), 2 })
add("pad", { T({ 1, 2, 3 }), { 1, 2 } })
add("pad", { T({ 1, 2, 3, 3 }), { 1, 0, 2, 1 } }, { mode = "constant", value = 0.5 })
add("pad", { T({ 1, 2, 4 }), { 2, 1 } }, { mode = "reflect" })
add("pad", { T({ 1, 1, 3, 3 }), { 1, 2, 2, 1 } }, { mode = "replicate" })
add("pad", { T({ 1, 1, 3, 3, 3 }), { 1, 1, 1, 1, 1, 1 } }, { mode = "circular" })
add("pad", { T({ 3, 4 }), { -1, 1 } })
add("cosine_similarity", { T({ 3, 4 }), T({ 3, 4 }) })
add("cosine_similarity", { T({ 3, 4 }), T({ 1, 4 }) }, { dim = 1, eps = 1e-3 })
add("pairwise_distance", { T({ 3, 4 }), T({ 3, 4 }) })
add("pairwise_distance", { T({ 3, 4 }), T({ 4 }) }, { p = 1.0, keepdim = true })
add("pdist", { T({ 4, 3 }) })
add("pdist", { T({ 4, 3 }), 3 })
add("embedding_bag", { T({ 6 }, "idx5"), T({ 5, 3 }), V({ 0, 2, 2 }, { 3 }, "int64") })
add("embedding_bag", { T({ 2, 3 }, "idx5"), T({ 5, 3 }) }, { mode = "sum" })
add("embedding_bag", { T({ 6 }, "idx5"), T({ 5, 3 }), V({ 0, 3 }, { 2 }, "int64") },
  { mode = "sum", per_sample_weights = T({ 6 }) })
add("embedding_bag", { T({ 6 }, "idx5"), T({ 5, 3 }), V({ 0, 1, 4, 6 }, { 4 }, "int64") },
  { mode = "max", include_last_offset = true })
add("one_hot", { T({ 5 }, "idx4") })
add("one_hot", { T({ 2, 3 }, "idx4"), 6 })
add("prelu", { T({ 2, 3, 4 }), T({ 3 }) })
add("prelu", { T({ 3, 4 }), T({ 1 }) })
add("rms_norm", { T({ 2, 3, 4 }), { 4 } })
add("rms_norm", { T({ 2, 3, 4 }), { 3, 4 }, T({ 3, 4 }) }, { eps = 1e-3 })
add("hardshrink", { T({ 3, 4 }) })
add("hardshrink", { T({ 3, 4 }), 1.1 })
add("softshrink", { T({ 3, 4 }) }, { lambd = 0.7 })
add("softplus", { T({ 3, 4 }) })
add("softplus", { T({ 3, 4 }), 2, 1.5 })
add("scaled_dot_product_attention", { T({ 2, 3, 4 }), T({ 2, 5, 4 }), T({ 2, 5, 3 }) })
add("scaled_dot_product_attention", { T({ 1, 2, 4, 3 }), T({ 1, 2, 4, 3 }), T({ 1, 2, 4, 3 }) }, { is_causal = true, scale = 0.7 })
add("scaled_dot_product_attention", { T({ 1, 4, 2, 3 }), T({ 1, 2, 3, 3 }), T({ 1, 2, 3, 3 }) },
  { attn_mask = T({ 2, 3 }, "randn", false), enable_gqa = true })
-- multi_head_attention_forward: L 3, S 5, N 2, E 4, 2 heads (D 2); outputs and weights
local function mha(q, k, v, w_in, b_in, bias_k, bias_v, zero, kw, w_out)
  add("multi_head_attention_forward", { q, k, v, 4, 2, w_in, b_in, bias_k or NONE, bias_v or NONE, zero, 0.0,
    w_out or T({ 4, 4 }), T({ 4 }) }, kw)
end
mha(T({ 3, 2, 4 }), T({ 5, 2, 4 }), T({ 5, 2, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, false, { training = false })
mha(T({ 3, 2, 4 }), T({ 5, 2, 4 }), T({ 5, 2, 4 }), T({ 12, 4 }), NONE, T({ 1, 1, 4 }), T({ 1, 1, 4 }), true,
  { training = false, key_padding_mask = V({ 0, 0, 0, 1, 1, 0, 0, 0, 0, 0 }, { 2, 5 }, "bool") })
mha(T({ 3, 2, 4 }), T({ 5, 2, 3 }), T({ 5, 2, 5 }), NONE, T({ 12 }), nil, nil, false,
  { training = false, use_separate_proj_weight = true, q_proj_weight = T({ 4, 4 }), k_proj_weight = T({ 4, 3 }),
    v_proj_weight = T({ 4, 5 }), average_attn_weights = false })
mha(T({ 3, 2, 4 }), T({ 5, 2, 4 }), T({ 5, 2, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, false,
  { training = false, need_weights = false, attn_mask = T({ 4, 3, 5 }, "randn", false) })
mha(T({ 3, 4 }), T({ 5, 4 }), T({ 5, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, false,
  { training = false, attn_mask = V({ 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1 }, { 3, 5 }, "bool"),
    average_attn_weights = false })
mha(T({ 3, 2, 4 }), T({ 5, 2, 4 }), T({ 5, 2, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, true,
  { training = false, static_k = T({ 4, 6, 2 }), static_v = T({ 4, 6, 2 }) })
mha(T({ 3, 2, 4 }), T({ 3, 2, 4 }), T({ 3, 2, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, false,
  { training = false, need_weights = false, is_causal = true,
    attn_mask = V({ 0, 1, 1, 0, 0, 1, 0, 0, 0 }, { 3, 3 }, "bool") })
mha(T({ 3, 2, 4 }), T({ 5, 2, 4 }), T({ 5, 2, 4 }), T({ 12, 4 }), T({ 12 }), nil, nil, false, { training = true })

-- in place: a plain tensor is changed and returned; a leaf that requires grad is refused (both sides)
for _, c in ipairs({ { "relu_" }, { "elu_", 0.5 }, { "celu_", 1.5 }, { "selu_" }, { "leaky_relu_", 0.2 },
  { "hardtanh_", -0.5, 0.5 }, { "threshold_", 0.1, -2.0 }, { "rrelu_" } }) do
  add(c[1], { T({ 3, 4 }, "randn", false), c[2], c[3] })
  add(c[1], { T({ 3, 4 }), c[2], c[3] })
  cases[#cases].refuses = true
end

-- Names of torch.nn.functional (spec/porting/api_manifest.lua) with no case, and why.
M.NOT_CASED = {
  grouped_mm = "CUDA-only kernel (float8 / grouped GEMM); not in ltorch",
  scaled_grouped_mm = "CUDA-only kernel (float8 / grouped GEMM); not in ltorch",
  scaled_mm = "CUDA-only kernel (float8 / grouped GEMM); not in ltorch",
}

---------------------------------------------------------------- the loss modules (nn.X(kw)(args...))
local function module(name, args, kw) cases[#cases + 1] = { module = name, args = args, kw = kw or {} } end
for _, r in ipairs(REDUCTIONS) do
  for _, name in ipairs({ "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss" }) do
    module(name, { T({ 5, 1 }), T({ 5 }) }, { reduction = r })
  end
  module("KLDivLoss", { T({ 3, 4 }), T({ 3, 4 }, "prob") }, { reduction = r })
  module("BCELoss", { T({ 3, 4 }, "prob"), T({ 3, 4 }, "prob") }, { reduction = r, weight = T({ 4 }, "pos", false) })
  module("BCEWithLogitsLoss", { T({ 3, 4 }), T({ 3, 4 }, "prob") }, { reduction = r, pos_weight = T({ 4 }, "pos", false) })
  module("CrossEntropyLoss", { T({ 4, 5 }), T({ 4 }, "idx5") }, { reduction = r, label_smoothing = 0.1 })
  module("NLLLoss", { T({ 4, 5 }), T({ 4 }, "idx5") }, { reduction = r, weight = T({ 5 }, "pos", false) })
  module("PoissonNLLLoss", { T({ 3, 4 }, "pos"), T({ 3, 4 }, "pos") }, { reduction = r, log_input = false, full = true })
  module("GaussianNLLLoss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 1 }, "pos") }, { reduction = r })
  module("MarginRankingLoss", { T({ 5 }), T({ 5 }), T({ 5 }, "sign") }, { reduction = r, margin = 0.3 })
  module("HingeEmbeddingLoss", { T({ 5 }), T({ 5 }, "sign") }, { reduction = r, margin = 0.5 })
  module("MultiLabelMarginLoss", { T({ 2, 4 }), V({ 3, 0, -1, 1, 1, 2, 3, -1 }, { 2, 4 }, "int64") }, { reduction = r })
  module("SoftMarginLoss", { T({ 3, 4 }), T({ 3, 4 }, "sign") }, { reduction = r })
  module("MultiLabelSoftMarginLoss", { T({ 3, 4 }), T({ 3, 4 }, "binary") }, { reduction = r, weight = T({ 4 }, "pos", false) })
  module("CosineEmbeddingLoss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3 }, "sign") }, { reduction = r, margin = 0.2 })
  module("MultiMarginLoss", { T({ 3, 4 }), T({ 3 }, "idx4") }, { reduction = r, p = 2, weight = T({ 4 }, "pos", false) })
  module("TripletMarginLoss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r, swap = true })
  module("TripletMarginWithDistanceLoss", { T({ 3, 4 }), T({ 3, 4 }), T({ 3, 4 }) }, { reduction = r, margin = 0.5 })
  module("CTCLoss", { T({ 6, 2, 4 }), V({ 1, 2, 2, 3, 1, 0 }, { 2, 3 }, "int64"), V({ 6, 5 }, { 2 }, "int64"),
    V({ 3, 2 }, { 2 }, "int64") }, { reduction = r, blank = 0 })
end

---------------------------------------------------------------- values
-- MINSTD: x <- 48271 x mod (2^31 - 1), exact in doubles.
local function generator(seed)
  local x = seed % 2147483646 + 1
  return function()
    x = (48271 * x) % 2147483647
    return x / 2147483647
  end
end

local DRAW = {
  randn = function(u) return math.floor((u * 4 - 2) * 1e6 + 0.5) / 1e6 end,
  prob = function(u) return math.floor((0.05 + 0.9 * u) * 1e6 + 0.5) / 1e6 end,
  pos = function(u) return math.floor((0.1 + 1.9 * u) * 1e6 + 0.5) / 1e6 end,
  sign = function(u) return u < 0.5 and -1 or 1 end,
  binary = function(u) return u < 0.5 and 0 or 1 end,
}

-- Fills each tensor argument's values and dtype (in place); case i draws from seed i.
function M.materialize()
  for i, c in ipairs(cases) do
    local next_u = generator(7919 * i)
    local function fill(a)
      if type(a) ~= "table" or not a.tensor or a.values then return end
      local n = 1
      for _, s in ipairs(a.shape) do n = n * s end
      local classes = a.kind:match("^idx(%d+)$")
      a.values, a.dtype = {}, classes and "int64" or "float64"
      if a.grad == nil then a.grad = classes == nil and a.kind ~= "sign" and a.kind ~= "binary" end
      for k = 1, n do
        local u = next_u()
        a.values[k] = classes and math.floor(u * tonumber(classes)) or DRAW[a.kind](u)
      end
    end
    for k = 1, #c.args do fill(c.args[k]) end
    for _, v in pairs(c.kw) do fill(v) end
  end
  return cases
end

return M
