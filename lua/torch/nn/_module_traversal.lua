--[[
  torch.nn._module_traversal — walking a module tree: nn.Module's named_children/children,
  named_modules/modules, named_parameters/parameters, named_buffers/buffers and num_parameters,
  all in registration order, each module and each tensor once (PyTorch's dedup).

  The named_* methods return named lists (named_list below): arrays of {name, value} pairs that
  are also iterators. `raw_named_children` and `raw_named_modules` give the plain arrays for the
  other parts of nn.Module (repr, state dict, modes).

  Usage:  local traversal = require "torch.nn._module_traversal"
          for k, f in pairs(traversal.methods) do Module[k] = f end   -- torch.nn.module does this
]]
local M = {}
local Methods = {}
M.methods = Methods

--[[ named_parameters() & co. return an array of {name, value} pairs (ipairs and nv[1], nv[2]
     work) that is also an iterator, so PyTorch's loop ports word for word:
         for name, p in model:named_parameters() do ... end        -- registration order
     pairs() over the array would give 1, 2, ... and the pairs (LuaJIT ignores __pairs), so a
     pair used as if it were the value (pair.grad, pair:size()) is an error that says so. ]]
local cursor = setmetatable({}, { __mode = "k" })

local function named_next(list, _, previous)
  local i = previous == nil and 1 or (cursor[list] or 0) + 1
  local nv = rawget(list, i)
  cursor[list] = i
  if nv == nil then return nil end
  return nv[1], nv[2]
end

local named_mts, pair_mts = {}, {}
local function named_list(out, what)
  local pair_mt = pair_mts[what]
  if pair_mt == nil then
    pair_mt = { __index = function(_, k)
      error(("%s() gives {name, value} pairs, this one has no field '%s': write "
        .. "`for name, v in m:%s() do` (pairs() yields 1, 2, ... and the pairs), or nv[1], nv[2]")
        :format(what, tostring(k), what), 2)
    end }
    pair_mts[what], named_mts[what] = pair_mt, { __call = named_next }
  end
  for i = 1, #out do setmetatable(out[i], pair_mt) end
  return setmetatable(out, named_mts[what])
end
M.named_list = named_list   -- for other modules with PyTorch's named_* methods (torch.jit)

---------------------------------------------------------------- traversal
local function raw_named_children(self)
  local out = {}
  for _, n in ipairs(self._modules.names) do
    local m = self._modules.values[n]
    if m then out[#out + 1] = { n, m } end
  end
  return out
end
M.raw_named_children = raw_named_children

function Methods:named_children() return named_list(raw_named_children(self), "named_children") end

function Methods:children()
  local out = {}
  for _, nm in ipairs(raw_named_children(self)) do out[#out + 1] = nm[2] end
  return out
end

-- {{"", self}, {"fc1", fc1}, ...} depth-first, each module once.
local function raw_named_modules(self, prefix, seen, out)
  if seen[self] then return out end
  seen[self] = true
  out[#out + 1] = { prefix, self }
  for _, nm in ipairs(raw_named_children(self)) do
    raw_named_modules(nm[2], prefix == "" and nm[1] or (prefix .. "." .. nm[1]), seen, out)
  end
  return out
end

M.raw_named_modules = raw_named_modules

function Methods:named_modules(prefix)
  return named_list(raw_named_modules(self, prefix or "", {}, {}), "named_modules")
end

function Methods:modules()
  local out = {}
  for _, nm in ipairs(raw_named_modules(self, "", {}, {})) do out[#out + 1] = nm[2] end
  return out
end

local function named_members(self, field, recurse)
  local out, seen = {}, {}
  local list = recurse == false and { { "", self } } or raw_named_modules(self, "", {}, {})
  for _, nm in ipairs(list) do
    local prefix, m = nm[1], nm[2]
    local map = m[field]
    for _, n in ipairs(map.names) do
      local v = map.values[n]
      if v ~= nil and not seen[v] then
        seen[v] = true
        out[#out + 1] = { prefix == "" and n or (prefix .. "." .. n), v }
      end
    end
  end
  return out
end

function Methods:named_parameters(recurse)
  return named_list(named_members(self, "_parameters", recurse), "named_parameters")
end
function Methods:named_buffers(recurse)
  return named_list(named_members(self, "_buffers", recurse), "named_buffers")
end

function Methods:parameters(recurse)
  local out = {}
  for _, nv in ipairs(named_members(self, "_parameters", recurse)) do out[#out + 1] = nv[2] end
  return out
end

function Methods:buffers(recurse)
  local out = {}
  for _, nv in ipairs(named_members(self, "_buffers", recurse)) do out[#out + 1] = nv[2] end
  return out
end

-- Number of parameter elements (trainable only if asked).
function Methods:num_parameters(trainable_only)
  local n = 0
  for _, p in ipairs(self:parameters()) do
    if not trainable_only or p.requires_grad then n = n + p:numel() end
  end
  return n
end

return M
