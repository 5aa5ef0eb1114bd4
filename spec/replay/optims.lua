--[[
  spec/replay/optims.lua — replays one optim_db configuration through ltorch's torch.optim
  (issue #36).

  Why: tools/replay/gen_optim_db.py records PyTorch's parameters after each step of a small
  least-squares problem for every documented configuration; this runs the same steps here.

  What: run(entry, case): opt = torch.optim.X(params, {kw...}); three times zero_grad, the loss
  ((x @ w.T + b - y)^2).sum() (SparseAdam: an embedding lookup with sparse = true), backward,
  step (LBFGS: step(closure)); after each step every parameter must equal PyTorch's (float64,
  10x torch.testing's tolerance). An error input (case.error): the constructor must raise.
  Verdicts as in spec/replay/ops.lua.
  Use: by spec/replay/child.lua.
]]
local torch = require "torch"
local codec = require "spec.replay.codec"
local ops = require "spec.replay.ops"

local M = {}

local function loss_of(data, params)
  if data.idx then
    local out = torch.nn.functional.embedding(data.idx, params[1], { sparse = true })
    return ((out - data.y) ^ 2):sum()
  end
  local out = data.x:matmul(params[1]:t())
  if params[2] then out = out + params[2] end
  return ((out - data.y) ^ 2):sum()
end

function M.run(entry, case)
  local cls = torch.optim[entry.name]
  if cls == nil then return { cat = "missing", detail = "torch.optim." .. entry.name .. " is not in ltorch" } end
  if case.error then
    local params = codec.decode(case.params)
    if torch.is_tensor(params) then params:requires_grad_(true) end
    local ok = pcall(cls, params, codec.decode({ D = case.kw }))
    if ok then return { cat = "no_error", detail = "PyTorch raises " .. case.error } end
    return {}
  end
  local params = {}
  for i, p in ipairs(case.init) do params[i] = codec.decode(p):requires_grad_(true) end
  local data = {}
  for k, v in pairs(case.data) do data[k] = codec.decode(v) end
  local kw = codec.decode({ D = case.kw })
  local built, opt = pcall(cls, params, kw)
  if not built then
    local msg = tostring(opt):sub(1, 300)
    return { cat = ops.classify_error(msg), detail = "constructor: " .. msg }
  end
  for s, want in ipairs(case.steps) do
    local function closure()
      opt:zero_grad()
      local loss = loss_of(data, params)
      loss:backward()
      return loss
    end
    local ok, err = pcall(function()
      if entry.name == "LBFGS" then opt:step(closure) else closure(); opt:step() end
    end)
    if not ok then
      local msg = tostring(err):sub(1, 300)
      return { cat = ops.classify_error(msg), detail = ("step %d: %s"):format(s, msg) }
    end
    for i, w in ipairs(want) do
      local why = codec.compare(w, params[i], 10)
      if why then return { cat = "differs", detail = ("after step %d, parameter %d: %s"):format(s, i, why) } end
    end
  end
  return {}
end

return M
