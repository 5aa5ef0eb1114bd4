--[[
  spec/nn/utils_extra_spec.lua — the rest of nn.utils against PyTorch: get_total_norm,
  clip_grads_with_norm_, the deprecated clip_grad_norm (lua/torch/nn/utils.lua);
  parameters_to_vector, vector_to_parameters, skip_init (utils_params.lua); fuse_conv_bn_eval /
  _weights, fuse_linear_bn_eval / _weights, convert_conv2d/3d_weight_memory_format
  (utils_fusion.lua); the hook forms weight_norm / remove_weight_norm and spectral_norm /
  remove_spectral_norm (utils_norm_hooks.lua): values, gradients, state dict keys, the random
  stream, warnings and misuse errors.

  Modules and inputs are made under the same seed on both sides (ltorch's layer inits and
  torch.randn draw PyTorch's numbers). Tolerance: float32, atol 1e-6 + rtol 1e-5 for values
  computed through different op sequences (outputs, grads); bit-exact where ltorch runs PyTorch's
  own arithmetic (fused weights, norms, the random draws).

  Run:  build/ltorch /usr/bin/busted spec/nn/utils_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local U = nn.utils
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL = { atol = 1e-6, rtol = 1e-5 }

local function keys(sd)
  local out = {}
  for k in sd do out[#out + 1] = k end
  return out
end

-- Three tensors with grads g = randn under seed 1 (shapes (3, 4), (4,), (2, 2)); a fourth without.
local function params_with_grads()
  torch.manual_seed(1)
  local ps = {}
  for i, shape in ipairs({ { 3, 4 }, { 4 }, { 2, 2 } }) do
    ps[i] = torch.ones(shape, { requires_grad = true })
    ps[i].grad = torch.randn(shape) * (i * 0.7)
  end
  ps[4] = torch.ones(3, { requires_grad = true })
  return ps
end

local PY_PARAMS = [[
def params_with_grads():
    torch.manual_seed(1)
    ps = []
    for i, shape in enumerate([(3, 4), (4,), (2, 2)], 1):
        p = torch.ones(shape, requires_grad=True)
        p.grad = torch.randn(shape) * (i * 0.7)
        ps.append(p)
    ps.append(torch.ones(3, requires_grad=True))
    return ps
]]

describe("nn.utils norms and clipping", function()
  local ref
  setup(function()
    ref = pytorch.run(PY_PARAMS .. [[
import warnings
out = {}
ps = params_with_grads()
grads = [p.grad for p in ps if p.grad is not None]
for name, nt in [('2', 2.0), ('1', 1), ('inf', 'inf'), ('3', 3)]:
    out['total_' + name] = torch.nn.utils.get_total_norm(grads, nt).item()
out['single'] = torch.nn.utils.get_total_norm(grads[0]).item()
out['empty'] = torch.nn.utils.get_total_norm([]).item()
total = torch.nn.utils.get_total_norm(grads)
torch.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
out['clipped'] = [p.grad.flatten().tolist() for p in ps if p.grad is not None]
ps = params_with_grads()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    out['old_total'] = torch.nn.utils.clip_grad_norm(ps, 1.0, norm_type=1).item()
    out['old_warning'] = [str(w[0].message), w[0].category.__name__]
out['old_clipped'] = [p.grad.flatten().tolist() for p in ps if p.grad is not None]
try:
    torch.nn.utils.get_total_norm([torch.tensor([float('inf')])], error_if_nonfinite=True)
except RuntimeError as e:
    out['nonfinite'] = str(e)
print(json.dumps(out))]])
  end)

  it("get_total_norm is PyTorch's for norm types 2, 1, inf and 3, one tensor and none", function()
    local ps = params_with_grads()
    local grads = { ps[1].grad, ps[2].grad, ps[3].grad }
    for name, nt in pairs({ ["2"] = 2.0, ["1"] = 1, inf = "inf", ["3"] = { norm_type = 3 } }) do
      local total = type(nt) == "table" and U.get_total_norm(grads, nt) or U.get_total_norm(grads, nt)
      approx.check(total, ref["total_" .. name], 0)
    end
    approx.check(U.get_total_norm(grads, math.huge), ref.total_inf, 0)
    approx.check(U.get_total_norm(grads[1]), ref.single, 0)
    approx.check(U.get_total_norm({}), ref.empty, 0)
  end)

  it("clip_grads_with_norm_ scales the grads by max_norm / (total + 1e-6), as PyTorch", function()
    local ps = params_with_grads()
    local total = U.get_total_norm({ ps[1].grad, ps[2].grad, ps[3].grad })
    assert.is_nil(U.clip_grads_with_norm_(ps, 0.5, total))
    for i = 1, 3 do approx.check(ps[i].grad:flatten(), ref.clipped[i], 0) end
    assert.is_nil(ps[4].grad)
  end)

  it("clip_grad_norm (deprecated) clips like clip_grad_norm_ and warns once with PyTorch's text", function()
    local saved, seen = U._warn, {}
    U._warn = function(msg) seen[#seen + 1] = msg end
    local ok, e = pcall(function()
      local ps = params_with_grads()
      approx.check(U.clip_grad_norm(ps, 1.0, { norm_type = 1 }), ref.old_total, 0)
      for i = 1, 3 do approx.check(ps[i].grad:flatten(), ref.old_clipped[i], 0) end
      U.clip_grad_norm(ps, 1.0)
    end)
    U._warn = saved
    assert(ok, e)
    assert.are.equal("FutureWarning", ref.old_warning[2])
    assert.are.same({ ref.old_warning[1] }, seen)
  end)

  it("raises on misuse", function()
    local msg = err(U.get_total_norm, { torch.tensor({ math.huge }) }, { error_if_nonfinite = true })
    assert.matches("the total norm of order 2.0 for gradients from `parameters` is non%-finite", msg)
    assert.matches("order 2.0 for gradients from `parameters` is non%-finite", ref.nonfinite)
    assert.matches("Tensor expected, got number", err(U.clip_grads_with_norm_, params_with_grads(), 1.0, 2.0))
    assert.matches("number expected, got string", err(U.clip_grads_with_norm_, params_with_grads(), "1", torch.tensor(1.0)))
    assert.matches("array of tensors expected, item 2 is a number", err(U.get_total_norm, { torch.ones(2), 3 }))
    assert.matches("missing required argument 'total_norm'", err(U.clip_grads_with_norm_, params_with_grads(), 1.0))
  end)
end)

describe("nn.utils parameters as one vector, skip_init", function()
  local ref
  setup(function()
    ref = pytorch.run([[
out = {}
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
v = torch.nn.utils.parameters_to_vector(lin.parameters())
out['vector'] = v.tolist()
(v * torch.arange(8.0)).sum().backward()
out['grads'] = [lin.weight.grad.flatten().tolist(), lin.bias.grad.tolist()]
torch.manual_seed(3)
m = torch.nn.utils.skip_init(torch.nn.Linear, 5, 2)
out['after_skip'] = torch.rand(4).tolist()
print(json.dumps(out))]])
  end)

  it("parameters_to_vector concatenates in order and the gradient flows back", function()
    torch.manual_seed(0)
    local lin = nn.Linear(3, 2)
    local v = U.parameters_to_vector(lin:parameters())
    approx.check(v, ref.vector, 0)
    local loss = (v * torch.arange(8.0)):sum()
    loss:backward()
    approx.check(lin.weight.grad:flatten(), ref.grads[1], 0)
    approx.check(lin.bias.grad, ref.grads[2], 0)
  end)

  it("vector_to_parameters gives each parameter its slice of the vector, sharing its storage", function()
    local lin = nn.Linear(3, 2)
    local vec = torch.arange(8, { dtype = torch.float32 })
    assert.is_nil(U.vector_to_parameters(vec, lin:parameters()))
    approx.check(lin.weight, { { 0, 1, 2 }, { 3, 4, 5 } }, 0)
    approx.check(lin.bias, { 6, 7 }, 0)
    vec:add_(1)
    approx.check(lin.bias, { 7, 8 }, 0)
    assert.is_true(lin.weight.requires_grad)
  end)

  it("skip_init builds the module and leaves the random stream where PyTorch's does", function()
    torch.manual_seed(3)
    local m = U.skip_init(nn.Linear, 5, 2)
    approx.check(torch.rand(4), ref.after_skip, 0)
    assert.are.same({ 2, 5 }, m.weight:size())
    local k = U.skip_init(nn.Linear, { in_features = 6, out_features = 1, bias = false })
    assert.are.same({ 1, 6 }, k.weight:size())
    assert.is_nil(k.bias)
  end)

  it("raises on misuse", function()
    assert.matches("expected torch.Tensor, but got: number", err(U.vector_to_parameters, 3, {}))
    assert.matches("at least 8 elements", err(U.vector_to_parameters, torch.zeros(5), nn.Linear(3, 2):parameters()))
    assert.matches("a Module %(pass model:parameters%(%)%)", err(U.parameters_to_vector, nn.Linear(3, 2)))
    assert.matches("Module must support a 'device' arg", err(U.skip_init, nn.ReLU))
    assert.matches("Expected a Module", err(U.skip_init, {}))
  end)
end)

describe("nn.utils fusion and memory format", function()
  local ref
  setup(function()
    ref = pytorch.run([[
out = {}
def bn_stats(bn):
    bn.running_mean.normal_(); bn.running_var.uniform_(0.5, 2.0)
    if bn.weight is not None:
        bn.weight.data.uniform_(0.5, 1.5); bn.bias.data.normal_()
torch.manual_seed(0)
conv = torch.nn.Conv2d(3, 4, 3).eval(); bn = torch.nn.BatchNorm2d(4).eval(); bn_stats(bn)
x = torch.randn(2, 3, 5, 5)
f = torch.nn.utils.fuse_conv_bn_eval(conv, bn)
out['conv'] = [f.weight.flatten().tolist(), f.bias.tolist(), f(x).flatten().tolist(), bn(conv(x)).flatten().tolist()]
torch.manual_seed(1)
convt = torch.nn.ConvTranspose2d(4, 3, 2, bias=False).eval(); bn = torch.nn.BatchNorm2d(3).eval(); bn_stats(bn)
f = torch.nn.utils.fuse_conv_bn_eval(convt, bn, transpose=True)
out['convt'] = [f.weight.flatten().tolist(), f.bias.tolist(), f.bias.requires_grad]
torch.manual_seed(2)
lin = torch.nn.Linear(5, 3).eval(); bn = torch.nn.BatchNorm1d(3).eval(); bn_stats(bn)
f = torch.nn.utils.fuse_linear_bn_eval(lin, bn)
out['linear'] = [f.weight.flatten().tolist(), f.bias.tolist()]
w, b = torch.nn.utils.fuse_linear_bn_weights(lin.weight, None, bn.running_mean, bn.running_var, 1e-3, bn.weight, bn.bias)
out['linear_w'] = [w.flatten().tolist(), b.tolist(), w.requires_grad, b.requires_grad]
seq = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.ConvTranspose2d(4, 2, 2), torch.nn.Conv3d(2, 2, 1))
torch.nn.utils.convert_conv2d_weight_memory_format(seq, torch.channels_last)
out['strides2'] = [list(seq[0].weight.stride()), list(seq[2].weight.stride()), list(seq[3].weight.stride())]
torch.nn.utils.convert_conv3d_weight_memory_format(seq, torch.channels_last_3d)
out['strides3'] = list(seq[3].weight.stride())
print(json.dumps(out))]])
  end)

  local function bn_stats(bn)
    bn.running_mean:normal_()
    bn.running_var:uniform_(0.5, 2.0)
    if bn.weight ~= nil then
      bn.weight.data:uniform_(0.5, 1.5)
      bn.bias.data:normal_()
    end
  end

  it("fuse_conv_bn_eval gives PyTorch's fused weights and a conv computing bn(conv(x))", function()
    torch.manual_seed(0)
    local conv, bn = nn.Conv2d(3, 4, 3):eval(), nn.BatchNorm2d(4):eval()
    bn_stats(bn)
    local x = torch.randn(2, 3, 5, 5)
    local before = conv.weight:clone()
    local f = U.fuse_conv_bn_eval(conv, bn)
    approx.check(f.weight:flatten(), ref.conv[1], 0)
    approx.check(f.bias, ref.conv[2], 0)
    approx.check(f(x):flatten(), ref.conv[3], TOL)
    approx.check(f(x):flatten(), ref.conv[4], TOL)
    approx.check(conv.weight, before:tolist(), 0)   -- the input layer is left alone
    assert.are_not.equal(conv, f)
  end)

  it("fuse_conv_bn_eval with transpose and no conv bias, as PyTorch (the new bias does not require grad)", function()
    torch.manual_seed(1)
    local convt, bn = nn.ConvTranspose2d(4, 3, 2, { bias = false }):eval(), nn.BatchNorm2d(3):eval()
    bn_stats(bn)
    local f = U.fuse_conv_bn_eval(convt, bn, { transpose = true })
    approx.check(f.weight:flatten(), ref.convt[1], 0)
    approx.check(f.bias, ref.convt[2], 0)
    assert.are.equal(ref.convt[3], f.bias.requires_grad)
    assert.is_true(nn.is_parameter(f.bias))
  end)

  it("fuse_linear_bn_eval and fuse_linear_bn_weights are PyTorch's", function()
    torch.manual_seed(2)
    local lin, bn = nn.Linear(5, 3):eval(), nn.BatchNorm1d(3):eval()
    bn_stats(bn)
    local f = U.fuse_linear_bn_eval(lin, bn)
    approx.check(f.weight:flatten(), ref.linear[1], 0)
    approx.check(f.bias, ref.linear[2], 0)
    local w, b = U.fuse_linear_bn_weights(lin.weight, nil, bn.running_mean, bn.running_var, 1e-3, bn.weight, bn.bias)
    approx.check(w:flatten(), ref.linear_w[1], 0)
    approx.check(b, ref.linear_w[2], 0)
    assert.are.same({ ref.linear_w[3], ref.linear_w[4] }, { w.requires_grad, b.requires_grad })
  end)

  it("convert_conv2d/3d_weight_memory_format re-lay the conv weights as PyTorch, values unchanged", function()
    local seq = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.ConvTranspose2d(4, 2, 2), nn.Conv3d(2, 2, 1))
    local w0 = seq[0].weight:clone()
    local x = torch.randn(1, 3, 6, 6)
    local y0 = seq[0](x)
    assert.are.equal(seq, U.convert_conv2d_weight_memory_format(seq, "channels_last"))
    assert.are.same(ref.strides2, { seq[0].weight:stride(), seq[2].weight:stride(), seq[3].weight:stride() })
    approx.check(seq[0].weight, w0:tolist(), 0)
    approx.check(seq[0](x), y0:tolist(), TOL)
    assert.is_true(nn.is_parameter(seq[0].weight))
    U.convert_conv3d_weight_memory_format(seq, { memory_format = "channels_last_3d" })
    assert.are.same(ref.strides3, seq[3].weight:stride())
  end)

  it("raises on misuse", function()
    local conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
    assert.matches("Fusion only for eval!", err(U.fuse_conv_bn_eval, conv, bn:eval()))
    assert.matches("linear.out_features == bn.num_features", err(U.fuse_linear_bn_eval, nn.Linear(2, 3):eval(),
      nn.BatchNorm1d(4):eval()))
    assert.matches("running_mean and bn.running_var must not be None", err(U.fuse_conv_bn_eval, conv:eval(),
      nn.BatchNorm2d(4, { track_running_stats = false }):eval()))
    assert.matches("memory format", err(U.convert_conv2d_weight_memory_format, conv, "nhwc"))
    assert.matches("Tensor expected, got string", err(U.fuse_conv_bn_weights, "w", nil, torch.zeros(2), torch.ones(2), 1e-5,
      nil, nil))
  end)
end)

describe("nn.utils weight_norm and spectral_norm (hook forms)", function()
  local ref
  setup(function()
    ref = pytorch.run([[
import warnings
out = {}
torch.manual_seed(0)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    m = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3), dim=1)
    out['wn_warning'] = [str(w[0].message), w[0].category.__name__]
x = torch.randn(5, 4)
y = m(x); (y * y).sum().backward()
out['wn'] = [list(m.state_dict().keys()), m.weight_g.flatten().tolist(), y.flatten().tolist(),
             m.weight_g.grad.flatten().tolist(), m.weight_v.grad.flatten().tolist()]
torch.nn.utils.remove_weight_norm(m)
out['wn_removed'] = [list(m.state_dict().keys()), m.weight.flatten().tolist()]
torch.manual_seed(1)
s = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3), n_power_iterations=2)
keys = list(s.state_dict().keys())
u0 = s.weight_u.tolist()
x = torch.randn(5, 4)
y1 = s(x); y2 = s(x); (y2 * y2).sum().backward()
s.eval(); y3 = s(x)
out['sn'] = [keys, u0, y1.flatten().tolist(), y2.flatten().tolist(), s.weight_orig.grad.flatten().tolist(),
             y3.flatten().tolist(), s.weight_u.tolist(), s.weight_v.tolist()]
torch.nn.utils.remove_spectral_norm(s)
out['sn_removed'] = [list(s.state_dict().keys()), s.weight.flatten().tolist()]
torch.manual_seed(2)
t = torch.nn.utils.spectral_norm(torch.nn.ConvTranspose2d(2, 3, 2))
out['snt'] = [t.weight_u.tolist(), t.weight_v.tolist()]
print(json.dumps(out))]])
  end)

  it("weight_norm: weight_g / weight_v, outputs and gradients as PyTorch; warns once", function()
    local hooks = require "torch.nn.utils_norm_hooks"
    local saved, seen = hooks._warn, {}
    hooks._reset_warnings()
    hooks._warn = function(msg) seen[#seen + 1] = msg end
    local ok, m = pcall(U.weight_norm, nn.Linear(2, 2))
    if ok then
      torch.manual_seed(0)
      ok, m = pcall(U.weight_norm, nn.Linear(4, 3), { dim = 1 })
    end
    hooks._warn = saved
    assert(ok, m)
    assert.are.equal("FutureWarning", ref.wn_warning[2])
    assert.are.same({ ref.wn_warning[1] }, seen)
    local x = torch.randn(5, 4)
    local y = m(x)
    local loss = (y * y):sum()
    loss:backward()
    assert.are.same(ref.wn[1], keys(m:state_dict()))
    approx.check(m.weight_g:flatten(), ref.wn[2], 0)
    approx.check(y:flatten(), ref.wn[3], TOL)
    approx.check(m.weight_g.grad:flatten(), ref.wn[4], TOL)
    approx.check(m.weight_v.grad:flatten(), ref.wn[5], TOL)
    assert.are.equal(m, U.remove_weight_norm(m))
    assert.are.same(ref.wn_removed[1], keys(m:state_dict()))
    approx.check(m.weight:flatten(), ref.wn_removed[2], TOL)
    assert.is_true(nn.is_parameter(m.weight))
  end)

  it("spectral_norm: u, v and sigma follow PyTorch's power iterations (training and eval)", function()
    torch.manual_seed(1)
    local s = U.spectral_norm(nn.Linear(4, 3), { n_power_iterations = 2 })
    assert.are.same(ref.sn[1], keys(s:state_dict()))
    approx.check(s.weight_u, ref.sn[2], 0)
    local x = torch.randn(5, 4)
    local y1 = s(x)
    local y2 = s(x)
    local loss = (y2 * y2):sum()
    loss:backward()
    s:eval()
    local y3 = s(x)
    approx.check(y1:flatten(), ref.sn[3], TOL)
    approx.check(y2:flatten(), ref.sn[4], TOL)
    approx.check(s.weight_orig.grad:flatten(), ref.sn[5], TOL)
    approx.check(y3:flatten(), ref.sn[6], TOL)
    approx.check(s.weight_u, ref.sn[7], TOL)
    approx.check(s.weight_v, ref.sn[8], TOL)
    U.remove_spectral_norm(s)
    assert.are.same(ref.sn_removed[1], keys(s:state_dict()))
    approx.check(s.weight:flatten(), ref.sn_removed[2], TOL)
  end)

  it("spectral_norm of a ConvTranspose normalises over dim 1 by default", function()
    torch.manual_seed(2)
    local t = U.spectral_norm(nn.ConvTranspose2d(2, 3, 2))
    approx.check(t.weight_u, ref.snt[1], 0)
    approx.check(t.weight_v, ref.snt[2], 0)
  end)

  it("raises on misuse", function()
    local m = U.spectral_norm(nn.Linear(2, 2))
    assert.matches("Cannot register two spectral_norm hooks on the same parameter weight", err(U.spectral_norm, m))
    assert.matches("spectral_norm of 'bias' not found", err(U.remove_spectral_norm, m, "bias"))
    assert.matches("weight_norm of 'weight' not found", err(U.remove_weight_norm, nn.Linear(2, 2)))
    assert.matches("Expected n_power_iterations to be positive", err(U.spectral_norm, nn.Linear(2, 2), "weight", 0))
    assert.matches("Module expected, got number", err(U.weight_norm, 3))
  end)
end)
