--[[
  spec/nn/functional_grad_parity_spec.lua — torch.nn.functional against PyTorch itself
  (spec/support/pytorch.lua: the venv's PyTorch 2.11, on the same libtorch), in float64: for each
  case of spec/nn/functional_grad_cases.lua (every loss under every reduction, broadcasting
  shapes, options; activations, normalizations, pools, interpolate, dropout; every loss module),
  the outputs and the gradients of every input that requires grad (targets and variances
  included) equal PyTorch's, and a gradient PyTorch does not give is absent here too.

  The backward pass weighs each floating output by linspace(0.5, 1.5) over its elements, so that
  'none' reductions check every element's gradient, not only their sum. Each case seeds the
  generator (manual_seed(0)) on both sides first, so training-mode dropout draws one mask. A case
  marked `refuses` must raise an error on both sides; every other case must run on both.
  All cases run in one Python process. Tolerance: rtol 1e-9, atol 1e-12 (float64, the same kernels).

  Run: build/ltorch /usr/bin/busted -o spec/support/summary_output.lua spec/nn/functional_grad_parity_spec.lua
]]
local torch = require "torch"
local cjson = require "cjson"
local pytorch = require "spec.support.pytorch"
local F = require "torch.nn.functional"
local A = require "torch.nn._fargs"
local C = require "spec.nn.functional_grad_cases"

local RTOL, ATOL = 1e-9, 1e-12
local DIR = debug.getinfo(1, "S").source:match("^@(.*/)")

local PYTHON = [==[
import torch.nn.functional as F, warnings
warnings.simplefilter("ignore")
def build(a):
    if isinstance(a, dict) and a.get("tensor"):
        t = torch.tensor(a["values"], dtype=getattr(torch, a["dtype"])).reshape(a["shape"])
        return t.requires_grad_() if a["grad"] else t
    if isinstance(a, dict) and a.get("none"):
        return None
    return a
res = []
for c in json.loads(CASES):
    torch.manual_seed(0)
    args = [build(a) for a in c["args"]]
    kw = {k: build(v) for k, v in c["kw"].items()}
    try:
        if "module" in c:
            out = getattr(torch.nn, c["module"])(**kw)(*args)
        else:
            out = getattr(F, c["fn"])(*args, **kw)
    except Exception as e:
        res.append({"err": str(e)})
        continue
    outs = [o for o in (list(out) if isinstance(out, tuple) else [out]) if o is not None]   # (out, None): Lua's one value
    loss = None
    for o in outs:
        if o.requires_grad:
            cot = torch.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)
            loss = (o * cot).sum() if loss is None else loss + (o * cot).sum()
    leaves = [x for x in args + [kw[k] for k in sorted(kw)] if isinstance(x, torch.Tensor) and x.requires_grad]
    grads = torch.autograd.grad(loss, leaves, allow_unused=True) if loss is not None else []
    res.append({"outs": [o.detach().flatten().tolist() for o in outs], "shapes": [list(o.shape) for o in outs],
                "grads": [None if g is None else g.flatten().tolist() for g in grads]})
print(json.dumps(res))
]==]

local function build(a)
  if type(a) == "table" and a.tensor then
    local t = torch.tensor(a.values, { dtype = torch[a.dtype] }):reshape(a.shape)
    return a.grad and t:requires_grad_() or t
  end
  if a == C.NONE then return nil end
  return a
end

-- Runs case c in ltorch: outputs, shapes and the leaves' gradients (false where none).
local function run(c)
  torch.manual_seed(0)
  local args, kw, leaves = {}, {}, {}
  local function leaf(t) if torch.is_tensor(t) and t.requires_grad then leaves[#leaves + 1] = t end end
  for i = 1, #c.args do args[i] = build(c.args[i]); leaf(args[i]) end
  -- gradients: the positional leaves in order, then the keyword ones by sorted key (both sides)
  local keys = {}
  for k in pairs(c.kw) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do kw[k] = build(c.kw[k]); leaf(kw[k]) end
  local outs
  if c.module then
    outs = { torch.nn[c.module](kw)(unpack(args, 1, #c.args)) }
  else
    -- keywords as a trailing table only when there are some: the ATen-bound names read an empty
    -- table as an (empty) list argument
    local n = #c.args
    if next(kw) ~= nil then n = n + 1; args[n] = kw end
    outs = { F[c.fn](unpack(args, 1, n)) }
  end
  local loss
  for _, o in ipairs(outs) do
    if o.requires_grad then
      local cot = torch.linspace(0.5, 1.5, o:numel(), { dtype = o.dtype }):reshape(o:size())
      local s = (o * cot):sum()
      loss = loss and loss + s or s
    end
  end
  if loss then loss:backward() end
  local grads = {}
  for i, t in ipairs(leaves) do grads[i] = t.grad or false end
  return outs, grads
end

local function close(got, want, what)
  assert.are.equal(#want, #got, what .. ": element count")
  for i = 1, #want do
    local g, w = got[i], want[i]
    local ok = (g == w) or (g ~= g and w ~= w) or math.abs(g - w) <= ATOL + RTOL * math.abs(w)
    if not ok then error(("%s: element %d is %.17g, PyTorch gives %.17g"):format(what, i, g, w), 0) end
  end
end

local function flat(t) return t:detach():flatten():tolist() end

describe("torch.nn.functional gradient parity with PyTorch (float64)", function()
  local cases, ref
  local warnings, saved_warn = {}, nil

  setup(function()
    cases = C.materialize()
    local encoded = cjson.encode(cases)
    ref = pytorch.run("CASES = r'''" .. encoded .. "'''\n" .. PYTHON)
    saved_warn = F._warn
    F._warn = function(msg) warnings[#warnings + 1] = msg end
    A._reset_warnings()
  end)

  teardown(function()
    F._warn = saved_warn
    A._reset_warnings()
  end)

  it("runs every case on both sides", function()
    assert.are.equal(#cases, #ref)
    assert.is_true(#cases > 300, "cases: " .. #cases)
  end)

  it("has a case for every name of torch.nn.functional in PyTorch's API manifest, or says why not", function()
    local manifest = dofile(DIR .. "../porting/api_manifest.lua")
    local cased = {}
    for _, c in ipairs(C.cases) do if c.fn then cased[c.fn] = true end end
    local missing = {}
    for _, e in ipairs(manifest.entries) do
      if e.namespace == "torch.nn.functional" and not cased[e.name] and not C.NOT_CASED[e.name] then
        missing[#missing + 1] = e.name
      end
    end
    assert.are.same({}, missing)
  end)

  for i, c in ipairs(C.cases) do
    local parts = {}
    for k, v in pairs(c.kw) do parts[#parts + 1] = k .. "=" .. (type(v) == "table" and "T" or tostring(v)) end
    table.sort(parts)
    local label = c.module and ("%d nn.%s(%s)(%d args)"):format(i, c.module, table.concat(parts, ", "), #c.args)
      or ("%d %s(%d args, %s)"):format(i, c.fn, #c.args, table.concat(parts, ", "))
    it(label, function()
      local r = ref[i]
      assert.are.equal(c.refuses == true, r.err ~= nil, "PyTorch's error: " .. tostring(r.err))
      if r.err then   -- PyTorch refuses the call: so must ltorch
        local ok = pcall(run, c)
        assert(not ok, "PyTorch raised, ltorch did not: " .. r.err)
        return
      end
      local outs, grads = run(c)
      assert.are.equal(#r.outs, #outs, "output count")
      for k, o in ipairs(outs) do
        assert.are.same(r.shapes[k], o:size(), "output " .. k .. " shape")
        close(flat(o), r.outs[k], "output " .. k)
      end
      assert.are.equal(#r.grads, #grads, "gradient count")
      for k, g in ipairs(grads) do
        if r.grads[k] == cjson.null then
          assert.is_false(g, "gradient " .. k .. ": PyTorch gives none")
        else
          assert(g, "gradient " .. k .. ": ltorch gives none")
          close(flat(g), r.grads[k], "gradient " .. k)
        end
      end
    end)
  end

  it("warns once per loss that broadcasts, with PyTorch's text", function()
    local seen = {}
    for _, w in ipairs(warnings) do
      local who = w:match("^(%w[%w_]*): Using a target size")
      if who then
        assert.is_nil(seen[who], "warned twice: " .. who)
        seen[who] = true
      end
    end
    for _, fn in ipairs({ "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss" }) do assert.is_true(seen[fn], fn) end
  end)
end)
