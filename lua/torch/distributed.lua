--[[
  torch.distributed — PyTorch's torch.distributed for ltorch: one process per rank, a default
  process group over libtorch's c10d (Gloo on CPU; NCCL when this build has it), and the
  collectives data-parallel training needs. Every collective is synchronous (NCCL's in CUDA
  stream order, as PyTorch's: the host does not wait for the GPU) and bounded by the group's
  timeout: a peer that died or never arrives becomes a Lua error, never a hang.

      local dist = require "torch.distributed"          -- also torch.distributed
      dist.init_process_group{backend = "gloo"}          -- init_method "env://": RANK, WORLD_SIZE,
                                                         -- MASTER_ADDR, MASTER_PORT (tools/run.lua)
      local t = torch.ones(3) * (dist.get_rank() + 1)
      dist.all_reduce(t)                    -- in place; {op = "sum"|"avg"|"max"|"min"|"product"}
      dist.broadcast(t, 0)                  -- from rank 0, in place
      local parts = {}; dist.all_gather(parts, t)   -- parts[1..world_size], rank order
      dist.barrier()
      dist.destroy_process_group()

  init_process_group{backend=, init_method=, rank=, world_size=, timeout=, device_id=}:
    backend      "gloo" (default) | "nccl" (needs a CUDA libtorch built with NCCL)
    init_method  "env://" (default) | "tcp://host:port" | "file:///path/to/shared/file"
    rank, world_size  default to $RANK / $WORLD_SIZE (env:// requires them somewhere)
    timeout      seconds for rendezvous and for every collective (default 1800, as PyTorch's)
    device_id    the one device this rank uses ("cuda:N", a device, or N): the group is bound to
                 it and NCCL connects at once (PyTorch's eager init); checked as PyTorch checks it
  Rank 0 hosts the TCPStore for env:// and tcp://. Gloo binds to 127.0.0.1 when the master
  address is a loopback one, to $GLOO_SOCKET_IFNAME when set, else to this host's name.

  Reduce ops: Gloo has no AVG, so "avg" is a sum divided by world_size (floating tensors only).
  Tensors may be non-contiguous (they are reduced through a contiguous copy). Dims 0-based.
]]
local ffi = require "ffi"
local torch = require "torch"
local _C = require "torch._C"
local T = require "torch._tensor"
local memory = require "torch._memory"
local device_mod = require "torch.device"
local backends = require "torch.backends"

local C, check = _C.C, _C.check

local M = {}

M.ReduceOp = { SUM = "sum", PRODUCT = "product", MIN = "min", MAX = "max", AVG = "avg" }
local op_codes = { sum = 0, product = 1, min = 2, max = 3, avg = 4 }

local DEFAULT_TIMEOUT = 1800

-- The default group, kept per Lua state across module reloads (busted reloads modules).
local state = _C.state.distributed or { generation = 0 }
_C.state.distributed = state

local function fail(fname, level)
  error(("torch.distributed.%s: %s"):format(fname, _C.last_error()), (level or 1) + 1)
end

function M.is_available() return true end

function M.is_backend_available(name)
  local out = _C.IntOut()
  check(C.lt_dist_has_backend(tostring(name), out), "torch.distributed.is_backend_available")
  return out[0] == 1
end
function M.is_gloo_available() return M.is_backend_available("gloo") end
function M.is_nccl_available() return M.is_backend_available("nccl") end
function M.is_initialized() return state.pg ~= nil end

local function is_loopback(host)
  return host == "localhost" or host:match("^127%.") ~= nil or host == "::1"
end

local function int_arg(fname, name, v)
  local n = tonumber(v)
  if n == nil or n ~= math.floor(n) then
    error(("torch.distributed.%s: %s must be an integer, got %s"):format(fname, name, tostring(v)), 3)
  end
  return n
end

local function new_tcp_store(host, port, rank, world_size, timeout_ms)
  local out = ffi.new("lt_store*[1]")
  if C.lt_dist_store_tcp(out, host, port, rank == 0 and 1 or 0, world_size, timeout_ms) ~= 0 then
    error(("torch.distributed.init_process_group: cannot rendezvous at tcp://%s:%d as rank %d of %d: %s")
      :format(host, port, rank, world_size, _C.last_error()), 3)
  end
  return ffi.gc(out[0], C.lt_dist_store_free)
end

--[[ init_process_group's device_id checked as PyTorch checks it: an integer is an index of the
     build's accelerator (CUDA); an accelerator device needs an index within the devices seen. ]]
local function bound_device(v)
  local cuda_built = backends.build_info().built
  if type(v) == "number" and not cuda_built then
    error("torch.distributed.init_process_group: device_id is an int, but no accelerator support is found from " ..
      "the current compilation. Please use a different compiled version that supports your accelerator.", 3)
  end
  local d = device_mod.resolve(v, "init_process_group", 3)
  if d.type == "cpu" then return d end
  if d.type ~= "cuda" or not cuda_built then
    error(("torch.distributed.init_process_group: device_id %s does not match the current compilation's " ..
      "accelerator support. Please use a different compiled version that supports your accelerator."):format(tostring(d)), 3)
  end
  if d.index == nil then error("torch.distributed.init_process_group: Please use a device_id with index.", 3) end
  local n = device_mod.cuda.device_count()
  if d.index >= n then
    error(("torch.distributed.init_process_group: device_id %s is out of range. Please use a device index less " ..
      "than the number of accelerators available: %d."):format(tostring(d), n), 3)
  end
  return d
end

-- Binds a new group to its device_id (NCCL connects now); on failure the group is freed.
local function bind(pg, device_id)
  if device_id == nil or device_id.type == "cpu" then return end
  local t, i = device_mod.codes(device_id)
  if C.lt_dist_pg_bind_device(pg, t, i) ~= 0 then
    local err = _C.last_error()
    C.lt_dist_pg_free(ffi.gc(pg, nil))
    error(("torch.distributed.init_process_group: cannot bind the group to %s: %s"):format(tostring(device_id), err), 3)
  end
end

--[[ init_process_group{backend="gloo", init_method="env://", rank=, world_size=, timeout=1800, device_id=}
     Also init_process_group("gloo", {...}) as PyTorch's positional backend. ]]
function M.init_process_group(backend, opts)
  if type(backend) == "table" then opts, backend = backend, backend.backend end
  opts = opts or {}
  backend = backend or opts.backend or "gloo"
  if state.pg ~= nil then
    error("torch.distributed.init_process_group: the default process group is already initialized " ..
      "(call destroy_process_group first)", 2)
  end
  local fname = "init_process_group"
  local init = opts.init_method or "env://"
  local rank = opts.rank or os.getenv("RANK")
  local world_size = opts.world_size or os.getenv("WORLD_SIZE")
  if rank == nil or world_size == nil then
    error("torch.distributed.init_process_group: rank and world_size are needed (pass them, or set " ..
      "RANK and WORLD_SIZE, as tools/run.lua does)", 2)
  end
  rank, world_size = int_arg(fname, "rank", rank), int_arg(fname, "world_size", world_size)
  if world_size < 1 or rank < 0 or rank >= world_size then
    error(("torch.distributed.init_process_group: rank %d out of range for world_size %d"):format(rank, world_size), 2)
  end
  local device_id = opts.device_id ~= nil and bound_device(opts.device_id) or nil
  local timeout = opts.timeout or DEFAULT_TIMEOUT
  if type(timeout) ~= "number" or timeout <= 0 then
    error("torch.distributed.init_process_group: timeout must be a positive number of seconds", 2)
  end
  local timeout_ms = math.max(1, math.floor(timeout * 1000))

  local store, host
  if init == "env://" then
    host = os.getenv("MASTER_ADDR")
    local port = os.getenv("MASTER_PORT")
    if not host or not port then
      error("torch.distributed.init_process_group: env:// needs MASTER_ADDR and MASTER_PORT in the " ..
        "environment (tools/run.lua sets them), or use init_method = 'tcp://host:port'", 2)
    end
    store = new_tcp_store(host, int_arg(fname, "MASTER_PORT", port), rank, world_size, timeout_ms)
  elseif init:match("^tcp://") then
    local h, port = init:match("^tcp://%[?([^%]]-)%]?:(%d+)/?$")
    if not h then error("torch.distributed.init_process_group: bad init_method '" .. init .. "' (tcp://host:port)", 2) end
    host = h
    store = new_tcp_store(host, tonumber(port), rank, world_size, timeout_ms)
  elseif init:match("^file://") then
    local path = init:sub(8)
    if path == "" then error("torch.distributed.init_process_group: bad init_method '" .. init .. "' (file:///path)", 2) end
    local out = ffi.new("lt_store*[1]")
    if C.lt_dist_store_file(out, path, world_size, timeout_ms) ~= 0 then fail(fname, 2) end
    store = ffi.gc(out[0], C.lt_dist_store_free)
    host = "127.0.0.1"   -- a file store is shared by processes on one machine (or a shared FS)
    if os.getenv("MASTER_ADDR") and not is_loopback(os.getenv("MASTER_ADDR")) then host = "" end
  else
    error("torch.distributed.init_process_group: unknown init_method '" .. tostring(init) ..
      "' (env://, tcp://host:port or file:///path)", 2)
  end

  -- Each group gets its own key space: a process that re-initializes never reads stale keys.
  state.generation = state.generation + 1
  local pout = ffi.new("lt_store*[1]")
  if C.lt_dist_store_prefix(pout, "default_pg/" .. state.generation .. "/", store) ~= 0 then fail(fname, 2) end
  local prefixed = ffi.gc(pout[0], C.lt_dist_store_free)

  local iface = os.getenv("GLOO_SOCKET_IFNAME") or ""
  local gloo_host = ""
  if iface == "" and host and is_loopback(host) then gloo_host = "127.0.0.1" end
  local gout = ffi.new("lt_process_group*[1]")
  if C.lt_dist_pg_new(gout, prefixed, backend, rank, world_size, timeout_ms, gloo_host, iface) ~= 0 then
    error(("torch.distributed.init_process_group: cannot create the %s group (rank %d of %d): %s")
      :format(backend, rank, world_size, _C.last_error()), 2)
  end
  local pg = ffi.gc(gout[0], C.lt_dist_pg_free)
  bind(pg, device_id)
  state.pg, state.device_id = pg, device_id
  state.store, state.prefixed = store, prefixed
  state.backend, state.rank, state.world_size, state.timeout = backend, rank, world_size, timeout
end

function M.destroy_process_group()
  if state.pg == nil then return end
  local pg = state.pg
  state.pg = nil
  C.lt_dist_pg_free(ffi.gc(pg, nil))
  state.prefixed, state.store = nil, nil
  state.backend, state.rank, state.world_size = nil, nil, nil
end

local function group(fname)
  local pg = state.pg
  if pg == nil then
    error(("torch.distributed.%s: the default process group is not initialized (call init_process_group)")
      :format(fname), 3)
  end
  return pg
end

function M.get_rank() if state.pg == nil then return 0 end return state.rank end
function M.get_world_size() if state.pg == nil then return 1 end return state.world_size end
function M.get_backend() group("get_backend"); return state.backend end

local function tensor_arg(fname, t)
  return T.handle("torch.distributed." .. fname, 1, t)
end

--[[ all_reduce(t, {op="sum"}) or all_reduce(t, "avg") / dist.ReduceOp.MAX: in place on every rank.
     Returns t. ]]
function M.all_reduce(t, opts)
  local pg = group("all_reduce")
  local h = tensor_arg("all_reduce", t)
  local op = type(opts) == "table" and opts.op or opts or "sum"
  op = type(op) == "string" and op:lower() or op
  local code = op_codes[op]
  if code == nil then
    error(("torch.distributed.all_reduce: unknown op '%s' (sum, avg, max, min, product)"):format(tostring(op)), 2)
  end
  if op == "avg" and state.backend ~= "nccl" then
    if not t.dtype.is_floating_point then
      error("torch.distributed.all_reduce: op 'avg' needs a floating-point tensor, got " .. tostring(t.dtype), 2)
    end
    if C.lt_dist_all_reduce(pg, h, 0) ~= 0 then fail("all_reduce", 2) end
    if state.world_size > 1 then
      torch.no_grad(function() t:div_(state.world_size) end)
    end
    return t
  end
  if C.lt_dist_all_reduce(pg, h, code) ~= 0 then fail("all_reduce", 2) end
  return t
end

-- broadcast(t, src) or broadcast(t, {src=}): in place; every rank ends with src's values.
function M.broadcast(t, src)
  local pg = group("broadcast")
  local h = tensor_arg("broadcast", t)
  if type(src) == "table" then src = src.src end
  src = src or 0
  if C.lt_dist_broadcast(pg, h, int_arg("broadcast", "src", src)) ~= 0 then fail("broadcast", 2) end
  return t
end

--[[ all_gather(list, t): list[1..world_size] = every rank's t, in rank order. Tensors already in
     the list are filled in place (PyTorch's preallocated outputs); missing ones are created. ]]
function M.all_gather(list, t)
  local pg = group("all_gather")
  if type(list) ~= "table" then error("torch.distributed.all_gather: expected a table for the outputs", 2) end
  local h = tensor_arg("all_gather", t)
  local n = state.world_size
  local outs = ffi.new("lt_tensor*[?]", n)
  if C.lt_dist_all_gather(pg, outs, n, h) ~= 0 then fail("all_gather", 2) end
  local got = {}
  for i = 0, n - 1 do got[i + 1] = memory.wrap(outs[i]) end
  for i = 1, n do
    if T.is_tensor(list[i]) then
      local dst = list[i]
      torch.no_grad(function() dst:copy_(got[i]:view_as(dst)) end)
    else
      list[i] = got[i]
    end
  end
  return list
end

function M.barrier()
  local pg = group("barrier")
  if C.lt_dist_barrier(pg) ~= 0 then fail("barrier", 2) end
end

--[[ DDP's communication hooks (register_comm_hook's second argument), PyTorch's names:
     torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook etc. They name
     c10d's built-in C++ hooks; hooks written in Lua are not supported. ]]
local function builtin_hook(name) return setmetatable({ _builtin_comm_hook = name }, {
  __tostring = function() return "comm hook " .. name end,
  __call = function() error("comm hooks are registered with ddp:register_comm_hook(nil, hook), not called", 2) end,
}) end
M.algorithms = { ddp_comm_hooks = { default_hooks = {
  allreduce_hook = builtin_hook("allreduce"),
  fp16_compress_hook = builtin_hook("fp16_compress"),
  bf16_compress_hook = builtin_hook("bf16_compress"),
} } }
M.BuiltinCommHookType = { ALLREDUCE = "allreduce", FP16_COMPRESS = "fp16_compress" }

-- torch.distributed.optim.ZeroRedundancyOptimizer (lua/torch/distributed/zero.lua), loaded on use.
M.optim = setmetatable({}, { __index = function(t, k)
  if k ~= "ZeroRedundancyOptimizer" then return nil end
  local v = require("torch.distributed.zero").ZeroRedundancyOptimizer
  rawset(t, k, v)
  return v
end })

-- The raw group handle, for torch.nn.parallel (internal).
function M._group() return group("_group") end

return M
