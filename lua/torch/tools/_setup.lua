--[[
  torch.tools._setup — a doctor setup (torch.doctor.setup) for the timing tools: loaded with its
  failures turned into usage errors naming the script, and the first train batch as {x, y}.
  A recipe reaches the tools through a setup script that returns its builder's setup, e.g.
  `local a = require("recipes.doctor_setup").classifier; return a.setup(a.parse({"--limit-train", "512"}))`.
]]
local torch = require "torch"
local T = require "torch.tools"
local S = require "torch.doctor.setup"

local M = {}

-- load(path, needs) -> setup; needs: array of the fields the tool requires
function M.load(path, needs)
  if type(path) ~= "string" then T.usage_error("a setup script is required") end
  local ok, setup = pcall(S.load, path)
  if not ok then T.usage_error("%s", tostring(setup)) end
  local missing = {}
  for _, k in ipairs(needs) do if setup[k] == nil then missing[#missing + 1] = k end end
  if #missing > 0 then T.usage_error("%s: the setup needs %s", path, table.concat(missing, ", ")) end
  return setup
end

-- first_batch(setup, path) -> x, y (y may be nil)
function M.first_batch(setup, path)
  local ok, x, y = pcall(function()
    local b = S.iterate(setup.train_loader)()
    if b == nil then error("train_loader gave no batch", 0) end
    return S.split(setup, b)
  end)
  if not ok then T.usage_error("%s: %s", path, tostring(x)) end
  if not torch.is_tensor(x) then T.usage_error("%s: the first batch has no input tensor", path) end
  return x, y
end

-- repeat the first sample of t to a batch of n (t's sample shape kept)
function M.batch_of(t, n)
  if not torch.is_tensor(t) then return t end
  local one = t:narrow(0, 0, 1)
  local sizes = one:size()
  sizes[1] = n
  return one:expand(sizes):contiguous()
end

return M
