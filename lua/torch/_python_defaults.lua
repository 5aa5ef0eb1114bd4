--[[
  torch._python_defaults — calls whose meaning in PyTorch comes from its Python wrapper, not from
  the ATen overload ltorch's dispatcher picks; each wrapper here gives the generated op the
  arguments the Python wrapper would, so the same call means the same thing.

    stft(input, n_fft, hop_length, win_length, window, center=True, pad_mode='reflect',
         normalized, onesided, return_complex): torch.functional.stft pads the signal by n_fft // 2
      on both sides when center is true, its default. ATen has two overloads: `stft` (no center,
      no padding) and `stft.center`; the dispatcher takes the first that accepts the arguments,
      so `torch.stft(x, {n_fft = 10, return_complex = true})` gave 21 frames of a 50-sample
      signal where PyTorch gives 26. Without a center argument (by position: the sixth, or by
      keyword) the call now passes center = true, which selects `stft.center` as in PyTorch.
]]
local args = require "torch._args"
local dispatch = require "torch._dispatch"

local M = {}

local CENTER_POSITION = 6   -- input, n_fft, hop_length, win_length, window, center

-- Returns the arguments with center = true added when the caller gave no center.
local function with_center(...)
  local a, n = args.pack(...)
  while n > 0 and a[n] == nil do n = n - 1 end
  local kw
  if n > 0 and args.is_options(a[n]) then kw, n = a[n], n - 1 end
  if n >= CENTER_POSITION or (kw and kw.center ~= nil) then return ... end
  local opts = {}
  for k, v in pairs(kw or {}) do opts[k] = v end
  opts.center = true
  a[n + 1] = opts
  return unpack(a, 1, n + 1)
end

local generated_stft, generated_stft_method
function M.stft(...)
  generated_stft = generated_stft or dispatch.function_for("stft", "torch.stft")
  return generated_stft(with_center(...))
end

function M.install(torch, Tensor)
  torch.stft = M.stft
  function Tensor.stft(...)
    generated_stft_method = generated_stft_method or dispatch.method_for("stft")
    return generated_stft_method(with_center(...))
  end
end

return M
