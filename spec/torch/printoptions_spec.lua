--[[
  spec/torch/printoptions_spec.lua — torch.set_printoptions (lua/torch/_python_utils.lua) and the
  printer that honours it (lua/torch/_tensor_str.lua): tostring(x) equals PyTorch 2.11's repr(x)
  under each option (precision, threshold, edgeitems, linewidth, profile, sci_mode) on the same
  tensors; bad options raise.

  Run:  build/ltorch /usr/bin/busted spec/torch/printoptions_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

local VALUES = { 1.12345, -2.5, 3.75, 0.001, 12.5, -0.0625, 7.125, 100.5 }

-- {python options, lua options, python tensor, lua tensor builder}
local CASES = {
  { "precision=2", { precision = 2 }, "v", function() return torch.tensor(VALUES) end },
  { "precision=6", { precision = 6 }, "v.double()", function() return torch.tensor(VALUES, { dtype = torch.float64 }) end },
  { "threshold=5", { threshold = 5 }, "torch.arange(10)", function() return torch.arange(10) end },
  { "threshold=5, edgeitems=1", { threshold = 5, edgeitems = 1 }, "torch.arange(20.).reshape(4, 5)",
    function() return torch.arange(20, { dtype = torch.float32 }):reshape(4, 5) end },
  { "linewidth=30", { linewidth = 30 }, "v", function() return torch.tensor(VALUES) end },
  { "linewidth=40", { linewidth = 40 }, "v.reshape(2, 4).requires_grad_()",
    function() return torch.tensor(VALUES):reshape(2, 4):requires_grad_() end },
  { "profile='short'", { profile = "short" }, "torch.arange(30.).reshape(5, 6) / 7",
    function() return torch.arange(30, { dtype = torch.float32 }):reshape(5, 6) / 7 end },
  { "profile='full'", { profile = "full" }, "torch.arange(1010)", function() return torch.arange(1010) end },
  { "sci_mode=True", { sci_mode = true }, "v", function() return torch.tensor(VALUES) end },
  { "sci_mode=True", { sci_mode = true }, "torch.tensor([1., 20., 300.])", function() return torch.tensor({ 1, 20, 300 }, { dtype = torch.float32 }) end },
  { "sci_mode=False", { sci_mode = false }, "torch.tensor([1e-5, 1e5, 3.])", function() return torch.tensor({ 1e-5, 1e5, 3.0 }) end },
  { "precision=3, sci_mode=True", { precision = 3, sci_mode = true }, "torch.tensor(2.5)", function() return torch.tensor(2.5) end },
  { "edgeitems=0, threshold=3", { edgeitems = 0, threshold = 3 }, "torch.arange(10.) / 3",
    function() return torch.arange(10, { dtype = torch.float32 }) / 3 end },
  { "edgeitems=0, threshold=3", { edgeitems = 0, threshold = 3 }, "torch.arange(12).reshape(3, 4).int()",
    function() return torch.arange(12):reshape(3, 4):int() end },
  { "edgeitems=0, threshold=0", { edgeitems = 0, threshold = 0 }, "torch.tensor(2.5)", function() return torch.tensor(2.5) end },
  { "edgeitems=0", { edgeitems = 0 }, "torch.tensor([1.5, 2.])", function() return torch.tensor({ 1.5, 2 }) end },
}

describe("torch.set_printoptions", function()
  local ref
  setup(function()
    local lines = {}
    for i, c in ipairs(CASES) do
      lines[i] = ("torch.set_printoptions(profile='default', sci_mode=None)\ntorch.set_printoptions(%s)\nout.append(repr(%s))"):format(c[1], c[3])
    end
    ref = pytorch.run(("v = torch.tensor(%s)\nout = []\n%s\nprint(json.dumps(out))"):format(
      require("cjson").encode(VALUES), table.concat(lines, "\n")))
  end)
  after_each(function() torch.set_printoptions({ profile = "default" }) end)

  it("prints as PyTorch prints under each option", function()
    for i, c in ipairs(CASES) do
      torch.set_printoptions({ profile = "default" })
      torch.set_printoptions(c[2])
      assert.equals(ref[i], tostring(c[4]()), "case " .. i .. ": " .. c[1])
    end
  end)

  it("profile='default' and sci_mode=None restore the defaults", function()
    local x = torch.tensor(VALUES)
    local before = tostring(x)
    torch.set_printoptions({ precision = 1, sci_mode = true, linewidth = 20 })
    assert.not_equals(before, tostring(x))
    torch.set_printoptions({ profile = "default" })
    assert.equals(before, tostring(x))
  end)

  it("rejects bad options", function()
    assert.matches("argument 'precision' must be int", err(torch.set_printoptions, { precision = 1.5 }))
    assert.matches("invalid profile", err(torch.set_printoptions, { profile = "long" }))
    assert.matches("argument 'sci_mode' must be bool", err(torch.set_printoptions, { sci_mode = "yes" }))
    assert.matches("unexpected keyword argument 'precison'", err(torch.set_printoptions, { precison = 2 }))
    assert.matches("edgeitems must be non%-negative", err(torch.set_printoptions, { edgeitems = -1 }))
  end)
end)
