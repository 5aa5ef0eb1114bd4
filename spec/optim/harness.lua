--[[
  spec/optim/harness.lua — runs one optimizer configuration in ltorch and in PyTorch on the same
  parameters and the same gradients, for the optimizer specs (spec/optim/*_spec.lua).

  Data: three float32 parameters (3x4, 4, 2x2) and STEPS steps of gradients, drawn once from
  torch.manual_seed(1234); parameter 3 gets no gradient on steps 2 and 4, so its state lags
  the others' (per-parameter step counts, skipped updates).
  A case: { name =, cls = "Adam", opts = {lr = ...}, groups = nil | { {idx = {1, 2}, opts = {...}}, ...} }
  (groups: parameter indices 1-based, per-group options); foreach_refused = "message": foreach =
  true must raise it (PyTorch's foreach=True refuses a Tensor lr for Adam), only foreach = false runs.

    H.reference(cases) -> { [name] = { params = {step -> {param values...}}, state = {...},
                            group_keys = {...} } }, from ONE python run (foreach=False:
                            PyTorch's single-tensor reference implementation)
    H.run(case, foreach, steps, from) -> params, opt: ltorch's run (a fresh copy of the data)
    H.values(params) -> { param values... } as nested Lua arrays
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py
local cjson = require "cjson"

local assert = require "luassert"

local H = { STEPS = 6 }

torch.manual_seed(1234)
local shapes = { { 3, 4 }, { 4 }, { 2, 2 } }
H.P0, H.G = {}, {}
for i, s in ipairs(shapes) do H.P0[i] = torch.randn(s) end
for t = 1, H.STEPS do
  H.G[t] = {}
  for i, s in ipairs(shapes) do
    if not (i == 3 and t % 2 == 0) then H.G[t][i] = torch.randn(s) * (0.5 + t / 4) end
  end
end

local function lists(ts, n)
  local out = {}
  for i = 1, n do out[i] = ts[i] and py(ts[i]:tolist()) or "None" end
  return "[" .. table.concat(out, ", ") .. "]"
end

-- Lua options -> Python keyword arguments (foreach dropped: the reference is foreach=False).
local function kwargs(opts)
  local keys = {}
  for k in pairs(opts or {}) do if k ~= "foreach" then keys[#keys + 1] = k end end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. py(opts[k]) end
  return table.concat(parts, ", ")
end

local PRELUDE = [==[
P0 = [torch.tensor(x, dtype=torch.float32) for x in %s]
G = [[None if g is None else torch.tensor(g, dtype=torch.float32) for g in step] for step in [%s]]
def enc(v):
    if isinstance(v, torch.Tensor): return v.tolist()
    return v
def run(cls, groups, kw, steps):
    ps = [p.clone().requires_grad_() for p in P0]
    params = ps if groups is None else [dict(params=[ps[i - 1] for i in g[0]], **g[1]) for g in groups]
    opt = cls(params, foreach=False, **kw)
    out = []
    for t in range(steps):
        for i, p in enumerate(ps):
            p.grad = None if G[t][i] is None else G[t][i].clone()
        opt.step()
        out.append([p.detach().tolist() for p in ps])
    sd = opt.state_dict()
    state = {str(k): {n: enc(v) for n, v in s.items()} for k, s in sd['state'].items()}
    keys = [sorted(k for k in g if k != 'params') for g in sd['param_groups']]
    return dict(params=out, state=state, group_keys=keys)
res = {}
]==]

function H.reference(cases)
  local g = {}
  for t = 1, H.STEPS do g[t] = lists(H.G[t], #shapes) end
  local lines = { PRELUDE:format(lists(H.P0, #shapes), table.concat(g, ", ")) }
  for _, c in ipairs(cases) do
    local groups = "None"
    if c.groups then
      local gs = {}
      for _, gr in ipairs(c.groups) do gs[#gs + 1] = ("(%s, dict(%s))"):format(py(gr.idx), kwargs(gr.opts)) end
      groups = "[" .. table.concat(gs, ", ") .. "]"
    end
    lines[#lines + 1] = ("res[%q] = run(torch.optim.%s, %s, dict(%s), %d)"):format(c.name, c.cls, groups,
      kwargs(c.opts), H.STEPS)
  end
  lines[#lines + 1] = "print(json.dumps(res))"
  return pytorch.run(table.concat(lines, "\n"))
end

function H.fresh_params()
  local ps = {}
  for i, p in ipairs(H.P0) do ps[i] = p:clone():requires_grad_() end
  return ps
end

function H.make(case, ps, foreach)
  local opts = {}
  for k, v in pairs(case.opts or {}) do opts[k] = v end
  opts.foreach = foreach
  local params = ps
  if case.groups then
    params = {}
    for gi, gr in ipairs(case.groups) do
      local g = { params = {} }
      for k, v in pairs(gr.opts or {}) do g[k] = v end
      for j, i in ipairs(gr.idx) do g.params[j] = ps[i] end
      params[gi] = g
    end
  end
  return torch.optim[case.cls](params, opts)
end

-- Steps `from`..`to` (1-based) of the gradient sequence on ps with opt.
function H.steps(opt, ps, from, to, each)
  for t = from, to do
    for i, p in ipairs(ps) do p.grad = H.G[t][i] and H.G[t][i]:clone() or nil end
    opt:step()
    if each then each(t) end
  end
end

function H.values(ps)
  local out = {}
  for i, p in ipairs(ps) do out[i] = p:detach():tolist() end
  return out
end

-- Runs `case` for all steps; calls check(t, values) after each.
function H.run(case, foreach, check)
  local ps = H.fresh_params()
  local opt = H.make(case, ps, foreach)
  H.steps(opt, ps, 1, H.STEPS, function(t) check(t, H.values(ps)) end)
  return opt, ps
end

local function at(what, fn)
  local ok, err = pcall(fn)
  if not ok then error(what .. ": " .. tostring(err), 0) end
end

-- The ltorch run of `case` matches the reference after every step, within tol.
function H.check_run(case, ref, foreach, tol)
  return H.run(case, foreach, function(t, vals)
    at(("%s (foreach=%s) after step %d"):format(case.name, tostring(foreach), t), function()
      approx.check(vals, ref.params[t], tol)
    end)
  end)
end

--[[ opt:state_dict() has PyTorch's layout and values: the same state keys per parameter index,
     the same tensors (within tol) and numbers, and exactly PyTorch's group keys. ]]
function H.check_state(opt, ref, tol)
  local sd = opt:state_dict()
  local n = 0
  for k, s in pairs(sd.state) do
    n = n + 1
    local r = ref.state[tostring(k)]
    assert(r, "state for parameter " .. tostring(k) .. " is not in PyTorch's state_dict")
    for key, v in pairs(r) do
      if v == cjson.null then   -- PyTorch's SGD keeps momentum_buffer = None without momentum
        assert(s[key] == nil, ("state[%s].%s is set, PyTorch's is None"):format(tostring(k), key))
        goto continue
      end
      assert(s[key] ~= nil, ("state[%s] lacks %s"):format(tostring(k), key))
      at(("state[%s].%s"):format(tostring(k), key), function()
        approx.check(type(s[key]) == "number" and s[key] or s[key]:tolist(), v, tol)
      end)
      ::continue::
    end
    for key in pairs(s) do assert(r[key] ~= nil, ("state[%s] has %s, PyTorch's has not"):format(tostring(k), key)) end
  end
  local rn = 0
  for _ in pairs(ref.state) do rn = rn + 1 end
  assert(n == rn, ("%d parameters have state, PyTorch has %d"):format(n, rn))
  for gi, g in ipairs(sd.param_groups) do
    local theirs = {}
    for _, k in ipairs(ref.group_keys[gi]) do theirs[k] = true end
    for k in pairs(g) do
      if k ~= "params" then assert(theirs[k], ("group %d key %s is not in PyTorch's group"):format(gi - 1, k)) end
    end
    for k in pairs(theirs) do
      assert(g[k] ~= nil, ("group %d lacks PyTorch's key %s"):format(gi - 1, k))
    end
  end
end

--[[ Steps 1..k, state_dict(), a new optimizer on copies of the parameters loads it, steps k+1..STEPS:
     the same parameters as the reference's uninterrupted run. ]]
function H.check_resume(case, ref, foreach, k, tol)
  local ps = H.fresh_params()
  local opt = H.make(case, ps, foreach)
  H.steps(opt, ps, 1, k)
  local sd = opt:state_dict()
  local ps2 = {}
  for i, p in ipairs(ps) do ps2[i] = p:detach():clone():requires_grad_() end
  local opt2 = H.make(case, ps2, foreach)
  opt2:load_state_dict(sd)
  -- the loaded state is a copy: stepping the first optimizer must not move the second
  H.steps(opt, ps, k + 1, k + 1)
  H.steps(opt2, ps2, k + 1, H.STEPS)
  at(case.name .. " resumed after step " .. k, function() approx.check(H.values(ps2), ref.params[H.STEPS], tol) end)
end

--[[ The parity block every optimizer spec runs, as busted blocks in the calling spec: one PyTorch
     run for all cases; per case the parameters after each step (foreach on and off) and the
     state; then each resume in `resumes` ({case index, foreach, steps before the state_dict
     round trip}) continues identically. Returns nothing; call it inside a describe. ]]
function H.describe_cases(cases, tol, resumes)
  local env = getfenv(2)   -- busted's setup/it live in the spec file's environment
  local ref
  env.setup(function() ref = H.reference(cases) end)
  for _, case in ipairs(cases) do
    env.it("matches PyTorch step by step: " .. case.name, function()
      if case.foreach_refused then   -- PyTorch's foreach=True refuses the case with this message
        local ok, msg = pcall(H.make, case, H.fresh_params(), true)
        assert.is_false(ok)
        assert.matches(case.foreach_refused, tostring(msg), 1, true)
      else
        H.check_run(case, ref[case.name], true, tol)
      end
      local opt = H.check_run(case, ref[case.name], false, tol)
      H.check_state(opt, ref[case.name], tol)
    end)
  end
  env.it("resumes from state_dict identically", function()
    for _, r in ipairs(resumes) do H.check_resume(cases[r[1]], ref[cases[r[1]].name], r[2], r[3], tol) end
  end)
end

return H
