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

-- Starts the pool; returns an iterator function over batches.
--   next_indices(): the next batch's index array, nil when the sampler is done (map-style);
--   iterable: true for IterableDatasets (workers produce batches from their own shard).
function M.iterator(opts)
  local memory = require "torch._memory"
  local n = opts.num_workers
  local handle = C.ltw_pool_new(n, ser.dump(opts.config, nil, "worker config"))
  if handle == nil then
    error("DataLoader: cannot start workers: " .. ffi.string(C.ltw_pool_error()), 3)
  end
  local closed = false
  local pool = ffi.gc(handle, function(p) if not closed then closed = true; C.ltw_pool_close(p) end end)
  local function close()
    if not closed then
      closed = true
      ffi.gc(pool, nil)
      C.ltw_pool_close(pool)
    end
  end

  local inflight = {}            -- batch index -> worker
  local next_put, next_get = 0, 0
  local sampler_done = false
  local active, nactive = {}, n  -- iterable mode: workers still producing
  for w = 0, n - 1 do active[w] = true end
  local rr = 0
  local max_inflight = opts.prefetch_factor * n
  local result = ffi.new("ltw_result")
  local timeout = opts.timeout or 0

  local function pick_worker()
    if not opts.iterable then return next_put % n end
    for _ = 1, n do
      local w = rr % n
      rr = rr + 1
      if active[w] then return w end
    end
  end

  local function fill()
    while not sampler_done and next_put - next_get < max_inflight do
      local w = pick_worker()
      if w == nil then sampler_done = true; break end
      local st
      if opts.iterable then
        st = C.ltw_pool_put(pool, w, next_put, nil, -1)
      else
        local idx = opts.next_indices()
        if idx == nil then sampler_done = true; break end
        local buf = ffi.new("int64_t[?]", #idx)
        for i = 1, #idx do buf[i - 1] = idx[i] end
        st = C.ltw_pool_put(pool, w, next_put, buf, #idx)
      end
      if st ~= 0 then close(); error("DataLoader: cannot queue a batch (out of memory)", 0) end
      inflight[next_put] = w
      next_put = next_put + 1
    end
  end

  local function fail(msg)
    close()
    error(msg, 0)
  end

  local function receive(k, w)
    local waited = 0
    while true do
      local st = C.ltw_pool_get(pool, k, w, 100, result)
      if st == M.OK then
        local tensors = {}
        for i = 0, result.ntensors - 1 do
          tensors[i + 1] = memory.wrap(result.tensors[i])
          result.tensors[i] = nil
        end
        local flags, meta = result.flags, ffi.string(result.meta)
        C.ltw_result_clear(result)
        if require("bit").band(flags, M.RESULT_END) ~= 0 then return nil, true end
        return ser.load(meta, tensors)
      elseif st == M.ERROR then
        local msg, from = ffi.string(result.meta), result.worker
        C.ltw_result_clear(result)
        fail(("DataLoader worker %d raised an error (batch %d):\n%s"):format(from, k, msg))
      elseif st == M.DEAD then
        fail(("DataLoader worker %d died unexpectedly: its thread ended without producing batch %d "
          .. "(a crash or pthread_exit in the dataset code?)"):format(w, k))
      end
      waited = waited + 0.1
      check_interrupt()
      if timeout > 0 and waited >= timeout then
        fail(("DataLoader timed out after %g s waiting for batch %d from worker %d"):format(timeout, k, w))
      end
    end
  end

  return function()
    while true do
      if closed then return nil end
      local ok, err = pcall(fill)
      if not ok then close(); error(err, 0) end
      if next_get >= next_put then close(); return nil end
      local k = next_get
      local w = inflight[k]
      local batch, ended = receive(k, w)
      inflight[k] = nil
      next_get = next_get + 1
      if ended then
        active[w] = false
        nactive = nactive - 1
      else
        return batch
      end
    end
  end, close
end

return M
