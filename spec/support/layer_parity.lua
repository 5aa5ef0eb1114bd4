-- spec/support/layer_parity.lua — run nn layers in ltorch and in PyTorch on the same settings,
-- weights and inputs, and hand both results to a spec to compare.
--
-- Why: every layer spec (spec/nn/conv_spec.lua, normalization_spec.lua, ...) asks the same
-- questions of each module — default init, repr, state_dict keys, forward and backward — so
-- the procedure lives here once, and each spec lists its cases.
--
-- What: a case is
--   { name = "...", lua = function() return nn.Conv2d(3, 4, 3) end, py = "nn.Conv2d(3, 4, 3)",
--     inputs = { {2, 3, 6, 6}, ... }        -- shapes of float inputs, or {shape=, int=high}
--     steps = { "train", "train", "eval" }, -- one forward per entry, new inputs each (default {"train"})
--     dtype = "float64",                    -- module:double() and float64 inputs (default float32)
--     lua_kw = {...}, py_kw = "output_size=[8, 8]" }  -- extra forward argument / kwargs
-- M.run(cases) does, on both sides, per case:
--   1. torch.manual_seed(seed); build the module; record its state_dict (keys, dtypes, shapes,
--      values: the default init) and repr. PyTorch then loads ltorch's state_dict with
--      strict=True (the result is recorded, not raised).
--   2. overwrite every parameter (named_parameters order) with the same deterministic values;
--      torch.manual_seed(seed + 1) (dropout masks come from here); run the steps, each with its
--      own deterministic inputs, backpropagating sum(y * linspace(-1, 1)) into accumulated grads.
--   3. record outputs per step, input grads per step, parameter grads, buffers at the end.
-- It returns { [name] = { lua = result, py = result } } with one pytorch.run for all cases.
-- Deterministic values are multiples of 1/1024 in [-2, 2], exact in float32.
--
-- Use:
--   local parity = require "spec.support.layer_parity"
--   local R = parity.run(CASES)                  -- in a lazy setup
--   parity.check_init(R.conv.lua, R.conv.py)      -- bitwise; also check_keys, check_forward

local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local cjson = require "cjson"
local assert = require "luassert"

local py = approx.py
local M = {}

-- A nested Lua list of the given shape, filled from a seed.
function M.values(shape, seed)
  local i = 0
  local function build(d)
    if d > #shape then
      i = i + 1
      return math.floor(math.sin(seed * 1.37 + i * 0.731) * 2048) / 1024
    end
    local t = {}
    for k = 1, shape[d] do t[k] = build(d + 1) end
    return t
  end
  return build(1)
end

local function ints(shape, seed, high)
  local i = 0
  local function build(d)
    if d > #shape then i = i + 1; return (seed * 7 + i * 5) % high end
    local t = {}
    for k = 1, shape[d] do t[k] = build(d + 1) end
    return t
  end
  return build(1)
end

-- The inputs of one step: {values, is_int} per input.
local function step_inputs(case, step)
  local out = {}
  for j, spec in ipairs(case.inputs) do
    local seed = case.seed * 100 + step * 10 + j
    if spec.int then
      out[j] = { ints(spec.shape, seed, spec.int), true }
    else
      out[j] = { M.values(spec.shape or spec, seed), false }
    end
  end
  return out
end

local function dtype_name(t) return (tostring(t.dtype):gsub("^torch%.", "")) end

local function grad_list(t)
  local g = t.grad
  if g == nil then return cjson.null end
  return g:tolist()
end

local function run_lua(case)
  local r = {}
  torch.manual_seed(case.seed)
  local m = case.lua()
  r.repr = tostring(m)
  r.init = {}
  local sd = m:state_dict()
  for _, k in ipairs(m:state_dict_keys()) do
    local t = sd[k]
    r.init[#r.init + 1] = { k, dtype_name(t), { unpack(t:size()) }, t:tolist() }
  end
  if case.dtype == "float64" then m:double() end
  local dt = case.dtype == "float64" and torch.float64 or torch.float32
  r.params = {}
  torch.no_grad(function()
    for i, np in ipairs(m:named_parameters()) do
      local v = M.values({ unpack(np[2]:size()) }, case.seed * 1000 + i)
      r.params[i] = v
      np[2]:copy_(torch.tensor(v, { dtype = np[2].dtype }))
    end
  end)
  torch.manual_seed(case.seed + 1)
  r.outs, r.xgrads, r.inputs = {}, {}, {}
  for s, mode in ipairs(case.steps) do
    m:train(mode == "train")
    local ins = step_inputs(case, s)
    r.inputs[s] = ins
    local xs = {}
    for j, v in ipairs(ins) do
      if v[2] then xs[j] = torch.tensor(v[1], { dtype = torch.int64 })
      else xs[j] = torch.tensor(v[1], { dtype = dt, requires_grad = true }) end
    end
    if case.lua_kw ~= nil then xs[#xs + 1] = case.lua_kw end
    local ys = { m(unpack(xs, 1, table.maxn(xs))) }
    local loss
    for _, y in ipairs(ys) do
      if y:is_floating_point() then
        local w = torch.linspace(-1, 1, y:numel(), { dtype = y.dtype }):view_as(y)
        loss = loss and loss + (y * w):sum() or (y * w):sum()
      end
    end
    if loss ~= nil and loss.requires_grad then loss:backward() end
    r.outs[s], r.xgrads[s] = {}, {}
    for j, y in ipairs(ys) do r.outs[s][j] = y:tolist() end
    for j = 1, #ins do r.xgrads[s][j] = ins[j][2] and cjson.null or grad_list(xs[j]) end
  end
  r.grads = {}
  for i, np in ipairs(m:named_parameters()) do r.grads[i] = grad_list(np[2]) end
  r.buffers = {}
  for _, nb in ipairs(m:named_buffers()) do r.buffers[#r.buffers + 1] = { nb[1], nb[2]:tolist() } end
  return r
end

local DRIVER = [==[
import torch.nn as nn
def run_case(c):
    r = {}
    torch.manual_seed(c['seed'])
    m = eval(c['ctor'])
    r['repr'] = repr(m)
    r['init'] = [[k, str(v.dtype).replace('torch.', ''), list(v.shape), v.tolist()] for k, v in m.state_dict().items()]
    try:
        sd = {k: torch.tensor(v, dtype=getattr(torch, dt)).reshape(shape) for k, dt, shape, v in c['lua_state']}
        m.load_state_dict(sd, strict=True)
        r['load'] = 'ok'
    except Exception as e:
        r['load'] = str(e)
    dt = getattr(torch, c['dtype'])
    if c['dtype'] == 'float64':
        m.double()
    with torch.no_grad():
        for (name, p), v in zip(m.named_parameters(), c['params']):
            p.copy_(torch.tensor(v, dtype=p.dtype))
    torch.manual_seed(c['seed'] + 1)
    r['outs'], r['xgrads'] = [], []
    kw = eval('dict(' + c['kw'] + ')')
    for mode, ins in zip(c['steps'], c['inputs']):
        m.train(mode == 'train')
        xs = [torch.tensor(v, dtype=torch.int64) if is_int else torch.tensor(v, dtype=dt, requires_grad=True)
              for v, is_int in ins]
        y = m(*xs, **kw)
        ys = list(y) if isinstance(y, tuple) else [y]
        loss = None
        for t in ys:
            if t.is_floating_point():
                w = torch.linspace(-1, 1, t.numel(), dtype=t.dtype).view_as(t)
                loss = (t * w).sum() if loss is None else loss + (t * w).sum()
        if loss is not None and loss.requires_grad:
            loss.backward()
        r['outs'].append([t.tolist() for t in ys])
        r['xgrads'].append([None if is_int or x.grad is None else x.grad.tolist() for x, (v, is_int) in zip(xs, ins)])
    r['grads'] = [None if p.grad is None else p.grad.tolist() for _, p in m.named_parameters()]
    r['buffers'] = [[k, b.tolist()] for k, b in m.named_buffers()]
    return r
print(json.dumps({c['name']: run_case(c) for c in CASES}))
]==]

local function py_str(s) return "'" .. s:gsub("\\", "\\\\"):gsub("'", "\\'") .. "'" end

local function py_case(case, lr)
  local state = {}
  for i, e in ipairs(lr.init) do
    state[i] = "[" .. py_str(e[1]) .. ", " .. py_str(e[2]) .. ", " .. py(e[3]) .. ", " .. py(e[4]) .. "]"
  end
  local steps, inputs = {}, {}
  for s, mode in ipairs(case.steps) do
    steps[s] = py_str(mode)
    local ins = {}
    for j, v in ipairs(lr.inputs[s]) do ins[j] = "[" .. py(v[1]) .. ", " .. py(v[2]) .. "]" end
    inputs[s] = "[" .. table.concat(ins, ", ") .. "]"
  end
  return ("{'name': %s, 'ctor': %s, 'seed': %d, 'dtype': %s, 'kw': %s, 'lua_state': [%s], 'params': %s, "
    .. "'steps': [%s], 'inputs': [%s]}"):format(py_str(case.name), py_str(case.py), case.seed,
    py_str(case.dtype or "float32"), py_str(case.py_kw or ""), table.concat(state, ", "), py(lr.params),
    table.concat(steps, ", "), table.concat(inputs, ", "))
end

function M.run(cases)
  local out, pys = {}, {}
  for i, case in ipairs(cases) do
    case.seed = case.seed or (i * 11 + 3)
    case.steps = case.steps or { "train" }
    local lr = run_lua(case)
    out[case.name] = { lua = lr }
    pys[i] = py_case(case, lr)
  end
  local ref = pytorch.run("CASES = [" .. table.concat(pys, ",\n") .. "]\n" .. DRIVER)
  for _, case in ipairs(cases) do out[case.name].py = ref[case.name] end
  return out
end

---------------------------------------------------------------- checks (raise on mismatch)
-- Default init: same keys, dtypes, shapes and bit-identical values (tolerance 0).
function M.check_init(lr, pr)
  assert.are.same(#pr.init, #lr.init, "state_dict size")
  for i, e in ipairs(pr.init) do
    local l = lr.init[i]
    assert.are.same({ e[1], e[2], e[3] }, { l[1], l[2], l[3] })
    approx.check(l[4], e[4], 0)
  end
end

-- state_dict keys, order and shapes; PyTorch loads ltorch's state_dict with strict=True.
function M.check_keys(lr, pr)
  local lk, pk = {}, {}
  for i, e in ipairs(lr.init) do lk[i] = { e[1], e[3] } end
  for i, e in ipairs(pr.init) do pk[i] = { e[1], e[3] } end
  assert.are.same(pk, lk)
  assert.are.equal("ok", pr.load)
end

-- Outputs per step, input grads per step, parameter grads, buffers; tol as approx.check's.
function M.check_forward(lr, pr, tol)
  for s = 1, #pr.outs do
    for j = 1, #pr.outs[s] do approx.check(lr.outs[s][j], pr.outs[s][j], tol) end
    for j = 1, #pr.xgrads[s] do
      if pr.xgrads[s][j] == cjson.null then assert.are.equal(cjson.null, lr.xgrads[s][j])
      else approx.check(lr.xgrads[s][j], pr.xgrads[s][j], tol) end
    end
  end
  assert.are.equal(#pr.outs, #lr.outs)
  assert.are.equal(#pr.grads, #lr.grads)
  for i = 1, #pr.grads do
    if pr.grads[i] == cjson.null then assert.are.equal(cjson.null, lr.grads[i])
    else approx.check(lr.grads[i], pr.grads[i], tol) end
  end
  assert.are.equal(#pr.buffers, #lr.buffers)
  for i, b in ipairs(pr.buffers) do
    assert.are.equal(b[1], lr.buffers[i][1])
    approx.check(lr.buffers[i][2], b[2], tol)
  end
end

--[[ The four checks every layer spec asks of each case, as busted blocks in the calling spec:
     init bit for bit, state_dict keys (strict load), repr, outputs and gradients. `tols` is
     {float32 = tol, float64 = tol} (approx.check's tolerances, by the case's dtype). Call it
     inside a describe: it adds a setup that runs all cases in one PyTorch process.
       describe("nn conv layers", function() parity.describe_cases(CASES, {float32 = 1e-5, float64 = 1e-12}) end) ]]
function M.describe_cases(cases, tols)
  local env = getfenv(2)   -- busted's describe/it/setup live in the spec file's environment
  local R
  env.setup(function() R = M.run(cases) end)
  for _, case in ipairs(cases) do
    env.describe(case.name, function()
      env.it("initialises bit for bit like PyTorch under the same seed", function()
        M.check_init(R[case.name].lua, R[case.name].py)
      end)
      env.it("has PyTorch's state_dict keys, order and shapes (loads with strict=True)", function()
        M.check_keys(R[case.name].lua, R[case.name].py)
      end)
      env.it("prints PyTorch's repr", function()
        assert.are.equal(R[case.name].py.repr, R[case.name].lua.repr)
      end)
      env.it("matches PyTorch's output and gradients", function()
        M.check_forward(R[case.name].lua, R[case.name].py, tols[case.dtype or "float32"])
      end)
    end)
  end
end

return M
