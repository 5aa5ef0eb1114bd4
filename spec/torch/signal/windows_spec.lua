--[[
  spec/torch/signal/windows_spec.lua — torch.signal.windows (lua/torch/signal/windows.lua)
  against PyTorch 2.11's torch.signal.windows: values of each window in float64 (symmetric and
  periodic, each window's own parameters), dtypes, keywords, gradients, and the same errors for
  bad input. The expected values were printed by the reference PyTorch (the venv's python).
  Tolerance: 1e-12 absolute in float64 (the same linspace and elementwise ops as PyTorch).

  Run:  build/ltorch /usr/bin/busted spec/torch/signal/windows_spec.lua
]]
local torch = require "torch"

local windows = torch.signal.windows

-- { window, M, keywords, PyTorch's float64 values }
local CASES = {
  { "hamming", 7, {  }, { 0.08000000000000007, 0.31, 0.7699999999999999, 1.0, 0.7699999999999998, 0.31, 0.08000000000000007 } },
  { "hann", 6, { sym = false }, { 0.0, 0.24999999999999994, 0.7499999999999999, 1.0, 0.7500000000000002, 0.25000000000000033 } },
  { "bartlett", 7, {  }, { 0.0, 0.33333333333333326, 0.6666666666666666, 1.0, 0.6666666666666666, 0.33333333333333326, 0.0 } },
  { "bartlett", 6, { sym = false }, { 0.0, 0.33333333333333326, 0.6666666666666666, 0.9999999999999999, 0.6666666666666667, 0.3333333333333335 } },
  { "blackman", 8, {  }, { -1.3877787807814457e-17, 0.09045342435412804, 0.45918295754596355, 0.9203636180999081, 0.9203636180999083, 0.45918295754596383, 0.09045342435412812, -1.3877787807814457e-17 } },
  { "cosine", 5, { sym = false }, { 0.25881904510252074, 0.7071067811865475, 0.9659258262890683, 0.9659258262890683, 0.7071067811865476 } },
  { "exponential", 6, { tau = 0.5 }, { 0.006737946999085467, 0.049787068367863944, 0.36787944117144233, 0.36787944117144233, 0.049787068367863944, 0.006737946999085467 } },
  { "exponential", 5, { sym = false, center = 1.0 }, { 0.36787944117144233, 1.0, 0.36787944117144233, 0.1353352832366127, 0.049787068367863944 } },
  { "gaussian", 7, { std = 0.8 }, { 0.0008838263069350539, 0.043936933623407476, 0.45783336177161443, 1.0, 0.45783336177161443, 0.043936933623407476, 0.0008838263069350539 } },
  { "kaiser", 6, { beta = 5.0 }, { 0.036710892271286676, 0.4149036392433668, 0.9138124838692001, 0.9138124838692001, 0.4149036392433668, 0.036710892271286676 } },
  { "kaiser", 7, { sym = false }, { 5.2773441320097665e-05, 0.03276828844175176, 0.3308986366570736, 0.8888676640466566, 0.8888676640466582, 0.33089863665707414, 0.03276828844175176 } },
  { "general_cosine", 6, { a = {0.46, 0.23, 0.31} }, { 0.54, 0.13813082303752844, 0.7418691769624716, 0.7418691769624717, 0.13813082303752838, 0.54 } },
  { "general_hamming", 5, { alpha = 0.6, sym = false }, { 0.19999999999999996, 0.476393202250021, 0.9236067977499789, 0.923606797749979, 0.4763932022500211 } },
  { "nuttall", 6, {  }, { 0.0003628000000000381, 0.11051525304987178, 0.7982580969501282, 0.7982580969501283, 0.11051525304987185, 0.0003628000000000381 } },
}

local function close(got, want)
  assert.are.equal(#want, #got)
  for i = 1, #want do
    assert.is_true(math.abs(got[i] - want[i]) <= 1e-12, ("element %d: %.17g, PyTorch %.17g"):format(i, got[i], want[i]))
  end
end

describe("torch.signal.windows", function()
  for _, c in ipairs(CASES) do
    local name, m, kw, want = c[1], c[2], c[3], c[4]
    it(("%s(%d) matches PyTorch"):format(name, m), function()
      local opts = { dtype = torch.float64 }
      for k, v in pairs(kw) do opts[k] = v end
      local w = windows[name](m, opts)
      assert.are.equal(torch.float64, w.dtype)
      close(w:tolist(), want)
    end)
  end

  it("takes the default dtype, and lengths 0 and 1 as PyTorch does", function()
    for _, name in ipairs { "hamming", "hann", "bartlett", "blackman", "cosine", "exponential", "gaussian",
      "kaiser", "nuttall", "general_hamming" } do
      assert.are.equal(torch.float32, windows[name](4).dtype)
      assert.are.equal(0, windows[name](0):numel())
      assert.are.equal(1, windows[name](1, { sym = false }):item())
    end
    assert.are.equal(0, windows.general_cosine(0, { a = { 0.5 } }):numel())
  end)

  it("carries requires_grad to a differentiable window", function()
    local w = windows.kaiser(5, { beta = 2.0, dtype = torch.float64, requires_grad = true })
    assert.is_true(w.requires_grad)
    local h = windows.hann(4, { requires_grad = true })
    assert.is_true(h.requires_grad)
    h:sum():backward()
  end)

  it("raises PyTorch's errors for bad input", function()
    local bad = {
      { function() return windows.hann(-1) end, "general_cosine requires non-negative window length, got M=-1" },
      { function() return windows.hamming(3, { dtype = torch.int64 }) end,
        "general_cosine expects float32 or float64 dtypes, got: torch.int64" },
      { function() return windows.kaiser(3, { dtype = torch.float16 }) end,
        "kaiser expects float32 or float64 dtypes, got: torch.float16" },
      { function() return windows.gaussian(3, { layout = "sparse_coo" }) end,
        "gaussian is implemented for strided tensors only, got: torch.sparse_coo" },
      { function() return windows.bartlett(-2) end, "bartlett requires non-negative window length, got M=-2" },
      { function() return windows.blackman(3, { dtype = torch.bfloat16 }) end,
        "blackman expects float32 or float64 dtypes, got: torch.bfloat16" },
      { function() return windows.kaiser(3, { beta = -1 }) end, "beta must be non-negative, got: -1 instead." },
      { function() return windows.gaussian(3, { std = 0 }) end, "Standard deviation must be positive, got: 0 instead." },
      { function() return windows.exponential(3, { tau = -1 }) end, "Tau must be positive, got: -1 instead." },
      { function() return windows.exponential(3, { center = 1 }) end, "Center must be None for symmetric windows" },
      { function() return windows.general_cosine(3, { a = {} }) end, "Coefficients cannot be empty" },
      { function() return windows.general_cosine(3, { a = 0.5 }) end, "Coefficients must be a list/tuple" },
      { function() return windows.general_cosine(3) end, "missing required argument 'a'" },
      { function() return windows.hann(3, { alpha = 0.5 }) end, "unexpected keyword argument 'alpha'" },
    }
    for _, b in ipairs(bad) do
      local ok, msg = pcall(b[1])
      assert.is_false(ok)
      assert.is_truthy(tostring(msg):find(b[2], 1, true), tostring(msg))
    end
  end)
end)
