--[[
  stft_center_spec.lua — torch.stft pads by n_fft // 2 when center is true, PyTorch's default
  (torch._python_defaults), checked against the reference PyTorch on the same signal.

  Why: ATen's first stft overload has no center; picking it left `torch.stft(x, {n_fft = 10})`
  unpadded (21 frames of a 50-sample signal where PyTorch gives 26): a silent difference.

  How: build/ltorch /usr/bin/busted spec/porting/stft_center_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local SIGNAL = "torch.sin(torch.arange(100, dtype=torch.float64) * 0.3).reshape(2, 50)"

local function signal() return torch.sin(torch.arange(100, { dtype = torch.float64 }) * 0.3):reshape(2, 50) end

-- PyTorch's stft of SIGNAL with the given Python keyword text, as {shape, real parts, imag parts}.
local function reference(kwargs)
  return pytorch.run(([[
import warnings
warnings.simplefilter("ignore")
y = torch.stft(%s, %s)
y = torch.view_as_real(y) if y.is_complex() else y
print(json.dumps([list(y.shape), y.flatten().tolist()]))]]):format(SIGNAL, kwargs))
end

local function same(y, ref)
  if y:is_complex() then y = torch.view_as_real(y) end
  local shape = {}
  for i = 0, y:dim() - 1 do shape[#shape + 1] = y:size(i) end
  assert.are.same(ref[1], shape)
  local flat = y:flatten()
  for i = 1, #ref[2] do
    assert.is_true(math.abs(flat[i - 1]:item() - ref[2][i]) < 1e-9, ("element %d"):format(i))
  end
end

describe("torch.stft's center padding (PyTorch's Python default)", function()
  it("pads by default, keyword form, as PyTorch does", function()
    same(torch.stft(signal(), { n_fft = 10, return_complex = true }), reference("n_fft=10, return_complex=True"))
  end)

  it("pads by default in the positional and method forms", function()
    local ref = reference("10, return_complex=True")
    same(torch.stft(signal(), 10, { return_complex = true }), ref)
    same(signal():stft(10, { return_complex = true }), ref)
  end)

  it("leaves an explicit center = false unpadded, and honours pad_mode", function()
    same(torch.stft(signal(), { n_fft = 10, center = false, return_complex = true }),
      reference("n_fft=10, center=False, return_complex=True"))
    same(torch.stft(signal(), { n_fft = 8, hop_length = 3, pad_mode = "constant", return_complex = true }),
      reference("n_fft=8, hop_length=3, pad_mode='constant', return_complex=True"))
  end)

  it("takes center by position as Python does", function()
    same(torch.stft(signal(), 10, 5, 10, nil, false, "reflect", false, true, true),
      reference("10, 5, 10, None, False, 'reflect', False, True, True"))
  end)

  it("keeps PyTorch's error for a real input without return_complex", function()
    local ok, err = pcall(torch.stft, signal(), { n_fft = 10 })
    assert.is_false(ok)
    assert.matches("return_complex", err)
  end)
end)
