--[[
  torch._python_utils — small torch.* functions PyTorch writes in Python: shapes, devices,
  print options, type names.

      torch.broadcast_shapes({2, 1}, {3})       --> torch.Size({2, 3})
      torch.unravel_index(torch.tensor({5}), {2, 3})   --> tensor([1]), tensor([2])
      torch.typename(x)                          --> "torch.FloatTensor"
      torch.set_printoptions{precision = 2, sci_mode = false}   -- how tostring(x) prints
      torch.get_default_device()                 --> device(type='cpu')

  Factories place tensors on the CPU unless told otherwise; there is no default device to
  change. torch.set_default_device accepts the CPU (and nil, PyTorch's reset) and raises for any
  other device rather than ignoring it.

  Usage (internal): require("torch._python_utils").install(torch), done by torch/init.lua.
]]
local P = require "torch._pysig"
local W = require "torch._pywrap"
local T = require "torch._tensor"
local args = require "torch._args"
local creation = require "torch._creation"
local device_mod = require "torch.device"
local dtype_mod = require "torch.dtype"
local printer = require "torch._tensor_str"

local M = {}

-- A shape argument as a Lua list (an integer is a one-dimensional shape), or nil.
local function shape_list(v)
  if args.is_int(v) then return { v } end
  if type(v) ~= "table" or (getmetatable(v) ~= nil and getmetatable(v) ~= T.Size) then return nil end
  for i = 1, #v do if not args.is_int(v[i]) then return nil end end
  return v
end

local function tuple_text(list, open, close)
  local parts = {}
  for i, v in ipairs(list) do parts[i] = tostring(v) end
  return open .. table.concat(parts, ", ") .. ((#list == 1 and open == "(") and "," or "") .. close
end

--[[ broadcast_shapes(*shapes) -> torch.Size: the shape broadcast_tensors would give tensors of
     these shapes (torch._refs._broadcast_shapes, with its messages); nil arguments are skipped. ]]
function M.broadcast_shapes(...)
  local shapes, len = {}, 0
  for i = 1, select("#", ...) do
    local v = (select(i, ...))
    if v ~= nil then
      local s = shape_list(v)
      if s == nil then
        error("broadcast_shapes: Input shapes should be of type ints, a tuple of ints, or a list of ints, got " ..
          args.typename(v), 2)
      end
      shapes[#shapes + 1], len = s, math.max(len, #s)
    end
  end
  local common = {}
  for i = 1, len do common[i] = 1 end
  for arg_idx, s in ipairs(shapes) do
    for k = 1, #s do
      local d, c = s[#s + 1 - k], len + 1 - k
      if d ~= common[c] then
        if common[c] == 1 then
          if d < 0 then error("broadcast_shapes: Attempting to broadcast a dimension with negative length!", 2) end
          common[c] = d
        end
        if d ~= 1 and common[c] ~= d then
          error(("broadcast_shapes: Attempting to broadcast a dimension of length %d at %d! Mismatching argument " ..
            "at index %d had %s; but expected shape should be broadcastable to %s"):format(d, -k, arg_idx - 1,
            tuple_text(s, "(", ")"), tuple_text(common, "[", "]")), 2)
        end
      end
    end
  end
  return T.new_size(common)
end

--[[ unravel_index(indices, shape) -> one tensor of coordinates per dimension of shape, as
     multiple values (PyTorch's tuple): the flat indices into a tensor of that shape. ]]
local UNRAVEL = P.signature("unravel_index", "indices, shape")
function M.unravel_index(...)
  local a = W.bind(UNRAVEL, 2, ...)
  local indices = W.tensor(UNRAVEL, a, "indices", 2)
  local dt = indices.dtype
  if dt.is_floating_point or dt.is_complex or dt.name == "bool" then
    error("unravel_index: expected 'indices' to be integer dtype, but got " .. tostring(dt), 2)
  end
  local shape = shape_list(a.shape)
  if shape == nil then
    error("unravel_index: expected 'shape' to be int or sequence of ints, but got " .. args.typename(a.shape), 2)
  end
  for _, d in ipairs(shape) do
    if d < 0 then
      local parts = {}
      for i, v in ipairs(shape) do parts[i] = tostring(v) end
      error(("unravel_index: 'shape' cannot have negative values, but got (%s%s)"):format(
        table.concat(parts, ", "), #shape == 1 and "," or ""), 2)
    end
  end
  local coefs, acc = {}, 1
  for i = #shape, 1, -1 do coefs[i] = acc; acc = acc * shape[i] end
  local opts = { dtype = dtype_mod.by_name.int64, device = indices.device }
  local c = creation.tensor(#coefs > 0 and coefs or { 1 }, opts)
  local s = creation.tensor(shape, opts)
  local res = W.call(2, function()
    return indices:unsqueeze(-1):floor_divide(c):remainder(s):unbind(-1)
  end)
  return unpack(res)
end

-- typename(obj): a tensor's type ("torch.FloatTensor"), else the Python name of the value's type
-- (int, float, str, bool, NoneType, torch.dtype, torch.device, torch.Size) or an object's class.
local TYPENAME = P.signature("typename", "obj")
function M.typename(...)
  local obj = W.bind(TYPENAME, 2, ...).obj
  if T.is_tensor(obj) then return obj:type() end
  local t = type(obj)
  if t == "nil" then return "NoneType" end
  if t == "number" then return args.is_int(obj) and "int" or "float" end
  if t == "string" then return "str" end
  if t == "boolean" then return "bool" end
  if dtype_mod.is_dtype(obj) then return "torch.dtype" end
  if device_mod.is_device(obj) then return "torch.device" end
  if t == "table" and getmetatable(obj) == T.Size then return "torch.Size" end
  if t == "table" and type(obj.__name) == "string" then return obj.__name end
  return t
end

local GET_DEVICE = P.signature("get_default_device", "")
function M.get_default_device(...)
  W.bind(GET_DEVICE, 2, ...)
  return device_mod.new("cpu")
end

local SET_DEVICE = P.signature("set_default_device", "device")
function M.set_default_device(...)
  local d = W.bind(SET_DEVICE, 2, ...).device
  if d == nil then return end   -- PyTorch's reset: factories place on the CPU
  local ok, dev = pcall(device_mod.resolve, d, "set_default_device", 1)
  if not ok then error(W.bare(dev), 2) end
  if dev.type ~= "cpu" then
    error(("set_default_device: only the CPU can be the default device in ltorch (got '%s'); pass " ..
      "device = '%s' to the factories (torch.zeros(3, {device = '%s'})) or move with x:to('%s')"):format(
      tostring(dev), tostring(dev), tostring(dev), tostring(dev)), 2)
  end
end

local PROFILES = {
  default = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80 },
  short = { precision = 2, threshold = 1000, edgeitems = 2, linewidth = 80 },
  full = { precision = 4, threshold = math.huge, edgeitems = 3, linewidth = 80 },
}
local PRINT = P.signature("set_printoptions",
  "precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None")
function M.set_printoptions(...)
  local a = W.bind(PRINT, 2, ...)
  for _, name in ipairs { "precision", "edgeitems", "linewidth" } do
    local v = W.int(PRINT, a, name, 2, true)
    if v ~= nil and v < 0 then error(("set_printoptions: %s must be non-negative, got %d"):format(name, v), 2) end
  end
  -- C's printf takes a precision up to INT_MAX, but no double has more than 17 significant digits
  -- and the printer formats into a 512-byte buffer: beyond 100 digits is refused, not truncated.
  if a.precision ~= nil and a.precision > 100 then
    error(("set_printoptions: precision must be at most 100, got %d"):format(a.precision), 2)
  end
  if a.threshold ~= nil and type(a.threshold) ~= "number" then
    error("set_printoptions(): argument 'threshold' must be a number, not " .. args.typename(a.threshold), 2)
  end
  if a.sci_mode ~= nil then W.bool(PRINT, a, "sci_mode", 2) end
  local opts = printer.options
  if a.profile ~= nil then
    local p = PROFILES[a.profile]
    if p == nil then
      error(("set_printoptions: invalid profile %s (expected 'default', 'short' or 'full')"):format(tostring(a.profile)), 2)
    end
    for k, v in pairs(p) do opts[k] = v end
  end
  for _, name in ipairs { "precision", "threshold", "edgeitems", "linewidth" } do
    if a[name] ~= nil then opts[name] = a[name] end
  end
  opts.sci_mode = a.sci_mode
end

function M.install(torch)
  for _, name in ipairs { "broadcast_shapes", "unravel_index", "typename", "get_default_device",
    "set_default_device", "set_printoptions" } do
    torch[name] = M[name]
  end
end

return M
