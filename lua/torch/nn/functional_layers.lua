--[[
  torch.nn.functional's normalizations, embedding, max pools and interpolate in PyTorch's Python
  signatures (https://pytorch.org/docs/stable/nn.functional.html), where ATen's argument lists
  differ from them:

      batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                 momentum=0.1, eps=1e-5)
      instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                    use_input_stats=True, momentum=0.1, eps=1e-5)
      layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5)
      group_norm(input, num_groups, weight=None, bias=None, eps=1e-5)
      embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                scale_grad_by_freq=False, sparse=False)           -- input (indices) first
      max_pool{1,2,3}d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                       return_indices=False)      -- return_indices: output, int64 indices
      adaptive_max_pool{1,2,3}d(input, output_size, return_indices=False)
      adaptive_avg_pool{2,3}d(input, output_size)  -- 2d, 3d: None (false or a nil hole) in
                                                   -- output_size keeps that input dim
      interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
                  recompute_scale_factor=None, antialias=False)

  Arguments are positional or in a trailing keyword table. interpolate takes (N, C, L),
  (N, C, H, W) or (N, C, D, H, W) inputs; modes nearest, nearest-exact, area (any rank), linear
  (3-d), bilinear and bicubic (4-d), trilinear (5-d), through ATen's upsample_* ops.
]]
local torch = require "torch"
local A = require "torch.nn._fargs"

local fail = A.fail

local M = {}

local def = A.definer(M)

local function cudnn() return torch.backends.cudnn.enabled ~= false end

-- Training statistics need more than one value per channel (PyTorch's _verify_batch_size): the
-- product of every size but the channels' (dim 1) must exceed 1.
local function verify_batch_size(who, sizes)
  local n = sizes[1] or 1
  for i = 3, #sizes do n = n * sizes[i] end
  if n == 1 then
    fail("%s: Expected more than 1 value per channel when training, got input size [%s]", who,
      table.concat(sizes, ", "))
  end
end

---------------------------------------------------------------- normalization
def("batch_norm", "input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5",
  function(who, sig, a)
  local x = A.tensor(sig, a, "input")
  local training = A.boolean(sig, a, "training")
  if training then verify_batch_size(who, x:size()) end
  local eps = A.number(sig, a, "eps")
  if not (eps > 0) then fail("batch_norm eps must be positive, but got %s", tostring(eps)) end
  return A.call(torch.batch_norm, x, a.weight, a.bias, a.running_mean, a.running_var, training,
    A.number(sig, a, "momentum"), eps, cudnn())
end)

def("instance_norm", "input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, "
  .. "momentum=0.1, eps=1e-5", function(who, sig, a)
  local x = A.tensor(sig, a, "input")
  local use_stats = A.boolean(sig, a, "use_input_stats")
  if use_stats then
    local sizes = x:size()
    local n = 1
    for i = 3, #sizes do n = n * sizes[i] end
    if n == 1 then
      fail("%s: Expected more than 1 spatial element when training, got input size [%s]", who,
        table.concat(sizes, ", "))
    end
  end
  return A.call(torch.instance_norm, x, a.weight, a.bias, a.running_mean, a.running_var, use_stats,
    A.number(sig, a, "momentum"), A.number(sig, a, "eps"), cudnn())
end)

def("layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-5", function(_, sig, a)
  local ns = a.normalized_shape
  if type(ns) == "number" then ns = { ns } end
  return A.call(torch.layer_norm, A.tensor(sig, a, "input"), ns, a.weight, a.bias, A.number(sig, a, "eps"), cudnn())
end)

def("group_norm", "input, num_groups, weight=None, bias=None, eps=1e-5", function(who, sig, a)
  local x = A.tensor(sig, a, "input")
  local groups = A.int(sig, a, "num_groups")
  if x:dim() < 2 then fail("%s: Expected at least 2 dimensions for input tensor but received %d", who, x:dim()) end
  local s = x:size()
  local check = { math.floor(s[1] * s[2] / groups), groups }
  for i = 3, #s do check[#check + 1] = s[i] end
  verify_batch_size(who, check)
  return A.call(torch.group_norm, x, groups, a.weight, a.bias, A.number(sig, a, "eps"), cudnn())
end)

---------------------------------------------------------------- embedding
def("embedding", "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False",
  function(who, sig, a)
  local input, weight = A.tensor(sig, a, "input"), A.tensor(sig, a, "weight")
  local n, pad = weight:size(0), a.padding_idx
  if pad == nil then
    pad = -1
  elseif pad >= 0 then
    if pad >= n then fail("%s: padding_idx must be within num_embeddings, got %d for %d", who, pad, n) end
  else
    if pad < -n then fail("%s: padding_idx must be within num_embeddings, got %d for %d", who, pad, n) end
    pad = n + pad
  end
  if a.max_norm ~= nil then
    input = input:contiguous()
    local max_norm, norm_type = A.number(sig, a, "max_norm"), A.number(sig, a, "norm_type")
    A.call(torch.no_grad, function() torch.embedding_renorm_(weight, input, max_norm, norm_type) end)
  end
  return A.call(torch.embedding, weight, input, pad, A.boolean(sig, a, "scale_grad_by_freq"),
    A.boolean(sig, a, "sparse"))
end)

---------------------------------------------------------------- max pools
-- ATen takes stride = {} for "the kernel size" (Python's None).
local function pool(d)
  local with = d == 3 and torch._nn["max_pool3d_with_indices"] or torch["max_pool" .. d .. "d_with_indices"]
  local plain = torch["max_pool" .. d .. "d"]
  local text = "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False"
  local function args(sig, a)
    A.tensor(sig, a, "input")
    return a.input, a.kernel_size, a.stride or {}, a.padding, a.dilation, A.boolean(sig, a, "ceil_mode")
  end
  def("max_pool" .. d .. "d_with_indices", text, function(_, sig, a) return A.call(with, args(sig, a)) end)
  def("max_pool" .. d .. "d", text, function(_, sig, a)
    if A.boolean(sig, a, "return_indices") then return A.call(with, args(sig, a)) end
    return A.call(plain, args(sig, a))
  end)
end
for d = 1, 3 do pool(d) end

---------------------------------------------------------------- adaptive pools
--[[ output_size of the 2d and 3d adaptive pools as PyTorch's _list_with_default reads it: an int,
     or a list whose None entries keep that dim of the input. None in a Lua list is `false`
     ({false, 7}, as nn.AdaptiveAvgPool2d takes it) or a nil hole ({nil, 7}); the list is read over
     the pool's d entries when it has a hole. An empty table is Python's [] (an error), so a list
     of nothing but None is written with false: {false, false, false}. ]]
local function list_with_default(output_size, x, d)
  if type(output_size) ~= "table" or torch.is_tensor(output_size) then return output_size end
  local n = #output_size
  if n > 0 or next(output_size) ~= nil then n = math.max(n, d) end
  local sizes = x:size()
  if #sizes <= n then fail("Input dimension should be at least %d", n + 1) end
  local out = {}
  for i = 1, n do
    local v = output_size[i]
    if v == nil or v == false then v = sizes[#sizes - n + i] end
    out[i] = v
  end
  return out
end

local function adaptive_pool(d)
  local op = d == 1 and torch.adaptive_max_pool1d or torch._nn["adaptive_max_pool" .. d .. "d"]
  local function size(sig, a)
    local x = A.tensor(sig, a, "input")
    if d == 1 then return x, a.output_size end
    return x, list_with_default(a.output_size, x, d)
  end
  def("adaptive_max_pool" .. d .. "d_with_indices", "input, output_size, return_indices=False", function(_, sig, a)
    return A.call(op, size(sig, a))
  end)
  def("adaptive_max_pool" .. d .. "d", "input, output_size, return_indices=False", function(_, sig, a)
    local out, idx = A.call(op, size(sig, a))
    if A.boolean(sig, a, "return_indices") then return out, idx end
    return out
  end)
end
for d = 1, 3 do adaptive_pool(d) end

for d = 2, 3 do
  local name = "adaptive_avg_pool" .. d .. "d"
  local op = rawget(torch, name) and torch[name] or torch._nn[name]
  def(name, "input, output_size", function(_, sig, a)
    local x = A.tensor(sig, a, "input")
    return A.call(op, x, list_with_default(a.output_size, x, d))
  end)
end

---------------------------------------------------------------- interpolate
local INTERPOLATING = { linear = 3, bilinear = 4, bicubic = 4, trilinear = 5 }
local NEAREST = { nearest = "upsample_nearest", ["nearest-exact"] = "_upsample_nearest_exact" }

-- size or scale_factor (a number or one per spatial dim) -> output_size, scale_factors
local function spatial(who, x, size, scale, dims)
  local function list(v, what)
    if type(v) == "number" then
      local t = {}
      for i = 1, dims do t[i] = v end
      return t
    end
    if type(v) ~= "table" or #v ~= dims then
      local spatial_dims = { unpack(x:size(), 3) }
      fail("%s: Input and output must have the same number of spatial dimensions, but got input with spatial "
        .. "dimensions of [%s] and %s %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and %s in "
        .. "(o1, o2, ...,oK) format.", who, table.concat(spatial_dims, ", "), what,
        type(v) == "table" and ("[" .. table.concat(v, ", ") .. "]") or tostring(v), what)
    end
    return v
  end
  if size ~= nil and scale ~= nil then fail("%s: only one of size or scale_factor should be defined", who) end
  if size ~= nil then return list(size, "output size"), nil end
  if scale ~= nil then return nil, list(scale, "scale_factor") end
  fail("%s: either size or scale_factor should be defined", who)
end

def("interpolate", "input, size=None, scale_factor=None, mode='nearest', align_corners=None, "
  .. "recompute_scale_factor=None, antialias=False", function(who, sig, a)
  local x, mode = A.tensor(sig, a, "input"), a.mode
  local align, antialias, rd = a.align_corners, A.boolean(sig, a, "antialias"), x:dim()
  if NEAREST[mode] or mode == "area" then
    if align ~= nil then
      fail("%s: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
        .. "trilinear", who)
    end
  elseif INTERPOLATING[mode] then
    if align == nil then align = false end
  else
    fail("%s: mode must be one of nearest, linear, bilinear, bicubic, trilinear, area or nearest-exact, got %s",
      who, tostring(mode))
  end
  if rd < 3 or rd > 5 then
    fail("%s: Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: nearest | linear | "
      .. "bilinear | bicubic | trilinear | area | nearest-exact (got %s)", who, rd, mode)
  end
  local dims = rd - 2
  local size, scales = spatial(who, x, a.size, a.scale_factor, dims)
  local recompute = a.recompute_scale_factor
  if recompute and a.size ~= nil then fail("%s: recompute_scale_factor is not meaningful with an explicit size.", who) end
  if mode == "area" and size == nil then recompute = true end
  if recompute then
    size = {}
    for i = 1, dims do size[i] = math.floor(x:size(i + 1) * scales[i]) end
    scales = nil
  end
  if antialias and not ((mode == "bilinear" or mode == "bicubic") and rd == 4) then
    fail("%s: Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input", who)
  end
  if NEAREST[mode] then return A.call(torch._nn[NEAREST[mode] .. dims .. "d"], x, size, scales) end
  if mode == "area" then
    local name = "adaptive_avg_pool" .. dims .. "d"
    return A.call(rawget(torch, name) and torch[name] or torch._nn[name], x, size)
  end
  if INTERPOLATING[mode] ~= rd then
    fail("%s: Got %dD input, but %s mode needs %dD input", who, rd, mode, INTERPOLATING[mode])
  end
  local op = ({ linear = "upsample_linear1d", bilinear = "upsample_bilinear2d", bicubic = "upsample_bicubic2d",
    trilinear = "upsample_trilinear3d" })[mode]
  if antialias then op = "_" .. op .. "_aa" end
  return A.call(torch._nn[op], x, size, align, scales)
end)

return M
