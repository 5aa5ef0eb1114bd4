--[[
  spec/optim/adam_spec.lua — optim.Adam and optim.AdamW (lua/torch/optim/adam.lua) against
  PyTorch 2.11.

  Covers: betas, eps, weight_decay, amsgrad, maximize and their combinations over 6 steps of
  identical gradients (one parameter skips steps 2 and 4, so its step count lags and the
  foreach path splits the group by step count), foreach on and off, against PyTorch's
  foreach=False implementation; state (step tensors, moments) and its state_dict layout;
  per-group options; state_dict round trip; amsgrad switched on mid-run; misuse errors.

  Tolerance: bitwise (atol 0): the same libtorch kernels in the same order, and the scalar
  bias corrections computed in double precision as Python does.

  Run:  build/ltorch /usr/bin/busted spec/optim/adam_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local pytorch = require "spec.support.pytorch"

local TOL = 0

local cases = {
  { name = "adam", cls = "Adam", opts = { lr = 0.01 } },
  { name = "adam_betas_eps", cls = "Adam", opts = { lr = 0.02, betas = { 0.8, 0.95 }, eps = 1e-6 } },
  { name = "adam_weight_decay", cls = "Adam", opts = { lr = 0.01, weight_decay = 0.1 } },
  { name = "adam_amsgrad", cls = "Adam", opts = { lr = 0.01, amsgrad = true } },
  { name = "adam_maximize", cls = "Adam", opts = { lr = 0.01, maximize = true } },
  { name = "adam_all", cls = "Adam", opts = { lr = 0.03, amsgrad = true, maximize = true, weight_decay = 0.05,
    betas = { 0.85, 0.99 } } },
  { name = "adam_groups", cls = "Adam", opts = { lr = 0.01 },
    groups = { { idx = { 3, 1 }, opts = { amsgrad = true } }, { idx = { 2 }, opts = { lr = 0.1, weight_decay = 0.01 } } } },
  { name = "adamw", cls = "AdamW", opts = { lr = 0.01 } },
  { name = "adamw_decay", cls = "AdamW", opts = { lr = 0.02, weight_decay = 0.3, betas = { 0.9, 0.98 } } },
  { name = "adamw_amsgrad", cls = "AdamW", opts = { lr = 0.01, amsgrad = true } },
  { name = "adamw_maximize", cls = "AdamW", opts = { lr = 0.01, maximize = true, eps = 1e-4 } },
  { name = "adamw_groups", cls = "AdamW", opts = { lr = 0.01 },
    groups = { { idx = { 1 }, opts = { weight_decay = 0 } }, { idx = { 2, 3 }, opts = { lr = 0.005, amsgrad = true } } } },
  -- PyTorch's lr: float | Tensor and betas: tuple[float | Tensor, ...]: the Tensor flows through the update's
  -- scalar expressions as float32 tensor arithmetic; foreach=True refuses it (capturable=False)
  { name = "adam_tensor_lr", cls = "Adam", opts = { lr = torch.tensor(0.01), weight_decay = 0.1, amsgrad = true },
    foreach_refused = "lr as a Tensor is not supported for capturable=False and foreach=True" },
  { name = "adamw_tensor_lr_betas", cls = "AdamW", opts = { lr = torch.tensor(0.02), weight_decay = 0.3,
    betas = { torch.tensor(0.8), torch.tensor(0.95) } },
    foreach_refused = "lr as a Tensor is not supported for capturable=False and foreach=True" },
  { name = "adam_tensor_betas", cls = "Adam", opts = { lr = 0.02, betas = { torch.tensor(0.85), torch.tensor(0.99) } },
    foreach_refused = "betas[0] as a Tensor is not supported for capturable=False and foreach=True" },
}

describe("optim.Adam and optim.AdamW", function()
  H.describe_cases(cases, TOL, { { 1, true, 3 }, { 6, false, 2 }, { 12, true, 4 }, { 14, false, 3 } })

  it("refuses Tensor hyper-parameters where PyTorch does, with its messages", function()
    local ref = pytorch.run [[
p = [torch.zeros(2, requires_grad=True)]
calls = [dict(lr=torch.tensor([0.1, 0.2])), dict(betas=(torch.tensor(0.9), 0.999)),
         dict(betas=(torch.tensor(0.9), torch.tensor([0.9, 0.9]))), dict(lr=torch.tensor(-0.1)),
         dict(betas=(torch.tensor(1.0), torch.tensor(0.9))), dict(lr=torch.tensor(0.1), foreach=False)]
out = []
for kw in calls:
    try:
        torch.optim.Adam(p, **kw); out.append("ok")
    except (ValueError, RuntimeError) as e:
        out.append(str(e))
print(json.dumps(out))]]
    local p = { torch.zeros(2):requires_grad_() }
    local calls = { { lr = torch.tensor({ 0.1, 0.2 }) }, { betas = { torch.tensor(0.9), 0.999 } },
      { betas = { torch.tensor(0.9), torch.tensor({ 0.9, 0.9 }) } }, { lr = torch.tensor(-0.1) },
      { betas = { torch.tensor(1.0), torch.tensor(0.9) } }, { lr = torch.tensor(0.1), foreach = false } }
    for i, kw in ipairs(calls) do
      local ok, msg = pcall(torch.optim.Adam, p, kw)
      if ref[i] == "ok" then assert.is_true(ok, tostring(msg)) else
        assert.is_false(ok)
        local want = ref[i]:gsub("^Invalid", "invalid"):gsub(": [%d.-]+$", "")
        -- PyTorch's range check trips on the 2-element betas[1] before its own 1-element check
        if want:find("ambiguous", 1, true) then want = "Tensor betas[1] must be 1-element" end
        assert.matches(want, tostring(msg), 1, true)
      end
    end
  end)

  it("keeps step as a float32 0-dim tensor per parameter, as PyTorch", function()
    local ps = H.fresh_params()
    local opt = H.make(cases[1], ps, true)
    H.steps(opt, ps, 1, 4)
    local s1, s3 = opt.state[ps[1]].step, opt.state[ps[3]].step
    assert.equals(torch.float32, s1.dtype)
    assert.equals(0, s1:dim())
    assert.equals(4, s1:item())
    assert.equals(2, s3:item())    -- parameter 3 had no gradient on steps 2 and 4
  end)

  it("load_state_dict casts state to the parameters' dtype, except step", function()
    local ps = H.fresh_params()
    local opt = H.make(cases[1], ps, true)
    H.steps(opt, ps, 1, 2)
    local sd = opt:state_dict()
    local pd = {}
    for i, p in ipairs(ps) do pd[i] = p:detach():double():requires_grad_() end
    local opt2 = optim.Adam(pd, { lr = 0.01 })
    opt2:load_state_dict(sd)
    assert.equals(torch.float64, opt2.state[pd[1]].exp_avg.dtype)
    assert.equals(torch.float32, opt2.state[pd[1]].step.dtype)
  end)

  it("has PyTorch 2.11's decoupled_weight_decay: Adam with it is AdamW, AdamW always has it", function()
    local ps, qs = H.fresh_params(), H.fresh_params()
    local a = optim.Adam(ps, { lr = 0.01, weight_decay = 0.1, decoupled_weight_decay = true })
    local w = optim.AdamW(qs, { lr = 0.01, weight_decay = 0.1 })
    H.steps(a, ps, 1, 3)
    H.steps(w, qs, 1, 3)
    assert.same(H.values(qs), H.values(ps))
    assert.is_false(optim.Adam(H.fresh_params()).param_groups[1].decoupled_weight_decay)
    assert.is_true(w:state_dict().param_groups[1].decoupled_weight_decay)
    local ok, e = pcall(optim.AdamW, H.fresh_params(), { decoupled_weight_decay = false })
    assert.is_false(ok)
    assert.matches("AdamW: unexpected keyword argument 'decoupled_weight_decay'", e)   -- PyTorch's TypeError
    -- an Adam checkpoint loads into AdamW, whose groups stay decoupled (PyTorch's __setstate__)
    local adam_sd = optim.Adam(H.fresh_params()):state_dict()
    local w2 = optim.AdamW(H.fresh_params())
    w2:load_state_dict(adam_sd)
    assert.is_true(w2.param_groups[1].decoupled_weight_decay)
    assert.is_false(adam_sd.param_groups[1].decoupled_weight_decay)   -- the source is not changed
  end)

  it("turning amsgrad on after some steps starts max_exp_avg_sq at zero", function()
    local ps = H.fresh_params()
    local opt = optim.Adam(ps, { lr = 0.01 })
    H.steps(opt, ps, 1, 2)
    opt.param_groups[1].amsgrad = true
    H.steps(opt, ps, 3, 3)
    assert.is_true(torch.is_tensor(opt.state[ps[1]].max_exp_avg_sq))
  end)

  it("checks hyper-parameters", function()
    local p = torch.zeros(2, { requires_grad = true })
    local function err(o) return require("spec.support.errors").err(optim.Adam, { p }, o) end
    assert.matches("Adam: invalid learning rate: %-0.1", err({ lr = -0.1 }))
    assert.matches("Adam: invalid epsilon value: %-1", err({ eps = -1 }))
    assert.matches("Adam: invalid beta parameter at index 0: 1", err({ betas = { 1, 0.9 } }))
    assert.matches("Adam: invalid beta parameter at index 1: %-0.5", err({ betas = { 0.9, -0.5 } }))
    assert.matches("Adam: invalid betas: expected a table of two numbers", err({ betas = 0.9 }))
    assert.matches("Adam: invalid weight_decay value: %-1", err({ weight_decay = -1 }))
    assert.matches("Adam: invalid amsgrad: expected a boolean", err({ amsgrad = "yes" }))
    local ok, e = pcall(optim.AdamW, { p }, { betas = { 0.9, 1.5 } })
    assert.is_false(ok)
    assert.matches("AdamW: invalid beta parameter at index 1: 1.5", e)
    assert.equals(1e-2, optim.AdamW({ p }).param_groups[1].weight_decay)
    assert.equals(0, optim.Adam({ p }).param_groups[1].weight_decay)
  end)

  it("a freed or mis-shaped state tensor fails the step at the user's line, with and without foreach", function()
    local this = debug.getinfo(1, "S").short_src
    for _, foreach in ipairs({ true, false }) do
      local ps = H.fresh_params()
      local opt = optim.AdamW(ps, { lr = 0.01, amsgrad = true, foreach = foreach })
      H.steps(opt, ps, 1, 1)
      for _, p in ipairs(ps) do p.grad = torch.ones_like(p) end
      opt.state[ps[2]].max_exp_avg_sq:free()
      local ok, e = pcall(function() opt:step() end)
      assert.is_false(ok)
      assert.matches("was freed", e)
      if foreach then assert.matches(this, e, 1, true) end
      opt.state[ps[2]].max_exp_avg_sq = torch.zeros_like(ps[2])
      opt.state[ps[1]].exp_avg = torch.zeros(7)
      ok, e = pcall(function() opt:step() end)
      assert.is_false(ok)
      assert.matches("size of tensor", e)
      if foreach then assert.matches(this .. ":%d+: step: ", e) end
    end
  end)
end)
