--[[
  torch.data._pool — the main state's side of DataLoader workers (runtime/workers.c).

  Why: worker threads each own a Lua state (DESIGN.md: nothing calls into a Lua state from a
  thread that does not own it); this module declares the runtime's ltw_* C functions once per
  state and turns the pool into a batch iterator: it hands index lists to workers round robin
  (batch k -> worker k % num_workers, so each worker always sees the same batches and its
  seeded RNG makes the same draws), keeps prefetch_factor * num_workers batches in flight,
  and returns batches strictly in batch order. Tensors arrive as handles (no data copy) and
  are boxed with torch._memory.wrap.

  Failure handling: a worker's Lua error is raised here with the worker's traceback; a worker
  whose thread ended without producing its batch is reported as dead; waits are sliced
  (100 ms) so Ctrl-C and the loader's `timeout` are honoured — never a silent hang. The pool is
  closed when the iterator is exhausted, on any error, and by the GC (ffi.gc) if the loop is
  left early.

  Use (internal, from torch.data.dataloader):
    local it = pool.iterator(loader, batches_iter, config_table)
]]
local ffi = require "ffi"
require "torch._C"   -- declares lt_tensor, which the worker ABI's declarations use
local ser = require "torch.data._serialize"

-- The declarations are runtime/ltorch_workers.h's LTW_CDEF region, embedded in the runtime at
-- build time (cmake/embed_cdef.cmake): one copy of the ABI, as torch._C does for bindings/lt.h.
local registry = debug.getregistry()
if not registry["ltorch.data._pool"] then
  ffi.cdef [[ const char *ltw_cdef_source(void); ]]
  local ok, src = pcall(function() return ffi.C.ltw_cdef_source() end)
  if not ok then
    error("torch.data: DataLoader workers need the ltorch runtime (the `ltorch` executable or " ..
      "libltorch), which this process lacks (no ltw_cdef_source)", 0)
  end
  ffi.cdef(ffi.string(src))
  registry["ltorch.data._pool"] = true
end

local M = {}
local C = ffi.C
M.C = C
M.OK, M.TIMEOUT, M.ERROR, M.DEAD, M.SHUTDOWN = C.LTW_OK, C.LTW_TIMEOUT, C.LTW_ERROR, C.LTW_DEAD, C.LTW_SHUTDOWN
M.RESULT_ERROR, M.RESULT_END = C.LTW_RESULT_ERROR, C.LTW_RESULT_END

local function check_interrupt()
  local L = rawget(_G, "_LTORCH")
  if L and L.check_interrupt then L.check_interrupt() end
end

--[[ The iterator's state, one table `P`: the pool handle and whether it is closed, the batches in
     flight (batch index -> worker), the next batch to queue and to return, whether the sampler
     is done, which workers still produce (iterable mode), and the result slot. ]]

-- Closes the pool once (also what the GC does if the loop is left early).
local function close(P)
  if not P.closed then
    P.closed = true
    ffi.gc(P.pool, nil)
    C.ltw_pool_close(P.pool)
  end
end

local function fail(P, msg)
  close(P)
  error(msg, 0)
end

-- The worker for the next batch: round robin by batch index, or (iterable) the next active one.
local function pick_worker(P)
  local n = P.n
  if not P.opts.iterable then return P.next_put % n end
  for _ = 1, n do
    local w = P.rr % n
    P.rr = P.rr + 1
    if P.active[w] then return w end
  end
end

-- Queues batches until prefetch_factor * num_workers are in flight or the sampler is done.
local function fill(P)
  local opts = P.opts
  while not P.sampler_done and P.next_put - P.next_get < P.max_inflight do
    local w = pick_worker(P)
    if w == nil then P.sampler_done = true; break end
    local st
    if opts.iterable then
      st = C.ltw_pool_put(P.pool, w, P.next_put, nil, -1)
    else
      local idx = opts.next_indices()
      if idx == nil then P.sampler_done = true; break end
      local buf = ffi.new("int64_t[?]", #idx)
      for i = 1, #idx do buf[i - 1] = idx[i] end
      st = C.ltw_pool_put(P.pool, w, P.next_put, buf, #idx)
    end
    if st ~= 0 then close(P); error("DataLoader: cannot queue a batch (out of memory)", 0) end
    P.inflight[P.next_put] = w
    P.next_put = P.next_put + 1
  end
end

-- A batch that arrived: its tensors boxed, its other values deserialized; nil, true at a
-- worker's end of data (iterable mode).
local function unpack_result(result)
  local memory = require "torch._memory"
  local tensors = {}
  for i = 0, result.ntensors - 1 do
    tensors[i + 1] = memory.wrap(result.tensors[i])
    result.tensors[i] = nil
  end
  local flags, meta = result.flags, ffi.string(result.meta)
  C.ltw_result_clear(result)
  if require("bit").band(flags, M.RESULT_END) ~= 0 then return nil, true end
  return ser.load(meta, tensors)
end

-- Waits for batch k from worker w in 100 ms slices (Ctrl-C and the timeout are checked between).
local function receive(P, k, w)
  local waited, result, timeout = 0, P.result, P.timeout
  while true do
    local st = C.ltw_pool_get(P.pool, k, w, 100, result)
    if st == M.OK then
      return unpack_result(result)
    elseif st == M.ERROR then
      local msg, from = ffi.string(result.meta), result.worker
      C.ltw_result_clear(result)
      fail(P, ("DataLoader worker %d raised an error (batch %d):\n%s"):format(from, k, msg))
    elseif st == M.DEAD then
      fail(P, ("DataLoader worker %d died unexpectedly: its thread ended without producing batch %d "
        .. "(a crash or pthread_exit in the dataset code?)"):format(w, k))
    end
    waited = waited + 0.1
    check_interrupt()
    if timeout > 0 and waited >= timeout then
      fail(P, ("DataLoader timed out after %g s waiting for batch %d from worker %d"):format(timeout, k, w))
    end
  end
end

-- The next batch in batch order, nil when every batch has been returned.
local function next_batch(P)
  while true do
    if P.closed then return nil end
    local ok, err = pcall(fill, P)
    if not ok then close(P); error(err, 0) end
    if P.next_get >= P.next_put then close(P); return nil end
    local k = P.next_get
    local w = P.inflight[k]
    local batch, ended = receive(P, k, w)
    P.inflight[k] = nil
    P.next_get = P.next_get + 1
    if ended then
      P.active[w] = false
      P.nactive = P.nactive - 1
    else
      return batch
    end
  end
end

-- Starts the pool; returns an iterator function over batches.
--   next_indices(): the next batch's index array, nil when the sampler is done (map-style);
--   iterable: true for IterableDatasets (workers produce batches from their own shard).
function M.iterator(opts)
  local n = opts.num_workers
  local handle = C.ltw_pool_new(n, ser.dump(opts.config, nil, "worker config"))
  if handle == nil then
    error("DataLoader: cannot start workers: " .. ffi.string(C.ltw_pool_error()), 3)
  end
  local P = { opts = opts, n = n, closed = false, inflight = {}, next_put = 0, next_get = 0,
    sampler_done = false, active = {}, nactive = n, rr = 0, max_inflight = opts.prefetch_factor * n,
    result = ffi.new("ltw_result"), timeout = opts.timeout or 0 }
  for w = 0, n - 1 do P.active[w] = true end
  P.pool = ffi.gc(handle, function(p) if not P.closed then P.closed = true; C.ltw_pool_close(p) end end)
  return function() return next_batch(P) end, function() close(P) end
end

return M
