--[[
  spec/amp/grad_scaler_spec.lua — torch.amp.GradScaler (lua/torch/amp/grad_scaler.lua).

  Covers: construction in PyTorch 2.11's form (device first, then options) and with an options
  table alone; scale() values and shapes (the scale is 0-dim, so outputs keep their shape; tables
  of outputs; a 0-dim bfloat16 loss promotes to float32); unscale_ (gradients divided by the scale, the inf check); step()
  skipping the optimizer on inf/NaN gradients (returns nil) and returning optimizer:step()'s
  results otherwise; update(): backoff on inf, growth after growth_interval clean steps, a growth
  that would overflow float32 is dropped, update(new_scale) by number or tensor; state_dict /
  load_state_dict round trip; a disabled scaler passing everything through; autocast + scaler on
  a small model; misuse errors.

  Parity: the reference is PyTorch 2.11's torch.amp.GradScaler("cpu", ...), which runs libtorch's
  CPU kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_), as ltorch does.
  The same 12-step sequence (two param groups, an inf at step 4, a NaN at step 9, an explicit
  unscale_ at step 6, update(512.0) at step 11) then a state_dict round trip into a fresh scaler
  must give the same step results, scales, growth trackers, gradients and parameters
  (tolerance atol 1e-6 + rtol 1e-5; all values are exact in float32).

  The optimizer is a tiny inline SGD with PyTorch's optimizer shape (param_groups, step()); one
  spec also drives torch.optim.SGD.

  Run:  build/ltorch /usr/bin/busted spec/amp/grad_scaler_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local cjson = require "cjson"
local py = approx.py

local f32 = torch.float32
local inf, nan = math.huge, 0 / 0

local function ft(values, requires_grad) return torch.tensor(values, { dtype = f32, requires_grad = requires_grad }) end

-- SGD with PyTorch's optimizer shape; step() returns a marker so skipped steps are visible.
local function SGD(groups, lr)
  local opt = { param_groups = {} }
  for i, g in ipairs(groups) do opt.param_groups[i] = { params = g } end
  function opt:step(...)
    torch.no_grad(function()
      for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
          if p.grad ~= nil then p:sub_(p.grad * lr) end
        end
      end
    end)
    return "stepped", select("#", ...)
  end
  return opt
end

---------------------------------------------------------------- the parity sequence
local LR = 0.125
local init = { w = { 0.5, -1.5, 2.0 }, b = { 0.25 }, v = { 1.0, 3.0 } }
-- step i: x (w's input), s (b's factor); inf at step 4, NaN at step 9
local steps = {}
for i = 1, 12 do
  local x = { 0.25 * i, -0.5, 1.0 - 0.125 * i }
  if i == 4 then x[2] = inf end
  if i == 9 then x[1] = nan end
  steps[i] = { x = x, s = 0.5 * ((i % 3) - 1) }
end
local UNSCALE_AT, NEW_SCALE_AT, NEW_SCALE = 6, 11, 512.0
local CONTINUE = 4   -- steps run after the state_dict round trip

local function run_lua(scaler_opts)
  local P = { w = ft(init.w, true), b = ft(init.b, true), v = ft(init.v, true) }
  local opt = SGD({ { P.w, P.b }, { P.v } }, LR)
  local scaler = torch.amp.GradScaler("cpu", scaler_opts)
  local function iteration(sc, i)
    local st = steps[i]
    for _, p in pairs(P) do p.grad = nil end
    local loss = (P.w * ft(st.x)):sum() + P.b:sum() * st.s + (P.v * P.v):sum() * 0.5
    sc:scale(loss):backward()
    local rec = {}
    if i == UNSCALE_AT then
      sc:unscale_(opt)
      rec.unscaled = P.w.grad:tolist()
    end
    local r = sc:step(opt)
    rec.stepped = r or cjson.null
    rec.gw = r and P.w.grad:tolist() or cjson.null
    rec.gv = r and P.v.grad:tolist() or cjson.null
    sc:update(i == NEW_SCALE_AT and NEW_SCALE or nil)
    rec.scale, rec.tracker = sc:get_scale(), sc:_get_growth_tracker()
    rec.w, rec.b, rec.v = P.w:tolist(), P.b:tolist(), P.v:tolist()
    return rec
  end
  local out = { steps = {} }
  for i = 1, #steps do out.steps[i] = iteration(scaler, i) end
  out.state_dict = scaler:state_dict()
  local fresh = torch.amp.GradScaler("cpu")
  fresh:load_state_dict(out.state_dict)
  out.loaded_state_dict = fresh:state_dict()
  out.continued = {}
  for i = 1, CONTINUE do out.continued[i] = iteration(fresh, i) end
  return out
end

local REFERENCE = [==[
import warnings
warnings.simplefilter('ignore')

class SGD:
    def __init__(self, groups, lr):
        self.param_groups = [{'params': g} for g in groups]; self.lr = lr
    def step(self):
        with torch.no_grad():
            for g in self.param_groups:
                for p in g['params']:
                    if p.grad is not None:
                        p.sub_(p.grad * self.lr)
        return 'stepped'

P = {k: torch.tensor(v, dtype=torch.float32, requires_grad=True) for k, v in INIT.items()}
opt = SGD([[P['w'], P['b']], [P['v']]], LR)
scaler = torch.amp.GradScaler('cpu', **OPTS)

def iteration(sc, i):
    st = STEPS[i]
    for p in P.values():
        p.grad = None
    loss = (P['w'] * torch.tensor(st['x'], dtype=torch.float32)).sum() + P['b'].sum() * st['s'] + (P['v'] * P['v']).sum() * 0.5
    sc.scale(loss).backward()
    rec = {}
    if i == UNSCALE_AT - 1:
        sc.unscale_(opt)
        rec['unscaled'] = P['w'].grad.tolist()
    r = sc.step(opt)
    rec['stepped'] = r
    rec['gw'] = P['w'].grad.tolist() if r else None
    rec['gv'] = P['v'].grad.tolist() if r else None
    sc.update(NEW_SCALE if i == NEW_SCALE_AT - 1 else None)
    rec['scale'] = sc.get_scale(); rec['tracker'] = sc._get_growth_tracker()
    rec['w'] = P['w'].tolist(); rec['b'] = P['b'].tolist(); rec['v'] = P['v'].tolist()
    return rec

out = {'steps': [iteration(scaler, i) for i in range(len(STEPS))]}
out['state_dict'] = scaler.state_dict()
fresh = torch.amp.GradScaler('cpu')
fresh.load_state_dict(out['state_dict'])
out['loaded_state_dict'] = fresh.state_dict()
out['continued'] = [iteration(fresh, i) for i in range(CONTINUE)]
print(json.dumps(out))
]==]

local function reference(scaler_opts)
  local function step_literal(st)
    local x = {}
    for i, v in ipairs(st.x) do
      x[i] = v ~= v and "float('nan')" or (v == inf and "float('inf')" or py(v))
    end
    return ("{'x': [%s], 's': %s}"):format(table.concat(x, ", "), py(st.s))
  end
  local lines = {}
  for i, st in ipairs(steps) do lines[i] = step_literal(st) end
  local opts = {}
  for k, v in pairs(scaler_opts) do opts[#opts + 1] = ("'%s': %s"):format(k, py(v)) end
  local head = table.concat({
    ("INIT = {'w': %s, 'b': %s, 'v': %s}"):format(py(init.w), py(init.b), py(init.v)),
    "STEPS = [" .. table.concat(lines, ", ") .. "]",
    ("LR = %s; UNSCALE_AT = %d; NEW_SCALE_AT = %d; NEW_SCALE = float(%s); CONTINUE = %d"):format(
      py(LR), UNSCALE_AT, NEW_SCALE_AT, py(NEW_SCALE), CONTINUE),
    "OPTS = {" .. table.concat(opts, ", ") .. "}",
  }, "\n")
  return pytorch.run(head .. "\n" .. REFERENCE)
end

local function check_record(got, want, where)
  for _, k in ipairs({ "stepped", "scale", "tracker", "w", "b", "v", "gw", "gv", "unscaled" }) do
    local g, w = got[k], want[k]
    if w == nil or w == cjson.null then
      assert(g == nil or g == cjson.null, where .. "." .. k .. ": expected null, got " .. tostring(g))
    elseif type(w) == "string" then
      assert.are.equal(w, g, where .. "." .. k)
    else
      local ok, err = pcall(approx.check, g, w)
      assert(ok, where .. "." .. k .. ": " .. tostring(err))
    end
  end
end

describe("GradScaler against PyTorch's torch.amp.GradScaler('cpu')", function()
  local OPTS = { init_scale = 1024.0, growth_interval = 3 }
  local ref, got
  setup(function()
    ref = reference(OPTS)
    got = run_lua(OPTS)
  end)

  it("gives the same step results, scales, trackers, gradients and parameters", function()
    assert.are.equal(#ref.steps, #got.steps)
    for i = 1, #ref.steps do check_record(got.steps[i], ref.steps[i], "step " .. i) end
  end)

  it("skips exactly the steps with inf/NaN gradients and backs off there", function()
    for i, rec in ipairs(got.steps) do
      assert.are.equal(i ~= 4 and i ~= 9, rec.stepped ~= cjson.null, "step " .. i)
    end
    assert.are.same(got.steps[3].w, got.steps[4].w)   -- parameters untouched by a skipped step
    assert.are.equal(got.steps[3].scale / 2, got.steps[4].scale)
  end)

  it("has the same state_dict, and a loaded scaler continues the same way", function()
    assert.are.same(ref.state_dict, got.state_dict)
    assert.are.same(ref.loaded_state_dict, got.loaded_state_dict)
    for i = 1, CONTINUE do check_record(got.continued[i], ref.continued[i], "continued step " .. i) end
  end)

  it("matches with PyTorch's default settings too", function()
    local r, g = reference({}), run_lua({})
    for i = 1, #r.steps do check_record(g.steps[i], r.steps[i], "step " .. i) end
    assert.are.same(r.state_dict, g.state_dict)
    assert.are.same({ scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000, _growth_tracker = 0 },
      torch.amp.GradScaler("cpu"):state_dict())
  end)
end)

---------------------------------------------------------------- behaviour
-- One parameter p (2 elements) with loss = (p * x):sum(): p.grad = x * scale before unscaling.
local function single(_, opts)
  local p = ft({ 1.0, 2.0 }, true)
  local opt = SGD({ { p } }, LR)
  local scaler = torch.amp.GradScaler("cpu", opts)
  local function iterate(xs)
    p.grad = nil
    scaler:scale((p * ft(xs)):sum()):backward()
    local r = scaler:step(opt)
    scaler:update()
    return r
  end
  return p, opt, scaler, iterate
end

describe("GradScaler behaviour", function()
  it("takes PyTorch 2.11's device-first form, or an options table (device among the options)", function()
    local a = torch.amp.GradScaler("cpu", { init_scale = 8.0, growth_interval = 7 })
    assert.is_true(a:is_enabled())
    assert.are.same({ scale = 8, growth_factor = 2, backoff_factor = 0.5, growth_interval = 7, _growth_tracker = 0 },
      a:state_dict())
    approx.check(a:scale(ft({ 1, -2 })), { 8, -16 })
    assert.are.equal(4, torch.amp.GradScaler("cpu", { init_scale = 4.0 }):get_scale())
    assert.are.equal(4, torch.amp.GradScaler({ device = "cpu", init_scale = 4.0 }):get_scale())
    assert.is_true(torch.amp.GradScaler("cpu"):is_enabled())
    assert.is_false(torch.amp.GradScaler("cpu", { enabled = false }):is_enabled())
  end)

  it("disables itself for device \"cuda\" when CUDA is not available, as PyTorch's", function()
    local s = torch.amp.GradScaler("cuda", { init_scale = 8.0 })
    assert.are.equal(torch.cuda.is_available(), s:is_enabled())
    if not torch.cuda.is_available() then
      assert.are.equal(1.0, s:get_scale())
      assert.are.same({}, s:state_dict())
    end
    -- no device means "cuda", as in PyTorch 2.11: a ported GradScaler() behaves the same here
    local pytorch_enabled = pytorch.run [[
import warnings
warnings.simplefilter("ignore")
print(json.dumps(torch.amp.GradScaler().is_enabled()))
]]
    assert.are.equal(pytorch_enabled, torch.amp.GradScaler():is_enabled())
    assert.are.equal(pytorch_enabled, torch.amp.GradScaler({ init_scale = 8.0 }):is_enabled())
  end)

  it("scales a loss: a 0-dim loss stays 0-dim (the scale is 0-dim), times the scale", function()
    local scaler = torch.amp.GradScaler("cpu")
    local y = scaler:scale(torch.tensor(1.5, { dtype = f32 }))
    assert.are.same({}, y:size())
    approx.check(y, 1.5 * 65536)
    approx.check(torch.amp.GradScaler("cpu", { init_scale = 8.0 }):scale(ft({ 1, -2, 3 })), { 8, -16, 24 })
  end)

  it("scales a nested table of outputs; a 0-dim bfloat16 loss promotes to float32, a 1-d one does not", function()
    local scaler = torch.amp.GradScaler("cpu", { init_scale = 4.0 })
    local out = scaler:scale({ ft({ 1, 2 }), { ft({ 3 }), key = ft({ 0.5 }) } })
    approx.check(out[1], { 4, 8 })
    approx.check(out[2][1], { 12 })
    approx.check(out[2].key, { 2 })
    local y = scaler:scale(torch.tensor(0.75, { dtype = torch.bfloat16 }))
    assert.are.equal(f32, y.dtype)
    approx.check(y, 3)
    -- a dimensioned tensor times a 0-dim one keeps its dtype (PyTorch's type promotion)
    assert.are.equal(torch.bfloat16, scaler:scale(torch.ones(2, { dtype = torch.bfloat16 })).dtype)
  end)

  it("unscale_ divides gradients by the scale, and step then uses them as they are", function()
    local p, opt, scaler = single()
    scaler:scale((p * ft({ 0.5, -3 })):sum()):backward()
    approx.check(p.grad, { 0.5 * 65536, -3 * 65536 })
    scaler:unscale_(opt)
    approx.check(p.grad, { 0.5, -3 })
    assert.are.equal("stepped", scaler:step(opt))
    approx.check(p.grad, { 0.5, -3 })
    approx.check(p, { 1 - 0.5 * LR, 2 + 3 * LR })
  end)

  it("returns every result of optimizer:step(...) and passes its extra arguments", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum()):backward()
    local a, b = scaler:step(opt, "x", "y")
    assert.are.same({ "stepped", 2 }, { a, b })
  end)

  it("skips the step on an inf or NaN gradient, returns nil and backs the scale off", function()
    for _, bad in ipairs({ inf, -inf, nan }) do
      local p, _, scaler, iterate = single(nil, { init_scale = 64.0 })
      assert.is_nil(iterate({ bad, 1 }))
      approx.check(p, { 1, 2 })
      assert.are.equal(32, scaler:get_scale())
      assert.are.equal(0, scaler:_get_growth_tracker())
    end
  end)

  it("grows the scale after growth_interval clean steps and restarts the count after an inf", function()
    local _, _, scaler, iterate = single(nil, { init_scale = 16.0, growth_factor = 4.0, backoff_factor = 0.25, growth_interval = 2 })
    local trace = {}
    for i, xs in ipairs({ { 1, 1 }, { 1, 1 }, { 1, 1 }, { inf, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 } }) do
      iterate(xs)
      trace[i] = { scale = scaler:get_scale(), tracker = scaler:_get_growth_tracker() }
    end
    assert.are.same({
      { scale = 16, tracker = 1 }, { scale = 64, tracker = 0 }, { scale = 64, tracker = 1 },
      { scale = 16, tracker = 0 }, { scale = 16, tracker = 1 }, { scale = 64, tracker = 0 }, { scale = 64, tracker = 1 },
    }, trace)
  end)

  it("keeps the scale when growing it would overflow float32", function()
    local _, _, scaler, iterate = single(nil, { init_scale = 2.0 ^ 127, growth_interval = 1 })
    assert.are.equal("stepped", iterate({ 2.0 ^ -126, 0 }))
    assert.are.equal(2.0 ^ 127, scaler:get_scale())
    assert.are.equal(0, scaler:_get_growth_tracker())
  end)

  it("checks every optimizer: one inf anywhere backs the scale off, each step skipped on its own", function()
    local p1, p2 = ft({ 1 }, true), ft({ 1 }, true)
    local o1, o2 = SGD({ { p1 } }, LR), SGD({ { p2 } }, LR)
    local scaler = torch.amp.GradScaler("cpu", { init_scale = 8.0 })
    scaler:scale(p1:sum() + (p2 * ft({ inf })):sum()):backward()
    assert.are.equal("stepped", scaler:step(o1))
    assert.is_nil(scaler:step(o2))
    scaler:update()
    assert.are.equal(4, scaler:get_scale())
    approx.check(p1, { 1 - LR })
    approx.check(p2, { 1 })
  end)

  it("update(new_scale) sets the scale from a number or a 0-dim tensor; a [1] tensor fails as in PyTorch", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum()):backward()
    scaler:step(opt)
    scaler:update(128.0)
    assert.are.equal(128, scaler:get_scale())
    scaler:update(torch.tensor(0.5, { dtype = f32 }))
    assert.are.equal(0.5, scaler:get_scale())
    local ok, err = pcall(scaler.update, scaler, ft({ 0.25 }))   -- PyTorch 2.11: copy_ into the 0-dim scale
    assert.is_false(ok)
    assert.matches("output with shape %[%] doesn't match the broadcast shape %[1%]", tostring(err))
    scaler:update(torch.full({}, 4, { dtype = torch.int64 }))   -- any 1-element tensor, copied
    assert.are.equal(4, scaler:get_scale())
  end)

  it("round-trips state_dict into a fresh scaler, before and after its first scale()", function()
    local _, _, scaler, iterate = single(nil, { init_scale = 32.0, growth_interval = 5, growth_factor = 3.0, backoff_factor = 0.125 })
    iterate({ 1, 1 }); iterate({ 1, 1 }); iterate({ inf, 1 }); iterate({ 1, 1 })
    local sd = scaler:state_dict()
    assert.are.same({ scale = 4, growth_factor = 3, backoff_factor = 0.125, growth_interval = 5, _growth_tracker = 1 }, sd)
    local fresh = torch.amp.GradScaler("cpu")
    fresh:load_state_dict(sd)
    assert.are.same(sd, fresh:state_dict())
    local p, _, used, it2 = single(nil, {})
    it2({ 1, 1 })
    used:load_state_dict(sd)
    assert.are.same(sd, used:state_dict())
    assert.are.equal(3, used:get_growth_factor())
    assert.are.equal(0.125, used:get_backoff_factor())
    assert.are.equal(5, used:get_growth_interval())
    assert.is_not_nil(p)
  end)

  it("unscales together with autocast: bfloat16 forward, float32 gradients equal to PyTorch's", function()
    local F = require "torch.nn.functional"
    local X = { { 0.5, -1.0, 2.0 }, { 1.5, 0.25, -0.75 } }
    local Wv = { { 0.1, -0.2, 0.3 }, { 0.4, 0.5, -0.6 } }
    local T = { { 1.0, 0.0 }, { 0.0, 1.0 } }
    local W, b = ft(Wv, true), ft({ 0.05, -0.05 }, true)
    local opt = SGD({ { W, b } }, LR)
    local scaler = torch.amp.GradScaler("cpu")
    local loss, ydtype = torch.autocast("cpu", function()
      local y = F.linear(ft(X), W, b)
      return torch.mse_loss(y, ft(T)), y.dtype
    end)
    assert.are.equal(torch.bfloat16, ydtype)
    assert.are.equal(f32, loss.dtype)
    scaler:scale(loss):backward()
    scaler:unscale_(opt)
    assert.are.equal(f32, W.grad.dtype)
    local ref = pytorch.run(([[
import torch.nn.functional as F
W = torch.tensor(%s, requires_grad=True); b = torch.tensor([0.05, -0.05], requires_grad=True)
with torch.autocast('cpu'):
    loss = F.mse_loss(F.linear(torch.tensor(%s), W, b), torch.tensor(%s))
(loss * 65536.0).backward()
print(json.dumps({'gW': (W.grad / 65536.0).tolist(), 'gb': (b.grad / 65536.0).tolist(), 'loss': loss.item()}))
]]):format(py(Wv), py(X), "[[1.0, 0.0], [0.0, 1.0]]"))
    approx.check(W.grad, ref.gW, { atol = 1e-2, rtol = 1e-2 })
    approx.check(b.grad, ref.gb, { atol = 1e-2, rtol = 1e-2 })
    approx.check(loss:item(), ref.loss, { atol = 1e-2, rtol = 1e-2 })
    assert.are.equal("stepped", scaler:step(opt))
  end)

  it("passes everything through when disabled", function()
    local p = ft({ 1, 2 }, true)
    local opt = SGD({ { p } }, LR)
    local scaler = torch.amp.GradScaler("cpu", { enabled = false })
    assert.is_false(scaler:is_enabled())
    local loss = p:sum()
    assert.is_true(rawequal(loss, scaler:scale(loss)))
    loss:backward()
    scaler:unscale_(opt)
    approx.check(p.grad, { 1, 1 })
    assert.are.same({ "stepped", 1 }, { scaler:step(opt, 7) })
    scaler:update()
    assert.are.equal(1.0, scaler:get_scale())
    assert.are.same({}, scaler:state_dict())
    scaler:load_state_dict({})
  end)

  it("drives torch.optim.SGD (when that module is present)", function()
    local ok, optim = pcall(require, "torch.optim")
    if not ok then pending("torch.optim is not available") return end
    local p = ft({ 1, 2 }, true)
    local opt = optim.SGD({ p }, { lr = 0.5 })
    local scaler = torch.amp.GradScaler("cpu", { init_scale = 256.0 })
    for _, xs in ipairs({ { 1, -1 }, { inf, 1 }, { 0.5, 0.5 } }) do
      opt:zero_grad()
      scaler:scale((p * ft(xs)):sum()):backward()
      scaler:step(opt)
      scaler:update()
    end
    approx.check(p, { 1 - 0.5 - 0.25, 2 + 0.5 - 0.25 })   -- the inf step was skipped
    assert.are.equal(128, scaler:get_scale())
  end)

  it("has CUDA's fused kernels bound for scalers that live on a GPU", function()
    assert.are.equal("function", type(torch._amp_foreach_non_finite_check_and_unscale_))
    assert.are.equal("function", type(torch._amp_update_scale_))
  end)
end)

describe("GradScaler misuse", function()
  local err_of = require("spec.support.errors").err

  it("rejects bad constructor options", function()
    local G = torch.amp.GradScaler
    assert.matches("growth factor must be > 1.0", err_of(G, { growth_factor = 1.0 }))
    assert.matches("backoff factor must be in %(0, 1%)", err_of(G, { backoff_factor = 1.5 }))
    assert.matches("init_scale must be positive", err_of(G, { init_scale = 0 }))
    assert.matches("growth_interval must be a positive integer", err_of(G, { growth_interval = 0 }))
    assert.matches("growth_interval must be a positive integer", err_of(G, { growth_interval = 2.5 }))
    assert.matches("enabled must be a boolean, got string", err_of(G, { enabled = "yes" }))
    assert.matches("unknown option 'init'", err_of(G, { init = 2 }))
    assert.matches("bad argument #1 to 'GradScaler' %(options table expected, got number%)", err_of(G, 5))
    assert.matches("bad argument #1 to 'GradScaler' %(device string expected, got number%)", err_of(G, 5, {}))
    assert.matches("bad argument #2 to 'GradScaler' %(options table expected, got number%)", err_of(G, "cpu", 5))
    assert.matches("device given twice", err_of(G, "cpu", { device = "cpu" }))
    assert.matches("unknown option 'init'", err_of(G, "cpu", { init = 2 }))
  end)

  it("needs scale() before unscale_, step and update", function()
    local p, opt, scaler = single()
    assert.is_not_nil(p)
    assert.matches("unscale_: no scale yet.*scaler:scale%(loss", err_of(scaler.unscale_, scaler, opt))
    assert.matches("step: no scale yet", err_of(scaler.step, scaler, opt))
    assert.matches("update: no scale yet", err_of(scaler.update, scaler))
  end)

  it("enforces the unscale_ -> step -> update order", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum()):backward()
    scaler:unscale_(opt)
    assert.matches("unscale_%(%) has already been called on this optimizer since the last update%(%)",
      err_of(scaler.unscale_, scaler, opt))
    scaler:step(opt)
    assert.matches("unscale_%(%) is being called after step%(%)", err_of(scaler.unscale_, scaler, opt))
    assert.matches("step%(%) has already been called since the last update%(%)", err_of(scaler.step, scaler, opt))
    scaler:update()
    scaler:scale(p:sum()):backward()
    assert.are.equal("stepped", scaler:step(opt))   -- a new iteration after update()
  end)

  it("says when no inf checks were recorded", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum())
    assert.matches("update: no inf checks were recorded prior to update%(%)", err_of(scaler.update, scaler))
    assert.matches("step: no inf checks were recorded for this optimizer", err_of(scaler.step, scaler, opt))
  end)

  it("rejects a non-optimizer, a closure, float16 gradients and bad scale() inputs", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum()):backward()
    assert.matches("bad argument #1 to 'unscale_' %(optimizer with param_groups expected, got number%)",
      err_of(scaler.unscale_, scaler, 3))
    assert.matches("closure use is not currently supported", err_of(scaler.step, scaler, opt, function() end))
    local h = torch.ones(2, { dtype = torch.float16, requires_grad = true })
    h.grad = torch.ones(2, { dtype = torch.float16 })
    assert.matches("attempting to unscale FP16 gradients", err_of(scaler.unscale_, scaler, SGD({ { h } }, LR)))
    assert.matches("outputs must be a Tensor or a table of Tensors", err_of(scaler.scale, scaler, { 1 }))
  end)

  it("rejects a bad new_scale and bad state dicts", function()
    local p, opt, scaler = single()
    scaler:scale(p:sum()):backward()
    scaler:step(opt)
    assert.matches("bad argument #1 to 'update'", err_of(scaler.update, scaler, ft({ 1, 2 })))
    assert.matches("bad argument #1 to 'update'", err_of(scaler.update, scaler, ft({ 1 }, true)))
    assert.matches("source state dict is empty", err_of(scaler.load_state_dict, scaler, {}))
    assert.matches("key 'growth_interval' must be a number, got nil",
      err_of(scaler.load_state_dict, scaler, { scale = 1, growth_factor = 2, backoff_factor = 0.5, _growth_tracker = 0 }))
    assert.matches("bad argument #1 to 'load_state_dict' %(table expected, got string%)", err_of(scaler.load_state_dict, scaler, "x"))
  end)
end)
