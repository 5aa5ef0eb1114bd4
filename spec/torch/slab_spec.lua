--[[
  spec/torch/slab_spec.lua — the C slab of tensor handles (bindings/lt_slab.cpp) through its own
  calls, on a private slab (ffi.new("lt_slab")), not the Lua state's: handles are made with
  lt_zeros, and torch.memory_stats().live_bytes shows which ones a call released.

  Checked: slots are claimed 1, 2, 3…; a sweep releases exactly the stored handles of slots
  marked dead, never a claimed slot's (its handle not stored yet) nor a slot claimed again after
  its mark (the claim clears it); the top drops past free slots at the end and the lowest free
  slot is handed out first; x:free()'s release frees the slot only if it still holds the handle;
  a burst's arrays shrink back; out-of-range marks and stores are ignored; close releases
  everything and leaves an empty slab that works again; a claim past int32's slots gives 0;
  a deferred sweep queues the dead handles, each store releases one (two past the soft limit),
  a sweep, a drain and close release the queue; lt_slab_check sees broken invariants.

  Run:  build/ltorch /usr/bin/busted spec/torch/slab_spec.lua
]]
local ffi = require "ffi"
local torch = require "torch"
local C = require("torch._C").C

local ELEMS = 250   -- 1,000 bytes per handle's tensor
local sizes = ffi.new("int64_t[1]", ELEMS)
local out = ffi.new("lt_tensor*[1]")

local function live() return torch.memory_stats().live_bytes end

-- A fresh handle to a new tensor of ELEMS float zeros, owned by the caller.
local function new_handle()
  assert(C.lt_zeros(out, sizes, 1, nil) == 0, ffi.string(C.lt_last_error()))
  return out[0]
end

-- Claims a slot and stores a new handle in it; returns the slot.
local function put(slab)
  local slot = C.lt_slab_claim(slab)
  assert(slot > 0)
  C.lt_slab_store(slab, slot, new_handle())
  return slot
end

describe("the slab of tensor handles (C)", function()
  local slab
  before_each(function()
    torch.collect()
    slab = ffi.new("lt_slab")
  end)
  after_each(function() C.lt_slab_close(slab) end)

  it("claims slots in order and a sweep releases exactly the slots marked dead", function()
    local b0 = live()
    for i = 1, 5 do assert.are.equal(i, put(slab)) end
    assert.are.equal(b0 + 5 * 1000, live())
    C.lt_slab_mark_dead(slab, 2)
    C.lt_slab_mark_dead(slab, 4)
    assert.are.equal(2, C.lt_slab_sweep(slab))
    assert.are.equal(b0 + 3 * 1000, live())
    assert.are.equal(5, slab.top)
    assert.are.equal(2, slab.nfree)
    assert.are.equal(0, C.lt_slab_check(slab))
    assert.are.equal(0, C.lt_slab_sweep(slab))   -- the marks were cleared
    assert.are.equal(b0 + 3 * 1000, live())
  end)

  it("hands out the lowest free slot first and drops the top past free slots at the end", function()
    for _ = 1, 10 do put(slab) end
    for i = 6, 10 do C.lt_slab_mark_dead(slab, i) end
    C.lt_slab_mark_dead(slab, 3)
    C.lt_slab_mark_dead(slab, 2)
    assert.are.equal(7, C.lt_slab_sweep(slab))
    assert.are.equal(5, slab.top)
    assert.are.equal(2, put(slab))
    assert.are.equal(3, put(slab))
    assert.are.equal(6, put(slab))
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("never releases a claimed slot whose handle is not stored yet", function()
    local b0 = live()
    local slot = C.lt_slab_claim(slab)
    C.lt_slab_mark_dead(slab, slot)   -- a sweep that finds no ref yet in that slot
    assert.are.equal(0, C.lt_slab_sweep(slab))
    assert.are.equal(1, slab.top)
    local h = new_handle()
    C.lt_slab_store(slab, slot, h)
    assert.are.equal(b0 + 1000, live())
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("a claim clears the mark of the slot it takes: the new handle survives the sweep", function()
    local b0 = live()
    put(slab); put(slab)
    C.lt_slab_release(slab, 1, nil)   -- not its handle: the slot stays, nothing released
    assert.are.equal(0, slab.nfree)
    C.lt_slab_mark_dead(slab, 1)
    assert.are.equal(1, C.lt_slab_sweep(slab))
    C.lt_slab_mark_dead(slab, 1)   -- marked while free (a sweep's marking loop) ...
    assert.are.equal(1, put(slab)) -- ... then taken by a finalizer's tensor
    assert.are.equal(0, C.lt_slab_sweep(slab))
    assert.are.equal(b0 + 2 * 1000, live())
  end)

  it("x:free()'s release frees the slot only while it still holds that handle", function()
    local b0 = live()
    local h = new_handle()
    local slot = C.lt_slab_claim(slab)
    C.lt_slab_store(slab, slot, h)
    put(slab)
    C.lt_slab_release(slab, slot, h)
    assert.are.equal(b0 + 1000, live())
    assert.are.equal(1, slab.nfree)
    assert.are.equal(slot, put(slab))
    local other = new_handle()
    C.lt_slab_release(slab, 0, other)   -- not in the slab (slot 0): only the handle goes
    assert.are.equal(b0 + 2 * 1000, live())
    assert.are.equal(0, slab.nfree)
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("moves a dead burst's arrays back to a small size", function()
    for _ = 1, 20000 do put(slab) end
    assert.is_true(slab.capacity >= 20000)
    for i = 4, 20000 do C.lt_slab_mark_dead(slab, i) end
    assert.are.equal(19997, C.lt_slab_sweep(slab))
    assert.are.equal(3, slab.top)
    assert.are.equal(1024, slab.capacity)
    assert.are.equal(0, C.lt_slab_check(slab))
    for i = 4, 3000 do assert.are.equal(i, put(slab)) end
    assert.are.equal(4096, slab.capacity)
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("ignores marks and stores out of range", function()
    local b0 = live()
    put(slab)
    C.lt_slab_mark_dead(slab, 0)
    C.lt_slab_mark_dead(slab, 2)
    C.lt_slab_mark_dead(slab, -7)
    assert.are.equal(0, C.lt_slab_sweep(slab))
    local h = new_handle()
    C.lt_slab_store(slab, 5, h)   -- beyond top: not stored
    C.lt_slab_store(slab, 1, h)   -- slot 1 holds a handle already: not replaced
    assert.are.equal(0, C.lt_slab_check(slab))
    C.lt_tensor_free(h)
    assert.are.equal(b0 + 1000, live())
  end)

  it("close releases every handle and leaves an empty slab that works again", function()
    local b0 = live()
    for _ = 1, 100 do put(slab) end
    C.lt_slab_claim(slab)   -- claimed, never stored: nothing to release
    C.lt_slab_close(slab)
    assert.are.equal(b0, live())
    assert.are.equal(0, slab.top)
    assert.are.equal(0, slab.capacity)
    assert.are.equal(1, put(slab))
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("a claim that cannot add a slot gives 0 and changes nothing", function()
    put(slab)
    local top, capacity = slab.top, slab.capacity
    slab.top, slab.capacity = 2 ^ 30 + 1, 2 ^ 30 + 1   -- full, and doubling would pass int32
    assert.are.equal(0, C.lt_slab_claim(slab))
    assert.are.equal(2 ^ 30 + 1, slab.top)
    slab.top, slab.capacity = top, capacity   -- back, before close walks the arrays
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("a deferred sweep queues the dead handles; each store releases one, a sweep or drain the rest", function()
    local b0 = live()
    for _ = 1, 6 do put(slab) end
    for i = 1, 4 do C.lt_slab_mark_dead(slab, i) end
    assert.are.equal(4, C.lt_slab_sweep_later(slab))
    assert.are.equal(4, slab.nqueued)
    assert.are.equal(b0 + 6 * 1000, live())       -- queued, not released yet
    assert.are.equal(4, slab.nfree)                -- but their slots are free already
    assert.are.equal(0, C.lt_slab_check(slab))
    put(slab)                                      -- a store releases one queued handle
    assert.are.equal(3, slab.nqueued)
    assert.are.equal(b0 + 6 * 1000, live())
    put(slab)
    assert.are.equal(b0 + 6 * 1000, live())
    assert.are.equal(2, slab.nqueued)
    C.lt_slab_mark_dead(slab, 6)
    assert.are.equal(3, C.lt_slab_sweep(slab))     -- releases the dead slot and the queue
    assert.are.equal(0, slab.nqueued)
    assert.are.equal(b0 + 3 * 1000, live())
    assert.are.equal(0, C.lt_slab_check(slab))
    C.lt_slab_mark_dead(slab, 1)
    C.lt_slab_sweep_later(slab)
    assert.are.equal(1, C.lt_slab_drain(slab))
    assert.are.equal(0, C.lt_slab_drain(slab))
    assert.are.equal(b0 + 2 * 1000, live())
    C.lt_slab_mark_dead(slab, 2)
    C.lt_slab_sweep_later(slab)
    C.lt_slab_close(slab)                          -- close releases what is queued too
    assert.are.equal(b0, live())
    assert.are.equal(0, slab.nqueued)
    assert.are.equal(0, slab.queue_capacity)
  end)

  it("a store releases two queued handles while more than LT_SLAB_QUEUE_SOFT wait", function()
    local soft = C.LT_SLAB_QUEUE_SOFT
    for _ = 1, soft + 3 do put(slab) end
    for i = 1, soft + 3 do C.lt_slab_mark_dead(slab, i) end
    assert.are.equal(soft + 3, C.lt_slab_sweep_later(slab))
    put(slab)
    assert.are.equal(soft + 1, slab.nqueued)   -- two: more than soft were left after the first
    put(slab)
    assert.are.equal(soft, slab.nqueued)       -- one: soft left
    put(slab)
    assert.are.equal(soft - 1, slab.nqueued)
    assert.are.equal(0, C.lt_slab_check(slab))
  end)

  it("lt_slab_check reports broken invariants", function()
    for _ = 1, 4 do put(slab) end
    C.lt_slab_mark_dead(slab, 2)
    C.lt_slab_sweep(slab)
    assert.are.equal(0, C.lt_slab_check(slab))
    slab.nfree = 5
    assert.are.equal(1, C.lt_slab_check(slab))
    slab.nfree = 0   -- slot 2 is free but no longer on the stack
    assert.are.equal(4, C.lt_slab_check(slab))
    slab.nfree = 1
    slab.free_slots[0] = 3   -- a slot in use on the stack
    assert.are.equal(2, C.lt_slab_check(slab))
    slab.free_slots[0] = 2
    assert.are.equal(0, C.lt_slab_check(slab))
    C.lt_slab_mark_dead(slab, 3)
    C.lt_slab_sweep_later(slab)
    slab.nqueued = slab.queue_capacity + 1
    assert.are.equal(7, C.lt_slab_check(slab))
    slab.nqueued = 1
    local h = slab.queue[0]
    slab.queue[0] = nil   -- a NULL handle in the queue
    assert.are.equal(7, C.lt_slab_check(slab))
    slab.queue[0] = h
    assert.are.equal(0, C.lt_slab_check(slab))
  end)
end)
