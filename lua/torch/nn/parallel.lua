--[[
  torch.nn.parallel — DistributedDataParallel: data-parallel training over torch.distributed's
  default group, one process per rank (start them with tools/run.lua).

      dist.init_process_group{backend = "gloo"}
      local ddp = nn.parallel.DistributedDataParallel(model, {bucket_cap_mb = 25})
      local loss = loss_fn(ddp(x), y)        -- forward delegates to the wrapped module
      ddp:backward(loss)                     -- loss:backward(), then ddp:sync_gradients()
      opt:step()
      -- gradient accumulation: no all-reduce inside no_sync, one for the accumulated grads after
      ddp:no_sync(function() ddp:backward(loss_fn(ddp(x1), y1)) end)
      ddp:backward(loss_fn(ddp(x2), y2))

  What it does, as PyTorch's DDP:
  - At construction, every parameter and buffer is broadcast from rank 0, so all replicas start
    identical. With broadcast_buffers (default true), buffers (BatchNorm statistics) are
    broadcast from rank 0 again before each forward.
  - sync_gradients() averages .grad over ranks (sum / world_size) with one all-reduce per bucket:
    parameters are grouped, in reverse registration order (the order backward produces them),
    by dtype and device into flat buffers of at most bucket_cap_mb megabytes. Each bucket carries
    one extra slot per parameter counting the ranks that produced a gradient for it, so every
    rank reaches the same verdict on unused parameters in the same collective:
      find_unused_parameters = false (default): a parameter without a gradient on any rank is an
        error on every rank, naming the parameters (no rank is left waiting in a collective).
      find_unused_parameters = true: a missing gradient counts as zeros; a parameter no rank
        used keeps grad = nil (the optimizer skips it).
    The all-reduce runs after backward, not overlapped with it (no autograd hooks here).
  - state_dict() has PyTorch's "module." prefix; state_dict{prefix = false} gives the wrapped
    module's own keys. load_state_dict accepts either form.
  Construct DDP after moving the model to its device/dtype. Options device_ids, output_device,
  gradient_as_bucket_view and static_graph are accepted for PyTorch compatibility and ignored.
]]
local torch = require "torch"
local module = require "torch.nn.module"
local pack = require("torch._args").pack

local Module = module.Module

local M = {}

local function dist() return require "torch.distributed" end

local DDP = Module:extend("DistributedDataParallel")
M.DistributedDataParallel = DDP

function DDP:__init(mod, opts)
  if not module.is_module(mod) then
    error("DistributedDataParallel: expected an nn.Module to wrap, got " .. type(mod), 3)
  end
  opts = opts or {}
  local d = dist()
  if not d.is_initialized() then
    error("DistributedDataParallel: the default process group is not initialized " ..
      "(call torch.distributed.init_process_group first)", 3)
  end
  self.module = mod
  rawset(self, "bucket_cap_bytes", math.max(1, math.floor((opts.bucket_cap_mb or 25) * 1024 * 1024)))
  rawset(self, "find_unused_parameters", opts.find_unused_parameters == true)
  rawset(self, "broadcast_buffers", opts.broadcast_buffers ~= false)
  rawset(self, "require_backward_grad_sync", true)
  self:_sync_state()
  self:_build_buckets()
end

-- Broadcasts every parameter and buffer from rank 0 (in place, through detached aliases).
function DDP:_sync_state(buffers_only)
  local d = dist()
  if d.get_world_size() == 1 then return end
  torch.no_grad(function()
    if not buffers_only then
      for _, p in ipairs(self.module:parameters()) do d.broadcast(p:detach(), 0) end
    end
    for _, b in ipairs(self.module:buffers()) do d.broadcast(b:detach(), 0) end
  end)
end

function DDP:_build_buckets()
  local named = self.module:named_parameters()
  local buckets, open = {}, {}
  for i = #named, 1, -1 do
    local name, p = named[i][1], named[i][2]
    if p.requires_grad then
      local key = tostring(p.dtype) .. "@" .. tostring(p.device)
      local bytes = p:numel() * p:element_size()
      local b = open[key]
      if b == nil or (b.bytes > 0 and b.bytes + bytes > self.bucket_cap_bytes) then
        b = { params = {}, names = {}, offsets = {}, numels = {}, total = 0, bytes = 0,
              dtype = p.dtype, device = p.device }
        open[key] = b
        buckets[#buckets + 1] = b
      end
      b.params[#b.params + 1] = p
      b.names[#b.names + 1] = name
      b.offsets[#b.offsets + 1] = b.total
      b.numels[#b.numels + 1] = p:numel()
      b.total = b.total + p:numel()
      b.bytes = b.bytes + bytes
    end
  end
  for _, b in ipairs(buckets) do
    -- gradients, then one "ranks that produced a gradient" slot per parameter
    b.flat = torch.zeros(b.total + #b.params, { dtype = b.dtype, device = b.device })
  end
  rawset(self, "buckets", buckets)
end

function DDP:forward(...)
  if self.broadcast_buffers and self.training and #self.module:buffers() > 0 then
    self:_sync_state(true)
  end
  return self.module(...)
end

--[[ Averages gradients over ranks (see the header). A no-op inside no_sync. Every rank must call
     it the same number of times: it is a collective. ]]
function DDP:sync_gradients()
  if not self.require_backward_grad_sync then return end
  local d = dist()
  local ws = d.get_world_size()
  local unsynced = {}
  torch.no_grad(function()
    for _, b in ipairs(self.buckets) do
      local flat, n = b.flat, #b.params
      for j, p in ipairs(b.params) do
        local slice = flat:narrow(0, b.offsets[j], b.numels[j])
        local flag = flat:narrow(0, b.total + j - 1, 1)
        local g = p.grad
        if g == nil then
          slice:zero_(); flag:fill_(0)
        else
          slice:copy_(g:reshape(-1)); flag:fill_(1)
        end
      end
      if ws > 1 then d.all_reduce(flat) end
      local counts = flat:narrow(0, b.total, n):tolist()
      if ws > 1 then flat:narrow(0, 0, b.total):div_(ws) end
      for j, p in ipairs(b.params) do
        local used = math.floor(counts[j] + 0.5)
        if used < ws and not self.find_unused_parameters then
          unsynced[#unsynced + 1] = ("%s (gradient on %d of %d ranks)"):format(b.names[j], used, ws)
        elseif used > 0 then
          local avg = flat:narrow(0, b.offsets[j], b.numels[j]):view_as(p)
          local g = p.grad
          if g == nil then p.grad = avg:clone() else g:copy_(avg) end
        end
      end
    end
  end)
  if #unsynced > 0 then
    error("DistributedDataParallel: parameters that did not receive gradients: " ..
      table.concat(unsynced, ", ") .. ". Every parameter must take part in the loss on every rank, " ..
      "or pass find_unused_parameters = true.", 2)
  end
end

-- loss:backward(...) then sync_gradients() (skipped inside no_sync).
function DDP:backward(loss, ...)
  loss:backward(...)
  self:sync_gradients()
end

-- Runs fn(...) with gradient synchronization off (gradients accumulate locally); returns fn's results.
function DDP:no_sync(fn, ...)
  local prev = self.require_backward_grad_sync
  rawset(self, "require_backward_grad_sync", false)
  local res = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  rawset(self, "require_backward_grad_sync", prev)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, table.maxn(res))
end

function DDP:state_dict(opts)
  if type(opts) == "table" and opts.prefix == false then return self.module:state_dict() end
  return Module.state_dict(self)
end

function DDP:load_state_dict(sd, strict)
  -- A DDP state dict's keys all start with "module." (or none do): the first key tells.
  local first = next(sd)
  if type(first) == "string" and first:sub(1, 7) == "module." then return Module.load_state_dict(self, sd, strict) end
  return self.module:load_state_dict(sd, strict)
end

function DDP:extra_repr() return "" end

--[[ consume_prefix_in_state_dict_if_present(sd, "module."): strips the prefix from every key that
     has it, in place (PyTorch's torch.nn.modules.utils helper); returns sd. ]]
function M.consume_prefix_in_state_dict_if_present(sd, prefix)
  prefix = prefix or "module."
  local moved = {}
  for k, v in pairs(sd) do
    if type(k) == "string" and k:sub(1, #prefix) == prefix then moved[#moved + 1] = { k, v } end
  end
  for _, kv in ipairs(moved) do sd[kv[1]] = nil; sd[kv[1]:sub(#prefix + 1)] = kv[2] end
  return sd
end

return M
