--[[
  torch.data.transforms — sample transforms (torchvision.transforms' common subset).

  Images are tensors: uint8 (H, W) or (H, W, C) as decoded, float (C, H, W) after ToTensor.
    Compose({t1, t2, ...})          applies in order
    ToTensor()                      uint8 HW/HWC -> float32 CHW in [0, 1] (HW gets C = 1)
    Normalize(mean, std)            (x - mean[c]) / std[c] per channel of a CHW float tensor
    RandomCrop(size, {padding = p}) zero-pads each side by p, then crops size x size at a random
                                    place (torch.utils.data.rng(): seeded per worker)
    RandomHorizontalFlip(p = 0.5)   flips the last dim with probability p
    Lambda(fn)                      any function (not sendable to workers)
  Each transform is callable (t(x)) and carries `spec`, plain data from which
  transforms.from_spec rebuilds it in a DataLoader worker's Lua state; Compose of built-ins is
  sendable, Lambda is not.

  Use:
    local T = torch.utils.data.transforms
    local tf = T.Compose({T.RandomCrop(28, {padding = 2}), T.RandomHorizontalFlip(),
                          T.ToTensor(), T.Normalize({0.286}, {0.353})})
]]
local M = {}

local function transform(name, spec, fn)
  return setmetatable({ name = name, spec = spec }, { __call = function(_, x) return fn(x) end,
    __tostring = function() return name .. "()" end })
end

function M.Compose(list)
  local specs = {}
  for i, t in ipairs(list) do specs[i] = type(t) == "table" and t.spec or false end
  local sendable = true
  for i = 1, #list do if not specs[i] then sendable = false end end
  return transform("Compose", sendable and { "Compose", specs } or nil, function(x)
    for i = 1, #list do x = list[i](x) end
    return x
  end)
end

function M.ToTensor()
  return transform("ToTensor", { "ToTensor" }, function(x)
    local torch = require "torch"
    if x:dim() == 2 then x = x:unsqueeze(2) end
    if x.dtype ~= torch.uint8 then
      error("ToTensor: expected a uint8 image (H, W) or (H, W, C), got " .. tostring(x.dtype), 2)
    end
    return x:permute(2, 0, 1):float():div(255)
  end)
end

function M.Normalize(mean, std)
  if type(mean) == "number" then mean = { mean } end
  if type(std) == "number" then std = { std } end
  for i, s in ipairs(std) do
    if s == 0 then error("Normalize: std evaluated to zero at channel " .. (i - 1) .. ", leading to division by zero", 2) end
  end
  local cache
  return transform("Normalize", { "Normalize", mean, std }, function(x)
    local torch = require "torch"
    if not cache then
      cache = { torch.tensor(mean, { dtype = torch.float32 }):view(-1, 1, 1),
                torch.tensor(std, { dtype = torch.float32 }):view(-1, 1, 1) }
    end
    return (x - cache[1]) / cache[2]
  end)
end

-- size: number or {h, w}; pads last two dims (works for HW, HWC is not supported: use after ToTensor or on HW)
function M.RandomCrop(size, opts)
  opts = opts or {}
  local h, w = type(size) == "table" and size[1] or size, type(size) == "table" and size[2] or size
  local pad = opts.padding or 0
  return transform("RandomCrop", { "RandomCrop", { h, w }, { padding = pad } }, function(x)
    local torch = require "torch"
    if pad > 0 then x = torch.constant_pad_nd(x, { pad, pad, pad, pad }, 0) end
    local H, W = x:size(x:dim() - 2), x:size(x:dim() - 1)
    if H < h or W < w then
      error(("RandomCrop: requested crop size (%d, %d) is bigger than the input size (%d, %d)"):format(h, w, H, W), 2)
    end
    local rng = require("torch.data").rng()
    local i = rng:random(H - h + 1)
    local j = rng:random(W - w + 1)
    return x:narrow(x:dim() - 2, i, h):narrow(x:dim() - 1, j, w)
  end)
end

function M.RandomHorizontalFlip(p)
  p = p or 0.5
  return transform("RandomHorizontalFlip", { "RandomHorizontalFlip", p }, function(x)
    if require("torch.data").rng():uniform() < p then return x:flip({ x:dim() - 1 }) end
    return x
  end)
end

function M.Lambda(fn)
  return transform("Lambda", nil, fn)
end

-- Rebuilds a transform from its spec (plain data), e.g. in a worker state.
function M.from_spec(spec)
  if spec == nil then return nil end
  local name = spec[1]
  if name == "Compose" then
    local list = {}
    for i, s in ipairs(spec[2]) do list[i] = M.from_spec(s) end
    return M.Compose(list)
  end
  local ctor = M[name]
  if not ctor or name == "Lambda" or name == "from_spec" then
    error("transforms.from_spec: unknown transform " .. tostring(name), 2)
  end
  return ctor(unpack(spec, 2))
end

-- The spec of a transform for a dataset factory; errors when it cannot cross states.
function M.to_spec(t, who)
  if t == nil then return nil end
  if type(t) == "table" and t.spec then return t.spec end
  if type(t) == "table" and type(t[1]) == "string" then return t end -- already a spec
  error((who or "dataset") .. ": this transform cannot be sent to DataLoader workers (a Lua "
    .. "function or Lambda); use the built-in transforms, or dataset_factory with your own module", 3)
end

return M
