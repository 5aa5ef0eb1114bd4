--[[
  spec/porting/keyword_constructors_spec.lua — PyTorch's keyword forms for module constructors,
  optimizers, LR schedulers and a few torch functions (issue #24): a call written positionally,
  by keyword, or mixed, binds as in Python and builds the same thing; misuse reads like Python's
  TypeError (unknown keyword with did-you-mean, missing required, repeated argument) and is blamed
  on the caller's line.

  Reference values (parameter shapes, reprs, param_groups, learning-rate sequences) were printed
  by PyTorch 2.11 (.venv/bin/python); exact, or to 1e-9 for the schedules' floats.
  Run:  build/ltorch /usr/bin/busted spec/porting/keyword_constructors_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional
local optim = require "torch.optim"
local sched = optim.lr_scheduler

local SPEC = "keyword_constructors_spec.lua"

local err_of = require("spec.support.errors").err

-- The error is blamed on this spec file, and reads `msg` (plain text).
local function fails_with(msg, fn)
  local e = err_of(fn)
  assert.truthy(e:find(msg, 1, true), "expected '" .. msg .. "' in: " .. e)
  assert.truthy(e:find(SPEC .. ":%d+:"), "not blamed on the spec: " .. e)
end

-- "name=[d1,d2] ..." of a module's parameters, in registration order.
local function param_shapes(m)
  local out = {}
  for name, p in m:named_parameters() do out[#out + 1] = name .. "=[" .. table.concat(p:size(), ",") .. "]" end
  return table.concat(out, " ")
end

-- Every form builds a module with the same repr and parameter shapes as PyTorch's.
local function same_module(forms, repr, shapes)
  for i, build in ipairs(forms) do
    local m = build()
    assert.equals(repr, tostring(m):gsub("%s*\n%s*", " "), "form " .. i)
    assert.equals(shapes, param_shapes(m), "form " .. i)
  end
end

describe("module constructors", function()
  it("Linear", function()
    local shapes = "weight=[4,3] bias=[4]"
    same_module({
      function() return nn.Linear(3, 4) end,
      function() return nn.Linear({ in_features = 3, out_features = 4 }) end,
      function() return nn.Linear(3, { out_features = 4 }) end,
    }, "Linear(in_features=3, out_features=4, bias=True)", shapes)
    same_module({
      function() return nn.Linear(3, 4, false) end,
      function() return nn.Linear(3, 4, { bias = false }) end,
      function() return nn.Linear { in_features = 3, out_features = 4, bias = false } end,
    }, "Linear(in_features=3, out_features=4, bias=False)", "weight=[4,3]")
  end)

  it("Conv1d, Conv2d, ConvTranspose2d", function()
    same_module({
      function() return nn.Conv2d(3, 8, 3) end,
      function() return nn.Conv2d(3, 8, { kernel_size = 3 }) end,
      function() return nn.Conv2d { in_channels = 3, out_channels = 8, kernel_size = 3 } end,
    }, "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))", "weight=[8,3,3,3] bias=[8]")
    same_module({
      function() return nn.ConvTranspose2d(4, 2, 3, 2, 1, 1) end,
      function() return nn.ConvTranspose2d(4, 2, 3, { stride = 2, padding = 1, output_padding = 1 }) end,
    }, "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))",
      "weight=[4,2,3,3] bias=[2]")
    same_module({
      function() return nn.Conv1d(2, 4, 3, 1, 0, 1, 2, false) end,
      function() return nn.Conv1d(2, 4, 3, { groups = 2, bias = false }) end,
    }, "Conv1d(2, 4, kernel_size=(3,), stride=(1,), groups=2, bias=False)", "weight=[4,1,3]")
  end)

  it("Embedding, LayerNorm, BatchNorm2d, GroupNorm, Bilinear", function()
    same_module({
      function() return nn.Embedding(10, 4) end,
      function() return nn.Embedding { num_embeddings = 10, embedding_dim = 4 } end,
    }, "Embedding(10, 4)", "weight=[10,4]")
    same_module({
      function() return nn.LayerNorm(8) end,
      function() return nn.LayerNorm({ normalized_shape = 8 }) end,
      function() return nn.LayerNorm({ 8 }) end,
    }, "LayerNorm((8,), eps=1e-05, elementwise_affine=True)", "weight=[8] bias=[8]")
    same_module({
      function() return nn.LayerNorm(8, 1e-5, true, false) end,
      function() return nn.LayerNorm(8, { bias = false }) end,
    }, "LayerNorm((8,), eps=1e-05, elementwise_affine=True)", "weight=[8]")
    same_module({
      function() return nn.BatchNorm2d(4) end,
      function() return nn.BatchNorm2d { num_features = 4 } end,
    }, "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)", "weight=[4] bias=[4]")
    same_module({
      function() return nn.GroupNorm(2, 4) end,
      function() return nn.GroupNorm { num_groups = 2, num_channels = 4 } end,
    }, "GroupNorm(2, 4, eps=1e-05, affine=True)", "weight=[4] bias=[4]")
    same_module({
      function() return nn.Bilinear(2, 3, 4) end,
      function() return nn.Bilinear(2, { in2_features = 3, out_features = 4 }) end,
    }, "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)", "weight=[4,2,3] bias=[4]")
  end)

  it("activations, dropout and pooling", function()
    same_module({ function() return nn.Softmax(1) end, function() return nn.Softmax({ dim = 1 }) end }, "Softmax(dim=1)", "")
    same_module({ function() return nn.LogSoftmax { dim = 0 } end }, "LogSoftmax(dim=0)", "")
    same_module({ function() return nn.LeakyReLU(0.2) end, function() return nn.LeakyReLU { negative_slope = 0.2 } end },
      "LeakyReLU(negative_slope=0.2)", "")
    same_module({ function() return nn.ELU { alpha = 0.5 } end }, "ELU(alpha=0.5)", "")
    same_module({ function() return nn.GELU { approximate = "tanh" } end }, "GELU(approximate='tanh')", "")
    same_module({ function() return nn.Flatten(0, 1) end, function() return nn.Flatten { end_dim = 1, start_dim = 0 } end },
      "Flatten(start_dim=0, end_dim=1)", "")
    same_module({ function() return nn.Dropout(0.2) end, function() return nn.Dropout { p = 0.2 } end },
      "Dropout(p=0.2, inplace=False)", "")
    same_module({ function() return nn.MaxPool2d(2, 1) end, function() return nn.MaxPool2d { kernel_size = 2, stride = 1 } end },
      "MaxPool2d(kernel_size=2, stride=1, padding=0, dilation=1, ceil_mode=False)", "")
    same_module({ function() return nn.AvgPool2d(3, nil, 1) end, function() return nn.AvgPool2d(3, { padding = 1 }) end },
      "AvgPool2d(kernel_size=3, stride=3, padding=1)", "")
    same_module({ function() return nn.AdaptiveAvgPool2d { output_size = 1 } end }, "AdaptiveAvgPool2d(output_size=1)", "")
  end)

  it("LSTM, GRU, RNN, MultiheadAttention, Transformer*", function()
    same_module({
      function() return nn.LSTM(3, 5) end,
      function() return nn.LSTM { input_size = 3, hidden_size = 5 } end,
    }, "LSTM(3, 5)", "weight_ih_l0=[20,3] weight_hh_l0=[20,5] bias_ih_l0=[20] bias_hh_l0=[20]")
    local gru = "weight_ih_l0=[15,3] weight_hh_l0=[15,5] bias_ih_l0=[15] bias_hh_l0=[15] weight_ih_l0_reverse=[15,3] "
      .. "weight_hh_l0_reverse=[15,5] bias_ih_l0_reverse=[15] bias_hh_l0_reverse=[15]"
    same_module({
      function() return nn.GRU(3, 5, 1, true, false, 0, true) end,
      function() return nn.GRU(3, 5, { bidirectional = true }) end,
    }, "GRU(3, 5, bidirectional=True)", gru)
    same_module({ function() return nn.RNN(3, 5, 1, "relu") end, function() return nn.RNN(3, { hidden_size = 5, nonlinearity = "relu" }) end },
      "RNN(3, 5)", "weight_ih_l0=[5,3] weight_hh_l0=[5,5] bias_ih_l0=[5] bias_hh_l0=[5]")
    assert.equals("relu", nn.RNN(3, { hidden_size = 5, nonlinearity = "relu" }).nonlinearity)
    same_module({
      function() return nn.MultiheadAttention(8, 2) end,
      function() return nn.MultiheadAttention { embed_dim = 8, num_heads = 2 } end,
    }, "MultiheadAttention( (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True) )",
      "in_proj_weight=[24,8] in_proj_bias=[24] out_proj.weight=[8,8] out_proj.bias=[8]")
    local a = nn.TransformerEncoderLayer(8, 2, 16, 0.0)
    local b = nn.TransformerEncoderLayer { d_model = 8, nhead = 2, dim_feedforward = 16, dropout = 0.0 }
    assert.equals(param_shapes(a), param_shapes(b))
    assert.equals(tostring(a), tostring(b))
    local enc = nn.TransformerEncoder(b, { num_layers = 2 })
    assert.equals(2, enc.num_layers)
    local t = nn.Transformer { d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1, dim_feedforward = 16 }
    assert.equals(tostring(nn.Transformer(8, 2, 1, 1, 16)), tostring(t))
  end)

  it("losses", function()
    local w = torch.tensor({ 1.0, 2.0, 3.0 })
    for _, l in ipairs { nn.CrossEntropyLoss(w, nil, -1, nil, "sum", 0.1),
      nn.CrossEntropyLoss { weight = w, ignore_index = -1, reduction = "sum", label_smoothing = 0.1 },
      nn.CrossEntropyLoss(w, { ignore_index = -1, reduction = "sum", label_smoothing = 0.1 }) } do
      assert.same({ 1, 2, 3 }, l.weight:tolist())
      assert.equals(-1, l.ignore_index)
      assert.equals("sum", l.reduction)
      assert.equals(0.1, l.label_smoothing)
    end
    assert.equals("sum", nn.MSELoss(nil, nil, "sum").reduction)
    assert.equals(0.5, nn.HuberLoss("mean", 0.5).delta)
    fails_with("GaussianNLLLoss: takes at most 0 positional arguments but 1 were given", function() nn.GaussianNLLLoss(true) end)
    fails_with("CrossEntropyLoss: unexpected keyword argument 'label_smothing' (did you mean 'label_smoothing'?)",
      function() nn.CrossEntropyLoss { label_smothing = 0.1 } end)
  end)

  it("rejects misuse as Python does, blamed on the caller", function()
    fails_with("Linear: unexpected keyword argument 'bais' (did you mean 'bias'?)",
      function() nn.Linear(3, 4, { bais = false }) end)
    fails_with("Linear: missing required argument 'out_features'", function() nn.Linear(3) end)
    fails_with("Linear: missing required argument 'in_features'", function() nn.Linear { out_features = 3 } end)
    fails_with("Linear: got multiple values for argument 'in_features'",
      function() nn.Linear(3, 4, { in_features = 3 }) end)
    fails_with("Linear: takes at most 5 positional arguments but 6 were given", function() nn.Linear(3, 4, true, nil, nil, 1) end)
    fails_with("Conv2d: missing required argument 'kernel_size'", function() nn.Conv2d(3, 8) end)
    fails_with("Conv2d: unexpected keyword argument 'kernel' (did you mean 'kernel_size'?)",
      function() nn.Conv2d(3, 8, { kernel = 3 }) end)
    fails_with("LSTM: unexpected keyword argument 'hidden' (did you mean 'hidden_size'?)",
      function() nn.LSTM { input_size = 3, hidden = 5 } end)
    fails_with("MultiheadAttention: missing required argument 'num_heads'", function() nn.MultiheadAttention { embed_dim = 8 } end)
    fails_with("Embedding: got multiple values for argument 'embedding_dim'",
      function() nn.Embedding(10, 4, { embedding_dim = 4 }) end)
  end)
end)

---------------------------------------------------------------- optimizers
describe("optimizers", function()
  local p = torch.zeros(2, { requires_grad = true })

  local function group(o, keys)
    local g, out = o.param_groups[1], {}
    for _, k in ipairs(keys) do out[#out + 1] = k .. "=" .. tostring(type(g[k]) == "table" and table.concat(g[k], ",") or g[k]) end
    return table.concat(out, " ")
  end

  it("bind positional, keyword and mixed forms to PyTorch's param_groups values", function()
    local keys = { "lr", "momentum", "dampening", "weight_decay", "nesterov" }
    assert.equals("lr=0.001 momentum=0 dampening=0 weight_decay=0 nesterov=false", group(optim.SGD({ p }), keys))
    for _, o in ipairs { optim.SGD({ p }, 0.1, 0.9), optim.SGD({ p }, { lr = 0.1, momentum = 0.9 }),
      optim.SGD({ p }, 0.1, { momentum = 0.9 }), optim.SGD { params = { p }, lr = 0.1, momentum = 0.9 } } do
      assert.equals("lr=0.1 momentum=0.9 dampening=0 weight_decay=0 nesterov=false", group(o, keys))
    end
    keys = { "lr", "betas", "eps", "weight_decay", "amsgrad" }
    assert.equals("lr=0.01 betas=0.8,0.9 eps=1e-08 weight_decay=0 amsgrad=false", group(optim.Adam({ p }, 0.01, { 0.8, 0.9 }), keys))
    assert.equals("lr=0.01 betas=0.8,0.9 eps=1e-08 weight_decay=0 amsgrad=false",
      group(optim.Adam({ p }, { lr = 0.01, betas = { 0.8, 0.9 } }), keys))
    assert.equals("lr=0.001 betas=0.9,0.999 eps=1e-08 weight_decay=0.01 amsgrad=false", group(optim.AdamW { params = { p } }, keys))
    keys = { "lr", "alpha", "momentum" }
    assert.equals("lr=0.1 alpha=0.9 momentum=0", group(optim.RMSprop({ p }, 0.1, 0.9), keys))
    assert.equals("lr=0.1 alpha=0.9 momentum=0", group(optim.RMSprop({ p }, { alpha = 0.9, lr = 0.1 }), keys))
    keys = { "lr", "lr_decay", "eps" }
    assert.equals("lr=0.1 lr_decay=0.01 eps=1e-10", group(optim.Adagrad({ p }, 0.1, 0.01), keys))
    assert.equals("lr=0.1 lr_decay=0.01 eps=1e-10", group(optim.Adagrad({ p }, 0.1, { lr_decay = 0.01 }), keys))
  end)

  it("rejects misuse as Python does, blamed on the caller", function()
    fails_with("SGD: unexpected keyword argument 'momentun' (did you mean 'momentum'?)",
      function() optim.SGD({ p }, { lr = 1, momentun = 0.9 }) end)
    fails_with("SGD: got multiple values for argument 'lr'", function() optim.SGD({ p }, 0.1, { lr = 0.2 }) end)
    fails_with("Adam: missing required argument 'params'", function() optim.Adam { lr = 0.1 } end)
    fails_with("SGD: fused=True (a fused kernel; foreach = true is ltorch's multi-tensor path) is not supported by ltorch's SGD: leave fused out", function() optim.SGD({ p }, { fused = true }) end)
    fails_with("SGD: optimizer got an empty parameter list", function() optim.SGD({}) end)
  end)
end)

---------------------------------------------------------------- LR schedulers
describe("LR schedulers", function()
  local p = torch.zeros(2, { requires_grad = true })
  local function opt() return optim.SGD({ p }, { lr = 0.1, momentum = 0.9 }) end

  -- The learning rate over n epochs (opt:step(), then scheduler:step(), as a training loop does).
  local function lrs(s, n)
    local out = {}
    for i = 1, n do
      out[i] = s.optimizer.param_groups[1].lr
      s.optimizer:step()
      s:step()
    end
    return out
  end

  local function same_lrs(expected, forms)
    for i, build in ipairs(forms) do
      local got = lrs(build(), #expected)
      for k = 1, #expected do
        assert.is_true(math.abs(got[k] - expected[k]) < 1e-9, ("form %d epoch %d: %s vs %s"):format(i, k, got[k], expected[k]))
      end
    end
  end

  it("bind positional, keyword and mixed forms to PyTorch's schedules", function()
    same_lrs({ 0.1, 0.1, 0.05, 0.05, 0.025 }, {
      function() return sched.StepLR(opt(), 2, 0.5) end,
      function() return sched.StepLR(opt(), { step_size = 2, gamma = 0.5 }) end,
      function() return sched.StepLR { optimizer = opt(), step_size = 2, gamma = 0.5 } end,
    })
    same_lrs({ 0.1, 0.0853553391, 0.05, 0.0146446609, 0.0 }, {
      function() return sched.CosineAnnealingLR(opt(), 4) end,
      function() return sched.CosineAnnealingLR(opt(), { T_max = 4 }) end,
    })
    same_lrs({ 0.004, 0.0950484632, 0.0611262022, 0.0188258346, 4e-07 }, {
      function() return sched.OneCycleLR(opt(), 0.1, 5) end,
      function() return sched.OneCycleLR(opt(), { max_lr = 0.1, total_steps = 5 }) end,
      function() return sched.OneCycleLR(opt(), 0.1, { total_steps = 5 }) end,
    })
    local f = function(e) return 1 / (e + 1) end
    same_lrs({ 0.1, 0.05, 0.0333333333, 0.025, 0.02 }, {
      function() return sched.LambdaLR(opt(), f) end,
      function() return sched.LambdaLR(opt(), { lr_lambda = f }) end,
    })
    same_lrs({ 0.05, 0.05, 0.1, 0.1, 0.1 }, {
      function() return sched.ConstantLR(opt(), 0.5, 2) end,
      function() return sched.ConstantLR(opt(), { factor = 0.5, total_iters = 2 }) end,
    })
    same_lrs({ 0.05, 0.075, 0.1, 0.1, 0.1 }, {
      function() return sched.LinearLR(opt(), 0.5, 1.0, 2) end,
      function() return sched.LinearLR(opt(), 0.5, { total_iters = 2 }) end,
    })
    same_lrs({ 0.1, 0.05, 0.025, 0.0125, 0.00625 }, {
      function() return sched.ExponentialLR(opt(), 0.5) end,
      function() return sched.ExponentialLR { optimizer = opt(), gamma = 0.5 } end,
    })
    same_lrs({ 0.1, 0.01, 0.01, 0.001, 0.001 }, {
      function() return sched.MultiStepLR(opt(), { 1, 3 }, 0.1) end,
      function() return sched.MultiStepLR(opt(), { milestones = { 1, 3 } }) end,
    })
    local plateau = sched.ReduceLROnPlateau(opt(), "max", 0.5, { patience = 2 })
    assert.equals("max", plateau.mode)
    assert.equals(0.5, plateau.factor)
    assert.equals(2, plateau.patience)
  end)

  it("rejects misuse as Python does, blamed on the caller", function()
    fails_with("StepLR: missing required argument 'step_size'", function() sched.StepLR(opt()) end)
    fails_with("StepLR: unexpected keyword argument 'stepsize' (did you mean 'step_size'?)",
      function() sched.StepLR(opt(), { stepsize = 2 }) end)
    fails_with("StepLR: got multiple values for argument 'step_size'", function() sched.StepLR(opt(), 2, { step_size = 2 }) end)
    fails_with("OneCycleLR: missing required argument 'max_lr'", function() sched.OneCycleLR(opt(), { total_steps = 5 }) end)
    fails_with("OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)",
      function() sched.OneCycleLR(opt(), { max_lr = 0.1 }) end)
    fails_with("CosineAnnealingLR: unexpected keyword argument 'Tmax' (did you mean 'T_max'?)",
      function() sched.CosineAnnealingLR(opt(), { Tmax = 4 }) end)
  end)
end)

---------------------------------------------------------------- functions
describe("torch functions", function()
  local function grads()
    local m = nn.Linear(3, 4)
    m(torch.ones(2, 3)):sum():backward()
    return m:parameters()
  end

  it("clip_grad_norm_ and clip_grad_value_", function()
    local a = nn.utils.clip_grad_norm_(grads(), 1):item()
    assert.equals(a, nn.utils.clip_grad_norm_(grads(), { max_norm = 1 }):item())
    assert.equals(a, nn.utils.clip_grad_norm_ { parameters = grads(), max_norm = 1, norm_type = 2 }:item())
    local ps = grads()
    nn.utils.clip_grad_value_(ps, { clip_value = 0.5 })
    assert.is_true(ps[1].grad:abs():max():item() <= 0.5)
    fails_with("clip_grad_norm_: missing required argument 'max_norm'", function() nn.utils.clip_grad_norm_(grads()) end)
    fails_with("clip_grad_norm_: unexpected keyword argument 'norm_typ' (did you mean 'norm_type'?)",
      function() nn.utils.clip_grad_norm_(grads(), 1, { norm_typ = 2 }) end)
  end)

  it("randint and full", function()
    for _, t in ipairs { torch.randint { low = 0, high = 5, size = { 3 } }, torch.randint(5, { 3 }), torch.randint(0, 5, { 3 }),
      torch.randint(5, { size = { 3 } }), torch.randint(0, { high = 5, size = { 3 } }) } do
      assert.same({ 3 }, t:size())
      assert.equals(torch.int64, t.dtype)
      assert.is_true(t:min():item() >= 0 and t:max():item() < 5)
    end
    torch.manual_seed(3)
    local a = torch.randint(2, 9, { 4 }):tolist()
    torch.manual_seed(3)
    assert.same(a, torch.randint { low = 2, high = 9, size = { 4 } }:tolist())
    assert.equals(torch.int32, torch.randint(5, { 2 }, { dtype = torch.int32 }).dtype)
    assert.same({ { 3, 3 }, { 3, 3 } }, torch.full { size = { 2, 2 }, fill_value = 3 }:tolist())
    assert.equals(torch.int64, torch.full { size = { 2, 2 }, fill_value = 3 }.dtype)
    assert.equals(torch.float32, torch.full({ 2 }, 1.5).dtype)
    assert.equals(torch.float64, torch.full({ 2 }, { fill_value = 1.5, dtype = torch.float64 }).dtype)
    fails_with("randint: missing required argument 'size'", function() torch.randint { high = 5 } end)
    fails_with("randint: unexpected keyword argument 'dtpye' (did you mean 'dtype'?)",
      function() torch.randint(5, { 3 }, { dtpye = torch.int32 }) end)
    fails_with("full: missing required argument 'fill_value'", function() torch.full({ 2 }) end)
    fails_with("full: got multiple values for argument 'size'", function() torch.full({ 2 }, 1, { size = { 3 } }) end)
  end)

  it("one_hot", function()
    local labels = torch.tensor({ 1, 2 }, { dtype = torch.int64 })
    assert.same({ { 0, 1, 0, 0, 0 }, { 0, 0, 1, 0, 0 } }, F.one_hot(labels, { num_classes = 5 }):tolist())
    assert.same(F.one_hot(labels, 5):tolist(), F.one_hot(labels, { num_classes = 5 }):tolist())
  end)
end)
