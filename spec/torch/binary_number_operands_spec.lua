--[[
  spec/torch/binary_number_operands_spec.lua — where a binary op (lua/torch/_ops_math.lua) takes
  a Lua number as an operand exactly where PyTorch 2.11's Python binding takes a Python number:
  torch.eq(x, 2) and x:fmod(2) work, torch.eq(2, x) and torch.atan2(x, 2) raise in both (a
  TypeError there, a bad argument naming torch.tensor(...) here). PyTorch's verdict for each call
  is asked from the venv's PyTorch; values where both return are compared exactly (small ints).

  Run:  build/ltorch /usr/bin/busted spec/torch/binary_number_operands_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local OPS = { "atan2", "eq", "ne", "lt", "le", "gt", "ge", "fmod", "maximum", "minimum",
  "logical_and", "logical_or", "logical_xor", "add", "mul", "remainder", "bitwise_and" }
-- { form, Python call, Lua call }
local FORMS = {
  { "torch.X(x, 2)", function(n, x) return torch[n](x, 2) end },
  { "torch.X(2, x)", function(n, x) return torch[n](2, x) end },
  { "x.X(2)", function(n, x) return x[n](x, 2) end },
  { "x.X_(2)", function(n, x) return x[n .. "_"](x, 2) end },
}

describe("binary ops with a Lua number operand", function()
  local verdict
  setup(function()
    verdict = pytorch.run([[
ops = ]] .. "[" .. table.concat((function() local q = {} for i, n in ipairs(OPS) do q[i] = "'" .. n .. "'" end return q end)(), ", ") .. "]" .. [[

forms = ["torch.X(x, 2)", "torch.X(2, x)", "x.X(2)", "x.X_(2)"]
out = {}
for n in ops:
    for f in forms:
        x = torch.tensor([1, 2, 3])
        if f == "x.X_(2)" and not hasattr(x, n + "_"):
            continue
        try:
            eval(f.replace("X", n)); out[n + " " + f] = True
        except Exception:
            out[n + " " + f] = False
print(json.dumps(out))
]])
  end)

  it("raise exactly where PyTorch's binding raises, and return PyTorch's values elsewhere", function()
    local checked = 0
    for _, n in ipairs(OPS) do
      for _, form in ipairs(FORMS) do
        local py = verdict[n .. " " .. form[1]]
        if py ~= nil then
          local x = torch.tensor({ 1, 2, 3 })
          local ok, r = pcall(form[2], n, x)
          assert(ok == py, ("%s %s: PyTorch %s, ltorch %s (%s)"):format(n, form[1],
            py and "returns" or "raises", ok and "returns" or "raises", tostring(r)))
          checked = checked + 1
        end
      end
    end
    assert.is_true(checked >= 60)
  end)

  it("names the argument and what to write instead, at the caller's line", function()
    local x = torch.tensor({ 1.0, 2.0 })
    local ok, e = pcall(function() local _ = torch.atan2(x, 2) end)
    assert.is_false(ok)
    assert.matches("binary_number_operands_spec.lua:%d+: bad argument #2 to 'atan2' %(Tensor expected, got number; "
      .. "PyTorch's binding takes a Tensor here: write torch.tensor%(2%)%)", e)
    assert.has_error(function() torch.gt(0.5, x) end, "bad argument #1 to 'gt' (Tensor expected, got number; "
      .. "PyTorch's binding takes a Tensor here: write torch.tensor(0.5))")
    assert.has_error(function() x:logical_or_(1) end, "bad argument #2 to 'logical_or_' (Tensor expected, got number; "
      .. "PyTorch's binding takes a Tensor here: write torch.tensor(1))")
    assert.same({ 2.0, 2.0 }, torch.maximum(x, torch.tensor(2)):tolist())
    assert.same({ true, true }, torch.lt(torch.tensor(0.5), x):tolist())
  end)
end)
