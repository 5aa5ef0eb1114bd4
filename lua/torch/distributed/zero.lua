--[[
  torch.distributed.optim.ZeroRedundancyOptimizer — ZeRO stage 1 (PyTorch's
  torch.distributed.optim.ZeroRedundancyOptimizer): each rank keeps the optimizer state of its own
  share of the parameters only, so Adam's two moments cost 1/W of the memory per rank.

      local ZeRO = torch.distributed.optim.ZeroRedundancyOptimizer
      local opt = ZeRO(ddp:parameters(), { optimizer_class = torch.optim.AdamW, lr = 1e-3 })
      opt:zero_grad(); loss:backward(); opt:step()     -- with DDP, as any optimizer

  As PyTorch does it: within each parameter group, parameters are sorted by size (largest first)
  and each goes to the rank whose share is smallest so far; every rank builds optimizer_class over
  its share (same hyper-parameters), steps it after backward (the gradients are already averaged
  by DDP), then every parameter is broadcast from the rank that owns it. The result equals the
  plain optimizer's on every rank. param_groups is the global view: an LR scheduler edits it and
  the next step passes the hyper-parameters on to the local optimizer.
  Differences: PyTorch's keyword arguments go in one table (optimizer_class and the optimizer's
  defaults); process_group, parameters_as_bucket_view and overlap_with_ddp are refused (errors,
  not ignored); state_dict() is this rank's share (local_state_dict), consolidation to one rank
  is not implemented — save one file per rank.
]]
local torch = require "torch"
local dist = require "torch.distributed"

local M = {}

local ZeRO = { __name = "ZeroRedundancyOptimizer" }
ZeRO.__index = ZeRO

local REFUSED = { process_group = "only the default group is supported",
  parameters_as_bucket_view = "not supported", overlap_with_ddp = "not supported" }

local function fail(msg, level) error("ZeroRedundancyOptimizer: " .. msg, level + 1) end

-- {group...} with params split over ranks: owner[p] = rank; greedy by size as PyTorch.
local function partition(groups, world)
  local owner, sizes = {}, {}
  for r = 0, world - 1 do sizes[r] = 0 end
  for _, g in ipairs(groups) do
    local sorted = {}
    for i, p in ipairs(g.params) do sorted[i] = p end
    table.sort(sorted, function(a, b) return a:numel() > b:numel() end)
    for _, p in ipairs(sorted) do
      local best = 0
      for r = 1, world - 1 do if sizes[r] < sizes[best] then best = r end end
      owner[p] = best
      sizes[best] = sizes[best] + p:numel()
    end
  end
  return owner
end

local function normalise_groups(params)
  if type(params) ~= "table" or #params == 0 then fail("params must be a non-empty array of Tensors or groups", 4) end
  if torch.is_tensor(params[1]) then return { { params = params } } end
  return params
end

function M.ZeroRedundancyOptimizer(params, opts)
  if type(opts) ~= "table" or opts.optimizer_class == nil then
    fail("give the optimizer class: ZeroRedundancyOptimizer(params, {optimizer_class = torch.optim.AdamW, lr = ...})", 2)
  end
  if not dist.is_initialized() then fail("the default process group is not initialized", 2) end
  local defaults = {}
  for k, v in pairs(opts) do
    if REFUSED[k] then fail(k .. ": " .. REFUSED[k], 2) end
    if k ~= "optimizer_class" then defaults[k] = v end
  end
  local self = setmetatable({ rank = dist.get_rank(), world = dist.get_world_size(),
    optimizer_class = opts.optimizer_class, param_groups = {}, _local_groups = {} }, ZeRO)
  local groups = normalise_groups(params)
  self._owner = partition(groups, self.world)
  local mine = {}
  for gi, g in ipairs(groups) do
    local global = {}
    for k, v in pairs(defaults) do global[k] = v end
    for k, v in pairs(g) do if k ~= "params" then global[k] = v end end
    global.params = g.params
    self.param_groups[gi] = global
    local own = {}
    for _, p in ipairs(g.params) do if self._owner[p] == self.rank then own[#own + 1] = p end end
    if #own > 0 then
      local lg = { params = own }
      for k, v in pairs(g) do if k ~= "params" then lg[k] = v end end
      mine[#mine + 1] = lg
      self._local_groups[#mine] = gi
    end
  end
  if #mine > 0 then
    local ok, o = pcall(self.optimizer_class, mine, defaults)
    if not ok then fail(tostring(o), 2) end
    self.optim = o
  end
  return self
end

-- The global groups' hyper-parameters (an LR scheduler's edits) into the local optimizer.
function ZeRO:_sync_hyper_parameters()
  if not self.optim then return end
  for li, gi in pairs(self._local_groups) do
    local src, dst = self.param_groups[gi], self.optim.param_groups[li]
    for k, v in pairs(src) do if k ~= "params" then dst[k] = v end end
  end
end

function ZeRO:zero_grad(set_to_none)
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if set_to_none == false then
        if p.grad ~= nil then torch.no_grad(function() p.grad:zero_() end) end
      else
        p.grad = nil
      end
    end
  end
end

-- Steps this rank's share, then every parameter comes from its owner. A collective: every rank
-- must call it. closure as the optimizer's (evaluated on this rank).
function ZeRO:step(closure)
  self:_sync_hyper_parameters()
  local loss
  if self.optim then loss = self.optim:step(closure) elseif closure then loss = closure() end
  if self.world > 1 then
    torch.no_grad(function()
      for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do dist.broadcast(p:detach(), self._owner[p]) end
      end
    end)
  end
  return loss
end

-- This rank's share of the state (PyTorch's local_state_dict); state_dict is the same here.
function ZeRO:local_state_dict()
  return self.optim and self.optim:state_dict() or { state = {}, param_groups = {} }
end
ZeRO.state_dict = ZeRO.local_state_dict

function ZeRO:load_state_dict(sd)
  if self.optim then self.optim:load_state_dict(sd) end
end

function ZeRO:consolidate_state_dict()
  error("ZeroRedundancyOptimizer: consolidate_state_dict is not implemented; save each rank's " ..
    "local_state_dict() to its own file and load it back on the same rank", 2)
end

function ZeRO:__tostring()
  return ("ZeroRedundancyOptimizer(%s, rank %d of %d)"):format(tostring(self.optim or "no share"),
    self.rank, self.world)
end

return M
