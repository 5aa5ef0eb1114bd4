--[[
  torch.data.collate — default_collate: a list of samples -> one batch (PyTorch's semantics).

  What (B = number of samples):
    tensors of equal shape S          -> torch.stack: (B, *S)
    numbers                           -> tensor (B): int64 when all are integral, else float64
                                         (PyTorch: Python int -> int64, float -> float64)
    booleans                          -> bool tensor (B)
    strings                           -> the Lua array of strings
    tables with the same keys         -> a table with each key collated recursively
                                         (arrays {x, y} stay arrays: {batch_x, batch_y})
  default_convert(sample) is the no-batch counterpart (batch_size = nil): returned as is.

  Use:  local collate = require("torch.data.collate").default_collate
        local batch = collate({ {x1, 3}, {x2, 7} })   --> { stacked (2, ...), tensor{3, 7} }
]]
local M = {}

local function is_tensor(v)
  return type(v) == "cdata" and require("torch").is_tensor(v)
end

local function collate(samples, path)
  local first = samples[1]
  local tv = type(first)
  if is_tensor(first) then
    local torch = require "torch"
    local ok, out = pcall(torch.stack, samples, 0)
    if not ok then
      local shapes = {}
      for i = 1, math.min(#samples, 4) do shapes[i] = tostring(samples[i]:size()) end
      error(("default_collate: %s: cannot stack tensors of different shapes (%s ...): %s")
        :format(path, table.concat(shapes, ", "), tostring(out)), 0)
    end
    return out
  elseif tv == "number" then
    local torch = require "torch"
    local integral = true
    for i = 1, #samples do
      local v = samples[i]
      if type(v) ~= "number" then
        error(("default_collate: %s: mixed number and %s"):format(path, type(v)), 0)
      end
      if v ~= math.floor(v) or math.abs(v) >= 2 ^ 53 then integral = false end
    end
    return torch.tensor(samples, { dtype = integral and torch.int64 or torch.float64 })
  elseif tv == "boolean" then
    local torch = require "torch"
    return torch.tensor(samples, { dtype = torch.bool })
  elseif tv == "string" then
    return samples
  elseif tv == "table" then
    local out = {}
    for k in pairs(first) do
      local column = {}
      for i = 1, #samples do
        local s = samples[i]
        if type(s) ~= "table" or s[k] == nil then
          error(("default_collate: %s: sample %d has no field %s"):format(path, i, tostring(k)), 0)
        end
        column[i] = s[k]
      end
      out[k] = collate(column, path .. "." .. tostring(k))
    end
    return out
  elseif first == nil then
    error("default_collate: empty batch", 0)
  end
  error(("default_collate: %s: cannot batch values of type %s"):format(path, tv), 0)
end

function M.default_collate(samples)
  return collate(samples, "batch")
end

function M.default_convert(sample) return sample end

return M
