--[[
  torch.data._worker — the loop a DataLoader worker thread runs in its own Lua state.

  Why: runtime/workers.c starts one thread per worker, creates a fresh ltorch state there and
  calls run(pool, id, num_workers, config). Everything the worker needs arrives as plain data
  in `config` (a literal from torch.data._serialize):
    { path =, cpath =,                         -- the main state's package paths
      base_seed =,                             -- data.rng() seeded with base_seed + id
      dataset = {module = "name", args = {...}, method = "new"?}?,   -- dataset_factory
      shipped = "...",                         -- torch.data._ship: the script's dataset object
                                               -- and/or worker_init_fn, rebuilt here
      worker_init = {module =, fn =}?,        -- called as fn(worker_id)
      collate = {module =, fn =}? | "default" | "list",
      batched = true|false }
  The dataset is the shipped object rebuilt once at start, or built with
  require(module)[method](unpack(args)) (method default "new"; a module that is itself a
  function or callable table is called directly).

  Loop: take a task (batch index + 0-based sample indices, or "next batch" for iterable
  datasets), fetch and collate under xpcall, and post the result: tensors as handles (a second
  handle to the same tensor, lt_tensor_shallow_copy; no data is copied) plus the batch's
  structure as a literal. A Lua error is posted with its traceback and the loop goes on; the
  main state raises it. Shutdown is seen within 100 ms.
]]
local ffi = require "ffi"
local ser = require "torch.data._serialize"
local ship = require "torch.data._ship"
local sample_of = require("torch.data.dataset").sample

local M = {}

local function resolve_fn(spec, what)
  if type(spec) == "string" then
    local mod, fn = spec:match("^(.-)[:%.]([%w_]+)$")
    spec = { module = mod, fn = fn }
  end
  local m = require(spec.module)
  local f = spec.fn and m[spec.fn] or m
  if type(f) ~= "function" and not (type(f) == "table" and getmetatable(f) and getmetatable(f).__call) then
    error(("%s: %s.%s is not a function"):format(what, spec.module, tostring(spec.fn)), 0)
  end
  return f
end
M.resolve_fn = resolve_fn

function M.build_dataset(spec)
  local m = require(spec.module)
  local args = spec.args or {}
  local ctor = spec.method and m[spec.method] or (type(m) == "table" and (m.new or (getmetatable(m) or {}).__call and m)) or m
  if ctor == nil then
    error(("dataset_factory: module %s has no constructor (give method = '...')"):format(spec.module), 0)
  end
  return ctor(unpack(args, 1, args.n or table.maxn(args)))
end

-- The worker's dataset, its worker info and its collate function, from the config. libtorch's
-- default CPU generator is process-wide (shared with the main thread and the other workers), so
-- torch.manual_seed here would reseed everyone and draws would interleave between threads. Each
-- worker gets its own generator instead: data.rng(), which the built-in random transforms use.
local function start(cfg, id, num_workers, shipped)
  local seed = (cfg.base_seed or 0) + id
  local data = require "torch.data"
  data.manual_seed(seed)
  local dataset = shipped.dataset
  if dataset == nil then dataset = M.build_dataset(cfg.dataset) end
  local info = { id = id, num_workers = num_workers, seed = seed, dataset = dataset }
  data._set_worker_info(info)
  if shipped.worker_init_fn then shipped.worker_init_fn(id)
  elseif cfg.worker_init then resolve_fn(cfg.worker_init, "worker_init_fn")(id) end
  local collate
  if cfg.collate == "list" or not cfg.batched then collate = function(s) return s end
  elseif cfg.collate == nil or cfg.collate == "default" then collate = require("torch.data.collate").default_collate
  else collate = resolve_fn(cfg.collate, "collate_fn") end
  return dataset, info, collate
end

-- fetch(count, indices): the batch of `count` samples at `indices` (map-style), or with count < 0
-- the next batch_size samples of this worker's iterator; nil when an iterable dataset is done.
local function fetcher(cfg, dataset, info, collate)
  local it -- iterable datasets: this worker's iterator
  local batch_size = cfg.batch_size or 1
  return function(count, indices)
    if count < 0 then
      it = it or dataset:iter(info)
      local samples = {}
      for k = 1, batch_size do
        local s = it()
        if s == nil then break end
        samples[k] = s
      end
      if #samples == 0 then return nil end
      if not cfg.batched then return samples[1] end
      return collate(samples)
    end
    local samples = {}
    for k = 1, count do samples[k] = sample_of(dataset:get(tonumber(indices[k - 1]))) end
    if not cfg.batched then return samples[1] end
    return collate(samples)
  end
end

-- Posts batch k's result: its tensors as second handles plus its structure as a literal; an
-- error (the fetch's, or one serializing the batch) as its message; nil as the end of data.
local function post(pool_mod, pool, id, k, ok, res, out)
  local C = pool_mod.C
  if ok and res == nil then
    C.ltw_worker_post(pool, id, k, pool_mod.RESULT_END, "return nil", nil, 0)
  elseif ok then
    local handles = {}
    local ok2, meta = pcall(ser.dump, res, function(t)
      local s = C.lt_tensor_shallow_copy(out, t.h)
      if s ~= 0 then error("lt_tensor_shallow_copy failed", 0) end
      handles[#handles + 1] = out[0]
      return #handles
    end, "batch")
    if ok2 then
      local arr = ffi.new("lt_tensor*[?]", math.max(#handles, 1))
      for i = 1, #handles do arr[i - 1] = handles[i] end
      C.ltw_worker_post(pool, id, k, 0, meta, arr, #handles)
    else
      for i = 1, #handles do C.lt_tensor_free(handles[i]) end
      C.ltw_worker_post(pool, id, k, pool_mod.RESULT_ERROR, tostring(meta), nil, 0)
    end
  else
    C.ltw_worker_post(pool, id, k, pool_mod.RESULT_ERROR, tostring(res), nil, 0)
  end
end

function M.run(pool_ud, id, num_workers, config_src)
  local cfg = ser.load(config_src)
  package.path, package.cpath = cfg.path or package.path, cfg.cpath or package.cpath
  require "torch"   -- declares the C ABI (lt_tensor_shallow_copy) in this state
  -- first: this worker's tensor handles are then owned by this state whatever fails next
  local shipped = cfg.shipped and ship.unpack(cfg.shipped, id) or {}
  local pool_mod = require "torch.data._pool"
  local C = pool_mod.C
  local pool = ffi.cast("ltw_pool*", pool_ud)
  local fetch = fetcher(cfg, start(cfg, id, num_workers, shipped))

  local cap = 1024
  local indices = ffi.new("int64_t[?]", cap)
  local batch, n = ffi.new("int64_t[1]"), ffi.new("int[1]")
  local out = ffi.new("lt_tensor*[1]")
  local traceback = function(e) return debug.traceback(tostring(e), 2) end
  while true do
    local st = C.ltw_worker_next(pool, id, 100, batch, n, indices, cap)
    if st == pool_mod.SHUTDOWN then break end
    if st == pool_mod.ERROR then         -- a batch larger than the buffer: grow and retry
      cap = n[0]
      indices = ffi.new("int64_t[?]", cap)
    elseif st == pool_mod.OK then
      local k = batch[0]
      local ok, res = xpcall(fetch, traceback, n[0], indices)
      post(pool_mod, pool, id, k, ok, res, out)
    end
  end
end

return M
