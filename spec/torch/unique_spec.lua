--[[
  spec/torch/unique_spec.lua — torch.unique, torch.unique_consecutive and the methods x:unique,
  x:unique_consecutive (lua/torch/_unique.lua) against PyTorch 2.11: every combination of sorted,
  return_inverse, return_counts and dim gives PyTorch's tensors, as many as PyTorch's tuple holds;
  bad arguments raise at the caller's line.

  Run:  build/ltorch /usr/bin/busted spec/torch/unique_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local FLAT = { 3, 1, 2, 1, 3, 2, 2, 0 }
local MAT = { { 1, 2, 1 }, { 0, 5, 0 }, { 1, 2, 1 }, { 0, 5, 0 } }

-- The cases: {fn, which input, keyword table}; dim nil means None.
local CASES = {}
for _, fn in ipairs { "unique", "unique_consecutive" } do
  for _, dim in ipairs { false, 0, 1 } do
    for _, inv in ipairs { false, true } do
      for _, cnt in ipairs { false, true } do
        local sorts = fn == "unique" and { true, false } or { "none" }
        for _, sorted in ipairs(sorts) do
          CASES[#CASES + 1] = { fn = fn, mat = dim ~= false, dim = dim ~= false and dim or nil, inv = inv, cnt = cnt,
            sorted = sorted }
        end
      end
    end
  end
end

local function py_bool(b) return b and "True" or "False" end

local function python_calls()
  local lines = {}
  for _, c in ipairs(CASES) do
    local kw = { "return_inverse=" .. py_bool(c.inv), "return_counts=" .. py_bool(c.cnt) }
    if c.dim then kw[#kw + 1] = "dim=" .. c.dim end
    if c.sorted ~= "none" then kw[#kw + 1] = "sorted=" .. py_bool(c.sorted) end
    lines[#lines + 1] = ("torch.%s(%s, %s)"):format(c.fn, c.mat and "m" or "x", table.concat(kw, ", "))
  end
  return "[" .. table.concat(lines, ",\n") .. "]"
end

local function as_lists(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = (select(i, ...)):tolist() end
  return out
end

describe("torch.unique and torch.unique_consecutive", function()
  local ref
  setup(function()
    ref = pytorch.run(([[
x = torch.tensor(%s)
m = torch.tensor(%s)
def lists(r):
    return [t.tolist() for t in r] if isinstance(r, tuple) else [r.tolist()]
print(json.dumps([lists(r) for r in %s]))
]]):format(require("cjson").encode(FLAT), require("cjson").encode(MAT), python_calls()))
  end)

  it("returns PyTorch's tensors for every flag and dim", function()
    assert.equals(#CASES, #ref)
    local x, m = torch.tensor(FLAT), torch.tensor(MAT)
    for i, c in ipairs(CASES) do
      local kw = { return_inverse = c.inv, return_counts = c.cnt, dim = c.dim }
      if c.sorted ~= "none" then kw.sorted = c.sorted end
      local got = as_lists(torch[c.fn](c.mat and m or x, kw))
      assert.same(ref[i], got, ("case %d: %s dim=%s inverse=%s counts=%s"):format(i, c.fn, tostring(c.dim), tostring(c.inv), tostring(c.cnt)))
    end
  end)

  it("the methods bind PyTorch's method signatures and agree with the functions", function()
    local x, m = torch.tensor(FLAT), torch.tensor(MAT)
    assert.same(as_lists(torch.unique(x, { return_inverse = true })), as_lists(x:unique(true, true)))
    assert.same(as_lists(torch.unique(m, { dim = 1, return_counts = true })), as_lists(m:unique({ dim = 1, return_counts = true })))
    assert.same(as_lists(torch.unique_consecutive(x, { return_counts = true })), as_lists(x:unique_consecutive(false, true)))
    assert.equals(1, select("#", x:unique()))
    assert.equals(1, select("#", torch.unique_consecutive(x)))
  end)

  it("rejects bad arguments at the caller's line", function()
    local x = torch.tensor(FLAT)
    assert.matches("unique_spec.lua:%d+: unique%(%): argument 'sorted' must be bool, not number", err(function() local r = torch.unique(x, { sorted = 1 }); return r end))
    assert.matches("unique_spec.lua:%d+: .*Dimension out of range", err(function() local r = torch.unique(x, { dim = 2 }); return r end))
    assert.matches("unexpected keyword argument 'return_count'", err(function() local r = torch.unique(x, { return_count = true }); return r end))
    assert.matches("argument 'input' must be Tensor, not table", err(function() local r = torch.unique({ 1, 2 }); return r end))
    assert.matches("argument 'dim' must be int, not float", err(function() local r = x:unique_consecutive({ dim = 0.5 }); return r end))
  end)
end)
