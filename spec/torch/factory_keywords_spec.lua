--[[
  spec/torch/factory_keywords_spec.lua — the keyword forms of the factories (lua/torch/_creation.lua)
  against PyTorch: torch.arange({start = 0, ["end"] = 5}) is torch.arange(start=0, end=5), and
  likewise arange's other bindings, linspace(start=, end=, steps=), zeros/ones/empty/rand/randn
  (size=), eye(n=, m=), randperm(n=). Values, dtypes and shapes must equal PyTorch's (exact: the
  same kernels); the calls PyTorch refuses (an arange overload that does not exist, size given
  twice) raise here too.

  Run:  build/ltorch /usr/bin/busted spec/torch/factory_keywords_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local E = "end"
-- { PyTorch call, the Lua call }
local CASES = {
  { "torch.arange(start=0, end=5)", function() return torch.arange({ start = 0, [E] = 5 }) end },
  { "torch.arange(end=4)", function() return torch.arange({ [E] = 4 }) end },
  { "torch.arange(1, end=7)", function() return torch.arange(1, { [E] = 7 }) end },
  { "torch.arange(1, 7, step=2)", function() return torch.arange(1, 7, { step = 2 }) end },
  { "torch.arange(start=1, end=7, step=2, dtype=torch.float64)",
    function() return torch.arange({ start = 1, [E] = 7, step = 2, dtype = torch.float64 }) end },
  { "torch.arange(start=0.5, end=2)", function() return torch.arange({ start = 0.5, [E] = 2 }) end },
  { "torch.linspace(start=0, end=1, steps=5)", function() return torch.linspace({ start = 0, [E] = 1, steps = 5 }) end },
  { "torch.linspace(0, 1, steps=3, dtype=torch.float64)",
    function() return torch.linspace(0, 1, { steps = 3, dtype = torch.float64 }) end },
  { "torch.zeros(size=(2, 3))", function() return torch.zeros({ size = { 2, 3 } }) end },
  { "torch.ones(size=[2], dtype=torch.int64)", function() return torch.ones({ size = { 2 }, dtype = torch.int64 }) end },
  { "torch.empty(size=(2, 0)).shape", function() return torch.empty({ size = { 2, 0 } }):size() end },
  { "torch.randn(size=(3,)).shape", function() return torch.randn({ size = { 3 } }):size() end },
  { "torch.eye(n=2)", function() return torch.eye({ n = 2 }) end },
  { "torch.eye(2, m=3)", function() return torch.eye(2, { m = 3 }) end },
  { "torch.randperm(n=4).sort().values", function() return torch.randperm({ n = 4 }):sort() end },
}

local REFUSED = {
  { "torch.arange(5, step=2)", function() return torch.arange(5, { step = 2 }) end, "invalid combination" },
  { "torch.arange(5, start=1)", function() return torch.arange(5, { start = 1 }) end, "invalid combination" },
  { "torch.arange(start=2)", function() return torch.arange({ start = 2 }) end, "invalid combination" },
  { "torch.arange(1, 5, 2, step=3)", function() return torch.arange(1, 5, 2, { step = 3 }) end, "invalid combination" },
  { "torch.zeros(2, size=(2,))", function() return torch.zeros(2, { size = { 2 } }) end, "multiple values for argument 'size'" },
  { "torch.linspace(0, 1, 3, steps=4)", function() return torch.linspace(0, 1, 3, { steps = 4 }) end,
    "multiple values for argument 'steps'" },
}

-- A list of Lua strings as a Python list literal (json-quoted).
local function pystrings(list) return require("cjson").encode(list) end

local function value(v)
  if torch.is_tensor(v) then return { v:tolist(), tostring(v.dtype) } end
  return v
end

describe("factories with keyword arguments, as PyTorch", function()
  local ref
  setup(function()
    local calls, refused = {}, {}
    for i, c in ipairs(CASES) do calls[i] = c[1] end
    for i, c in ipairs(REFUSED) do refused[i] = c[1] end
    ref = pytorch.run(([[
def value(v):
    if isinstance(v, torch.Tensor): return [v.tolist(), str(v.dtype)]
    return list(v)
out, errs = [], []
for c in %s: out.append(value(eval(c)))
for c in %s:
    try: eval(c); errs.append("ok")
    except TypeError as e: errs.append("TypeError")
print(json.dumps(dict(out=out, errs=errs)))]]):format(pystrings(calls), pystrings(refused)))
  end)

  for i, c in ipairs(CASES) do
    it(c[1], function()
      local got = value(c[2]())
      if type(got) == "table" and type(got[2]) == "string" then
        assert.equal(ref.out[i][2], got[2])
        approx.check(got[1], ref.out[i][1], 0)
      else
        assert.same(ref.out[i], got)
      end
    end)
  end

  it("refuses the calls PyTorch refuses", function()
    for i, c in ipairs(REFUSED) do
      assert.equal("TypeError", ref.errs[i], c[1])
      assert.matches(c[3], err(c[2]), 1, true)
    end
  end)
end)

-- torch.accelerator (lua/torch/accelerator.lua) as PyTorch 2.11's on this machine (same libtorch build).
describe("torch.accelerator, as PyTorch", function()
  it("answers current_accelerator, is_available, device_count and the memory counters as PyTorch", function()
    local r = pytorch.run [[
A = torch.accelerator
d = A.current_accelerator()
c = A.current_accelerator(check_available=True)
print(json.dumps([None if d is None else str(d), None if c is None else str(c), A.is_available(), A.device_count(),
                  A.memory_allocated(), A.max_memory_allocated()]))]]
    local A = torch.accelerator
    local d, c = A.current_accelerator(), A.current_accelerator({ check_available = true })
    local cjson = require "cjson"
    assert.same(r, { d == nil and cjson.null or tostring(d), c == nil and cjson.null or tostring(c), A.is_available(),
      A.device_count(), A.memory_allocated(), A.max_memory_allocated() })
    assert.matches("current_accelerator: unexpected keyword argument 'bogus'", err(A.current_accelerator, { bogus = 1 }))
  end)
end)

-- nn.LSTM returns output, h_n, c_n (PyTorch: output, (h_n, c_n)); the literal port
-- `local output, hidden = lstm(x, hidden)` keeps h_n only, and passing it back is a clear error.
describe("nn.LSTM's literal-port form", function()
  it("says what to write when h_n alone comes back as hx", function()
    local lstm = torch.nn.LSTM(3, 4)
    local x = torch.randn(5, 1, 3)
    local out, h, c = lstm(x)
    assert.is_true(torch.is_tensor(out) and torch.is_tensor(h) and torch.is_tensor(c))
    local _, hidden = lstm(x)
    assert.matches("LSTM returns three values, output, h_n, c_n: write `local out, h, c = lstm(x, hx)` and pass {h, c}",
      err(lstm, x, hidden), 1, true)
  end)
end)
