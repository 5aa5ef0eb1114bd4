--[[
  spec/nn/padding_spec.lua — the padding layers (lua/torch/nn/padding.lua): ConstantPad,
  ZeroPad, ReflectionPad, ReplicationPad and CircularPad in 1d, 2d and 3d, against PyTorch.

  Each case (spec/support/layer_parity.lua) checks state_dict (empty), the repr, and outputs and
  input gradients on identical inputs. Cases cover an int and a table padding, positional and
  keyword forms, batched and unbatched inputs, asymmetric and negative (cropping) padding, and
  float64. Also misuse errors: a padding table of the wrong length, a missing or non-number
  value, the circular layers' rank check, and libtorch's own errors (reflection padding too
  large) blamed on the caller's line.

  One pytorch.run computes every reference. Tolerance: float32 atol 1e-6 + rtol 1e-5, float64
  1e-12 (padding copies values; observed bit-identical).

  Run:  build/ltorch /usr/bin/busted spec/nn/padding_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local parity = require "spec.support.layer_parity"
local err = require("spec.support.errors").err

local TOL32 = { atol = 1e-6, rtol = 1e-5 }
local TOL64 = { atol = 1e-12, rtol = 1e-12 }

-- Input shapes by dims: batched and unbatched.
local SHAPES = {
  [1] = { { 2, 3, 5 }, { 3, 5 } },
  [2] = { { 2, 2, 4, 5 }, { 2, 4, 5 } },
  [3] = { { 2, 2, 3, 4, 4 }, { 2, 3, 3, 4 } },
}
-- An asymmetric padding table for each dims, and its Python tuple.
local TABLES = { [1] = { 2, 1 }, [2] = { 1, 2, 0, 3 }, [3] = { 1, 0, 2, 1, 1, 2 } }
local function tuple(t) return "(" .. table.concat(t, ", ") .. ")" end

local CASES = {}
local function add(case) CASES[#CASES + 1] = case end

for dims = 1, 3 do
  local batched, unbatched = SHAPES[dims][1], SHAPES[dims][2]
  local tbl, py_tbl = TABLES[dims], tuple(TABLES[dims])
  local c = "ConstantPad" .. dims .. "d"
  add({ name = c .. "(2, 3.5)", lua = function() return nn[c](2, 3.5) end, py = "nn." .. c .. "(2, 3.5)",
    inputs = { batched } })
  add({ name = c .. " table, keywords, unbatched", lua = function() return nn[c]({ padding = tbl, value = -1.25 }) end,
    py = "nn." .. c .. "(padding=" .. py_tbl .. ", value=-1.25)", inputs = { unbatched } })
  add({ name = c .. " negative padding crops", lua = function() return nn[c](-1, 0.5) end,
    py = "nn." .. c .. "(-1, 0.5)", inputs = { batched } })
  local z = "ZeroPad" .. dims .. "d"
  add({ name = z .. "(1)", lua = function() return nn[z](1) end, py = "nn." .. z .. "(1)", inputs = { batched } })
  add({ name = z .. " table float64", lua = function() return nn[z]({ padding = tbl }) end,
    py = "nn." .. z .. "(padding=" .. py_tbl .. ")", inputs = { unbatched }, dtype = "float64" })
  for _, kind in ipairs({ "ReflectionPad", "ReplicationPad", "CircularPad" }) do
    local n = kind .. dims .. "d"
    add({ name = n .. "(1)", lua = function() return nn[n](1) end, py = "nn." .. n .. "(1)", inputs = { batched } })
    add({ name = n .. " table, unbatched", lua = function() return nn[n](tbl) end, py = "nn." .. n .. "(" .. py_tbl .. ")",
      inputs = { unbatched } })
    add({ name = n .. " keyword float64", lua = function() return nn[n]({ padding = 2 }) end,
      py = "nn." .. n .. "(padding=2)", inputs = { batched }, dtype = "float64" })
  end
end

describe("nn padding layers", function()
  parity.describe_cases(CASES, { float32 = TOL32, float64 = TOL64 })

  describe("misuse", function()
    it("rejects a padding of the wrong form, naming the module", function()
      assert.matches("ReflectionPad2d: padding must be an integer or a table of 4 integers, got (1, 2)",
        err(nn.ReflectionPad2d, { 1, 2 }), 1, true)
      assert.matches("ZeroPad1d: padding must be an integer or a table of 2 integers, got 1.5", err(nn.ZeroPad1d, 1.5),
        1, true)
      assert.matches("CircularPad3d: padding must be an integer or a table of 6 integers", err(nn.CircularPad3d, "1"),
        1, true)
    end)

    it("requires ConstantPad's value, as a number", function()
      assert.matches("ConstantPad1d: missing required argument 'value'", err(nn.ConstantPad1d, 2), 1, true)
      assert.matches("ConstantPad2d: value must be a number, got string", err(nn.ConstantPad2d, 2, "0"), 1, true)
      assert.matches("ZeroPad2d: takes at most 1 positional arguments but 2 were given", err(nn.ZeroPad2d, 1, 0.0),
        1, true)
    end)

    it("checks the circular layers' input rank as PyTorch does", function()
      assert.matches("CircularPad2d: expected 3D or 4D input (got 2D input)", err(nn.CircularPad2d(1), torch.randn(3, 3)),
        1, true)
      assert.matches("CircularPad1d: expected 2D or 3D input (got 4D input)",
        err(nn.CircularPad1d(1), torch.randn(1, 2, 3, 3)), 1, true)
    end)

    it("passes libtorch's errors on at the caller's line", function()
      local ok, msg = pcall(function() local y = nn.ReflectionPad1d(4)(torch.randn(1, 2, 3)) return y end)
      assert.is_false(ok)
      assert.matches("padding_spec%.lua:%d+: .*Padding size should be less than the corresponding input dimension", msg)
      assert.matches("ReplicationPad2d: expected a Tensor input, got table", err(nn.ReplicationPad2d(1), {}), 1, true)
    end)
  end)
end)
