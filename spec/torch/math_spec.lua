--[[
  spec/torch/math_spec.lua — elementwise math (lua/torch/_ops_math.lua) against PyTorch.

  Covers: every unary op as method, torch function and in-place `_` form; binary ops with
  tensor/tensor (broadcasting), tensor/number and number/tensor operands, alpha, div's rounding
  modes, type promotion, comparisons (bool results), the Lua operators + - * / % ^ unary- ..
  and #, the `x < y` error, clamp/clip, where (with number operands), masked_fill(_), lerp,
  leaky_relu, allclose, equal; and bad inputs (wrong type, nil, shapes, dtypes, freed tensors).

  Each case is a Lua function plus the same expression in Python; one pytorch.run per block
  computes every reference (values and dtype) live. Tolerance: float32, atol 1e-6 + rtol 1e-5.

  Run:  build/ltorch /usr/bin/busted spec/torch/math_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local py = approx.py

-- Inputs, stated once; PyTorch gets the same values as literals.
local U = { -0.9, -0.5, -0.1, 0.2, 0.6, 0.95 }  -- inside (-1, 1): every unary op is defined
local P = { 0.1, 0.5, 1, 2, 3.5, 10 }           -- positive: logs and roots
local R = { -2.5, -1.5, -0.4, 0.5, 1.5, 2.7 }   -- halves: rounding ties go to even
local I = { -3, 0, 5, 12 }                      -- int64
local S = { 0 / 0, math.huge, -math.huge, 1 }   -- NaN and infinities
local A = { { 1.5, -2, 3 }, { 4, 5.25, -6 } }   -- (2, 3)
local B = { -1.5, 0.5, 2 }                      -- (3): broadcasts over A's rows
local D = { { -7, -6, 5 }, { 7, 3, -2 } }       -- int64 (2, 3)
local E = { 2, -4, 3 }                          -- int64 divisors

local PY_INPUTS = table.concat({
  "import torch.nn.functional as F",
  "f = torch.float32",
  "U = torch.tensor(" .. py(U) .. ", dtype=f)", "P = torch.tensor(" .. py(P) .. ", dtype=f)",
  "R = torch.tensor(" .. py(R) .. ", dtype=f)", "I = torch.tensor(" .. py(I) .. ")",
  "S = torch.tensor(" .. py(S) .. ", dtype=f)", "A = torch.tensor(" .. py(A) .. ", dtype=f)",
  "B = torch.tensor(" .. py(B) .. ", dtype=f)", "D = torch.tensor(" .. py(D) .. ")",
  "E = torch.tensor(" .. py(E) .. ")",
  "def rec(r): return ['bool', r] if isinstance(r, bool) else [str(r.dtype), r.tolist()]",
}, "\n") .. "\n"

local function inputs()
  local f = { dtype = torch.float32 }
  return { U = torch.tensor(U, f), P = torch.tensor(P, f), R = torch.tensor(R, f), I = torch.tensor(I),
    S = torch.tensor(S, f), A = torch.tensor(A, f), B = torch.tensor(B, f), D = torch.tensor(D), E = torch.tensor(E) }
end

-- op name -> input it runs on (U unless listed)
local UNARY = { "neg", "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin",
  "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "floor", "ceil",
  "round", "trunc", "frac", "sign", "reciprocal", "square", "erf", "logical_not", "bitwise_not",
  "isnan", "isinf", "isfinite", "silu", "gelu" }
local SOURCE = { log = "P", log2 = "P", log10 = "P", log1p = "P", sqrt = "P", rsqrt = "P", reciprocal = "P",
  floor = "R", ceil = "R", round = "R", trunc = "R", frac = "R", sign = "R", bitwise_not = "I",
  isnan = "S", isinf = "S", isfinite = "S" }
local NO_INPLACE = { isnan = true, isinf = true, isfinite = true, gelu = true }

local function same_tensor(a, b) return rawequal(a, b) end

describe("torch elementwise math", function()
  local X, ref

  setup(function()
    X = inputs()
    local code = { PY_INPUTS, "out = {}" }
    for _, name in ipairs(UNARY) do
      local src = SOURCE[name] or "U"
      code[#code + 1] = ("fn = getattr(torch, '%s', None) or getattr(F, '%s')"):format(name, name)
      code[#code + 1] = ("out['%s'] = rec(fn(%s))"):format(name, src)
      if not NO_INPLACE[name] then
        code[#code + 1] = ("t = %s.clone(); m = getattr(t, '%s_', None)"):format(src, name)
        code[#code + 1] = ("m() if m else getattr(F, '%s')(t, inplace=True); out['%s_'] = rec(t)"):format(name, name)
      end
    end
    code[#code + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for _, name in ipairs(UNARY) do
    it(name .. " matches PyTorch as x:" .. name .. "() and torch." .. name .. "(x)", function()
      local x = X[SOURCE[name] or "U"]
      local r = x[name](x)
      assert.are.equal(ref[name][1], tostring(r.dtype))
      approx.check(r, ref[name][2])
      approx.check(torch[name](x), ref[name][2])
    end)
    if not NO_INPLACE[name] then
      it(name .. "_ works in place and returns the tensor itself", function()
        local y = X[SOURCE[name] or "U"]:clone()
        assert.is_true(same_tensor(y[name .. "_"](y), y))
        assert.are.equal(ref[name .. "_"][1], tostring(y.dtype))
        approx.check(y, ref[name .. "_"][2])
      end)
    end
  end

  it("has no in-place form of the predicates isnan, isinf, isfinite (nor has PyTorch)", function()
    for _, name in ipairs({ "isnan", "isinf", "isfinite" }) do
      assert.is_nil(torch[name .. "_"])
      assert.has_error(function() return X.U[name .. "_"] end, "Tensor has no attribute or method '" .. name .. "_'")
    end
  end)
end)

-- { description, Lua function of the inputs X, the same in Python }
local BINARY = {
  { "add tensor/tensor broadcasts", function(X) return X.A:add(X.B) end, "A.add(B)" },
  { "add with alpha", function(X) return torch.add(X.A, X.B, { alpha = 2 }) end, "torch.add(A, B, alpha=2)" },
  { "sub with alpha", function(X) return X.A:sub(X.B, { alpha = 0.5 }) end, "A.sub(B, alpha=0.5)" },
  { "add number with alpha", function(X) return X.A:add(3, { alpha = 2 }) end, "A.add(3, alpha=2)" },
  { "number add tensor with alpha", function(X) return torch.add(2, X.A, { alpha = 3 }) end, "2 + A * 3" },
  { "mul", function(X) return X.A:mul(X.B) end, "A.mul(B)" },
  { "div", function(X) return X.A:div(X.B) end, "A.div(B)" },
  { "pow", function(X) return X.A:abs():pow(X.B) end, "A.abs().pow(B)" },
  { "remainder", function(X) return X.A:remainder(X.B) end, "A.remainder(B)" },
  { "fmod", function(X) return X.A:fmod(X.B) end, "A.fmod(B)" },
  { "floor_divide", function(X) return X.A:floor_divide(X.B) end, "A.floor_divide(B)" },
  { "maximum", function(X) return torch.maximum(X.A, X.B) end, "torch.maximum(A, B)" },
  { "minimum", function(X) return X.A:minimum(X.B) end, "A.minimum(B)" },
  { "atan2", function(X) return X.A:atan2(X.B) end, "A.atan2(B)" },
  { "eq is bool", function(X) return X.A:eq(X.A:round()) end, "A.eq(A.round())" },
  { "ne", function(X) return X.A:ne(3) end, "A.ne(3)" },
  { "lt", function(X) return X.A:lt(X.B) end, "A.lt(B)" },
  { "le", function(X) return torch.le(X.A, 3) end, "torch.le(A, 3)" },
  { "gt", function(X) return X.A:gt(X.B) end, "A.gt(B)" },
  { "ge", function(X) return X.D:ge(X.E) end, "D.ge(E)" },
  { "logical_and", function(X) return X.A:logical_and(X.B) end, "A.logical_and(B)" },
  { "logical_or", function(X) return X.A:gt(2):logical_or(X.B:lt(0)) end, "A.gt(2).logical_or(B.lt(0))" },
  { "logical_xor", function(X) return X.A:gt(0):logical_xor(X.B:gt(0)) end, "A.gt(0).logical_xor(B.gt(0))" },
  { "bitwise_and", function(X) return X.D:bitwise_and(X.E) end, "D.bitwise_and(E)" },
  { "bitwise_or", function(X) return X.D:bitwise_or(3) end, "D.bitwise_or(3)" },
  { "bitwise_xor", function(X) return X.D:bitwise_xor(X.E) end, "D.bitwise_xor(E)" },
  { "operator + tensor", function(X) return X.A + X.B end, "A + B" },
  { "operator - number", function(X) return X.A - 2 end, "A - 2" },
  { "operator number - tensor", function(X) return 2 - X.A end, "2 - A" },
  { "operator * number", function(X) return 3 * X.A * X.B end, "3 * A * B" },
  { "operator / tensor", function(X) return X.A / X.B end, "A / B" },
  { "operator number / tensor", function(X) return 2 / X.A end, "2 / A" },
  { "operator % number", function(X) return X.A % 2 end, "A % 2" },
  { "operator number % tensor", function(X) return 7 % X.B end, "7 % B" },
  { "operator ^ number", function(X) return X.A ^ 2 end, "A ** 2" },
  { "operator number ^ tensor", function(X) return 2 ^ X.A end, "2 ** A" },
  { "operator unary -", function(X) return -X.A end, "-A" },
  { "operator .. concatenates along dim 0", function(X) return X.A .. X.A end, "torch.cat([A, A], 0)" },
  { "div int by int is float", function(X) return X.D:div(2) end, "D.div(2)" },
  { "div trunc keeps int64", function(X) return X.D:div(X.E, { rounding_mode = "trunc" }) end, "D.div(E, rounding_mode='trunc')" },
  { "div floor keeps int64", function(X) return X.D:div(-4, { rounding_mode = "floor" }) end, "D.div(-4, rounding_mode='floor')" },
  { "div trunc number/tensor", function(X) return torch.div(-7, X.E, { rounding_mode = "trunc" }) end, "torch.div(torch.tensor(-7), E, rounding_mode='trunc')" },
  { "div trunc float", function(X) return X.A:div(X.B, { rounding_mode = "trunc" }) end, "A.div(B, rounding_mode='trunc')" },
  { "div floor float", function(X) return torch.div(X.A, X.B, { rounding_mode = "floor" }) end, "torch.div(A, B, rounding_mode='floor')" },
  { "div_ trunc in place on int64", function(X) return X.D:clone():div_(X.E, { rounding_mode = "trunc" }) end, "D.clone().div_(E, rounding_mode='trunc')" },
  { "add_ with alpha in place", function(X) return X.A:clone():add_(X.B, { alpha = 2 }) end, "A.clone().add_(B, alpha=2)" },
  { "mul_ by number in place", function(X) return X.A:clone():mul_(0.5) end, "A.clone().mul_(0.5)" },
  { "promotion: int64 + 1 stays int64", function(X) return X.D + 1 end, "D + 1" },
  { "promotion: int64 * 0.5 becomes float32", function(X) return X.D * 0.5 end, "D * 0.5" },
  { "promotion: float32 + int stays float32", function(X) return X.A + 2 end, "A + 2" },
  { "promotion: int64 + float32 tensor is float32", function(X) return X.D + X.A end, "D + A" },
  { "promotion: int32 + int64 tensor is int64", function(X) return X.D:int() + X.D end, "D.int() + D" },
  { "promotion: int32 + 1 stays int32", function(X) return X.D:int() + 1 end, "D.int() + 1" },
  { "promotion: float64 + float32 is float64", function(X) return X.A:double() + X.A end, "A.double() + A" },
  { "clamp positional", function(X) return X.A:clamp(-1, 2) end, "A.clamp(-1, 2)" },
  { "clamp {min=}", function(X) return X.A:clamp({ min = 0 }) end, "A.clamp(min=0)" },
  { "clamp {max=}", function(X) return torch.clamp(X.A, { max = 1.5 }) end, "torch.clamp(A, max=1.5)" },
  { "clamp nil min", function(X) return X.A:clamp(nil, 1) end, "A.clamp(None, 1)" },
  { "clamp int64 stays int64", function(X) return X.D:clamp(-2, 4) end, "D.clamp(-2, 4)" },
  { "clip", function(X) return X.A:clip({ min = -1, max = 1 }) end, "A.clip(-1, 1)" },
  { "clamp_ in place", function(X) return X.A:clone():clamp_(0, 3) end, "A.clone().clamp_(0, 3)" },
  { "where tensors", function(X) return torch.where(X.A:gt(0), X.A, X.B) end, "torch.where(A > 0, A, B)" },
  { "where tensor, number", function(X) return torch.where(X.A:gt(0), X.A, 0) end, "torch.where(A > 0, A, 0.)" },
  { "where number, int64 tensor", function(X) return torch.where(X.D:gt(0), 2.5, X.D) end, "torch.where(D > 0, 2.5, D)" },
  { "where two numbers", function(X) return torch.where(X.D:gt(0), 1, -1) end, "torch.where(D > 0, 1, -1)" },
  { "x:where(cond, y)", function(X) return X.A:where(X.A:lt(3), -X.A) end, "A.where(A < 3, -A)" },
  { "masked_fill", function(X) return X.A:masked_fill(X.A:gt(2), -1) end, "A.masked_fill(A > 2, -1)" },
  { "masked_fill int64", function(X) return torch.masked_fill(X.D, X.D:lt(0), 9) end, "D.masked_fill(D < 0, 9)" },
  { "masked_fill_ in place", function(X) return X.A:clone():masked_fill_(X.B:gt(0), 0.5) end, "A.clone().masked_fill_(B > 0, 0.5)" },
  { "lerp", function(X) return X.A:lerp(X.B:expand(2, 3), 0.25) end, "A.lerp(B.expand(2, 3), 0.25)" },
  { "leaky_relu default slope", function(X) return X.A:leaky_relu() end, "F.leaky_relu(A)" },
  { "leaky_relu slope 0.2", function(X) return torch.leaky_relu(X.A, 0.2) end, "F.leaky_relu(A, 0.2)" },
  { "allclose true within atol", function(X) return X.A:allclose(X.A + 1e-9) end, "A.allclose(A + 1e-9)" },
  { "allclose false", function(X) return torch.allclose(X.A, X.A + 0.01) end, "torch.allclose(A, A + 0.01)" },
  { "allclose with rtol", function(X) return X.A:allclose(X.A * 1.001, { rtol = 0.01 }) end, "A.allclose(A * 1.001, rtol=0.01)" },
  { "equal true", function(X) return X.D:equal(X.D:clone()) end, "D.equal(D.clone())" },
  { "equal false on shape", function(X) return torch.equal(X.D, X.D:view(3, 2)) end, "torch.equal(D, D.view(3, 2))" },
}

describe("torch binary math", function()
  local X, ref

  setup(function()
    X = inputs()
    local code = { PY_INPUTS, "out = []" }
    for _, case in ipairs(BINARY) do code[#code + 1] = "out.append(rec(" .. case[3] .. "))" end
    code[#code + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(code, "\n"))
  end)

  for i, case in ipairs(BINARY) do
    it(case[1] .. " matches PyTorch: " .. case[3], function()
      local r = case[2](X)
      if type(r) == "boolean" then
        assert.are.equal(ref[i][2], r)
      else
        assert.are.equal(ref[i][1], tostring(r.dtype))
        approx.check(r, ref[i][2])
      end
    end)
  end

  it("# is the size of dim 0 and errors on a 0-d tensor", function()
    assert.are.equal(2, #X.A)
    assert.has_error(function() return #torch.tensor(3) end)
  end)

  it("in-place binary ops return the tensor itself", function()
    local y = X.A:clone()
    assert.is_true(same_tensor(y:add_(1), y))
    assert.is_true(same_tensor(y:div_(2, { rounding_mode = "floor" }), y))
    assert.is_true(same_tensor(y:clamp_({ max = 1 }), y))
    assert.is_true(same_tensor(y:masked_fill_(y:lt(0), 0), y))
  end)

  it("x < y, x <= 1, 1 > x raise an error pointing at x:lt(y)", function()
    for _, f in ipairs({ function() return X.A < X.A end, function() return X.A <= 1 end,
                         function() return 1 > X.A end, function() return X.A >= X.B end }) do
      local ok, err = pcall(f)
      assert.is_false(ok)
      assert.matches("use x:lt(y), x:le(y), x:gt(y), x:ge(y)", err, 1, true)
      assert.matches("math_spec.lua", err, 1, true)  -- the user's line is blamed
    end
  end)
end)

describe("torch math with bad inputs", function()
  local x, freed
  before_each(function()
    x = torch.ones(2, 3)
    freed = torch.ones(2, 3)
    freed:free()
  end)

  it("unary ops name a missing or non-tensor argument and a freed tensor", function()
    for _, name in ipairs(UNARY) do
      assert.has_error(function() torch[name](nil) end, "bad argument #1 to '" .. name .. "' (Tensor expected, got nil)")
      assert.has_error(function() torch[name]("x") end, "bad argument #1 to '" .. name .. "' (Tensor expected, got string)")
      assert.error_matches(function() torch[name](freed) end, name .. ": tensor was freed", nil, true)
    end
  end)

  local NUMBER_INPUT = { add = true, sub = true, mul = true, div = true, pow = true, remainder = true }
  it("binary ops reject strings, nil, two numbers, freed tensors and unbroadcastable shapes", function()
    for _, name in ipairs({ "add", "sub", "mul", "div", "pow", "remainder", "fmod", "eq", "lt", "maximum", "atan2" }) do
      assert.has_error(function() torch[name](x, "a") end, "bad argument #2 to '" .. name .. "' (Tensor or number expected, got string)")
      assert.has_error(function() torch[name](x, nil) end, "bad argument #2 to '" .. name .. "' (Tensor or number expected, got nil)")
      assert.has_error(function() torch[name]({}, x) end, "bad argument #1 to '" .. name .. "' (Tensor or number expected, got table)")
      if NUMBER_INPUT[name] then
        assert.has_error(function() torch[name](1, 2) end, "bad argument #2 to '" .. name .. "' (Tensor expected, got number)")
      else   -- PyTorch's binding has no Scalar input overload: torch.eq(1, x) is a TypeError there too
        assert.has_error(function() torch[name](1, 2) end, "bad argument #1 to '" .. name
          .. "' (Tensor expected, got number; PyTorch's binding takes a Tensor here: write torch.tensor(1))")
      end
      assert.error_matches(function() torch[name](x, freed) end, name .. ": tensor was freed", nil, true)
      assert.error_matches(function() torch[name](x, torch.ones(4)) end,
        name .. ": The size of tensor a (3) must match the size of tensor b (4)", nil, true)
    end
    assert.error_matches(function() return x + freed end, "add: tensor was freed", nil, true)
  end)

  it("turns a libtorch error raised inside a JIT-compiled loop into a Lua error every time", function()
    -- Regression: c10::Error used to unwind through LuaJIT trace frames and abort the process.
    local bad, failures = torch.ones(4), 0
    for _ = 1, 3000 do
      if not pcall(function() return torch.atan2(x, bad) end) then failures = failures + 1 end
    end
    assert.are.equal(3000, failures)
  end)

  it("reports dtype problems: in-place promotion, bitwise on floats, float alpha on ints", function()
    assert.error_matches(function() torch.arange(3):add_(0.5) end, "add_: result type Float can't be cast to the desired output type Long", nil, true)
    assert.error_matches(function() x:bitwise_and(x) end, "bitwise_and: \"bitwise_and_cpu\" not implemented for 'Float'", nil, true)
    assert.error_matches(function() torch.arange(3):add(torch.arange(3), { alpha = 0.5 }) end, "alpha must not be a floating point number", nil, true)
    assert.error_matches(function() return torch.arange(3) % 0 end, "remainder: ZeroDivisionError", nil, true)
    assert.error_matches(function() torch.arange(3):div(0, { rounding_mode = "trunc" }) end, "div: ZeroDivisionError", nil, true)
  end)

  it("checks options: alpha, rounding_mode", function()
    -- a non-table third argument is handed to the generated surface (add.Scalar takes alpha
    -- positionally in the schema); a wrong type there is still an error naming add
    assert.error_matches(function() x:add(1, "5") end, "add: no overload accepts", nil, true)
    assert.has_error(function() x:add(1, { alpha = "2" }) end, "add: alpha must be a number, got string")
    assert.has_error(function() x:div(2, { rounding_mode = "round" }) end, "div: rounding_mode must be nil, 'trunc' or 'floor', got round")
    assert.error_matches(function() x:div_(2, "floor") end, "div_: no overload accepts", nil, true)
  end)

  it("checks clamp, where, masked_fill, lerp, leaky_relu, allclose and equal arguments", function()
    assert.has_error(function() x:clamp() end, "clamp: at least one of min or max must be given")
    assert.has_error(function() x:clamp("a") end, "bad argument #2 to 'clamp' (number or nil expected, got string)")
    assert.has_error(function() x:clamp_(0, {}) end, "bad argument #3 to 'clamp_' (number or nil expected, got table)")
    assert.error_matches(function() freed:clamp(0, 1) end, "clamp: tensor was freed", nil, true)
    assert.error_matches(function() torch.where(x, x, 0) end, "where: where expected condition to be a boolean tensor, but got a tensor with dtype Float", nil, true)
    assert.has_error(function() torch.where(x:gt(0), "a", 1) end, "bad argument #2 to 'where' (Tensor or number expected, got string)")
    assert.has_error(function() torch.where(x:gt(0), x, nil) end, "bad argument #3 to 'where' (Tensor or number expected, got nil)")
    assert.has_error(function() torch.where(nil, x, x) end, "bad argument #1 to 'where' (Tensor expected, got nil)")
    assert.error_matches(function() x:masked_fill(torch.full({2, 3}, 2), 1) end, "masked_fill: masked_fill_ only supports boolean masks, but got mask with dtype long int", nil, true)
    assert.has_error(function() x:masked_fill(x:gt(0), "a") end, "bad argument #3 to 'masked_fill' (number or boolean expected, got string)")
    assert.error_matches(function() x:masked_fill_(torch.ones(4):gt(0), 1) end, "masked_fill_: The size of tensor a (3) must match the size of tensor b (4)", nil, true)
    assert.error_matches(function() x:lerp(x:double(), 0.5) end, "lerp: expected dtype float for `end` but got dtype double", nil, true)
    assert.has_error(function() x:lerp(x, "half") end, "bad argument #3 to 'lerp' (number expected, got string)")
    assert.has_error(function() x:lerp(nil, 0.5) end, "bad argument #2 to 'lerp' (Tensor expected, got nil)")
    assert.has_error(function() x:leaky_relu("a") end, "bad argument #2 to 'leaky_relu' (number expected, got string)")
    assert.error_matches(function() x:allclose(torch.ones(4)) end, "allclose: The size of tensor a (3) must match", nil, true)
    assert.has_error(function() x:allclose(x, { rtol = "a" }) end, "bad argument #3 to 'allclose' (number expected, got string)")
    assert.has_error(function() x:equal(1) end, "bad argument #2 to 'equal' (Tensor expected, got number)")
    assert.error_matches(function() x:equal(freed) end, "equal: tensor was freed", nil, true)
  end)
end)
