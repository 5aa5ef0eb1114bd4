--[[
  spec/torch/masked_spec.lua — torch.masked (lua/torch/masked.lua) against PyTorch 2.11's
  torch.masked on the same inputs: values, dtypes and shapes of each function (masks that
  broadcast, fully masked-out slices, integer inputs, keywords), the gradient of the finite part
  of each float result, and the same errors for bad input, raised at the caller's line.
  Tolerance: 1e-10 relative for float64 results and gradients, 1e-5 for float32 (the same ATen
  calls in the same order: a few ulps at most); integers and NaN/inf positions exactly.

  Run:  build/ltorch /usr/bin/busted spec/torch/masked_spec.lua
]]
local torch = require "torch"
local cjson = require "cjson"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local X = { { 1.5, -2.0, 0.25, 3.0 }, { -1.0, 4.5, 2.0, -0.5 }, { 0.75, -3.25, 1.25, 2.5 } }
local Y = { { 0.5, 1.0, -2.0, 0.25 }, { 3.0, -1.5, 0.0, 1.0 }, { -0.75, 2.0, 1.5, -1.0 } }
local M = { { true, false, true, true }, { false, false, false, false }, { true, true, false, true } }
local M1 = { true, false, true, true }
local XI = { { 3, -2, 7, 1 }, { 5, 0, -4, 2 }, { -1, 6, 2, -8 } }

-- { Python's call (after torch.masked.), the Lua call (after masked.) }
local CASES = {
  { "sum(X, 1, mask=M)", "sum(X, 1, {mask = M})" },
  { "sum(X, (0, 1), keepdim=True, mask=M)", "sum(X, {0, 1}, {keepdim = true, mask = M})" },
  { "sum(X)", "sum(X)" },
  { "sum(XI, 0, mask=M)", "sum(XI, 0, {mask = M})" },
  { "sum(X, dim=-1, dtype=torch.float32, mask=M1)", "sum(X, {dim = -1, dtype = torch.float32, mask = M1})" },
  { "prod(X, 1, mask=M)", "prod(X, 1, {mask = M})" },
  { "prod(X, (0, 1), keepdim=True, mask=M)", "prod(X, {0, 1}, {keepdim = true, mask = M})" },
  { "prod(XI, 1, mask=M)", "prod(XI, 1, {mask = M})" },
  { "cumsum(X, 1, mask=M)", "cumsum(X, 1, {mask = M})" },
  { "cumsum(XI, 0, mask=M)", "cumsum(XI, 0, {mask = M})" },
  { "cumprod(X, 0, mask=M1)", "cumprod(X, 0, {mask = M1})" },
  { "amax(X, 1, mask=M)", "amax(X, 1, {mask = M})" },
  { "amax(XL, 1, mask=M)", "amax(XL, 1, {mask = M})" },
  { "amin(XL, 1, mask=M)", "amin(XL, 1, {mask = M})" },
  { "amin(X, (0, 1), mask=M)", "amin(X, {0, 1}, {mask = M})" },
  { "amin(XI, 1, keepdim=True, mask=M)", "amin(XI, 1, {keepdim = true, mask = M})" },
  { "argmax(X, 1, mask=M)", "argmax(X, 1, {mask = M})" },
  { "argmin(X, mask=M)", "argmin(X, {mask = M})" },
  { "argmin(XL, 0, keepdim=True, dtype=torch.int64, mask=M)", "argmin(XL, 0, {keepdim = true, dtype = torch.int64, mask = M})" },
  { "mean(X, 1, mask=M)", "mean(X, 1, {mask = M})" },
  { "mean(X, (0, 1), keepdim=True)", "mean(X, {0, 1}, {keepdim = true})" },
  { "mean(XI, 0, dtype=torch.float64, mask=M)", "mean(XI, 0, {dtype = torch.float64, mask = M})" },
  { "median(X, 1, mask=M)", "median(X, 1, {mask = M})" },
  { "median(X, mask=M1)", "median(X, {mask = M1})" },
  { "median(XI, 1, mask=M1)", "median(XI, 1, {mask = M1})" },
  { "logsumexp(X, 1, mask=M)", "logsumexp(X, 1, {mask = M})" },
  { "logsumexp(X, (0, 1), keepdim=True, mask=M)", "logsumexp(X, {0, 1}, {keepdim = true, mask = M})" },
  { "norm(X, 2, 1, mask=M)", "norm(X, 2, 1, {mask = M})" },
  { "norm(X, -math.inf, 1, mask=M)", "norm(X, -math.huge, 1, {mask = M})" },
  { "norm(X, 1, mask=M)", "norm(X, 1, {mask = M})" },
  { "norm(X, 3.5, (0, 1), keepdim=True, mask=M)", "norm(X, 3.5, {0, 1}, {keepdim = true, mask = M})" },
  { "var(X, 1, mask=M)", "var(X, 1, {mask = M})" },
  { "var(X, 1, correction=0, mask=M)", "var(X, 1, {correction = 0, mask = M})" },
  { "var(X, 0, False, keepdim=True, mask=M)", "var(X, 0, false, {keepdim = true, mask = M})" },
  { "var(XI, 1, mask=M)", "var(XI, 1, {mask = M})" },
  { "var(X)", "var(X)" },
  { "std(X, (0, 1), mask=M)", "std(X, {0, 1}, {mask = M})" },
  { "std(X, 1, correction=2, mask=M1)", "std(X, 1, {correction = 2, mask = M1})" },
  { "std(X, 1, dtype=torch.float32)", "std(X, 1, {dtype = torch.float32})" },
  { "softmax(X, 1, mask=M)", "softmax(X, 1, {mask = M})" },
  { "softmax(X, 0, dtype=torch.float32, mask=M1)", "softmax(X, 0, {dtype = torch.float32, mask = M1})" },
  { "log_softmax(X, 1, mask=M)", "log_softmax(X, 1, {mask = M})" },
  { "softmin(X, -1, mask=M)", "softmin(X, -1, {mask = M})" },
  { "normalize(X, 2, 1, mask=M)", "normalize(X, 2, 1, {mask = M})" },
  { "normalize(X, 1, 0, eps=0.5, mask=M)", "normalize(X, 1, 0, {eps = 0.5, mask = M})" },
  { "logaddexp(X, Y, input_mask=M, other_mask=M1)", "logaddexp(X, Y, {input_mask = M, other_mask = M1})" },
  { "logaddexp(X, Y)", "logaddexp(X, Y)" },
}

local ERRORS = {
  { "sum(X, 0, mask=torch.ones(1, 3, 4, dtype=torch.bool))", "sum(X, 0, {mask = torch.ones(1, 3, 4, {dtype = torch.bool})})" },
  { "sum(X, 0, mask=torch.ones(2, 4, dtype=torch.bool))", "sum(X, 0, {mask = torch.ones(2, 4, {dtype = torch.bool})})" },
  { "sum(X, (0, 0), mask=M)", "sum(X, {0, 0}, {mask = M})" },
  { "amax(X, 2, mask=M)", "amax(X, 2, {mask = M})" },
  { "amax(X.to(torch.bool), 1, mask=M)", "amax(X:to(torch.bool), 1, {mask = M})" },
  { "mean(XI, 0)", "mean(XI, 0)" },
  { "var(X, 1, True, correction=1)", "var(X, 1, true, {correction = 1})" },
  { "median(XI, 1, mask=M)", "median(XI, 1, {mask = M})" },
  { "norm(X, 2, 1, dtype=torch.float32, mask=M)", "norm(X, 2, 1, {dtype = torch.float32, mask = M})" },
}

-- Non-finite numbers travel as strings ("nan", "inf", "-inf"): JSON has none.
local PY = [[
import math
X = torch.tensor(%s, dtype=torch.float64)
Y = torch.tensor(%s, dtype=torch.float64)
M = torch.tensor(%s)
M1 = torch.tensor(%s)
XI = torch.tensor(%s, dtype=torch.int32)
XL = XI.to(torch.int64)
CASES, ERRORS = json.loads(%q), json.loads(%q)
def num(v):
    return v if math.isfinite(v) else str(v)
def flat(t):
    return [num(v) for v in t.detach().reshape(-1).tolist()]
out = {"cases": [], "errors": []}
for call in CASES:
    x, y = X.clone().requires_grad_(True), Y.clone().requires_grad_(True)
    env = dict(torch=torch, math=math, X=x, Y=y, M=M, M1=M1, XI=XI, XL=XL)
    r = eval("torch.masked." + call, env)
    got = {"dtype": str(r.dtype)[6:], "shape": list(r.shape), "values": flat(r)}
    if r.requires_grad:
        torch.where(torch.isfinite(r), r, 0).sum().backward()
        got["grad"] = flat(x.grad if x.grad is not None else torch.zeros_like(x))
        got["grad_y"] = flat(y.grad if y.grad is not None else torch.zeros_like(y))
    out["cases"].append(got)
for call in ERRORS:
    try:
        eval("torch.masked." + call, dict(torch=torch, X=X, M=M, XI=XI))
        out["errors"].append(None)
    except Exception as e:
        out["errors"].append(str(e).split("\n")[0])
print(json.dumps(out))
]]

local function python_list(t)
  local s = cjson.encode(t)
  return (s:gsub("true", "True"):gsub("false", "False"))
end

local function column(list, i)
  local out = {}
  for k, v in ipairs(list) do out[k] = v[i] end
  return out
end

local function num(v)
  if v == "nan" then return 0 / 0 elseif v == "inf" then return math.huge elseif v == "-inf" then return -math.huge end
  return v
end

local function close(want, got, tol, what)
  assert.equals(#want, #got, what .. ": element count")
  for i = 1, #want do
    local w, g = num(want[i]), got[i]
    if type(g) == "boolean" then g = g and 1 or 0 end
    local ok
    if w ~= w then ok = g ~= g
    elseif w == math.huge or w == -math.huge then ok = g == w
    else ok = math.abs(w - g) <= tol * math.max(1, math.abs(w)) end
    assert.is_true(ok, ("%s[%d]: PyTorch %s, ltorch %s"):format(what, i, tostring(w), tostring(g)))
  end
end

local function inputs()
  local x = torch.tensor(X, { dtype = torch.float64 }):requires_grad_(true)
  local y = torch.tensor(Y, { dtype = torch.float64 }):requires_grad_(true)
  local xi = torch.tensor(XI, { dtype = torch.int32 })
  return { torch = torch, math = math, masked = torch.masked, X = x, Y = y, XI = xi, XL = xi:to(torch.int64),
    M = torch.tensor(M), M1 = torch.tensor(M1) }
end

-- The Lua call as a chunk named by its code (not a tail call: the chunk is the caller blamed).
local function call(code, name)
  return assert(loadstring("local r = masked." .. code .. "; return r", "=" .. (name or code)))
end

describe("torch.masked", function()
  local ref
  setup(function()
    ref = pytorch.run(PY:format(python_list(X), python_list(Y), python_list(M), python_list(M1), python_list(XI),
      cjson.encode(column(CASES, 1)), cjson.encode(column(ERRORS, 1))))
  end)

  it("gives PyTorch's values, dtypes and shapes", function()
    for i, case in ipairs(CASES) do
      local want, env = ref.cases[i], inputs()
      local r = setfenv(call(case[2]), env)()
      assert.equals(want.dtype, r.dtype.name, case[2] .. ": dtype")
      assert.same(want.shape, { unpack(r:size()) }, case[2] .. ": shape")
      close(want.values, r:detach():reshape({ -1 }):tolist(), r.dtype == torch.float32 and 1e-5 or 1e-10, case[2])
    end
  end)

  it("gives PyTorch's gradients (of the finite part of each float result)", function()
    for i, case in ipairs(CASES) do
      local want, env = ref.cases[i], inputs()
      local r = setfenv(call(case[2]), env)()
      assert.equals(want.grad ~= nil and want.grad ~= cjson.null, r.requires_grad, case[2] .. ": requires_grad")
      if r.requires_grad then
        torch.where(torch.isfinite(r), r, torch.zeros_like(r)):sum():backward()
        local gx = env.X.grad or torch.zeros_like(env.X)
        local gy = env.Y.grad or torch.zeros_like(env.Y)
        close(want.grad, gx:reshape({ -1 }):tolist(), 1e-10, case[2] .. ": grad of input")
        close(want.grad_y, gy:reshape({ -1 }):tolist(), 1e-10, case[2] .. ": grad of other")
      end
    end
  end)

  it("raises PyTorch's errors, at the caller's line", function()
    for i, case in ipairs(ERRORS) do
      local want = ref.errors[i]
      assert.is_string(want, case[1] .. ": PyTorch raises")
      local f = setfenv(call(case[2], "case" .. i), inputs())
      local msg = err(f)
      assert.is_truthy(msg:find(want, 1, true), ("%s: PyTorch says %q, ltorch %q"):format(case[2], want, msg))
      assert.is_truthy(msg:find("^case" .. i .. ":1: "), case[2] .. ": blamed line: " .. msg)
    end
  end)

  it("refuses what ltorch does not have (non-tensor input, mask) and misused keywords", function()
    local x = torch.tensor(X, { dtype = torch.float64 })
    assert.matches("masked sum expects a strided Tensor as input", err(torch.masked.sum, { 1, 2 }))
    assert.matches("mask must be a strided Tensor", err(torch.masked.amax, x, 0, { mask = { true } }))
    assert.matches("masked logaddexp expects a strided Tensor as other", err(torch.masked.logaddexp, x, 1))
    assert.matches("unexpected keyword argument 'maks'", err(torch.masked.sum, x, { maks = x:gt(0) }))
    assert.matches("missing required argument 'dim'", err(torch.masked.softmax, x))
  end)
end)
