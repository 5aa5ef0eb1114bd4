-- spec/torch/repr_spec.lua — tostring(x) prints like PyTorch's repr(x) (lua/torch/_tensor_str.lua).
--
-- Each case pairs a Lua constructor with the Python expression that builds the same tensor;
-- PyTorch's repr() of every expression is computed live in one Python run (spec/support/pytorch.lua)
-- and tostring() must match it character for character. Covered: floats with decimals, integer-
-- valued floats ("1."), scientific mode (1e-5, 1e9 and wide ranges), int64 (no suffix), int32 /
-- int16 / int8 / uint8 / float16 / bfloat16 / float64 (dtype= suffix), bool, complex64/128, 0-dim,
-- empty tensors (size= suffix), summaries above 1000 elements (1-d, 2-d 40x40, 3-d), 3-d blocks
-- with blank lines between them, nan and +-inf, requires_grad=True, grad_fn=<MulBackward0>, and
-- rows wrapping at 80 columns (also when the suffix must go on its own line).
--
-- Run: build/ltorch /usr/bin/busted spec/torch/repr_spec.lua   (or bash scripts/test.sh spec/torch)

local ffi = require "ffi"
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local f32, f64 = { dtype = torch.float32 }, { dtype = torch.float64 }
local nan, inf = 0 / 0, math.huge

-- { Python expression, Lua constructor }
local CASES = {
  -- floats
  { "torch.tensor([1.5, 2.25, -3.0])", function() return torch.tensor({ 1.5, 2.25, -3.0 }) end },
  { "torch.tensor([0.1, 0.2])", function() return torch.tensor({ 0.1, 0.2 }) end },
  { "torch.tensor([1., 2., 3.])", function() return torch.tensor({ 1, 2, 3 }, f32) end },
  { "torch.tensor([-1.5, 0.])", function() return torch.tensor({ -1.5, 0 }) end },
  { "torch.tensor([-0.0, 1.5])", function() return torch.tensor({ -0.0, 1.5 }) end },
  { "torch.zeros(2)", function() return torch.zeros(2) end },
  { "torch.tensor([123456.5, 0.5])", function() return torch.tensor({ 123456.5, 0.5 }) end },
  { "torch.tensor([0.5, 1000.0])", function() return torch.tensor({ 0.5, 1000.0 }) end },
  { "torch.tensor([1.0, 1000.0])", function() return torch.tensor({ 1, 1000 }, f32) end },
  { "torch.tensor([1.0, 1001.0])", function() return torch.tensor({ 1, 1001 }, f32) end },
  -- scientific mode
  { "torch.tensor([1e-5, 1.0])", function() return torch.tensor({ 1e-5, 1.0 }) end },
  { "torch.tensor([-1e-5, 1.0])", function() return torch.tensor({ -1e-5, 1.0 }) end },
  { "torch.tensor([1e-4, 1.0])", function() return torch.tensor({ 1e-4, 1.0 }) end },
  { "torch.tensor([1e9, 1.0])", function() return torch.tensor({ 1e9, 1 }, f32) end },
  { "torch.tensor([1e9, 1.5])", function() return torch.tensor({ 1e9, 1.5 }) end },
  { "torch.tensor([1e8, 1.0])", function() return torch.tensor({ 1e8, 1 }, f32) end },
  { "torch.tensor([1e-5, 1e9])", function() return torch.tensor({ 1e-5, 1e9 }) end },
  { "torch.tensor([1.0e20, -2.5])", function() return torch.tensor({ 1e20, -2.5 }) end },
  { "torch.tensor([[1e-5, 1.0], [2., 3.]])", function() return torch.tensor({ { 1e-5, 1.0 }, { 2, 3 } }) end },
  { "(torch.arange(20.) * 1e-5).reshape(4, 5)", function() return (torch.arange(20, f32) * 1e-5):reshape(4, 5) end },
  { "torch.tensor(1e-5)", function() return torch.tensor(1e-5) end },
  -- integers and bools
  { "torch.tensor([1, -20, 300])", function() return torch.tensor({ 1, -20, 300 }) end },
  { "torch.arange(-50, 50)", function() return torch.arange(-50, 50) end },
  { "torch.arange(100) * 1000", function() return torch.arange(100) * 1000 end },
  { "torch.tensor([True, False])", function() return torch.tensor({ true, false }) end },
  { "torch.zeros(2, 3, dtype=torch.bool)", function() return torch.zeros(2, 3, { dtype = torch.bool }) end },
  -- dtype suffixes
  { "torch.tensor([1, 2], dtype=torch.int32)", function() return torch.tensor({ 1, 2 }, { dtype = torch.int32 }) end },
  { "torch.tensor([-1, 2], dtype=torch.int16)", function() return torch.tensor({ -1, 2 }, { dtype = torch.int16 }) end },
  { "torch.tensor([-1, 2], dtype=torch.int8)", function() return torch.tensor({ -1, 2 }, { dtype = torch.int8 }) end },
  { "torch.tensor([1, 2], dtype=torch.uint8)", function() return torch.tensor({ 1, 2 }, { dtype = torch.uint8 }) end },
  { "torch.tensor([1.5, 2.], dtype=torch.float64)", function() return torch.tensor({ 1.5, 2 }, f64) end },
  { "torch.arange(20., dtype=torch.float64) / 3", function() return torch.arange(20, f64) / 3 end },
  { "torch.tensor([1.5, 0.1], dtype=torch.float16)", function() return torch.tensor({ 1.5, 0.1 }, { dtype = torch.float16 }) end },
  { "torch.tensor([1.5, 0.1], dtype=torch.bfloat16)", function() return torch.tensor({ 1.5, 0.1 }, { dtype = torch.bfloat16 }) end },
  { "torch.arange(4.).to(torch.complex64)", function() return torch.arange(4, f32):to(torch.complex64) end },
  { "(torch.arange(6.) / 3).to(torch.complex128).reshape(2, 3)",
    function() return (torch.arange(6, f32) / 3):to(torch.complex128):reshape(2, 3) end },
  -- conj() is a view with a flag over the same memory: the printer must resolve it
  { "((torch.arange(6.) + 1j * torch.arange(6.)) / 3).reshape(2, 3).conj()",
    function() return torch.complex(torch.arange(6, f32) / 3, torch.arange(6, f32) / 3):reshape(2, 3):conj() end },
  { "((torch.arange(6.) + 1j * torch.arange(6.)) / 3).reshape(2, 3).conj().t().neg()",
    function() return torch.complex(torch.arange(6, f32) / 3, torch.arange(6, f32) / 3):reshape(2, 3):conj():t():neg() end },
  { "torch.tensor([1+2j, 3-10j, -0.5+0j, 1e-5+1e6j])",
    function() return torch.from_buffer(ffi.new("float[8]", { 1, 2, 3, -10, -0.5, 0, 1e-5, 1e6 }), { dtype = torch.complex64 }) end },
  -- 0-dim
  { "torch.tensor(3.5)", function() return torch.tensor(3.5) end },
  { "torch.tensor(3)", function() return torch.tensor(3) end },
  { "torch.tensor(True)", function() return torch.tensor(true) end },
  { "torch.tensor(2.0, dtype=torch.float64)", function() return torch.tensor(2, f64) end },
  { "torch.tensor(5, dtype=torch.int32)", function() return torch.tensor(5, { dtype = torch.int32 }) end },
  { "torch.tensor(float('nan'))", function() return torch.tensor(nan) end },
  { "torch.tensor(2.5+0j)", function() return torch.tensor(2.5):to(torch.complex64) end },
  -- empty
  { "torch.zeros(0, 3)", function() return torch.zeros(0, 3) end },
  { "torch.zeros(0)", function() return torch.zeros(0) end },
  { "torch.zeros(0, dtype=torch.int64)", function() return torch.zeros(0, { dtype = torch.int64 }) end },
  { "torch.zeros(2, 0, dtype=torch.int32)", function() return torch.zeros(2, 0, { dtype = torch.int32 }) end },
  { "torch.zeros(3, 0, 2)", function() return torch.zeros(3, 0, 2) end },
  { "torch.zeros(0, dtype=torch.bool)", function() return torch.zeros(0, { dtype = torch.bool }) end },
  { "torch.zeros(0, 3, requires_grad=True)", function() return torch.zeros(0, 3, { requires_grad = true }) end },
  -- summaries (> 1000 elements)
  { "torch.arange(1000)", function() return torch.arange(1000) end },
  { "torch.arange(2000)", function() return torch.arange(2000) end },
  { "torch.arange(2000.) / 7", function() return torch.arange(2000, f32) / 7 end },
  { "torch.arange(2000) % 2 == 0", function() return (torch.arange(2000) % 2):eq(0) end },
  { "torch.arange(1600.).reshape(40, 40)", function() return torch.arange(1600, f32):reshape(40, 40) end },
  { "torch.arange(1600.).reshape(40, 40) / 7", function() return torch.arange(1600, f32):reshape(40, 40) / 7 end },
  { "torch.arange(2000.).reshape(2, 1000)", function() return torch.arange(2000, f32):reshape(2, 1000) end },
  { "torch.arange(1200).reshape(2, 3, 200)", function() return torch.arange(1200):reshape(2, 3, 200) end },
  { "torch.arange(4000.).reshape(10, 20, 20)", function() return torch.arange(4000, f32):reshape(10, 20, 20) end },
  -- n-d layout
  { "torch.arange(24).reshape(2, 3, 4)", function() return torch.arange(24):reshape(2, 3, 4) end },
  { "torch.arange(24.).reshape(2, 3, 2, 2)", function() return torch.arange(24, f32):reshape(2, 3, 2, 2) end },
  { "torch.ones(1, 1, 1)", function() return torch.ones(1, 1, 1) end },
  { "torch.arange(6.).reshape(1, 6, 1)", function() return torch.arange(6, f32):reshape(1, 6, 1) end },
  -- nan / inf
  { "torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5])", function() return torch.tensor({ nan, inf, -inf, 1.5 }) end },
  { "torch.tensor([float('nan'), 1., 2.])", function() return torch.tensor({ nan, 1, 2 }, f32) end },
  { "torch.tensor([float('inf'), -float('inf')])", function() return torch.tensor({ inf, -inf }) end },
  { "torch.tensor([[float('nan'), 1e-6], [1e6, float('inf')]])", function() return torch.tensor({ { nan, 1e-6 }, { 1e6, inf } }) end },
  -- autograd suffixes
  { "torch.ones(2, requires_grad=True)", function() return torch.ones(2, { requires_grad = true }) end },
  { "torch.tensor(2.5, requires_grad=True)", function() return torch.tensor(2.5, { requires_grad = true }) end },
  { "torch.ones(2, requires_grad=True) * 2", function() return torch.ones(2, { requires_grad = true }) * 2 end },
  { "torch.arange(15., dtype=torch.float64, requires_grad=True) * 2",
    function() return torch.arange(15, { dtype = torch.float64, requires_grad = true }) * 2 end },
  { "torch.arange(12., requires_grad=True)", function() return torch.arange(12, { dtype = torch.float32, requires_grad = true }) end },
  -- wrapping at 80 columns
  { "torch.arange(40)", function() return torch.arange(40) end },
  { "torch.arange(30.) / 3", function() return torch.arange(30, f32) / 3 end },
  { "torch.arange(30.).reshape(2, 15) / 3", function() return torch.arange(30, f32):reshape(2, 15) / 3 end },
  { "torch.linspace(-1, 1, 30)", function() return torch.linspace(-1, 1, 30) end },
  { "torch.arange(30).to(torch.complex64)", function() return torch.arange(30):to(torch.complex64) end },
  { "torch.arange(9., dtype=torch.float64) / 3 + 1000", function() return torch.arange(9, f64) / 3 + 1000 end },
  { "torch.arange(10., dtype=torch.float64, requires_grad=True) * 2",   -- the suffix wraps
    function() return torch.arange(10, { dtype = torch.float64, requires_grad = true }) * 2 end },
  { "torch.arange(6., dtype=torch.float64, requires_grad=True) / 3",
    function() return torch.arange(6, { dtype = torch.float64, requires_grad = true }) / 3 end },
}

describe("tostring(x) matches PyTorch's repr(x)", function()
  local ref
  setup(function()
    local lines = { "out = []" }
    for _, c in ipairs(CASES) do lines[#lines + 1] = "out.append(repr(" .. c[1] .. "))" end
    lines[#lines + 1] = "print(json.dumps(out))"
    ref = pytorch.run(table.concat(lines, "\n"))
  end)

  for i, c in ipairs(CASES) do
    it(c[1], function()
      assert.are.equal(ref[i], tostring(c[2]()))
    end)
  end

  it("string.format's %s uses the same text", function()
    assert.are.equal("x = tensor([1.5000, 2.0000])", ("x = %s"):format(torch.tensor({ 1.5, 2 })))
  end)

  it("a freed tensor prints as such instead of failing", function()
    local x = torch.ones(2)
    x:free()
    assert.are.equal("tensor(<freed>)", tostring(x))
  end)

  it("torch.Size and dtype/device objects print like PyTorch", function()
    assert.are.equal("torch.Size([2, 3])", tostring(torch.zeros(2, 3).shape))
    assert.are.equal("torch.Size([])", tostring(torch.tensor(1).shape))
    assert.are.equal("torch.bfloat16", tostring(torch.bfloat16))
    assert.are.equal("cpu", tostring(torch.zeros(1).device))
  end)
end)
