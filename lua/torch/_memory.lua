--[[
  torch._memory — how tensor handles live and die on the Lua side.

  Every C result handle goes through `wrap`, which boxes it in an lt_tensor_ref cdata and does
  three cheap things:
    * slot ownership instead of a finalizer per tensor: the handle is also stored in a slot of
      this Lua state's slab (an FFI array of handles beside a weak-valued table of the refs).
      The ref type has no __gc, so creating and collecting a tensor costs LuaJIT no finalizer
      registration, lookup or extra cycle. One sentinel userdata per GC cycle has a __gc; when
      it runs, a cycle has finished and the collector has cleared the weak entries of every
      ref it freed, so the next wrap (or torch.collect) sweeps the slab: each slot whose ref is
      gone has its handle released with lt_tensor_free, in one JIT-compiled loop, and goes back
      on the free list. At lua_close, LuaJIT runs cdata finalizers before userdata ones, so
      a host's ffi.gc finalizer still sees valid tensors; then the slab's closer (a userdata)
      releases every handle still held and nulls those refs, so a userdata finalizer that runs
      after it gets "tensor was freed", not freed memory.
    * pressure-driven collection: the Lua GC cannot see tensor bytes, so wrap reads the live
      byte counter that the bindings' CPU allocator keeps (a struct field, no call) and, every
      1024 handles or whenever tensor memory grew by 64 MiB, tells the collector what it cannot
      see with collectgarbage("step", kb): the bytes allocated since the last step plus ~512
      bytes of C++ bookkeeping per handle. A loop that drops its temporaries keeps a flat RSS.
      GPU tensors are not the CPU allocator's: the bindings add up the bytes of every non-CPU
      result (device_bytes_made), and 64 MiB of those since the last step trigger one too, so
      a GPU loop's garbage is collected before it fills the device (PyTorch frees it at once).
    * scopes: inside torch.scope(fn) every new handle is recorded, and released when fn returns,
      except the tensors fn returns (directly or inside a returned table, one level deep).
  x:free() releases a handle at once; the cdata stays, and any later use is a clear error.

  Foreign memory wrapped without a copy (torch.from_buffer over a cdata buffer) keeps its owner
  referenced here until libtorch reports (through the bindings' release queue) that the last
  tensor using it is gone.

  Usage (internal):  local memory = require "torch._memory"; return memory.wrap(out[0])
  Public:            torch.scope(fn, ...), x:free(), torch.memory_stats()
]]
local ffi = require "ffi"
local _C = require "torch._C"
local pack = require("torch._args").pack
local C, Ref = _C.C, _C.Ref

local M = {}

local mem = C.lt_memory()
local collectgarbage = collectgarbage

local STEP_HANDLES = 1024
local STEP_BYTES = 64 * 1024 * 1024
local HANDLE_COST = 512

local handles_since_step = 0
local bytes_at_step = tonumber(mem.live_bytes)
local next_byte_trigger = bytes_at_step + STEP_BYTES
-- GPU results: their bytes are not the CPU allocator's, so a running total of them made since
-- the last step (mem.device_bytes_made) triggers and sizes steps the same way.
local device_at_step = tonumber(mem.device_bytes_made)
local next_device_trigger = device_at_step + STEP_BYTES
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
     one slab per Lua state. Slots are 1-based; slot 0 in a ref means "not in the slab".
     Slot i is in use while handles[i] or live[i] is set: a wrap claims its slot by setting
     live[i] = false before anything that can allocate, then stores the ref and the handle; a
     collected ref leaves its handle for the sweep; a free slot has neither and is on the free
     list exactly once. The three containers are sized to `capacity` up front (the array part of
     `live` and `free` included), so storing into them never allocates: only Ref() and resize()
     do, and they are where finalizers — which may make and free tensors — can run. ]]
local HandleArray = ffi.typeof("lt_tensor*[?]")
local table_new = require "table.new"
local WEAK_VALUES = { __mode = "v" }
local MIN_CAPACITY = 1024

-- Array parts for indices up to n (LuaJIT's array part starts at 0).
local function live_table(n) return setmetatable(table_new(n + 1, 0), WEAK_VALUES) end
local function free_table(n) return table_new(n + 1, 0) end

local slab = _C.state.slab
if not slab then
  slab = { live = live_table(MIN_CAPACITY), handles = HandleArray(MIN_CAPACITY + 1), capacity = MIN_CAPACITY,
           top = 0, free = free_table(MIN_CAPACITY), nfree = 0, pending = false }
  _C.state.slab = slab
  -- One finalizable sentinel per GC cycle: its __gc marks the cycle's end and makes the next one.
  local function arm()
    local sentinel = newproxy(true)
    getmetatable(sentinel).__gc = function()
      slab.pending = true
      arm()
    end
  end
  arm()
  -- At lua_close: release what is still held, and null the refs still alive.
  slab.closer = newproxy(true)
  getmetatable(slab.closer).__gc = function()
    local live, handles = slab.live, slab.handles
    for i = 1, slab.top do
      local h = handles[i]
      if h ~= nil then
        local t = live[i]   -- a held handle's ref is live[i] (wrap stores both)
        if t then t.h = nil end
        handles[i] = nil
        C.lt_tensor_free(h)
      end
    end
  end
end

--[[ Moves the slab into containers for `capacity` slots (growing, or shrinking after a burst of
     tensors has died). Allocating them may run finalizers that make or free tensors, so the
     copy starts only after all three exist, reads the slab as it is then, and gives up if the
     slots in use no longer fit or another resize ran meanwhile (the caller checks again). ]]
local function resize(capacity)
  local before = slab.capacity
  local handles, live, free = HandleArray(capacity + 1), live_table(capacity), free_table(capacity)
  local top = slab.top
  if slab.capacity ~= before or top > capacity then return end
  ffi.copy(handles, slab.handles, (math.min(before, capacity) + 1) * ffi.sizeof("lt_tensor*"))
  local old_live, old_free = slab.live, slab.free
  for i = 1, top do live[i] = old_live[i] end
  for i = 1, slab.nfree do free[i] = old_free[i] end
  slab.handles, slab.live, slab.free, slab.capacity = handles, live, free, capacity
end

--[[ Releases the handles of the refs the collector has freed; their slots go on the free list
     (highest first, so the lowest free slot is taken next and the slab stays dense at the
     bottom). Nothing here allocates, so no finalizer runs in the middle; a sweep that starts
     inside another (from a finalizer during a resize) returns at once. ]]
local sweeping = false
local function sweep_slots()
  slab.pending = false
  local live, free, handles = slab.live, slab.free, slab.handles
  local nfree = slab.nfree
  for i = slab.top, 1, -1 do
    local h = handles[i]
    if h ~= nil and live[i] == nil then
      handles[i] = nil
      C.lt_tensor_free(h)
      nfree = nfree + 1
      free[nfree] = i
    end
  end
  slab.nfree = nfree
end

--[[ After a sweep: when the highest slots are free — the tensors of a burst (a big scope, a list
     of per-sample tensors) have died — lower `top` to the highest slot in use and rebuild the
     free list below it, and when the slab is then four times bigger than what it holds, move it
     to smaller containers. Without this every later sweep and collection would still walk
     the burst's high-water mark: 200,000 dead tensors made a loop of small adds 4x slower. ]]
local function trim()
  local handles, live, top = slab.handles, slab.live, slab.top
  if top <= 2 * MIN_CAPACITY then return end   -- small: a loop's steady state costs nothing here
  local high = top
  while high > 0 and handles[high] == nil and live[high] == nil do high = high - 1 end
  if high == top then return end
  local free, n = slab.free, 0
  for i = high, 1, -1 do
    if handles[i] == nil and live[i] == nil then n = n + 1; free[n] = i end
  end
  slab.nfree, slab.top = n, high
  if slab.capacity > MIN_CAPACITY and slab.capacity >= 4 * high then
    resize(math.max(MIN_CAPACITY, 2 * high))
  end
end

local function sweep()
  if sweeping then return end
  sweeping = true
  local ok, err = pcall(sweep_slots)   -- a finalizer's error must not leave `sweeping` set
  if ok then ok, err = pcall(trim) end
  sweeping = false
  if not ok then error(err, 0) end
end

-- True while account() runs a collection step. The step can run finalizers, a finalizer can make
-- tensors, and their wrap would step again from inside the first step: LuaJIT lets an explicit
-- step run inside a finalizer, so under heavy finalizer use the steps nested without bound and
-- overflowed the C stack (a segfault). A nested account() skips the step; the outer one, or the
-- next, does the work.
local stepping = false

local function account()
  local live = tonumber(mem.live_bytes)
  local grown = live - bytes_at_step
  if grown < 0 then grown = 0 end
  local device_made = tonumber(mem.device_bytes_made)
  grown = grown + (device_made - device_at_step)
  if not stepping then
    stepping = true
    local ok, err = pcall(collectgarbage, "step", (grown + handles_since_step * HANDLE_COST) / 1024)
    stepping = false
    if not ok then error(err, 0) end
  end
  if slab.pending then sweep() end
  live = tonumber(mem.live_bytes)
  handles_since_step, bytes_at_step = 0, live
  next_byte_trigger = live + STEP_BYTES
  device_at_step = tonumber(mem.device_bytes_made)
  next_device_trigger = device_at_step + STEP_BYTES
  if next(blob_owners) ~= nil then drain_blobs() end
end

-- Boxes a handle returned by the bindings. A NULL handle (an undefined tensor) becomes nil.
local function wrap(h)
  if h == nil then return nil end
  -- The slot is claimed (live[slot] = false) before anything that can allocate (and so run a
  -- finalizer that makes tensors or sweeps), and the handle is stored only once its ref is in
  -- `live`: a sweep in between neither reuses the slot nor frees the handle.
  local slot
  local nfree = slab.nfree
  if nfree > 0 then
    slot = slab.free[nfree]
    slab.nfree = nfree - 1
  else
    while slab.top >= slab.capacity do resize(slab.capacity * 2) end
    slot = slab.top + 1
    slab.top = slot
  end
  slab.live[slot] = false
  local t = Ref(h, slot)
  slab.live[slot] = t
  slab.handles[slot] = h
  handles_since_step = handles_since_step + 1
  if handles_since_step >= STEP_HANDLES or mem.live_bytes > next_byte_trigger
    or mem.device_bytes_made > next_device_trigger then
    account()
  elseif slab.pending then
    sweep()
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
    local slot = t.slot
    if slot > 0 and slab.handles[slot] == h then
      slab.handles[slot] = nil
      slab.live[slot] = nil
      local nfree = slab.nfree + 1
      slab.free[nfree] = slot   -- presized: no allocation, so no finalizer between these lines
      slab.nfree = nfree
    end
    C.lt_tensor_free(h)
  end
end

local function keep_returned(keep, v)
  if ffi.istype(Ref, v) then
    keep[v] = true
  elseif type(v) == "table" then
    for _, x in pairs(v) do
      if ffi.istype(Ref, x) then keep[x] = true end
    end
  end
end

--[[ torch.scope(fn, ...): runs fn(...) and releases every tensor created inside that fn does not
     return. Errors propagate after the release. Nested scopes hand kept tensors to the parent. ]]
function M.scope(fn, ...)
  if type(fn) ~= "function" then
    error(("bad argument #1 to 'scope' (function expected, got %s)"):format(type(fn)), 2)
  end
  local parent = active_scope
  local list = {}
  active_scope = list
  local results = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  active_scope = parent
  local keep = {}
  if results[1] then
    for i = 2, table.maxn(results) do keep_returned(keep, results[i]) end
  end
  for i = 1, #list do
    local t = list[i]
    if keep[t] then
      if parent then parent[#parent + 1] = t end
    else
      M.free(t)
    end
  end
  if not results[1] then error(results[2], 0) end
  return unpack(results, 2, table.maxn(results))
end

--[[ unscoped(fn, ...): runs fn(...) outside any torch.scope, so the tensors it makes outlive the
     scope (state that belongs to an object, e.g. an optimizer's moments made inside a
     scope-wrapped training step). ]]
function M.unscoped(fn, ...)
  local saved = active_scope
  active_scope = nil
  local results = (pack(pcall(fn, ...)))   -- not { ... }: see torch._args.pack
  active_scope = saved
  if not results[1] then error(results[2], 0) end
  return unpack(results, 2, table.maxn(results))
end

-- Registers the owner of foreign memory; returns the id to hand to lt_from_blob.
function M.hold_blob(owner)
  local id = (_C.state.next_blob_id or 0) + 1
  _C.state.next_blob_id = id
  blob_owners[id] = owner
  return id
end

function M.stats()
  drain_blobs()
  return {
    live_handles = slab.top - slab.nfree,
    live_bytes = tonumber(mem.live_bytes),
    peak_bytes = tonumber(mem.peak_bytes),
    allocations = tonumber(mem.allocations),
    cached_bytes = tonumber(C.lt_large_blocks_cached()),          -- freed blocks of 128 KiB+ kept mapped
    cached_small_bytes = tonumber(C.lt_small_blocks_cached()),   -- freed blocks of <= 1 KiB this thread keeps
    device_bytes_made = tonumber(mem.device_bytes_made),   -- non-CPU results so far (a total)
    held_buffers = (function() local n = 0 for _ in pairs(blob_owners) do n = n + 1 end return n end)(),
  }
end

-- A full collection plus a drain of the release queue (torch.collect()); then the freed blocks
-- kept for reuse (large ones, and this thread's small ones) go back to the system too, and the
-- malloc heap's free memory (after a burst of tensors died, its scattered free chunks slowed
-- later allocations).
function M.collect()
  collectgarbage("collect")
  collectgarbage("collect")
  sweep()
  drain_blobs()
  account()
  C.lt_large_blocks_release()
  C.lt_small_blocks_release()
  C.lt_heap_trim()
end

return M
