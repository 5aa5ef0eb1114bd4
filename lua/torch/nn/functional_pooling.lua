--[[
  torch.nn.functional's pools that PyTorch writes in Python, with its signatures
  (https://pytorch.org/docs/stable/nn.functional.html#pooling-functions):

      max_unpool{1,2,3}d(input, indices, kernel_size, stride=None, padding=0, output_size=None)
          the partial inverse of max_pool*d(..., return_indices = true): each value goes back to
          its argmax, zeros elsewhere; output_size (the spatial dims, or with N and C in front)
          picks between the sizes a pool maps to the same output
      lp_pool{1,2,3}d(input, norm_type, kernel_size, stride=None, ceil_mode=False)
          (sum over each window of x^p)^(1/p), as avg_pool(x^p) * window size

  Sizes are an int or a table of d ints; stride defaults to kernel_size. Arguments are positional
  or in a trailing keyword table.
]]
local torch = require "torch"
local A = require "torch.nn._fargs"

local fail = A.fail

local M = {}

local def = A.definer(M)

-- PyTorch's _single / _pair / _triple: an int -> d copies; a table is kept.
local function ntuple(v, d)
  if type(v) ~= "number" then return v end
  local t = {}
  for i = 1, d do t[i] = v end
  return t
end

---------------------------------------------------------------- max_unpool
--[[ The spatial output size: the pool's input size (in - 1) * stride + kernel - 2 * padding, or
     the given output_size, which must lie strictly within a stride of it (PyTorch's
     _unpool_output_size). ]]
local function unpool_size(who, input, kernel, stride, padding, output_size)
  local sizes, d = input:size(), #kernel
  local default = {}
  for i = 1, d do default[i] = (sizes[#sizes - d + i] - 1) * stride[i] + kernel[i] - 2 * padding[i] end
  if output_size == nil then return default end
  local given = output_size
  if #given == d + 2 then given = { unpack(given, 3) } end
  if #given ~= d then
    fail("%s: output_size should be a sequence containing %d or %d elements, but it has a length of '%d'", who, d,
      d + 2, #given)
  end
  for i = 1, d do
    local lo, hi = default[i] - stride[i], default[i] + stride[i]
    if not (lo < given[i] and given[i] < hi) then
      fail('%s: invalid output_size "[%s]" (dim %d must be between %d and %d)', who, table.concat(output_size, ", "),
        i - 1, lo, hi)
    end
  end
  return given
end

local function unpool(d)
  def("max_unpool" .. d .. "d", "input, indices, kernel_size, stride=None, padding=0, output_size=None",
    function(who, sig, a)
    local x, idx = A.tensor(sig, a, "input"), A.tensor(sig, a, "indices")
    local kernel = ntuple(a.kernel_size, d)
    local stride = a.stride ~= nil and ntuple(a.stride, d) or kernel
    local padding = ntuple(a.padding, d)
    local size = unpool_size(who, x, kernel, stride, padding, a.output_size)
    if d == 1 then
      return A.call(torch._nn.max_unpool2d, x:unsqueeze(-1), idx:unsqueeze(-1), { size[1], 1 }):squeeze(-1)
    elseif d == 2 then
      return A.call(torch._nn.max_unpool2d, x, idx, size)
    end
    return A.call(torch._nn.max_unpool3d, x, idx, size, stride, padding)
  end)
end
for d = 1, 3 do unpool(d) end

---------------------------------------------------------------- lp_pool
local function lp_pool(d)
  local name = "avg_pool" .. d .. "d"
  def("lp_pool" .. d .. "d", "input, norm_type, kernel_size, stride=None, ceil_mode=False", function(_, sig, a)
    local x, p = A.tensor(sig, a, "input"), A.number(sig, a, "norm_type")
    local kernel = ntuple(a.kernel_size, d)
    local window = 1
    for i = 1, d do window = window * kernel[i] end
    local avg = d == 1 and torch.avg_pool1d or torch._nn[name]
    local out = A.call(avg, x:pow(p), a.kernel_size, a.stride or {}, 0, A.boolean(sig, a, "ceil_mode"))
    return (out:sign() * out:abs():relu()):mul(window):pow(1.0 / p)
  end)
end
for d = 1, 3 do lp_pool(d) end

return M
