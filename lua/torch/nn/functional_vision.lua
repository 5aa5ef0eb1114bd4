--[[
  torch.nn.functional's vision helpers that PyTorch writes in Python, with its signatures
  (https://pytorch.org/docs/stable/nn.functional.html#vision-functions):

      unfold(input, kernel_size, dilation=1, padding=0, stride=1)       (N, C, H, W) -> (N, C*kh*kw, L)
      fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)   the inverse (sums overlaps)
      grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)
      affine_grid(theta, size, align_corners=None)
      local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0)
          input / (k + alpha * mean of input^2 over `size` neighbouring channels)^beta
      upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None)
      upsample_nearest(input, size=None, scale_factor=None), upsample_bilinear(...) (align_corners=True)
          the deprecated names of interpolate, with PyTorch's warnings

  Sizes are an int or a table of two ints ({kh, kw}). Arguments are positional or in a trailing
  keyword table.
]]
local torch = require "torch"
local A = require "torch.nn._fargs"
local layers = require "torch.nn.functional_layers"

local fail = A.fail

local M = {}

local def = A.definer(M)

-- PyTorch's _pair: an int -> {v, v}; a table is kept.
local function pair(v) return type(v) == "number" and { v, v } or v end

def("unfold", "input, kernel_size, dilation=1, padding=0, stride=1", function(_, sig, a)
  return A.call(torch._nn.im2col, A.tensor(sig, a, "input"), pair(a.kernel_size), pair(a.dilation), pair(a.padding),
    pair(a.stride))
end)

def("fold", "input, output_size, kernel_size, dilation=1, padding=0, stride=1", function(_, sig, a)
  return A.call(torch._nn.col2im, A.tensor(sig, a, "input"), pair(a.output_size), pair(a.kernel_size),
    pair(a.dilation), pair(a.padding), pair(a.stride))
end)

---------------------------------------------------------------- sampling grids
local align_warned = false
local function align_default(align)
  if align ~= nil then return align end
  if not align_warned then
    align_warned = true
    A.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
      .. "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.")
  end
  return false
end

local MODES = { bilinear = 0, nearest = 1, bicubic = 2 }
local PADDING = { zeros = 0, border = 1, reflection = 2 }

def("grid_sample", "input, grid, mode='bilinear', padding_mode='zeros', align_corners=None", function(who, sig, a)
  local x, grid = A.tensor(sig, a, "input"), A.tensor(sig, a, "grid")
  local mode, padding = MODES[a.mode], PADDING[a.padding_mode]
  if mode == nil then
    fail("%s: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '%s'", who, tostring(a.mode))
  end
  if padding == nil then
    fail("%s: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '%s'", who,
      tostring(a.padding_mode))
  end
  return A.call(torch.grid_sampler, x, grid, mode, padding, align_default(a.align_corners))
end)

-- theta (N, 2, 3) with size {N, C, H, W}, or (N, 3, 4) with {N, C, D, H, W} -> grid (N, H, W, 2) / (N, D, H, W, 3)
def("affine_grid", "theta, size, align_corners=None", function(who, sig, a)
  local theta, size = A.tensor(sig, a, "theta"), a.size
  if not theta:is_floating_point() then
    fail("%s: Expected theta to have floating point type, but got %s", who, tostring(theta.dtype))
  end
  local align = align_default(a.align_corners)
  local ts = theta:size()
  if type(size) ~= "table" or (#size ~= 4 and #size ~= 5) then
    fail("%s: affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size %s.",
      who, type(size) == "table" and ("[" .. table.concat(size, ", ") .. "]") or tostring(size))
  end
  local rows = #size == 4 and 2 or 3
  if #ts ~= 3 or ts[2] ~= rows or ts[3] ~= rows + 1 then
    fail("%s: Expected a batch of %dD affine matrices of shape Nx%dx%d for size [%s]. Got %s.", who, rows, rows,
      rows + 1, table.concat(size, ", "), A.shape(theta))
  end
  for _, n in ipairs(size) do
    if n <= 0 then fail("%s: Expected non-zero, positive output size. Got [%s]", who, table.concat(size, ", ")) end
  end
  return A.call(torch.affine_grid_generator, theta, size, align)
end)

---------------------------------------------------------------- local response norm
def("local_response_norm", "input, size, alpha=1e-4, beta=0.75, k=1.0", function(who, sig, a)
  local x, size = A.tensor(sig, a, "input"), A.int(sig, a, "size")
  local dim = x:dim()
  if dim < 3 then fail("%s: Expected 3D or higher dimensionality input (got %d dimensions)", who, dim) end
  if x:numel() == 0 then return x end
  local div = x * x
  local before, after = math.floor(size / 2), math.floor((size - 1) / 2)
  if dim == 3 then
    div = torch.nn.functional.pad(div:unsqueeze(1), { 0, 0, before, after })
    div = torch.nn.functional.avg_pool2d(div, { size, 1 }, 1):squeeze(1)
  else
    local sizes = x:size()
    div = div:view(sizes[1], 1, sizes[2], sizes[3], -1)
    div = torch.nn.functional.pad(div, { 0, 0, 0, 0, before, after })
    div = torch.nn.functional.avg_pool3d(div, { size, 1, 1 }, 1):squeeze(1):view(sizes)
  end
  return x / (div * A.number(sig, a, "alpha") + A.number(sig, a, "k")):pow(A.number(sig, a, "beta"))
end)

---------------------------------------------------------------- deprecated interpolate names
local deprecated_warned = {}
local function deprecated(name)
  if not deprecated_warned[name] then
    deprecated_warned[name] = true
    A.warn(("`nn.functional.%s` is deprecated. Use `nn.functional.interpolate` instead."):format(name))
  end
end

def("upsample", "input, size=None, scale_factor=None, mode='nearest', align_corners=None", function(who, _, a)
  deprecated(who)
  return layers.interpolate(a.input, a.size, a.scale_factor, a.mode, a.align_corners)
end)

def("upsample_nearest", "input, size=None, scale_factor=None", function(who, _, a)
  deprecated(who)
  return layers.interpolate(a.input, a.size, a.scale_factor, "nearest")
end)

def("upsample_bilinear", "input, size=None, scale_factor=None", function(who, _, a)
  deprecated(who)
  return layers.interpolate(a.input, a.size, a.scale_factor, "bilinear", true)
end)

return M
