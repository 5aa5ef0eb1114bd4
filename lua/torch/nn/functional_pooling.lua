--[[
  torch.nn.functional's pools that PyTorch writes in Python, with its signatures
  (https://pytorch.org/docs/stable/nn.functional.html#pooling-functions):

      max_unpool{1,2,3}d(input, indices, kernel_size, stride=None, padding=0, output_size=None)
          the partial inverse of max_pool*d(..., return_indices = true): each value goes back to
          its argmax, zeros elsewhere; output_size (the spatial dims, or with N and C in front)
          picks between the sizes a pool maps to the same output
      lp_pool{1,2,3}d(input, norm_type, kernel_size, stride=None, ceil_mode=False)
          (sum over each window of x^p)^(1/p), as avg_pool(x^p) * window size
      fractional_max_pool{2,3}d(input, kernel_size, output_size=None, output_ratio=None,
                                return_indices=False, _random_samples=None)
      fractional_max_pool{2,3}d_with_indices(...)         -- the same, always output and indices
          max over pseudo-random windows reaching output_size (or floor(in * output_ratio));
          _random_samples (N, C, 2 or 3) in [0, 1) fix the windows, else torch.rand draws them
      embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                    mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False,
                    padding_idx=None)
          sum, mean or max of each bag of embeddings: input 2-D (B, n) is B bags of n indices;
          input 1-D with offsets (B) marks where each bag starts

  Sizes are an int or a table of d ints; stride defaults to kernel_size. Arguments are positional
  or in a trailing keyword table.
]]
local torch = require "torch"
local A = require "torch.nn._fargs"

local fail = A.fail
local fmt_size = A.shape

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

---------------------------------------------------------------- fractional_max_pool
-- output_size, or floor(input size * output_ratio) per spatial dim (PyTorch's int(size * ratio)).
local function fractional_size(base, x, d, output_size, output_ratio)
  if output_size == nil and output_ratio == nil then
    fail("%s requires specifying either an output_size or an output_ratio", base)
  end
  if output_size ~= nil then return ntuple(output_size, d) end
  local ratio = ntuple(output_ratio, d)
  if type(ratio) ~= "table" or #ratio ~= d then
    fail("%s requires output_ratio to either be a single number or a table of %d numbers", base, d)
  end
  local size, sizes = {}, x:size()
  for i = 1, d do size[i] = math.floor(sizes[#sizes - d + i] * ratio[i]) end
  return size
end

local function fractional(d)
  local base = "fractional_max_pool" .. d .. "d"
  local text = "input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None"
  local function run(sig, a)
    local x = A.tensor(sig, a, "input")
    local size = fractional_size(base, x, d, a.output_size, a.output_ratio)
    local samples = A.tensor(sig, a, "_random_samples", true)
    if samples == nil then
      local sizes = x:size()
      local n_batch = #sizes == d + 1 and 1 or sizes[1]
      samples = torch.rand({ n_batch, sizes[#sizes - d], d }, { dtype = x.dtype, device = x.device })
    end
    return A.call(torch._nn[base], x, ntuple(a.kernel_size, d), size, samples)
  end
  def(base .. "_with_indices", text, function(_, sig, a) return run(sig, a) end)
  def(base, text, function(_, sig, a)
    local out, idx = run(sig, a)
    if a.return_indices then return out, idx end
    return out
  end)
end
for d = 2, 3 do fractional(d) end

---------------------------------------------------------------- embedding_bag
local MODES = { sum = 0, mean = 1, max = 2 }

def("embedding_bag", "input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, "
  .. "mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None",
  function(who, sig, a)
  local input, weight = A.tensor(sig, a, "input"), A.tensor(sig, a, "weight")
  local offsets, psw = A.tensor(sig, a, "offsets", true), A.tensor(sig, a, "per_sample_weights", true)
  local last = a.include_last_offset
  if weight.dtype == torch.int64 and input:is_floating_point() then
    A.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
      .. "is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
    input, weight = weight, input
  end
  if psw ~= nil and not A.same(input:size(), psw:size()) then
    fail("%s: If per_sample_weights (%s) is not None, then it must have the same shape as the input (%s)", who,
      fmt_size(psw), fmt_size(input))
  end
  if weight:dim() ~= 2 then fail("%s: weight has to be a 2D Tensor, but got Tensor of dimension %d", who, weight:dim()) end
  if input:dim() == 2 then
    if offsets ~= nil then
      fail("%s: if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
        .. "sequences. However, found offsets of type Tensor", who)
    end
    offsets = torch.arange(0, input:numel(), input:size(1), { dtype = input.dtype, device = input.device })
    last, input = false, input:reshape(-1)
    if psw ~= nil then psw = psw:reshape(-1) end
  elseif input:dim() == 1 then
    if offsets == nil then fail("%s: offsets has to be a 1D Tensor but got None", who) end
    if offsets:dim() ~= 1 then fail("%s: offsets has to be a 1D Tensor", who) end
  else
    fail("%s: input has to be 1D or 2D Tensor, but got Tensor of dimension %d", who, input:dim())
  end
  local mode = MODES[a.mode]
  if mode == nil then fail("%s: mode has to be one of sum, mean or max, got %s", who, tostring(a.mode)) end
  if mode == 2 and a.scale_grad_by_freq then fail("%s: max mode does not support scaling the gradient by the frequency", who) end
  if mode == 2 and a.sparse then fail("%s: max mode does not support sparse weights", who) end
  if a.max_norm ~= nil then
    local ids, max_norm, norm_type = input:contiguous(), A.number(sig, a, "max_norm"), A.number(sig, a, "norm_type")
    A.call(torch.no_grad, function() torch.embedding_renorm_(weight, ids, max_norm, norm_type) end)
  end
  if psw ~= nil and mode ~= 0 then
    fail("%s: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='%s')",
      who, a.mode)
  end
  return (A.call(torch.embedding_bag, weight, input, offsets, A.boolean(sig, a, "scale_grad_by_freq"), mode,
    A.boolean(sig, a, "sparse"), psw, A.boolean(sig, a, "include_last_offset") and last, a.padding_idx))
end)

return M
