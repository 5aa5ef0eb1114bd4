--[[
  torch._memory — how tensor handles live and die on the Lua side.

  Every C result handle goes through `wrap`, which boxes it in an lt_tensor_ref cdata and does
  three cheap things:
    * slot ownership instead of a finalizer per tensor: the handle is also stored in a slot of
      this Lua state's slab (C arrays of handles, bindings/lt_slab.cpp, beside a weak-valued
      table of the refs).
      The ref type has no __gc, so creating and collecting a tensor costs LuaJIT no finalizer
      registration, lookup or extra cycle. One sentinel userdata per GC cycle has a __gc; when
      it runs, a cycle has finished and the collector has cleared the weak entries of every
      ref it freed, so the next wrap (or torch.collect) sweeps the slab: each slot whose ref is
      gone is marked by a JIT-compiled loop, and one C call releases their handles and puts
      the slots back on the free stack, lowest first, lowering the slab's top past a dead
      burst's slots (so later sweeps and collections do not keep walking them). After a small-op
      loop's cycle the handles are queued instead and released one per new result (sweep_slots
      says when and why). At lua_close,
      LuaJIT runs cdata finalizers before userdata ones, so a host's ffi.gc finalizer still
      sees valid tensors; then the slab's closer (a userdata)
      releases every handle still held and nulls those refs, so a userdata finalizer that runs
      after it gets "tensor was freed", not freed memory.
    * pressure-driven collection: the Lua GC cannot see tensor bytes, so wrap reads the live
      byte counter that the bindings' CPU allocator keeps (a struct field, no call) and, after
      N new handles or whenever tensor memory grew by 64 MiB, tells the collector what it cannot
      see with collectgarbage("step", kb): the bytes allocated since the last step plus ~512
      bytes of C++ bookkeeping per handle. A loop that drops its temporaries keeps a flat RSS.
      N is Lua's own pause rule (a cycle once the heap has doubled) applied to that bookkeeping:
      as many handles as make the Lua heap's size in C++ bytes, at most 65536 (more outgrow the
      CPU's cache between two sweeps), at least 8192. A step that size finishes a cycle, which marks
      the whole heap: a fixed N made every tensor pay more as the heap grew (docs/PERFORMANCE.md,
      optimisation 15), and under 8,192 the cycles were most of a small op's cost over C++ (34).
      A result that carries an autograd node (mem.graph_results, counted by the bindings) holds
      ~2 KB more that no counter shows: the node, its saved tensors' bookkeeping, and the
      intermediates an owner released that the node still saves. Each weighs GRAPH_COST in the
      step, and N / GRAPH_HANDLES of them since the last step or finished cycle (which freed
      those dropped before it) trigger one (docs/PERFORMANCE.md, 38).
    * device memory (any non-CPU device) is not the CPU allocator's, and a handle's size says
      little about it (a view, a `p.grad` read or a re-wrapped tensor owns no new memory). The
      rule: (1) an estimate, kept by the bindings without a call from Lua
      (mem.device_bytes_made, lt_allocator.cpp note_device_result), adds a non-CPU result's
      storage bytes only when its TensorImpl is not shared (a .grad read, a re-wrap or an input
      returned as is adds nothing) and its storage was not already counted in the current
      window (a view of it adds nothing; an output that autograd also saves, a second
      TensorImpl on the same storage, is counted once). The estimate may over-count (a view of
      a storage counted in an earlier window) but never misses a fresh allocation. (2) When it
      has grown 64 MiB, or at the N-handle step, Lua polls what libtorch's device allocators
      really hold (lt_device_memory_poll: c10::DeviceAllocator's allocated bytes, summed over
      the devices results came from; this also starts a new window) and steps the collector by
      the allocated bytes' growth since the last step: an estimate that crossed its threshold
      through views alone costs one poll, not a collection. A device whose allocator keeps no
      statistics is stepped by the estimate. CPU results never reach this code: the bindings'
      wrap tests is_cpu() before anything, and Lua's wrap reads two struct fields (no call).
    * out of memory on any device (status LT_ERR_MEMORY: c10::OutOfMemoryError from CUDA's
      caching allocator or from ltorch's CPU allocator, including its fault injection): the
      call sites below run M.reclaim() (full collections, the slab swept, the CPU block caches
      and every device allocator's cache emptied) and retry the call once; a second failure
      raises libtorch's message. The call sites that retry: the generic dispatcher
      (torch._dispatch's call, every op without a hand-written path, except those that write
      their arguments: in-place and out= ops may have written part before failing), the
      out-of-place unary and binary fast paths (torch._ops_math) and matmul/mm/bmm/outer/dot
      (torch._ops_reduce). backward does not retry: the engine may have accumulated part of
      the gradients into .grad before failing, and a second run would add them twice; the ops
      a custom autograd Function runs in backward retry as above.
    * GC cycles: the sentinel counts finished cycles (torch.memory_stats().gc_cycles), which
      bench/ reports per training step.
    * scopes: inside torch.scope(fn) (torch._scope) every new handle is recorded in its list,
      and released when fn returns, except the tensors fn returns.
  x:free() releases a handle at once; the cdata stays, and any later use is a clear error.

  Foreign memory wrapped without a copy (torch.from_buffer over a cdata buffer) keeps its owner
  referenced here until libtorch reports (through the bindings' release queue) that the last
  tensor using it is gone.

  Usage (internal):  local memory = require "torch._memory"; return memory.wrap(out[0])
  Public:            x:free(), torch.memory_stats() (torch.scope: torch._scope)
]]
local ffi = require "ffi"
local _C = require "torch._C"
local C, Ref = _C.C, _C.Ref

local M = {}

local mem = C.lt_memory()
local collectgarbage = collectgarbage

local STEP_HANDLES = 8192              -- the fewest new handles between two steps (see the header)
local STEP_HANDLES_MAX = 65536         -- the most (~32 MiB of bookkeeping, under STEP_BYTES)
local STEP_BYTES = 64 * 1024 * 1024
local HANDLE_COST = 512
local GRAPH_COST = 2048                -- C++ bytes a graph result holds beyond its handle's
local GRAPH_HANDLES = GRAPH_COST / HANDLE_COST
local PENDING_RATIO = 1                -- dropped handles' C++ bytes per byte of Lua heap

local handles_since_step = 0
local step_handles = STEP_HANDLES      -- N of the header: set after each step
local bytes_at_step = tonumber(mem.live_bytes)
local next_byte_trigger = bytes_at_step + STEP_BYTES
local graphs_at_step, next_graph_trigger
-- Counts graph results anew from `graphs` (mem.graph_results at a step or a finished cycle).
local function count_graphs_from(graphs)
  graphs_at_step = graphs
  next_graph_trigger = graphs + step_handles / GRAPH_HANDLES
end
count_graphs_from(tonumber(mem.graph_results))
-- GPU results: their bytes are not the CPU allocator's, so a running total of them made since
-- the last step (mem.device_bytes_made) triggers and sizes steps the same way.
local device_at_step = tonumber(mem.device_bytes_made)
local next_device_trigger = device_at_step + STEP_BYTES
-- What the device allocators held after the last step (lt_device_memory_poll), -1 until a poll.
local device_allocated_at_step = -1
local active_scope = nil

-- Kept in the registry so a module reload (busted) never drops an owner still in use.
local blob_owners = _C.state.blob_owners or {}
_C.state.blob_owners = blob_owners
local drained = ffi.new("int64_t[64]")
local drained_count = ffi.new("int[1]")

local function drain_blobs()
  repeat
    -- only this state's ids (see torch._C): other states drain their own
    C.lt_drain_released_blobs(_C.state.blob_id_lo, _C.state.blob_id_hi, drained, 64, drained_count)
    for i = 0, drained_count[0] - 1 do blob_owners[tonumber(drained[i])] = nil end
  until drained_count[0] < 64
end

--[[ The slab: kept in the registry (through torch._C's state) so a module reload (busted) keeps
     one slab per Lua state, with one guard against a sweep inside a sweep. The handles, the
     counts and the free stack are C's (struct lt_slab, bindings/lt_slab.cpp): in the
     interpreter, reading a pointer out of an FFI array boxes it, and that allocation can run
     finalizers that make or free tensors; so Lua never reads the arrays (only the counts, which
     are numbers) and changes them only through calls that run no Lua. `live[slot]` is the ref
     of the slot's handle, weak, so the collector clears it when the ref dies. Slots are 1-based;
     slot 0 in a ref means "not in the slab". ]]
local table_new = require "table.new"
local WEAK_VALUES = { __mode = "v" }

local slab = _C.state.slab
if not slab then
  slab = { s = ffi.new("lt_slab"), live = setmetatable({}, WEAK_VALUES), live_capacity = 0,
           pending = false, sweeping = false }
  _C.state.slab = slab
  -- One finalizable sentinel per GC cycle: its __gc marks the cycle's end and makes the next one.
  local function arm()
    local sentinel = newproxy(true)
    getmetatable(sentinel).__gc = function()
      slab.pending = true
      slab.cycles = (slab.cycles or 0) + 1
      arm()
    end
  end
  arm()
  -- At lua_close: null the refs still alive (a later use says "tensor was freed"), then release
  -- every handle still held. A ref in live[i] is the latest one of slot i; above `top` only
  -- refs already freed can remain.
  slab.closer = newproxy(true)
  getmetatable(slab.closer).__gc = function()
    local live = slab.live
    for i = 1, slab.s.top do
      local t = live[i]
      if t ~= nil then t.h = nil end
    end
    C.lt_slab_close(slab.s)
  end
end
local S = slab.s

--[[ After a sweep has moved the C arrays to a smaller size (a burst of tensors has died), the
     table of live refs follows: a weak table's array part is walked by every collection cycle,
     and LuaJIT never shrinks one. Allocating the new table may run finalizers (which may make
     tensors and grow the slab again): the copy starts after it, reads the slab as it is then,
     and gives up if the slots no longer fit (the next sweep tries again). ]]
local function shrink_live()
  local capacity = S.capacity
  local fresh = setmetatable(table_new(capacity + 1, 0), WEAK_VALUES)
  local top = S.top
  if top > capacity or S.capacity ~= capacity then return end
  local live = slab.live
  for i = 1, top do fresh[i] = live[i] end   -- presized array part: no allocation here
  slab.live, slab.live_capacity = fresh, capacity
end

--[[ Releases the handles of the refs the collector has freed: marks their slots, then one C call
     releases them, lowers `top` past the free slots at the end (a dead burst's), and rebuilds the
     free stack lowest slot first, so the slab refills from the bottom. If a finalizer runs during
     the marking and makes a tensor, its claim clears the mark of the slot it takes; a sweep that
     starts inside another returns at once (the outer one finishes the job).
     With `later`, the C call queues the dead handles instead, and each new result's store
     releases one of them (bindings/lt_slab.cpp says why): wrap asks for that only when the
     tensors made since the last step were small ones (at most DEFER_BYTES_PER_HANDLE each on
     average, DEFER_MAX_BYTES in all), so what waits in the queue is a small-op loop's garbage,
     never a forward's activations or big results. Every other sweep (torch.collect, the
     collection before backward, out of memory) releases the queue too. ]]
local DEFER_BYTES_PER_HANDLE = 1024
local DEFER_MAX_BYTES = 16 * 1024 * 1024

local function sweep_slots(later)
  slab.pending = false
  count_graphs_from(tonumber(mem.graph_results))   -- the cycle freed the graphs dropped before it
  if S.capacity > slab.live_capacity then slab.live_capacity = S.capacity end
  local live = slab.live
  for i = 1, S.top do
    if live[i] == nil then C.lt_slab_mark_dead(S, i) end
  end
  if later then C.lt_slab_sweep_later(S) else C.lt_slab_sweep(S) end
  if S.capacity < slab.live_capacity then shrink_live() end
end

local function sweep(later)
  if slab.sweeping then return end
  slab.sweeping = true
  local ok, err = pcall(sweep_slots, later)   -- a finalizer's error must not leave `sweeping` set
  slab.sweeping = false
  if not ok then error(err, 0) end
end

-- True when the tensor memory made since the last step, `grown` bytes, came in small tensors:
-- a sweep may queue (see above).
local function small_growth(grown)
  return grown < DEFER_MAX_BYTES and grown <= (handles_since_step + 1) * DEFER_BYTES_PER_HANDLE
end

-- The tensor memory made since the last step (CPU live bytes and the device estimate).
local function growth_since_step()
  local cpu = tonumber(mem.live_bytes) - bytes_at_step
  local device = tonumber(mem.device_bytes_made) - device_at_step
  return (cpu > 0 and cpu or 0) + (device > 0 and device or 0)
end

-- True while account() runs a collection step. The step can run finalizers, a finalizer can make
-- tensors, and their wrap would step again from inside the first step: LuaJIT lets an explicit
-- step run inside a finalizer, so under heavy finalizer use the steps nested without bound and
-- overflowed the C stack (a segfault). A nested account() skips the step; the outer one, or the
-- next, does the work.
local stepping = false

-- The growth of device memory since the last step, by the rule in the header: the allocators'
-- allocated bytes when they report them, else the estimate. Returns it and the polled value.
local function device_growth(device_made)
  if device_made == device_at_step then return 0, nil end   -- no non-CPU result since
  local allocated = tonumber(C.lt_device_memory_poll())
  if allocated < 0 then return device_made - device_at_step, nil end
  if device_allocated_at_step < 0 then device_allocated_at_step = 0 end
  local grown = allocated - device_allocated_at_step
  return grown > 0 and grown or 0, allocated
end

local function account(device_trigger)
  local live = tonumber(mem.live_bytes)
  local grown = live - bytes_at_step
  if grown < 0 then grown = 0 end
  local device_made = tonumber(mem.device_bytes_made)
  local device_grown, polled = device_growth(device_made)
  -- the device estimate alone crossed its threshold but the allocators did not grow as much
  -- (views, shared storages): no step; the next threshold is one more STEP_BYTES of estimate
  if device_trigger and polled and device_grown < STEP_BYTES then
    next_device_trigger = device_made + STEP_BYTES
    device_at_step = device_made
    return
  end
  grown = grown + device_grown
  local graphs = tonumber(mem.graph_results)
  if not stepping then
    stepping = true
    local bookkeeping = handles_since_step * HANDLE_COST + (graphs - graphs_at_step) * GRAPH_COST
    local ok, err = pcall(collectgarbage, "step", (grown + bookkeeping) / 1024)
    stepping = false
    if not ok then error(err, 0) end
  end
  if slab.pending then sweep(small_growth(grown)) end
  live = tonumber(mem.live_bytes)
  handles_since_step, bytes_at_step = 0, live
  next_byte_trigger = live + STEP_BYTES
  device_at_step = tonumber(mem.device_bytes_made)
  next_device_trigger = device_at_step + STEP_BYTES
  if polled then device_allocated_at_step = tonumber(C.lt_device_memory_poll()) end
  local n = math.floor(collectgarbage("count") * 1024 * PENDING_RATIO / HANDLE_COST)
  step_handles = math.min(math.max(n, STEP_HANDLES), STEP_HANDLES_MAX)
  count_graphs_from(graphs)
  if next(blob_owners) ~= nil then drain_blobs() end
end

-- Boxes a handle returned by the bindings. A NULL handle (an undefined tensor) becomes nil.
local function wrap(h)
  if h == nil then return nil end
  -- The slot is claimed before anything that can allocate (and so run a finalizer that makes
  -- tensors or sweeps), and the handle is stored only once its ref is in `live`: a sweep in
  -- between neither reuses the slot nor frees the handle.
  local slot = C.lt_slab_claim(S)
  if slot == 0 then
    C.lt_tensor_free(h)
    error("out of memory: no room for another tensor handle", 2)
  end
  local t = Ref(h, slot)
  slab.live[slot] = t
  C.lt_slab_store(S, slot, h)
  handles_since_step = handles_since_step + 1
  if handles_since_step >= step_handles or mem.live_bytes > next_byte_trigger
      or mem.graph_results > next_graph_trigger then
    account(false)
  elseif mem.device_bytes_made > next_device_trigger then
    account(true)
  elseif slab.pending then
    sweep(small_growth(growth_since_step()))
  end
  if active_scope then active_scope[#active_scope + 1] = t end
  return t
end
M.wrap = wrap

-- Releases a tensor's handle now (idempotent). Other tensors sharing its storage are unaffected.
-- A handle released here is no garbage for the collector to find, so it no longer counts toward
-- the next collection step: loops that release what they make (x:free(), torch.scope) then run
-- the collector only for their Lua garbage.
function M.free(t)
  local h = t.h
  if h ~= nil then
    t.h = nil
    if handles_since_step > 0 then handles_since_step = handles_since_step - 1 end
    C.lt_slab_release(S, t.slot, h)   -- frees the slot if it still holds h, and releases h
  end
end

-- Makes `list` the list that records each new handle (torch._scope's torch.scope; nil: none);
-- returns the list it replaces.
function M.swap_scope(list)
  local previous = active_scope
  active_scope = list
  return previous
end

-- Registers the owner of foreign memory; returns the id to hand to lt_from_blob.
function M.hold_blob(owner)
  local id = (_C.state.next_blob_id or 0) + 1
  _C.state.next_blob_id = id
  blob_owners[id] = owner
  return id
end

function M.stats()
  C.lt_slab_drain(S)   -- queued handles are dead: their bytes are not live
  drain_blobs()
  return {
    live_handles = S.top - S.nfree,
    live_bytes = tonumber(mem.live_bytes),
    peak_bytes = tonumber(mem.peak_bytes),
    allocations = tonumber(mem.allocations),
    cached_bytes = tonumber(C.lt_large_blocks_cached()),          -- freed blocks of 32 KiB+ kept mapped
    cached_small_bytes = tonumber(C.lt_small_blocks_cached()),   -- freed blocks of <= 1 KiB this thread keeps
    device_bytes_made = tonumber(mem.device_bytes_made),   -- estimate of device memory made (a total)
    graph_results = tonumber(mem.graph_results),   -- results made that carry an autograd node (a total)
    gc_cycles = slab.cycles or 0,   -- Lua GC cycles finished so far (the slab's sentinel)
    held_buffers = (function() local n = 0 for _ in pairs(blob_owners) do n = n + 1 end return n end)(),
  }
end

-- A full collection plus a drain of the release queue (torch.collect()); then the freed blocks
-- kept for reuse (large ones, and this thread's small ones) go back to the system too, and the
-- malloc heap's free memory (after a burst of tensors died, its scattered free chunks slowed
-- later allocations).
-- What was live after the last full collection (M.collect's or M.before_backward's): the
-- tensor memory made since then is what M.before_backward weighs.
local live_after_backward_collect = tonumber(mem.live_bytes)
local device_after_backward_collect = tonumber(mem.device_bytes_made)
-- The skipping of needless collections before backward (see M.before_backward).
local backward_skips_left, backward_skip_garbage, backward_skip_allowance, backward_freed = 0, 0, 0, 0
local backward_grown_measured, backward_low_measures = 0, 0

function M.collect()
  backward_skips_left, backward_low_measures = 0, 0   -- collections before backward measure anew
  collectgarbage("collect")
  collectgarbage("collect")
  sweep()
  drain_blobs()
  account(false)
  C.lt_large_blocks_release()
  C.lt_small_blocks_release()
  C.lt_heap_trim()
  live_after_backward_collect = tonumber(mem.live_bytes)
  device_after_backward_collect = tonumber(mem.device_bytes_made)
end

--[[ Before a backward pass (torch.autograd's backward calls it). A forward leaves its
     intermediate tensors' handles to the collector (a module's output, once the next module has
     consumed it, is garbage in Lua), and autograd frees a saved activation only when no handle
     holds it: until the collector finds those handles, every activation lives through backward
     and after it, where C++ frees each one as soon as backward has used it. So when the tensor
     memory made since the last such collection is large (a quarter of what was live after it,
     at least 1 MiB, and at least the Lua heap's size: a full collection marks that whole heap,
     so a small model's step, whose forward makes less than the heap, does not pay one every few
     steps), one full collection here hands the activations to autograd alone.
     When the owners of the intermediates already released them (nn.Sequential and
     TransformerEncoder do: torch.nn._release), such a collection finds next to nothing and still
     marks the whole Lua heap (docs/PERFORMANCE.md, 21). So after a collection that freed less
     than 1/16 of the forward's growth, the next ones are skipped while the garbage they would
     have found (estimated as that collection's, per step; two such collections in a row, as one
     may follow a cycle that had just swept it) stays under 1/16 of that growth,
     BACKWARD_MAX_SKIPS in a row at most (then one runs and measures again), and only for a
     forward that grew at most twice as much as the measured one (another model is measured
     anew; so is everything after torch.collect()). A forward that leaves its intermediates to
     the collector frees far more: it is never skipped. Device memory counts by what the device
     allocators hold (lt_device_memory_poll); a device without statistics is never skipped. ]]
local BACKWARD_MIN_BYTES = 1 * 1024 * 1024
local BACKWARD_HEAP_RATIO = 1
local BACKWARD_SKIP_FRACTION = 1 / 16
local BACKWARD_MAX_SKIPS = 15
function M.before_backward()
  local live, device = tonumber(mem.live_bytes), tonumber(mem.device_bytes_made)
  local grown = (live - live_after_backward_collect) + (device - device_after_backward_collect)
  local limit = math.max(live_after_backward_collect / 4, BACKWARD_MIN_BYTES)
  if grown < limit or stepping or slab.sweeping then return end
  if grown < collectgarbage("count") * 1024 * BACKWARD_HEAP_RATIO then return end
  if backward_skips_left > 0 and backward_skip_garbage + backward_freed <= backward_skip_allowance
      and grown <= 2 * backward_grown_measured then
    backward_skips_left = backward_skips_left - 1
    backward_skip_garbage = backward_skip_garbage + backward_freed
    return
  end
  local on_device = device > device_after_backward_collect
  local device_before = on_device and tonumber(C.lt_device_memory_poll()) or 0
  collectgarbage("collect")
  sweep()
  account(false)
  local freed = live - tonumber(mem.live_bytes)
  if on_device then
    freed = device_before < 0 and math.huge or freed + device_before - tonumber(C.lt_device_memory_poll())
  end
  backward_freed = freed > 0 and freed or 0
  backward_skip_garbage, backward_skip_allowance = 0, grown * BACKWARD_SKIP_FRACTION
  backward_grown_measured = grown
  -- two low measures in a row: one alone may follow a cycle that had just swept the garbage
  backward_low_measures = backward_freed < backward_skip_allowance and backward_low_measures + 1 or 0
  backward_skips_left = backward_low_measures >= 2 and BACKWARD_MAX_SKIPS or 0
  live_after_backward_collect = tonumber(mem.live_bytes)
  device_after_backward_collect = tonumber(mem.device_bytes_made)
end

--[[ After a backward pass (torch.autograd's backward calls it): what is live then (parameters,
     gradients, optimizer state, and what garbage still holds) is the floor the next forward
     grows from. Measured from the last collection instead, which ran with a whole forward's
     activations alive, a forward whose intermediates the containers release at once
     (torch.nn._release) never seemed to grow past it, and several steps' garbage (each step's
     output and loss) piled up. Then a 1 KB collection step: a step's output, loss and graph are
     freed only when a cycle ends, and with little Lua garbage of its own a training loop ran
     hundreds of steps per cycle, whose late batches of frees fragmented the malloc heap
     (docs/PERFORMANCE.md, 29 and 35). ]]
local AFTER_BACKWARD_STEP_KB = 1
function M.after_backward()
  live_after_backward_collect = tonumber(mem.live_bytes)
  device_after_backward_collect = tonumber(mem.device_bytes_made)
  if stepping or slab.sweeping then return end
  stepping = true
  local ok, err = pcall(collectgarbage, "step", AFTER_BACKWARD_STEP_KB)
  stepping = false
  if not ok then error(err, 0) end
end

local LT_ERR_MEMORY = C.LT_ERR_MEMORY

--[[ After an out-of-memory error: garbage tensors that the collector has not found yet may hold
     most of the memory. Collects fully, releases what the CPU block caches and every device
     allocator keep, and says whether `status` was an out-of-memory error (the caller then
     retries its call once). Usage at a call site, on the error path only:
       local s = C.lt_x(...)
       if s == LT_ERR_MEMORY and memory.reclaim(s) then s = C.lt_x(...) end
       check(s, "x") ]]
function M.reclaim(status)
  if status ~= LT_ERR_MEMORY then return false end
  -- inside a collection step (a finalizer making tensors) no full collection can start
  if not stepping and not slab.sweeping then M.collect() end
  C.lt_device_empty_cache()
  return true
end
M.LT_ERR_MEMORY = LT_ERR_MEMORY

return M
