--[[
  spec/nn/deprecated_spec.lua — PyTorch's deprecated nn classes (lua/torch/nn/deprecated.lua):
  NLLLoss2d gives NLLLoss's values and prints PyTorch's repr, Container holds its children as
  PyTorch's does; both print PyTorch's FutureWarning text (checked in a separate process).

  Run:  build/ltorch /usr/bin/busted spec/nn/deprecated_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local ROOT = debug.getinfo(1, "S").source:match("^@(.*)/spec/nn/[^/]*$") or "."

describe("deprecated nn classes", function()
  local ref
  setup(function()
    ref = pytorch.run [[
import warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    l = torch.nn.NLLLoss2d(ignore_index=1)
    c = torch.nn.Container(a=torch.nn.Linear(2, 3), b=torch.nn.ReLU())
x = torch.arange(96.).reshape(2, 3, 4, 4).div(50).log_softmax(1)
t = (torch.arange(32).reshape(2, 4, 4) % 3)
print(json.dumps({"repr": [repr(l), repr(c)], "loss": l(x, t).item(), "warnings": [str(m.message) for m in w],
  "keys": list(c.state_dict().keys())}))
]]
  end)

  it("NLLLoss2d is NLLLoss under its old name", function()
    local l = nn.NLLLoss2d({ ignore_index = 1 })
    local x = torch.arange(96):double():reshape(2, 3, 4, 4):div(50):log_softmax(1):float()
    local t = torch.arange(32):reshape(2, 4, 4):remainder(3)
    assert.are.equal(ref["repr"][1], tostring(l))
    assert.is_true(math.abs(ref.loss - l(x, t):item()) < 1e-5)
  end)

  it("Container holds the named modules", function()
    local c = nn.Container({ a = nn.Linear(2, 3), b = nn.ReLU() })
    assert.are.equal(ref["repr"][2], tostring(c))
    local keys = {}
    for k in c:state_dict() do keys[#keys + 1] = k end
    assert.are.same(ref.keys, keys)
    assert.matches("Container: expected one table of named modules", err(function() return nn.Container(nn.Linear(2, 3)) end))
  end)

  it("prints PyTorch's FutureWarning text at the caller's line", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write('local nn = require("torch").nn\nlocal a = nn.NLLLoss2d()\nlocal b = nn.Container({})\nreturn a, b\n')
    f:close()
    local p = assert(io.popen(("'%s/build/ltorch' '%s' 2>&1"):format(ROOT, script)))
    local out = p:read("*a")
    p:close()
    os.remove(script)
    assert.matches(":2: FutureWarning: " .. ref.warnings[1], out, 1, true)
    assert.matches(":3: FutureWarning: " .. ref.warnings[2], out, 1, true)
  end)
end)
