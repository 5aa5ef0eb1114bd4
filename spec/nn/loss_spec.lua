--[[
  spec/nn/loss_spec.lua — the loss modules (lua/torch/nn/loss.lua) and their functional forms
  (lua/torch/nn/functional.lua) against PyTorch.

  Covers: CrossEntropyLoss (class indices, probabilities, weight, ignore_index, label_smoothing,
  (N, C, d) and unbatched inputs), NLLLoss, BCEWithLogitsLoss (weight, pos_weight), BCELoss,
  MSELoss, L1Loss, SmoothL1Loss (beta), HuberLoss (delta), KLDivLoss (log_target, "batchmean"),
  every reduction somewhere for each; F.cross_entropy with weight=, F.nll_loss with weight=,
  F.binary_cross_entropy(_with_logits), F.l1_loss, F.smooth_l1_loss, F.huber_loss, F.kl_div.
  Each case compares the output AND the gradient of out:sum() w.r.t. the logits x with PyTorch's
  on identical literal inputs. Also: reprs, weight buffers in state_dict, attribute changes after
  construction, and misuse errors (target dtype/shape, options, reductions, weights).

  One pytorch.run computes every reference. Tolerance: float32, atol 1e-6 + rtol 1e-5, for
  outputs and gradients.

  Run:  build/ltorch /usr/bin/busted spec/nn/loss_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

local TOL = { atol = 1e-6, rtol = 1e-5 }

-- x (4, 5) logits; P probabilities (rows sum to 1); Y soft binary targets; R regression targets
-- spread so that SmoothL1/Huber see both branches.
local Lv, Pv, Yv, Rv = {}, {}, {}, {}
for i = 1, 4 do
  Lv[i], Pv[i], Yv[i], Rv[i] = {}, {}, {}, {}
  for j = 1, 5 do
    Lv[i][j] = math.floor(math.sin(i * 5 + j) * 3000) / 1000
    Pv[i][j] = ((i + j) % 5 + 1) / 15
    Yv[i][j] = ({ 0.0, 1.0, 0.25, 0.5, 0.875 })[(i * j) % 5 + 1]
    Rv[i][j] = math.floor(math.cos(i * 3 + j * 7) * 2500) / 1000
  end
end
local Tv, Tiv = { 4, 0, 2, 2 }, { 4, -100, 2, 0 }
local Wv, PWv = { 0.5, 1.0, 2.0, 0.25, 1.5 }, { 3.0, 0.5, 1.0, 2.0, 0.75 }

local PY_INPUTS = table.concat({
  "import torch.nn as nn, torch.nn.functional as F, warnings",
  "warnings.filterwarnings('ignore')",
  "f32 = torch.float32",
  "X0 = torch.tensor(" .. py(Lv) .. ", dtype=f32)",
  "P = torch.tensor(" .. py(Pv) .. ", dtype=f32)",
  "Y = torch.tensor(" .. py(Yv) .. ", dtype=f32)",
  "R = torch.tensor(" .. py(Rv) .. ", dtype=f32)",
  "T = torch.tensor(" .. py(Tv) .. ")",
  "Ti = torch.tensor(" .. py(Tiv) .. ")",
  "W = torch.tensor(" .. py(Wv) .. ", dtype=f32)",
  "PW = torch.tensor(" .. py(PWv) .. ", dtype=f32)",
  "def run(f):",
  "    x = X0.clone().requires_grad_()",
  "    out = f(x)",
  "    out.sum().backward()",
  "    return [str(out.dtype), out.tolist(), x.grad.tolist()]",
}, "\n") .. "\n"

local function constants()
  local f32 = { dtype = torch.float32 }
  return { P = torch.tensor(Pv, f32), Y = torch.tensor(Yv, f32), R = torch.tensor(Rv, f32),
    T = torch.tensor(Tv), Ti = torch.tensor(Tiv), W = torch.tensor(Wv, f32), PW = torch.tensor(PWv, f32) }
end

-- { function(x, X) -> loss, Python expression in x }
local CASES = {
  -- cross entropy, functional
  { function(x, X) return F.cross_entropy(x, X.T, { weight = X.W }) end, "F.cross_entropy(x, T, weight=W)" },
  { function(x, X) return F.cross_entropy(x, X.T, { weight = X.W, reduction = "sum" }) end, "F.cross_entropy(x, T, weight=W, reduction='sum')" },
  { function(x, X) return F.cross_entropy(x, X.Ti, { weight = X.W, reduction = "none" }) end, "F.cross_entropy(x, Ti, weight=W, reduction='none')" },
  { function(x, X) return F.cross_entropy(x, X.P, { weight = X.W }) end, "F.cross_entropy(x, P, weight=W)" },
  { function(x, X) return F.cross_entropy(x, X.P, { label_smoothing = 0.2, reduction = "sum" }) end, "F.cross_entropy(x, P, label_smoothing=0.2, reduction='sum')" },
  { function(x, X) return F.cross_entropy(x, X.Ti, { weight = X.W, label_smoothing = 0.1 }) end, "F.cross_entropy(x, Ti, weight=W, label_smoothing=0.1)" },
  -- cross entropy, module
  { function(x, X) return nn.CrossEntropyLoss()(x, X.T) end, "nn.CrossEntropyLoss()(x, T)" },
  { function(x, X) return nn.CrossEntropyLoss({ weight = X.W, ignore_index = 2, reduction = "none" })(x, X.T) end,
    "nn.CrossEntropyLoss(weight=W, ignore_index=2, reduction='none')(x, T)" },
  { function(x, X) return nn.CrossEntropyLoss({ label_smoothing = 0.1, reduction = "sum" })(x, X.Ti) end,
    "nn.CrossEntropyLoss(label_smoothing=0.1, reduction='sum')(x, Ti)" },
  { function(x, X) return nn.CrossEntropyLoss()(x, X.P) end, "nn.CrossEntropyLoss()(x, P)" },
  { function(x, X) return nn.CrossEntropyLoss(X.W)(x:view(2, 5, 2), X.T:view(2, 2)) end,
    "nn.CrossEntropyLoss(W)(x.view(2, 5, 2), T.view(2, 2))" },
  { function(x, X) return nn.CrossEntropyLoss()(x[1], X.T[1]) end, "nn.CrossEntropyLoss()(x[1], T[1])" },
  -- nll
  { function(x, X) return F.nll_loss(x:log_softmax(1), X.T, { weight = X.W }) end, "F.nll_loss(x.log_softmax(1), T, weight=W)" },
  { function(x, X) return nn.NLLLoss({ weight = X.W, ignore_index = 4, reduction = "sum" })(x:log_softmax(1), X.T) end,
    "nn.NLLLoss(weight=W, ignore_index=4, reduction='sum')(x.log_softmax(1), T)" },
  { function(x, X) return nn.NLLLoss({ reduction = "none" })(x:log_softmax(1), X.Ti) end, "nn.NLLLoss(reduction='none')(x.log_softmax(1), Ti)" },
  { function(x, X) return nn.NLLLoss()(x:log_softmax(1), X.T) end, "nn.NLLLoss()(x.log_softmax(1), T)" },
  -- binary cross entropy with logits
  { function(x, X) return F.binary_cross_entropy_with_logits(x, X.Y) end, "F.binary_cross_entropy_with_logits(x, Y)" },
  { function(x, X) return F.binary_cross_entropy_with_logits(x, X.Y, { pos_weight = X.PW, reduction = "sum" }) end,
    "F.binary_cross_entropy_with_logits(x, Y, pos_weight=PW, reduction='sum')" },
  { function(x, X) return F.binary_cross_entropy_with_logits(x, X.Y, { weight = X.W, pos_weight = X.PW, reduction = "none" }) end,
    "F.binary_cross_entropy_with_logits(x, Y, weight=W, pos_weight=PW, reduction='none')" },
  { function(x, X) return nn.BCEWithLogitsLoss({ pos_weight = X.PW })(x, X.Y) end, "nn.BCEWithLogitsLoss(pos_weight=PW)(x, Y)" },
  { function(x, X) return nn.BCEWithLogitsLoss({ weight = X.W, reduction = "none" })(x, X.Y) end, "nn.BCEWithLogitsLoss(weight=W, reduction='none')(x, Y)" },
  { function(x, X) return nn.BCEWithLogitsLoss({ reduction = "sum" })(x, X.Y) end, "nn.BCEWithLogitsLoss(reduction='sum')(x, Y)" },
  -- binary cross entropy on probabilities
  { function(x, X) return F.binary_cross_entropy(x:sigmoid(), X.Y) end, "F.binary_cross_entropy(x.sigmoid(), Y)" },
  { function(x, X) return F.binary_cross_entropy(x:sigmoid(), X.Y, { weight = X.W, reduction = "none" }) end,
    "F.binary_cross_entropy(x.sigmoid(), Y, weight=W, reduction='none')" },
  { function(x, X) return nn.BCELoss({ reduction = "sum" })(x:sigmoid(), X.Y) end, "nn.BCELoss(reduction='sum')(x.sigmoid(), Y)" },
  { function(x, X) return nn.BCELoss({ weight = X.W })(x:sigmoid(), X.Y) end, "nn.BCELoss(weight=W)(x.sigmoid(), Y)" },
  -- regression
  { function(x, X) return nn.MSELoss()(x, X.R) end, "nn.MSELoss()(x, R)" },
  { function(x, X) return nn.MSELoss({ reduction = "sum" })(x, X.R) end, "nn.MSELoss(reduction='sum')(x, R)" },
  { function(x, X) return nn.MSELoss({ reduction = "none" })(x, X.R) end, "nn.MSELoss(reduction='none')(x, R)" },
  { function(x, X) return F.l1_loss(x, X.R) end, "F.l1_loss(x, R)" },
  { function(x, X) return F.l1_loss(x, X.R, { reduction = "sum" }) end, "F.l1_loss(x, R, reduction='sum')" },
  { function(x, X) return nn.L1Loss({ reduction = "none" })(x, X.R) end, "nn.L1Loss(reduction='none')(x, R)" },
  { function(x, X) return nn.L1Loss()(x, X.R) end, "nn.L1Loss()(x, R)" },
  { function(x, X) return F.smooth_l1_loss(x, X.R) end, "F.smooth_l1_loss(x, R)" },
  { function(x, X) return F.smooth_l1_loss(x, X.R, { beta = 0.5, reduction = "none" }) end, "F.smooth_l1_loss(x, R, beta=0.5, reduction='none')" },
  { function(x, X) return nn.SmoothL1Loss({ beta = 2.0, reduction = "sum" })(x, X.R) end, "nn.SmoothL1Loss(beta=2.0, reduction='sum')(x, R)" },
  { function(x, X) return nn.SmoothL1Loss()(x, X.R) end, "nn.SmoothL1Loss()(x, R)" },
  { function(x, X) return F.huber_loss(x, X.R) end, "F.huber_loss(x, R)" },
  { function(x, X) return F.huber_loss(x, X.R, { delta = 0.5, reduction = "sum" }) end, "F.huber_loss(x, R, delta=0.5, reduction='sum')" },
  { function(x, X) return nn.HuberLoss({ delta = 2.0, reduction = "none" })(x, X.R) end, "nn.HuberLoss(delta=2.0, reduction='none')(x, R)" },
  { function(x, X) return nn.HuberLoss()(x, X.R) end, "nn.HuberLoss()(x, R)" },
  -- KL divergence
  { function(x, X) return F.kl_div(x:log_softmax(1), X.P, { reduction = "batchmean" }) end, "F.kl_div(x.log_softmax(1), P, reduction='batchmean')" },
  { function(x, X) return F.kl_div(x:log_softmax(1), X.P, { reduction = "sum" }) end, "F.kl_div(x.log_softmax(1), P, reduction='sum')" },
  { function(x, X) return F.kl_div(x:log_softmax(1), X.P:log(), { reduction = "none", log_target = true }) end,
    "F.kl_div(x.log_softmax(1), P.log(), reduction='none', log_target=True)" },
  { function(x, X) return nn.KLDivLoss()(x:log_softmax(1), X.P) end, "nn.KLDivLoss()(x.log_softmax(1), P)" },
  { function(x, X) return nn.KLDivLoss({ reduction = "batchmean", log_target = true })(x:log_softmax(1), X.P:log()) end,
    "nn.KLDivLoss(reduction='batchmean', log_target=True)(x.log_softmax(1), P.log())" },
}

local MODULES = { "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "BCELoss", "MSELoss", "L1Loss", "SmoothL1Loss",
  "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
  "MultiLabelMarginLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MultiMarginLoss",
  "TripletMarginLoss", "CTCLoss" }

describe("nn losses match PyTorch", function()
  local X, ref

  setup(function()
    X = constants()
    local code = { PY_INPUTS, "out = {'cases': []}" }
    for _, case in ipairs(CASES) do code[#code + 1] = "out['cases'].append(run(lambda x: " .. case[2] .. "))" end
    code[#code + 1] = "out['reprs'] = [repr(getattr(nn, n)()) for n in ['" .. table.concat(MODULES, "', '") .. "']]"
    code[#code + 1] = "out['bce_keys'] = list(nn.BCEWithLogitsLoss(pos_weight=PW).state_dict().keys())"
    code[#code + 1] = "out['ce_keys'] = list(nn.CrossEntropyLoss(weight=W).state_dict().keys())"
    code[#code + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, case in ipairs(CASES) do
    it(case[2], function()
      local x = torch.tensor(Lv, { dtype = torch.float32, requires_grad = true })
      local out = case[1](x, X)
      assert.are.equal(ref.cases[i][1], tostring(out.dtype))
      approx.check(out, ref.cases[i][2], TOL)
      out:sum():backward()
      approx.check(x.grad, ref.cases[i][3], TOL)
    end)
  end

  it("prints like PyTorch and keeps weights as buffers", function()
    for i, name in ipairs(MODULES) do assert.are.equal(ref.reprs[i], tostring(nn[name]())) end
    local bce = nn.BCEWithLogitsLoss({ pos_weight = X.PW })
    local keys = {}
    for k in pairs(bce:state_dict()) do keys[#keys + 1] = k end
    assert.are.same(ref.bce_keys, keys)
    assert.are.same(ref.ce_keys, nn.CrossEntropyLoss({ weight = X.W }):state_dict_keys())
    assert.are.same({}, nn.CrossEntropyLoss():state_dict_keys())
    assert.is_true(rawequal(X.W, nn.NLLLoss({ weight = X.W }).weight))
  end)

  it("reads its settings at each call (criterion.reduction = 'sum' takes effect)", function()
    local x = torch.tensor(Lv, { dtype = torch.float32 })
    local crit = nn.L1Loss()
    local mean = crit(x, X.R):item()
    crit.reduction = "sum"
    approx.check(crit(x, X.R):item(), mean * 20, { atol = 1e-5, rtol = 1e-6 })
    local ce = nn.CrossEntropyLoss()
    ce.label_smoothing = 0.1
    approx.check(ce(x, X.T), F.cross_entropy(x, X.T, { label_smoothing = 0.1 }):item(), 0)
  end)
end)

describe("nn losses with bad inputs", function()
  local x, X
  before_each(function()
    x = torch.tensor(Lv, { dtype = torch.float32 })
    X = constants()
  end)

  it("name the loss, the target's dtype and shape, and the input's shape", function()
    local ce = nn.CrossEntropyLoss()
    assert.has_error(function() ce(torch.randn(4, 5), torch.rand(4, 3)) end,
      "CrossEntropyLoss: target must be int64 class indices of shape [N] or probabilities shaped like input [N, C]; got float32 [4, 3] for input [4, 5]")
    assert.has_error(function() ce(x, X.T:int()) end,
      "CrossEntropyLoss: target must be int64 class indices of shape [N] or probabilities shaped like input [N, C]; got int32 [4] for input [4, 5]")
    assert.has_error(function() ce(x, X.T:view(4, 1)) end,
      "CrossEntropyLoss: target must be int64 class indices of shape [N] or probabilities shaped like input [N, C]; got int64 [4, 1] for input [4, 5]")
    assert.has_error(function() ce(x:view(2, 5, 2), X.T) end,
      "CrossEntropyLoss: target must be int64 class indices of shape [N, d1, ...] or probabilities shaped like input [N, C, d1, ...]; got int64 [4] for input [2, 5, 2]")
    assert.has_error(function() ce(x[0], X.T) end,
      "CrossEntropyLoss: target must be int64 class indices of shape [] or probabilities shaped like input [C]; got int64 [4] for input [5]")
    assert.has_error(function() ce(torch.tensor(1.5), X.T) end,
      "CrossEntropyLoss: input must have a class dimension ([C], [N, C] or [N, C, d1, ...]); got []")
    assert.has_error(function() nn.NLLLoss()(x, X.P) end,
      "NLLLoss: target must be int64 class indices of shape [N]; got float32 [4, 5] for input [4, 5]")
    assert.has_error(function() nn.BCEWithLogitsLoss()(x:view(20, 1), X.Y:view(20)) end,
      "BCEWithLogitsLoss: target must be a floating tensor of probabilities shaped like input; got float32 [20] for input [20, 1]")
    assert.has_error(function() nn.BCELoss()(x:sigmoid(), X.T:view(4, 1):expand(4, 5)) end,
      "BCELoss: target must be a floating tensor of probabilities shaped like input; got int64 [4, 5] for input [4, 5]")
    assert.has_error(function() F.binary_cross_entropy_with_logits(x, X.T) end,
      "binary_cross_entropy_with_logits: target must be a floating tensor of probabilities shaped like input; got int64 [4] for input [4, 5]")
    assert.has_error(function() nn.MSELoss()(x, 1) end, "MSELoss: expected (input, target) Tensors, got (Tensor, number)")
    assert.has_error(function() nn.HuberLoss()(nil, x) end, "HuberLoss: expected (input, target) Tensors, got (nil, Tensor)")
  end)

  it("check options and reductions when constructed", function()
    assert.has_error(function() nn.L1Loss({ reduction = "avg" }) end, "L1Loss: reduction must be 'mean', 'sum' or 'none', got 'avg'")
    assert.has_error(function() nn.CrossEntropyLoss({ reduction = "batchmean" }) end,
      "CrossEntropyLoss: reduction must be 'mean', 'sum' or 'none', got 'batchmean'")
    assert.has_error(function() nn.KLDivLoss({ reduction = "avg" }) end,
      "KLDivLoss: reduction must be 'batchmean', 'mean', 'sum' or 'none', got 'avg'")
    assert.has_error(function() nn.HuberLoss({ beta = 1 }) end, "HuberLoss: unexpected keyword argument 'beta' (did you mean 'delta'?)")
    assert.has_error(function() nn.BCELoss({ pos_weight = X.PW }) end, "BCELoss: unexpected keyword argument 'pos_weight'")
    assert.has_error(function() nn.CrossEntropyLoss({ weight = { 1, 2 } }) end, "CrossEntropyLoss: weight must be a Tensor, got table")
    -- MSELoss("sum") is PyTorch's MSELoss(size_average="sum"): the legacy argument, which must be a boolean
    assert.has_error(function() nn.MSELoss("sum") end, "MSELoss: size_average and reduce must be booleans, got string")
  end)

  it("check the functional forms' options", function()
    assert.has_error(function() F.l1_loss(x, X.R, { reduction = "batchmean" }) end,
      "l1_loss: reduction must be 'mean', 'sum' or 'none', got 'batchmean'")
    assert.has_error(function() F.kl_div(x, X.P, { reduction = "avg" }) end,
      "kl_div: reduction must be 'batchmean', 'mean', 'sum' or 'none', got 'avg'")
    assert.has_error(function() F.smooth_l1_loss(x, X.R, { delta = 1 }) end,
      "smooth_l1_loss: unexpected keyword argument 'delta' (did you mean 'beta'?)")
    assert.has_error(function() F.huber_loss(x, X.R, { delta = "1" }) end,
      "bad argument #4 to 'huber_loss' (number expected, got string)")
    assert.has_error(function() F.kl_div(x, X.P, { log_target = 1 }) end,
      "bad argument #6 to 'kl_div' (boolean expected, got number)")
    assert.has_error(function() F.l1_loss(x, "y") end, "bad argument #2 to 'l1_loss' (Tensor expected, got string)")
    -- binary_cross_entropy(input, target, weight, ...): the third positional is the weight
    assert.has_error(function() F.binary_cross_entropy(x:sigmoid(), X.Y, "sum") end,
      "bad argument #3 to 'binary_cross_entropy' (Tensor expected, got string)")
    assert.has_error(function() F.cross_entropy(x, X.T, { weight = "w" }) end,
      "bad argument #3 to 'cross_entropy' (Tensor expected, got string)")
  end)

  it("pass libtorch's checks through, naming the loss", function()
    assert.error_matches(function() nn.CrossEntropyLoss({ weight = torch.ones(3) })(x, X.T) end,
      "cross_entropy: weight tensor should be defined either for all 5 classes or no classes but got weight tensor of shape: [3]", nil, true)
    assert.error_matches(function() nn.NLLLoss({ weight = torch.ones(3) })(x, X.T) end,
      "nll_loss: weight tensor should be defined either for all 5 classes", nil, true)
    assert.error_matches(function() nn.HuberLoss({ delta = 0 })(x, X.R) end,
      "HuberLoss: huber_loss does not support non-positive values for delta.", nil, true)
    assert.error_matches(function() nn.CrossEntropyLoss({ ignore_index = 1 })(x, X.P) end,
      "ignore_index is not supported for floating point target", nil, true)
    assert.error_matches(function() nn.KLDivLoss()(x, X.T) end, "KLDivLoss: kl_div: Integral inputs not supported.", nil, true)
  end)

  it("warn once when an element-wise loss broadcasts its target", function()
    local saved, seen = F._warn, {}
    F._warn = function(msg) seen[#seen + 1] = msg end
    local ok, err = pcall(function()
      local crit = nn.SmoothL1Loss()
      crit(x:view(20, 1), X.R:view(20))
      crit(x:view(20, 1), X.R:view(20))
      crit(x, X.R)
    end)
    F._warn = saved
    assert(ok, err)
    assert.are.same({ "SmoothL1Loss: Using a target size ([20]) that is different to the input size ([20, 1]). "
      .. "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size." }, seen)
  end)
end)
