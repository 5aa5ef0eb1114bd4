--[[
  torch.nn.loss — the loss modules, thin Modules over torch.nn.functional with PyTorch's names,
  options and reprs (`CrossEntropyLoss()`): https://pytorch.org/docs/stable/nn.html#loss-functions

    CrossEntropyLoss({weight=, ignore_index=-100, reduction=, label_smoothing=0})
        input (N, C) / (N, C, d1, ...) / (C) logits; target int64 class indices (N) / (N, d1, ...)
        / (), or float class probabilities shaped like the input; weight (C)
    NLLLoss({weight=, ignore_index=-100, reduction=})   input log-probabilities, as above
    BCEWithLogitsLoss({weight=, pos_weight=, reduction=})   logits and float targets, one shape;
        pos_weight (C) weighs positives per class (last dim)
    BCELoss({weight=, reduction=})                      probabilities and float targets
    MSELoss, L1Loss, SmoothL1Loss({beta=1}), HuberLoss({delta=1})   element-wise; a target shaped
        otherwise is broadcast with the input first (with PyTorch's warning), as F's are
    KLDivLoss({reduction=, log_target=false})           input log-probabilities; reduction may be
        "batchmean" (sum / N, the KL divergence per sample; PyTorch's "mean" averages elements)
    PoissonNLLLoss({log_input=true, full=false, eps=1e-8}), GaussianNLLLoss({full=false, eps=1e-6})
        (forward(input, target, var)), MarginRankingLoss({margin=0}) and CosineEmbeddingLoss({margin=0})
        (forward(input1, input2, target)), HingeEmbeddingLoss({margin=1}), MultiLabelMarginLoss,
        SoftMarginLoss, MultiLabelSoftMarginLoss({weight=}), MultiMarginLoss({p=1, margin=1, weight=}),
        TripletMarginLoss({margin=1, p=2, eps=1e-6, swap=false}), TripletMarginWithDistanceLoss(
        {distance_function=, margin=1, swap=false}) (forward(anchor, positive, negative)),
        CTCLoss({blank=0, zero_infinity=false}) (forward(log_probs, targets, input_lengths, target_lengths))

  reduction is "mean" (default) | "sum" | "none". A weight / pos_weight is a buffer (it moves with
  :to() and is in the state_dict, as in PyTorch). Constructors bind PyTorch's signatures, positional
  or keyword (`nn.CrossEntropyLoss(w)` is the weight, as PyTorch's first positional), the legacy
  size_average / reduce mapping to a reduction with PyTorch's deprecation warning. Misuse names the loss and the shapes:
    CrossEntropyLoss: target must be int64 class indices of shape [N] or probabilities shaped
    like input [N, C]; got float32 [4, 3] for input [4, 5]

  Usage:  local criterion = nn.CrossEntropyLoss({label_smoothing = 0.1})
          local loss = criterion(model(x), labels); loss:backward()
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local A = require "torch.nn._fargs"

local M = {}
local reductions = { mean = true, sum = true, none = true }

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Reads the options table of loss `name`: unknown keys, the reduction and tensor options are
-- checked at construction (PyTorch checks the reduction only at the first call).
local function read_opts(name, opts, known, extra_reductions)
  if torch.is_tensor(opts) then opts = { weight = opts } end
  if opts ~= nil and type(opts) ~= "table" then
    error(("bad argument #1 to '%s' (options table expected, got %s)"):format(name, type(opts)), 4)
  end
  opts = opts or {}
  if opts.size_average ~= nil or opts.reduce ~= nil then   -- PyTorch's legacy pair, with its warning
    local o = {}
    for k, v in pairs(opts) do if k ~= "size_average" and k ~= "reduce" then o[k] = v end end
    o.reduction = A.reduction(name, opts, extra_reductions and "batchmean")
    opts = o
  end
  for k in pairs(opts) do
    if known[k] == nil and k ~= "reduction" then error(("%s: unknown option '%s'"):format(name, tostring(k)), 4) end
  end
  local r = opts.reduction or "mean"
  if not (reductions[r] or (extra_reductions and extra_reductions[r])) then
    error(("%s: reduction must be %s'mean', 'sum' or 'none', got '%s'"):format(name,
      extra_reductions and "'batchmean', " or "", tostring(r)), 4)
  end
  for _, k in ipairs({ "weight", "pos_weight" }) do
    if opts[k] ~= nil and not torch.is_tensor(opts[k]) then
      error(("%s: %s must be a Tensor, got %s"):format(name, k, type(opts[k])), 4)
    end
  end
  return opts, r
end

-- A loss class: `known` options (besides reduction) with defaults; `buffers` names the tensor
-- options registered as buffers; forward(self, input, target) is given by the caller.
local function loss_class(name, known, buffers, extra_reductions)
  local cls = Module:extend(name)
  M[name] = cls
  function cls:__init(opts)
    local o, r = read_opts(name, opts, known, extra_reductions)
    self.reduction = r
    local is_buffer = {}
    for _, k in ipairs(buffers or {}) do is_buffer[k] = true end
    for k, default in pairs(known) do
      if not is_buffer[k] then
        local v = o[k]
        if v == nil then v = default end
        self[k] = v
      end
    end
    for _, k in ipairs(buffers or {}) do self:register_buffer(k, o[k]) end
  end
  return cls
end

-- Builds the functional options table from the module's settings (read at each call, so a
-- changed attribute such as `criterion.reduction = "sum"` takes effect, as in PyTorch).
local function call_opts(self, keys)
  local o = { reduction = self.reduction }
  for _, k in ipairs(keys) do o[k] = self[k] end
  return o
end

local function check_tensors(name, input, target)
  if not torch.is_tensor(input) or not torch.is_tensor(target) then
    error(("%s: expected (input, target) Tensors, got (%s, %s)"):format(name,
      torch.is_tensor(input) and "Tensor" or type(input), torch.is_tensor(target) and "Tensor" or type(target)), 3)
  end
end

--[[ Class-index targets: input (C) -> target (); (N, C) -> (N); (N, C, d1, ...) -> (N, d1, ...).
     Probabilities (CrossEntropyLoss only): a floating target shaped like the input. ]]
local function check_class_target(name, input, target, probabilities_ok)
  local isize, tsize, idim = input:size(), target:size(), input:dim()
  local legend = idim == 1 and { "[]", "[C]" } or idim == 2 and { "[N]", "[N, C]" } or { "[N, d1, ...]", "[N, C, d1, ...]" }
  if idim == 0 then
    error(("%s: input must have a class dimension ([C], [N, C] or [N, C, d1, ...]); got []"):format(name), 3)
  end
  local dt = target.dtype
  if dt.name == "int64" then
    local expected = {}
    for i = 1, idim do if i ~= (idim == 1 and 1 or 2) then expected[#expected + 1] = isize[i] end end
    if same(expected, tsize) then return end
  elseif probabilities_ok and dt.is_floating_point and same(isize, tsize) then
    return
  end
  if probabilities_ok then
    error(("%s: target must be int64 class indices of shape %s or probabilities shaped like input %s; got %s %s for input %s")
      :format(name, legend[1], legend[2], dt.name, shape(target), shape(input)), 3)
  end
  error(("%s: target must be int64 class indices of shape %s; got %s %s for input %s")
    :format(name, legend[1], dt.name, shape(target), shape(input)), 3)
end

---------------------------------------------------------------- class targets
local CrossEntropyLoss = loss_class("CrossEntropyLoss", { weight = false, ignore_index = -100, label_smoothing = 0.0 },
  { "weight" })
function CrossEntropyLoss:forward(input, target)
  check_tensors("CrossEntropyLoss", input, target)
  check_class_target("CrossEntropyLoss", input, target, true)
  return torch.nn.functional.cross_entropy(input, target, call_opts(self, { "weight", "ignore_index", "label_smoothing" }))
end

local NLLLoss = loss_class("NLLLoss", { weight = false, ignore_index = -100 }, { "weight" })
function NLLLoss:forward(input, target)
  check_tensors("NLLLoss", input, target)
  check_class_target("NLLLoss", input, target, false)
  return torch.nn.functional.nll_loss(input, target, call_opts(self, { "weight", "ignore_index" }))
end

---------------------------------------------------------------- element-wise
-- The functional forms take `who`, so their checks name this module.
local function elementwise(name, fname, known, buffers, extra_reductions)
  local cls = loss_class(name, known, buffers, extra_reductions)
  local keys = {}
  for k in pairs(known) do keys[#keys + 1] = k end
  function cls:forward(input, target)
    check_tensors(name, input, target)
    return torch.nn.functional._loss[fname](name, input, target, call_opts(self, keys))
  end
  return cls
end

elementwise("BCEWithLogitsLoss", "binary_cross_entropy_with_logits", { weight = false, pos_weight = false },
  { "weight", "pos_weight" })
elementwise("BCELoss", "binary_cross_entropy", { weight = false }, { "weight" })
elementwise("L1Loss", "l1_loss", {})
elementwise("SmoothL1Loss", "smooth_l1_loss", { beta = 1.0 })
elementwise("HuberLoss", "huber_loss", { delta = 1.0 })
elementwise("KLDivLoss", "kl_div", { log_target = false }, nil, { batchmean = true })

elementwise("MSELoss", "mse_loss", {})

---------------------------------------------------------------- the other losses
-- forward takes `arity` arguments in PyTorch's order (input, target[, var] or input1, input2,
-- target, ...), the first two tensors; the module's settings follow as the keywords.
local function functional(name, fname, arity, known, buffers)
  local cls = loss_class(name, known, buffers)
  local keys = {}
  for k in pairs(known) do keys[#keys + 1] = k end
  function cls:forward(...)
    local a = { ... }
    check_tensors(name, a[1], a[2])
    a[arity + 1] = call_opts(self, keys)
    return torch.nn.functional._loss[fname](name, unpack(a, 1, arity + 1))
  end
  return cls
end

functional("PoissonNLLLoss", "poisson_nll_loss", 2, { log_input = true, full = false, eps = 1e-8 })
functional("GaussianNLLLoss", "gaussian_nll_loss", 3, { full = false, eps = 1e-6 })
functional("MarginRankingLoss", "margin_ranking_loss", 3, { margin = 0.0 })
functional("HingeEmbeddingLoss", "hinge_embedding_loss", 2, { margin = 1.0 })
functional("MultiLabelMarginLoss", "multilabel_margin_loss", 2, {})
functional("SoftMarginLoss", "soft_margin_loss", 2, {})
functional("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss", 2, { weight = false }, { "weight" })
functional("CosineEmbeddingLoss", "cosine_embedding_loss", 3, { margin = 0.0 })
functional("MultiMarginLoss", "multi_margin_loss", 2, { p = 1, margin = 1.0, weight = false }, { "weight" })
functional("TripletMarginLoss", "triplet_margin_loss", 3, { margin = 1.0, p = 2.0, eps = 1e-6, swap = false })
functional("TripletMarginWithDistanceLoss", "triplet_margin_with_distance_loss", 3,
  { distance_function = false, margin = 1.0, swap = false })
functional("CTCLoss", "ctc_loss", 4, { blank = 0, zero_infinity = false })

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.L1Loss, "size_average=None, reduce=None, reduction='mean'")
A.init(M.MSELoss, "size_average=None, reduce=None, reduction='mean'")
A.init(M.CrossEntropyLoss, "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', "
  .. "label_smoothing=0.0")
A.init(M.NLLLoss, "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'")
A.init(M.BCELoss, "weight=None, size_average=None, reduce=None, reduction='mean'")
A.init(M.BCEWithLogitsLoss, "weight=None, size_average=None, reduce=None, reduction='mean', pos_weight=None")
A.init(M.SmoothL1Loss, "size_average=None, reduce=None, reduction='mean', beta=1.0")
A.init(M.HuberLoss, "reduction='mean', delta=1.0")
A.init(M.KLDivLoss, "size_average=None, reduce=None, reduction='mean', log_target=False")
A.init(M.PoissonNLLLoss, "log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, "
  .. "reduction='mean'")
A.init(M.GaussianNLLLoss, "*, full=False, eps=1e-06, reduction='mean'")
A.init(M.MarginRankingLoss, "margin=0.0, size_average=None, reduce=None, reduction='mean'")
A.init(M.HingeEmbeddingLoss, "margin=1.0, size_average=None, reduce=None, reduction='mean'")
A.init(M.MultiLabelMarginLoss, "size_average=None, reduce=None, reduction='mean'")
A.init(M.SoftMarginLoss, "size_average=None, reduce=None, reduction='mean'")
A.init(M.MultiLabelSoftMarginLoss, "weight=None, size_average=None, reduce=None, reduction='mean'")
A.init(M.CosineEmbeddingLoss, "margin=0.0, size_average=None, reduce=None, reduction='mean'")
A.init(M.MultiMarginLoss, "p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction='mean'")
A.init(M.TripletMarginLoss, "margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None, reduce=None, "
  .. "reduction='mean'")
A.init(M.TripletMarginWithDistanceLoss, "*, distance_function=None, margin=1.0, swap=False, reduction='mean'")
A.init(M.CTCLoss, "blank=0, reduction='mean', zero_infinity=False")

return M
