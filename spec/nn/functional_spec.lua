--[[
  spec/nn/functional_spec.lua — torch.nn.functional takes PyTorch's Python signatures
  (lua/torch/nn/functional*.lua): positional and keyword forms with PyTorch's defaults, string
  reductions (legacy size_average / reduce too), return_indices, input-first embedding, the
  norms' argument order, and errors that read like Python's and blame the caller's line.
  Values and gradients against PyTorch: spec/nn/functional_grad_parity_spec.lua.
]]
local torch = require "torch"
local nn = torch.nn
local F = nn.functional
local A = require "torch.nn._fargs"

local LOSSES = {   -- name -> arguments before the options
  l1_loss = function() return torch.randn(3), torch.randn(3) end,
  mse_loss = function() return torch.randn(3), torch.randn(3) end,
  smooth_l1_loss = function() return torch.randn(3), torch.randn(3) end,
  huber_loss = function() return torch.randn(3), torch.randn(3) end,
  kl_div = function() return torch.randn(3), torch.rand(3) end,
  binary_cross_entropy = function() return torch.rand(3), torch.rand(3) end,
  binary_cross_entropy_with_logits = function() return torch.randn(3), torch.rand(3) end,
  poisson_nll_loss = function() return torch.randn(3), torch.rand(3) end,
  gaussian_nll_loss = function() return torch.randn(3), torch.randn(3), torch.ones(3) end,
  cross_entropy = function() return torch.randn(2, 3), torch.tensor({ 0, 2 }) end,
  nll_loss = function() return torch.randn(2, 3), torch.tensor({ 0, 2 }) end,
  margin_ranking_loss = function() return torch.randn(3), torch.randn(3), torch.tensor({ 1.0, -1, 1 }) end,
  hinge_embedding_loss = function() return torch.randn(3), torch.tensor({ 1.0, -1, 1 }) end,
  multilabel_margin_loss = function() return torch.randn(3), torch.tensor({ 0, -1, 1 }) end,
  soft_margin_loss = function() return torch.randn(3), torch.tensor({ 1.0, -1, 1 }) end,
  multilabel_soft_margin_loss = function() return torch.randn(2, 3), torch.rand(2, 3) end,
  cosine_embedding_loss = function() return torch.randn(2, 3), torch.randn(2, 3), torch.tensor({ 1.0, -1 }) end,
  multi_margin_loss = function() return torch.randn(2, 3), torch.tensor({ 0, 2 }) end,
  triplet_margin_loss = function() return torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3) end,
  triplet_margin_with_distance_loss = function() return torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3) end,
}

-- f (a one-line function) raises msg, blamed on f's own line: the caller's, not ltorch's.
local function fails_here(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error")
  local line, text = tostring(err):match("^[^\n]-functional_spec%.lua:(%d+): (.*)$")
  assert.are.equal(msg, text or err)
  assert.are.equal(debug.getinfo(f, "S").linedefined, tonumber(line))
end

local function F32(t) return torch.tensor(t, { dtype = torch.float32 }) end

local function quiet(f)
  local saved = F._warn
  local seen = {}
  F._warn = function(msg) seen[#seen + 1] = msg end
  local ok, err = pcall(f)
  F._warn = saved
  assert(ok, err)
  return seen
end

describe("torch.nn.functional signatures", function()
  before_each(function() A._reset_warnings() end)

  it("dropout takes PyTorch's defaults (p=0.5, training=true) and keywords", function()
    torch.manual_seed(1)
    local y = F.dropout(torch.ones(1000))
    local kept = y:ne(0):sum():item()
    assert.is_true(kept > 400 and kept < 600, "kept " .. kept)
    assert.is_true(y:max():item() == 2)
    assert.are.equal(1000, F.dropout(torch.ones(1000), 0.5, false):sum():item())
    assert.are.equal(1000, F.dropout(torch.ones(1000), { p = 0.2, training = false }):sum():item())
    assert.are.equal(1000, F.alpha_dropout(torch.ones(1000)):sum():item())   -- training=false by default
    local x = torch.ones(4, 3)
    assert.are.equal(x, F.dropout(x, 0.5, true, true))                        -- inplace returns the input
    for f, dims in pairs({ dropout1d = { 2, 3 }, dropout2d = { 1, 2, 3, 4 }, dropout3d = { 2, 3, 2, 2 },
      feature_alpha_dropout = { 2, 3, 4 } }) do
      assert.are.same(dims, F[f](torch.ones(dims), 0.5, true):size(), f)
    end
  end)

  it("refuses unknown and repeated keywords and bad probabilities at the caller's line", function()
    fails_here(function() F.dropout(torch.ones(2), { pp = 0.2 }) end,
      "dropout: unexpected keyword argument 'pp' (did you mean 'p'?)")
    fails_here(function() F.dropout(torch.ones(2), 0.3, { p = 0.2 }) end,
      "dropout: got multiple values for argument 'p'")
    fails_here(function() F.dropout(torch.ones(2), 1.5) end,
      "dropout: dropout probability has to be between 0 and 1, but got 1.5")
    fails_here(function() F.dropout(torch.ones(2), 0.1, true, false, 1) end,
      "dropout: takes at most 4 positional arguments but 5 were given")
    fails_here(function() F.gaussian_nll_loss(torch.ones(2), torch.ones(2)) end,
      "gaussian_nll_loss: missing required argument 'var'")
  end)

  it("poisson_nll_loss defaults to log_input=true, full=false, eps=1e-8, reduction='mean'", function()
    local x, y = torch.randn(3, 4), torch.rand(3, 4)
    local explicit = F.poisson_nll_loss(x, y, true, false, nil, 1e-8, nil, "mean")
    assert.are.equal(explicit:item(), F.poisson_nll_loss(x, y):item())
    assert.are.equal((x:exp() - y * x):mean():item(), F.poisson_nll_loss(x, y):item())
  end)

  it("takes reduction as 'none' | 'mean' | 'sum' in every loss, and nothing else", function()
    for name, inputs in pairs(LOSSES) do
      local args = { inputs() }
      local n = #args
      local function call(reduction)
        args[n + 1] = { reduction = reduction }
        return F[name](unpack(args, 1, n + 1))
      end
      assert.is_true(math.abs(call("none"):sum():item() - call("sum"):item()) < 1e-4, name)
      local want = name == "kl_div" and "'batchmean', 'mean', 'sum' or 'none'" or "'mean', 'sum' or 'none'"
      fails_here(function() call(1) end, name .. ": reduction must be the string " .. want .. ", got number 1")
      fails_here(function() call("avg") end, name .. ": reduction must be " .. want .. ", got 'avg'")
    end
  end)

  it("reads the legacy size_average / reduce as PyTorch does, warning once", function()
    local x, y = torch.randn(3, 4), torch.randn(3, 4)
    local seen = quiet(function()
      assert.are.equal(F.mse_loss(x, y, { reduction = "sum" }):item(), F.mse_loss(x, y, false):item())
      assert.are.same({ 3, 4 }, F.mse_loss(x, y, { reduce = false }):size())
      assert.are.equal(F.l1_loss(x, y):item(), F.l1_loss(x, y, true, true):item())
    end)
    assert.are.same({ "size_average and reduce args will be deprecated, please use reduction='sum' instead." }, seen)
  end)

  it("broadcasts the element-wise losses as PyTorch (value and gradient), in F and nn", function()
    local x = torch.randn(5, 1, { dtype = torch.float64, requires_grad = true })
    local y = torch.randn(5, { dtype = torch.float64 })
    local seen = quiet(function()
      F.mse_loss(x, y):backward()
      local want = (x:detach():expand(5, 5) - y:view(1, 5)):mul(2 / 25):sum(1, true)
      assert.is_true(torch.allclose(x.grad, want))
      x.grad = nil
      nn.MSELoss()(x, y):backward()
      assert.is_true(torch.allclose(x.grad, want))
    end)
    assert.are.same({
      "mse_loss: Using a target size ([5]) that is different to the input size ([5, 1]). This will likely lead to "
        .. "incorrect results due to broadcasting. Please ensure they have the same size.",
      "MSELoss: Using a target size ([5]) that is different to the input size ([5, 1]). This will likely lead to "
        .. "incorrect results due to broadcasting. Please ensure they have the same size." }, seen)
    quiet(function()
      fails_here(function() F.l1_loss(torch.randn(3), torch.randn(4)) end,
        "l1_loss: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0")
    end)
  end)

  it("max pools return the indices with return_indices", function()
    local x = torch.arange(16, { dtype = torch.float32 }):view(1, 1, 4, 4)
    local out, idx = F.max_pool2d(x, 2, { return_indices = true })
    assert.are.same({ 5, 7, 13, 15 }, idx:flatten():tolist())
    assert.are.same({ 5, 7, 13, 15 }, out:flatten():tolist())
    assert.are.equal(1, select("#", F.max_pool2d(x, 2)))
    local o1, i1 = F.max_pool1d(torch.arange(6, { dtype = torch.float32 }):view(1, 1, 6), 3, nil, 0, 1, false, true)
    assert.are.same({ 2, 5 }, i1:flatten():tolist())
    assert.are.same({ 2, 5 }, o1:flatten():tolist())
    local _, i3 = F.max_pool3d(torch.arange(8, { dtype = torch.float32 }):view(1, 1, 2, 2, 2), 2, { return_indices = true })
    assert.are.same({ 7 }, i3:flatten():tolist())
    local _, ia = F.adaptive_max_pool2d(x, 1, true)
    assert.are.same({ 15 }, ia:flatten():tolist())
  end)

  it("embedding takes (input, weight) and padding_idx counts from the end when negative", function()
    local w = torch.arange(12, { dtype = torch.float32 }):view(4, 3):requires_grad_()
    local out = F.embedding(torch.tensor({ 3, 1 }), w)
    assert.are.same({ { 9, 10, 11 }, { 3, 4, 5 } }, out:tolist())
    F.embedding(torch.tensor({ 3, 1, 3 }), w, -1):sum():backward()
    assert.are.same({ 0, 0, 0 }, w.grad[3]:tolist())   -- padding_idx = 3 gets no gradient
    fails_here(function() F.embedding(torch.tensor({ 1 }), w, 4) end,
      "embedding: padding_idx must be within num_embeddings, got 4 for 4")
  end)

  it("normalizations take PyTorch's Python arguments", function()
    local x = torch.randn(4, 3)
    local rm, rv = torch.zeros(3), torch.ones(3)
    local y = F.batch_norm(x, rm, rv, nil, nil, true, 0.5)
    assert.is_true(torch.allclose(rm, x:mean(0) * 0.5, { atol = 1e-6 }))
    assert.is_true(torch.allclose(y:mean(0), torch.zeros(3), { atol = 1e-5 }))
    assert.is_true(torch.allclose(F.batch_norm(x, rm, rv), (x - rm) / (rv + 1e-5):sqrt(), { atol = 1e-6 }))
    fails_here(function() F.batch_norm(torch.randn(1, 3), nil, nil, { training = true }) end,
      "batch_norm: Expected more than 1 value per channel when training, got input size [1, 3]")
    assert.are.same({ 2, 3, 4 }, F.instance_norm(torch.randn(2, 3, 4)):size())
    assert.are.same({ 2, 3 }, F.layer_norm(torch.randn(2, 3), 3):size())
    assert.are.same({ 2, 4, 3 }, F.group_norm(torch.randn(2, 4, 3), 2, { eps = 1e-3 }):size())
  end)

  it("has PyTorch's Python-only functions", function()
    local x = F32({ -1.0, 0.5, 2.0 })
    assert.is_true(torch.allclose(F.softsign(x), x / (x:abs() + 1)))
    assert.is_true(torch.allclose(F.tanhshrink(x), x - x:tanh()))
    assert.is_true(torch.allclose(F.logsigmoid(x), x:sigmoid():log()))
    assert.is_true(torch.allclose(F.softmin(x, 0), (-x):softmax(0)))
    assert.is_true(math.abs(F.normalize(x, { dim = 0 }):norm():item() - 1) < 1e-6)
    assert.are.same({ 1, 1, 6, 6 }, F.interpolate(torch.randn(1, 1, 3, 3), { scale_factor = 2, mode = "bilinear" }):size())
    assert.are.same({ 1, 2, 7 }, F.interpolate(torch.randn(1, 2, 3), 7):size())
  end)

  it("interpolate checks its arguments as PyTorch does", function()
    local x = torch.randn(1, 1, 3, 3)
    fails_here(function() F.interpolate(x) end, "interpolate: either size or scale_factor should be defined")
    fails_here(function() F.interpolate(x, 2, 2) end,
      "interpolate: only one of size or scale_factor should be defined")
    fails_here(function() F.interpolate(x, { size = 4, align_corners = true }) end,
      "interpolate: align_corners option can only be set with the interpolating "
        .. "modes: linear | bilinear | bicubic | trilinear")
    fails_here(function() F.interpolate(x, { size = 4, mode = "linear" }) end,
      "interpolate: Got 4D input, but linear mode needs 3D input")
    fails_here(function() F.interpolate(x, { size = 4, mode = "cubic" }) end,
      "interpolate: mode must be one of nearest, linear, bilinear, bicubic, "
        .. "trilinear, area or nearest-exact, got cubic")
  end)

  it("checks the unpools', samplers' and activations' arguments as PyTorch does", function()
    local x, idx = torch.randn(1, 1, 2, 2), torch.tensor({ { { { 0, 3 }, { 9, 14 } } } })
    assert.are.same({ 1, 1, 4, 4 }, F.max_unpool2d(x, idx, 2):size())
    assert.are.same({ 1, 1, 5, 5 }, F.max_unpool2d(x, idx, 2, { output_size = { 1, 1, 5, 5 } }):size())
    fails_here(function() F.max_unpool2d(x, idx, 2, { output_size = { 6, 6 } }) end,
      'max_unpool2d: invalid output_size "[6, 6]" (dim 0 must be between 2 and 6)')
    fails_here(function() F.grid_sample(x, torch.zeros(1, 2, 2, 2), { mode = "linear" }) end,
      "grid_sample: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'linear'")
    fails_here(function() F.glu(torch.tensor(1.5)) end, "glu: glu does not support scalars because halving size must be even")
    fails_here(function() F.elu(x, { alpha = 1, inplac = true }) end,
      "elu: unexpected keyword argument 'inplac' (did you mean 'inplace'?)")
    local y = x:clone()
    assert.are.equal(y, F.hardtanh(y, -0.1, 0.1, true))
    assert.is_true(y:abs():max():item() <= 0.1 + 1e-7)
  end)

  it("keeps the positional fast paths of the activations and their Python keywords", function()
    local x = F32({ -1.0, 2.0 })
    assert.are.same({ 0, 2 }, F.relu(x):tolist())
    assert.are.same({ -0.5, 2 }, F.leaky_relu(x, { negative_slope = 0.5 }):tolist())
    assert.is_true(torch.allclose(F.gelu(x, { approximate = "tanh" }), x:gelu({ approximate = "tanh" })))
    local y = x:clone()
    assert.are.equal(y, F.relu(y, true))
    assert.are.same({ 0, 2 }, y:tolist())
    local seen = quiet(function() assert.are.same({ 2 }, F.softmax(x):size()) end)
    assert.are.same({ "Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
      .. "as an argument." }, seen)
  end)
end)
