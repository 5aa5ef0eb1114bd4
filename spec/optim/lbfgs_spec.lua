--[[
  spec/optim/lbfgs_spec.lua — optim.LBFGS (lua/torch/optim/lbfgs.lua, _strong_wolfe.lua) against
  PyTorch 2.11's torch.optim.LBFGS.

  Covers: a closure over two parameters (a Rosenbrock pair and a least-squares vector) stepped 4
  times, without a line search (lr below 1) and with line_search_fn = "strong_wolfe", a short
  history_size, max_iter / max_eval limits, a tolerance that stops early; in float64 and
  float32; parameters and returned loss after each step, the state's counters (func_evals,
  n_iter) and history length; resuming from its own state_dict and from one PyTorch saved; the
  signature; misuse errors.

  Tolerance: bitwise (atol 0) in float64 (PyTorch's 0-dim float64 tensors are doubles, as
  ltorch's Lua numbers) and in float32 without a line search (ltorch rounds the recursion's
  scalars to float32 as PyTorch's tensors are); float32 with the line search rtol 1e-5 (its
  scalar arithmetic is in doubles here, mixed float32 in PyTorch; bitwise on this case today).

  Run:  build/ltorch /usr/bin/busted spec/optim/lbfgs_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err
local py = approx.py

local STEPS = 4
local A0, B0, W = { -1.2, 1.0 }, { 0.3, -0.5, 2.0 }, { 1.5, -0.7, 0.9 }

local cases = {
  { name = "plain64", dtype = "float64", opts = { lr = 0.2, max_iter = 5 }, tol = 0 },
  { name = "wolfe64", dtype = "float64", opts = { line_search_fn = "strong_wolfe", max_iter = 7 },
    tol = 0 },
  { name = "history64", dtype = "float64", opts = { line_search_fn = "strong_wolfe", history_size = 2, max_iter = 10,
    max_eval = 12 }, tol = 0 },
  { name = "early64", dtype = "float64", opts = { lr = 0.1, max_iter = 50, tolerance_change = 1e-3 },
    tol = 0 },
  { name = "plain32", dtype = "float32", opts = { lr = 0.25, max_iter = 4, history_size = 3 },
    tol = 0 },
  { name = "tensor_lr32", dtype = "float32", opts = { lr = torch.tensor(0.3), max_iter = 4 }, tol = 0 },
  { name = "tensor_lr64", dtype = "float64", opts = { lr = torch.tensor(0.2), max_iter = 5 }, tol = 0 },
  { name = "tensor_lr_wolfe32", dtype = "float32", opts = { lr = torch.tensor(0.5), line_search_fn = "strong_wolfe",
    max_iter = 5 }, tol = { atol = 1e-6, rtol = 1e-5 } },
  { name = "wolfe32", dtype = "float32", opts = { line_search_fn = "strong_wolfe", max_iter = 5 },
    tol = { atol = 1e-6, rtol = 1e-5 } },
}

local function kwargs(opts)
  local keys, parts = {}, {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = opts[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "string" and ("'" .. v .. "'") or py(v))
  end
  return table.concat(parts, ", ")
end

local PY = [==[
def loss_fn(a, b, w):
    x, y = a.narrow(0, 0, 1), a.narrow(0, 1, 1)
    r = x.neg().add(1).pow(2) + (y - x.pow(2)).pow(2).mul(100)
    return r.sum() + (b * w).sub(1).pow(2).sum()
def run(dtype, kw):
    a = torch.tensor(%s, dtype=dtype, requires_grad=True)
    b = torch.tensor(%s, dtype=dtype, requires_grad=True)
    w = torch.tensor(%s, dtype=dtype)
    opt = torch.optim.LBFGS([a, b], **kw)
    def closure():
        opt.zero_grad()
        l = loss_fn(a, b, w)
        l.backward()
        return l
    out = []
    for _ in range(%d):
        l = opt.step(closure)
        out.append(dict(loss=l.item(), a=a.tolist(), b=b.tolist()))
    s = opt.state[a]
    h = s['H_diag']
    h = [h.item(), str(h.dtype), h.dim()] if isinstance(h, torch.Tensor) else [h, type(h).__name__, -1]
    return dict(steps=out, func_evals=s['func_evals'], n_iter=s['n_iter'], history=len(s['old_dirs']), H_diag=h,
                keys=sorted(opt.state_dict()['state'][0].keys()))
res = {}
]==]

local function reference()
  local lines = { PY:format(py(A0), py(B0), py(W), STEPS) }
  for _, c in ipairs(cases) do
    lines[#lines + 1] = ("res[%q] = run(torch.%s, dict(%s))"):format(c.name, c.dtype, kwargs(c.opts))
  end
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

local function loss_fn(a, b, w)
  local x, y = a:narrow(0, 0, 1), a:narrow(0, 1, 1)
  local r = x:neg():add(1):pow(2) + (y - x:pow(2)):pow(2):mul(100)
  return r:sum() + (b * w):sub(1):pow(2):sum()
end

local function setup_case(case)
  local dt = torch[case.dtype]
  local a = torch.tensor(A0, { dtype = dt, requires_grad = true })
  local b = torch.tensor(B0, { dtype = dt, requires_grad = true })
  local w = torch.tensor(W, { dtype = dt })
  local opt = optim.LBFGS({ a, b }, case.opts)
  local function closure()
    opt:zero_grad()
    local l = loss_fn(a, b, w)
    l:backward()
    return l
  end
  return opt, closure, a, b
end

describe("optim.LBFGS", function()
  local ref
  setup(function() ref = reference() end)

  for _, case in ipairs(cases) do
    it("matches PyTorch step by step: " .. case.name, function()
      local r = ref[case.name]
      local opt, closure, a, b = setup_case(case)
      for t = 1, STEPS do
        local l = opt:step(closure)
        local ok, e = pcall(approx.check, { l:item(), a:tolist(), b:tolist() },
          { r.steps[t].loss, r.steps[t].a, r.steps[t].b }, case.tol)
        assert(ok, ("after step %d: %s"):format(t, tostring(e)))
      end
      local s = opt.state[a]
      assert.same({ r.func_evals, r.n_iter, r.history }, { s.func_evals, s.n_iter, #s.old_dirs })
      -- H_diag: PyTorch's 0-dim tensor (ys / y.dot(y)) in the parameters' dtype, the int 1 before any pair
      if torch.is_tensor(s.H_diag) then
        assert.same({ r.H_diag[2], r.H_diag[3] }, { tostring(s.H_diag.dtype), s.H_diag:dim() })
        approx.check(s.H_diag:item(), r.H_diag[1], case.tol)
      else
        assert.same({ r.H_diag[1], "int" }, { s.H_diag, r.H_diag[2] })
      end
      local keys = {}
      for k in pairs(opt:state_dict().state[0]) do keys[#keys + 1] = k end
      table.sort(keys)
      assert.same(r.keys, keys)
    end)
  end

  it("resumes from state_dict identically", function()
    local case = cases[2]
    local opt, closure, a, b = setup_case(case)
    opt:step(closure); opt:step(closure)
    local opt2, closure2, a2, b2 = setup_case(case)
    a2:detach():copy_(a:detach()); b2:detach():copy_(b:detach())
    opt2:load_state_dict(opt:state_dict())
    for _ = 3, STEPS do opt2:step(closure2) end
    approx.check({ a2:tolist(), b2:tolist() }, { ref.wolfe64.steps[STEPS].a, ref.wolfe64.steps[STEPS].b }, case.tol)
  end)

  it("continues from a state_dict PyTorch saved (0-dim tensor scalars, None-padded al)", function()
    local path = os.tmpname()
    local r = pytorch.run(PY:format(py(A0), py(B0), py(W), STEPS) .. ([==[
a = torch.tensor(%s, dtype=torch.float64, requires_grad=True)
b = torch.tensor(%s, dtype=torch.float64, requires_grad=True)
w = torch.tensor(%s, dtype=torch.float64)
opt = torch.optim.LBFGS([a, b], line_search_fn='strong_wolfe', history_size=4, max_iter=6)
def closure():
    opt.zero_grad(); l = loss_fn(a, b, w); l.backward(); return l
opt.step(closure); opt.step(closure)
torch.save(opt.state_dict(), %q)
mid = [a.tolist(), b.tolist()]
opt.step(closure); opt.step(closure)
print(json.dumps(dict(mid=mid, end=[a.tolist(), b.tolist()])))]==]):format(py(A0), py(B0), py(W), path))
    local a = torch.tensor(r.mid[1], { dtype = torch.float64, requires_grad = true })
    local b = torch.tensor(r.mid[2], { dtype = torch.float64, requires_grad = true })
    local w = torch.tensor(W, { dtype = torch.float64 })
    local opt = optim.LBFGS({ a, b }, { line_search_fn = "strong_wolfe", history_size = 4, max_iter = 6 })
    opt:load_state_dict(torch.load(path))
    os.remove(path)
    local function closure()
      opt:zero_grad()
      local l = loss_fn(a, b, w)
      l:backward()
      return l
    end
    opt:step(closure); opt:step(closure)
    approx.check({ a:tolist(), b:tolist() }, r["end"], 0)
  end)

  it("binds PyTorch's signature and checks its arguments", function()
    local p = torch.zeros(2, { requires_grad = true })
    local g = optim.LBFGS({ p }, 0.5, 10, nil, 1e-5, 1e-7, 7, "strong_wolfe").param_groups[1]
    assert.same({ 0.5, 10, 12, 1e-5, 1e-7, 7, "strong_wolfe" },
      { g.lr, g.max_iter, g.max_eval, g.tolerance_grad, g.tolerance_change, g.history_size, g.line_search_fn })
    local d = optim.LBFGS({ p }).param_groups[1]
    assert.same({ 1, 20, 25, 100 }, { d.lr, d.max_iter, d.max_eval, d.history_size })
    assert.equals(torch.serialization.None, d.line_search_fn)
    assert.equals(30, optim.LBFGS({ p }, { max_iter = 10, max_eval = 30 }).param_groups[1].max_eval)
    assert.matches("LBFGS: invalid learning rate: %-1", err(optim.LBFGS, { p }, { lr = -1 }))
    assert.matches("only 'strong_wolfe' is supported", err(optim.LBFGS, { p }, { line_search_fn = "armijo" }))
    local q = torch.zeros(2, { requires_grad = true })
    assert.matches("LBFGS doesn't support per.parameter options",
      err(optim.LBFGS, { { params = { p } }, { params = { q } } }))
    local opt = optim.LBFGS({ p })
    assert.matches("LBFGS doesn't support per.parameter options", err(opt.add_param_group, opt, { params = { q } }))
    assert.matches("LBFGS needs a closure", err(opt.step, opt))
    assert.matches("the closure must return the loss", err(opt.step, opt, function() end))
  end)
end)
