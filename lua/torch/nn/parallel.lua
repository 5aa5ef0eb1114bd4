--[[
  torch.nn.parallel — DistributedDataParallel: data-parallel training over torch.distributed's
  default group, one process per rank (start them with `ltorch run`), on libtorch's own
  c10d::Reducer — the engine under PyTorch's DDP (bindings/lt_ddp.cpp).

      dist.init_process_group{backend = "gloo"}
      local ddp = nn.parallel.DistributedDataParallel(model)   -- {bucket_cap_mb = 25, ...}
      local loss = loss_fn(ddp(x), y)        -- forward delegates to the wrapped module
      loss:backward()                        -- gradients are averaged over the ranks here
      opt:step()
      -- gradient accumulation: no all-reduce inside no_sync, one for the accumulated grads after
      ddp:no_sync(function() loss_fn(ddp(x1), y1):backward() end)
      loss_fn(ddp(x2), y2):backward()

  What it does, as PyTorch's DDP:
  - At construction every parameter and buffer is broadcast from rank 0 (coalesced into 250 MiB
    buffers: one collective per buffer), so all replicas start identical; parameters are bucketed (bucket_cap_mb, default 25, with a first bucket of 1 MiB
    when left at the default) in reverse registration order.
  - A forward under grad mode (outside no_sync) arms the Reducer; the backward that follows —
    any backward, `loss:backward()` included — copies each gradient into its bucket as soon as
    autograd has accumulated it, divided by the world size, and all-reduces a bucket as soon as
    it is complete, overlapped with the rest of backward. At the end of backward the averaged
    buckets are written back into .grad. After the first iteration the buckets are rebuilt in
    the order gradients really arrived (one broadcast of rank 0's order).
  - broadcast_buffers (default true): buffers (BatchNorm statistics) are broadcast from rank 0,
    coalesced, before each forward that follows a synchronized one.
  - find_unused_parameters = false (default): every parameter must receive a gradient in every
    synchronized backward; otherwise the next forward raises the Reducer's error naming them.
    true: the forward's outputs are walked for the parameters that take part; the others count
    as ready with no gradient (a parameter no rank used keeps its .grad).
  - gradient_as_bucket_view: .grad becomes a view into its bucket (saves a copy and memory).
  - static_graph: the Reducer's static-graph mode (the graph is the same every iteration).
  - register_comm_hook(state, hook) with torch.distributed.algorithms.ddp_comm_hooks.
    default_hooks.{allreduce_hook, fp16_compress_hook, bf16_compress_hook}; hooks written in Lua
    are not supported (an error says so).
  - state_dict() has PyTorch's "module." prefix; state_dict{prefix = false} gives the wrapped
    module's own keys. load_state_dict accepts either form.
  ddp:backward(loss) is kept as an alias of loss:backward(). Construct DDP after moving the model
  to its device/dtype. device_ids / output_device may name the module's own device (one device
  per process); process_group other than the default, mixed_precision and Lua comm hooks are
  errors, not silently ignored.
]]
local ffi = require "ffi"
local torch = require "torch"
local module = require "torch.nn.module"
local _C = require "torch._C"
local T = require "torch._tensor"
local pack = require("torch._args").pack

local C = _C.C
local Module = module.Module

local M = {}

local function dist() return require "torch.distributed" end

local DEFAULT_BUCKET_MB = 25
local DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024   -- PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES

-- PyTorch's keyword arguments; the value says what ltorch does with it.
local OPTIONS = {
  device_ids = "checked", output_device = "checked", dim = "checked", broadcast_buffers = true,
  process_group = "checked", bucket_cap_mb = true, find_unused_parameters = true,
  check_reduction = "ignored (deprecated in PyTorch too)", gradient_as_bucket_view = true,
  static_graph = true, mixed_precision = "checked", skip_all_reduce_unused_params = "checked",
}

local DDP = Module:extend("DistributedDataParallel")
M.DistributedDataParallel = DDP

local function fail(what, level)
  error("DistributedDataParallel: " .. what .. ": " .. _C.last_error(), (level or 1) + 1)
end

local function check_options(opts, mod)
  for k in pairs(opts) do
    if OPTIONS[k] == nil then
      error(("DistributedDataParallel: unexpected keyword '%s'"):format(tostring(k)), 4)
    end
  end
  if opts.process_group ~= nil then
    error("DistributedDataParallel: process_group: only the default group is supported (leave it nil)", 4)
  end
  if opts.mixed_precision ~= nil then
    error("DistributedDataParallel: mixed_precision is not supported; use torch.autocast (templates/_common/amp.lua)", 4)
  end
  if opts.skip_all_reduce_unused_params then
    error("DistributedDataParallel: skip_all_reduce_unused_params is not supported", 4)
  end
  if opts.dim ~= nil and opts.dim ~= 0 then
    error("DistributedDataParallel: dim must be 0 (inputs are not scattered: one device per process)", 4)
  end
  local ids = opts.device_ids
  if ids ~= nil then
    if type(ids) ~= "table" or #ids ~= 1 then
      error("DistributedDataParallel: device_ids must be nil or hold exactly one device (one device per process)", 4)
    end
    local p = mod:parameters()[1]
    local want = torch.device(type(ids[1]) == "number" and ("cuda:" .. ids[1]) or ids[1])
    if p and tostring(p.device) ~= tostring(want) then
      error(("DistributedDataParallel: device_ids {%s} but the module is on %s; move it with model:to(...) first")
        :format(tostring(want), tostring(p.device)), 4)
    end
  end
end

function DDP:__init(mod, opts)
  if not module.is_module(mod) then
    error("DistributedDataParallel: expected an nn.Module to wrap, got " .. type(mod), 3)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error("DistributedDataParallel: options must be a table", 3) end
  check_options(opts, mod)
  local d = dist()
  if not d.is_initialized() then
    error("DistributedDataParallel: the default process group is not initialized " ..
      "(call torch.distributed.init_process_group first)", 3)
  end
  self.module = mod
  rawset(self, "find_unused_parameters", opts.find_unused_parameters == true)
  rawset(self, "static_graph", opts.static_graph == true)
  rawset(self, "gradient_as_bucket_view", opts.gradient_as_bucket_view == true)
  rawset(self, "broadcast_buffers", opts.broadcast_buffers ~= false)
  rawset(self, "require_backward_grad_sync", true)
  rawset(self, "require_forward_param_sync", true)
  self:_sync_state()
  self:_build_reducer(opts.bucket_cap_mb)
end

-- PyTorch's DDP broadcast_bucket_size: tensors are packed into buffers of up to this many bytes.
local BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024

-- Broadcasts every parameter and buffer from rank 0 in place, coalesced into 250 MiB buffers (one
-- collective per buffer, as PyTorch's _sync_module_states and _sync_buffers).
function DDP:_sync_state(buffers_only)
  local d = dist()
  if d.get_world_size() == 1 then return end
  local ts = {}
  if not buffers_only then
    for _, p in ipairs(self.module:parameters()) do ts[#ts + 1] = p end
  end
  for _, b in ipairs(self.module:buffers()) do ts[#ts + 1] = b end
  if #ts == 0 then return end
  local hs = ffi.new("lt_tensor*[?]", #ts)
  for i, t in ipairs(ts) do hs[i - 1] = t.h end
  self:_reducer_call("broadcasting parameters and buffers from rank 0",
    C.lt_ddp_broadcast_coalesced(d._group(), hs, #ts, BROADCAST_BUCKET_BYTES, 0))
end

function DDP:_build_reducer(bucket_cap_mb)
  if bucket_cap_mb ~= nil and (type(bucket_cap_mb) ~= "number" or bucket_cap_mb <= 0) then
    error("DistributedDataParallel: bucket_cap_mb must be a positive number", 4)
  end
  local cap = math.max(1, math.floor((bucket_cap_mb or DEFAULT_BUCKET_MB) * 1024 * 1024))
  local first = bucket_cap_mb == nil and DEFAULT_FIRST_BUCKET_BYTES or cap
  local named = self.module:named_parameters()
  local n = #named
  local handles = ffi.new("lt_tensor*[?]", math.max(n, 1))
  local names = ffi.new("const char*[?]", math.max(n, 1))
  local keep = {}
  for i, nv in ipairs(named) do
    handles[i - 1] = T.handle("DistributedDataParallel", 1, nv[2])
    keep[i] = nv[1]
    names[i - 1] = keep[i]
  end
  local out = ffi.new("lt_ddp*[1]")
  if C.lt_ddp_new(out, dist()._group(), handles, names, n, cap, first,
      self.find_unused_parameters and 1 or 0, self.gradient_as_bucket_view and 1 or 0,
      self.static_graph and 1 or 0) ~= 0 then
    fail("building the reducer", 3)
  end
  rawset(self, "_reducer", ffi.gc(out[0], C.lt_ddp_free))
  rawset(self, "_param_names", keep)
end

-- Every tensor in a forward's result (a tensor, or tables of them), for the unused-parameter walk.
local function collect_tensors(v, out, seen)
  if T.is_tensor(v) then
    out[#out + 1] = v
  elseif type(v) == "table" and not seen[v] and not module.is_module(v) then
    seen[v] = true
    for _, x in pairs(v) do collect_tensors(x, out, seen) end
  end
  return out
end

--[[ The Reducer's "did not receive grad" error lists parameter indices (names only under
     TORCH_DISTRIBUTED_DEBUG); the names are appended here. ]]
function DDP:_explain(msg)
  local names = {}
  local list = msg:match("did not receive grad for rank %d+: ([%d ]+)")
  for idx in (list or ""):gmatch("%d+") do
    names[#names + 1] = self._param_names[tonumber(idx) + 1]
  end
  if #names == 0 then return msg end
  return msg .. "\nThose parameters are: " .. table.concat(names, ", ") ..
    ". Pass find_unused_parameters = true if they are meant to be unused in some iterations."
end

function DDP:_reducer_call(what, status)
  if status ~= 0 then
    error("DistributedDataParallel: " .. what .. ": " .. self:_explain(_C.last_error()), 4)
  end
end

function DDP:forward(...)
  local r = self._reducer
  local grad = torch.is_grad_enabled()
  local sync = grad and self.require_backward_grad_sync
  if sync then self:_reducer_call("forward", C.lt_ddp_prepare_forward(r)) end
  if grad then
    local rebuilt = _C.IntOut()
    self:_reducer_call("rebuilding buckets", C.lt_ddp_rebuild_buckets(r, rebuilt))
  end
  if self.broadcast_buffers and self.require_forward_param_sync and #self.module:buffers() > 0 then
    self:_sync_state(true)
  end
  local out = pack(self.module(...))
  if sync then
    rawset(self, "require_forward_param_sync", true)
    local ts = {}
    if self.find_unused_parameters or self.static_graph then ts = collect_tensors(out, {}, {}) end
    local hs = ffi.new("lt_tensor*[?]", math.max(#ts, 1))
    for i, t in ipairs(ts) do hs[i - 1] = t.h end
    self:_reducer_call("forward", C.lt_ddp_prepare_backward(r, hs, #ts))
  else
    rawset(self, "require_forward_param_sync", false)
  end
  return unpack(out, 1, table.maxn(out))
end

-- PyTorch writes loss.backward(); ddp:backward(loss) is the same call, kept for older scripts.
function DDP:backward(loss, ...)
  return loss:backward(...)
end

function DDP:sync_gradients()
  error("DistributedDataParallel: sync_gradients() is gone: loss:backward() after a forward " ..
    "through the DDP module averages the gradients itself (as in PyTorch)", 2)
end

-- Runs fn(...) with gradient synchronization off (gradients accumulate locally); returns fn's results.
function DDP:no_sync(fn, ...)
  if type(fn) ~= "function" then
    error("DistributedDataParallel:no_sync: expected a function (Lua's form of `with ddp.no_sync():`)", 2)
  end
  local prev = self.require_backward_grad_sync
  rawset(self, "require_backward_grad_sync", false)
  local res = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  rawset(self, "require_backward_grad_sync", prev)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, table.maxn(res))
end

--[[ register_comm_hook(state, hook): hook is one of torch.distributed.algorithms.ddp_comm_hooks.
     default_hooks' built-ins; state must be nil (the default group). Before the first backward. ]]
function DDP:register_comm_hook(state, hook)
  if state ~= nil then
    error("DistributedDataParallel:register_comm_hook: state must be nil (the default process group)", 2)
  end
  local name = type(hook) == "table" and rawget(hook, "_builtin_comm_hook")
  if not name then
    error("DistributedDataParallel:register_comm_hook: hooks written in Lua are not supported; use " ..
      "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook, fp16_compress_hook " ..
      "or bf16_compress_hook", 2)
  end
  if C.lt_ddp_register_comm_hook(self._reducer, name) ~= 0 then fail("register_comm_hook", 2) end
end

-- PyTorch's ddp._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS).
function DDP:_register_builtin_comm_hook(kind)
  if C.lt_ddp_register_comm_hook(self._reducer, tostring(kind)) ~= 0 then fail("register_comm_hook", 2) end
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
