--[[
  torch.utils.checkpoint — activation checkpointing: trade compute for memory. checkpoint(fn, ...)
  runs fn(...) without keeping its intermediate activations; in backward it runs fn again (with
  the CPU generator's state it had in forward, and the states of the CUDA devices of its tensor
  arguments, as PyTorch's; so dropout masks repeat) and backpropagates through that
  recomputation. Gradients equal those of calling fn directly; the activations inside fn are held
  only while its own segment's backward runs.

  This is PyTorch's reentrant variant: a torch.autograd.Function whose backward runs a nested
  backward over the recomputed segment. Parameters used inside fn (module weights) get their
  .grad accumulated by that nested backward, as in PyTorch; gradients of the explicit tensor
  arguments are returned to the outer graph.

  Usage:
      local checkpoint = torch.utils.checkpoint        -- callable; also .checkpoint
      local h = x
      for i = 1, #blocks do h = checkpoint(function(t) return blocks[i](t) end, h) end
      h:sum():backward()
      -- options as a trailing table: checkpoint(fn, x, {preserve_rng_state = false})
]]
local ffi = require "ffi"
local _C = require "torch._C"
local af = require "torch.autograd_function"
local memory = require "torch._memory"
local scope = require("torch._scope").scope
local pack = require("torch._args").pack
local guard = require "torch._guard"

local Ref = _C.Ref
local istype = ffi.istype

local M = {}

local Checkpoint = af.Function("CheckpointFunctionBackward")
Checkpoint._release_grads = true  -- backward keeps no reference to its grads: free them at once

--[[ The CUDA devices of fn's tensor arguments and their generators' states (PyTorch's
     get_device_states): dropout inside fn draws from them, so the recompute must start from the
     same states. Nothing when CUDA is not in use. ]]
local function cuda_states(torch, ...)
  local devices, states, seen = {}, {}, {}
  if torch.cuda.device_count() == 0 then return devices, states end
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if istype(Ref, a) then
      local d = a.device
      if d.type == "cuda" and not seen[d.index or 0] then
        seen[d.index or 0] = true
        devices[#devices + 1] = d.index or 0
        states[#states + 1] = torch.cuda.get_rng_state(d.index or 0)
      end
    end
  end
  return devices, states
end

-- fn() with the CUDA generators set to forward's states and put back afterwards (fork_rng).
local function with_forward_cuda_states(torch, ctx, fn)
  if ctx.devices == nil or #ctx.devices == 0 then return fn() end
  return torch.random.fork_rng({ devices = ctx.devices }, function()
    for i, d in ipairs(ctx.devices) do torch.cuda.set_rng_state(ctx.device_states[i], d) end
    return fn()
  end)
end

-- `anchor` is an empty tensor requiring grad, so the segment joins the graph even when none of its
-- tensor arguments requires grad (only the weights inside fn do: the first block of a network).
function Checkpoint.forward(ctx, fn, preserve, _anchor, ...)
  local torch = require "torch"
  ctx.fn, ctx.preserve, ctx.requires = fn, preserve, {}
  if preserve then
    ctx.rng = torch.get_rng_state()
    ctx.devices, ctx.device_states = cuda_states(torch, ...)
  end
  ctx.n_args = select("#", ...)
  -- The inputs only (fn's activations are not kept), as handles of our own so that backward can
  -- release them at once instead of waiting for the Lua collector.
  local args = pack(...)   -- not { ... }: see torch._args.pack
  for i = 1, ctx.n_args do
    if istype(Ref, args[i]) then
      local d = args[i]:detach()
      ctx.requires[i] = args[i].requires_grad
      args[i] = d
    end
  end
  ctx.args = args
  -- the scope frees fn's temporaries now rather than at the next collection
  local rest, n = pack(...)
  return scope(function() return fn(unpack(rest, 1, n)) end)
end

local function recompute_backward(ctx, ...)
  local torch = require "torch"
  local grads_out = pack(...)
  local args = ctx.args
  if args == nil then error("checkpoint: backward ran twice over a released checkpoint segment", 0) end
  -- Recompute fn on detached copies of the inputs (requires_grad as before), with forward's RNG.
  local detached, want = {}, {}
  for i = 1, ctx.n_args do
    local a = args[i]
    if istype(Ref, a) then
      local d = a:detach()
      if ctx.requires[i] then d:requires_grad_(true); want[#want + 1] = i end
      detached[i] = d
    else
      detached[i] = a
    end
  end
  local function recompute()
    return torch.enable_grad(function() return { ctx.fn(unpack(detached, 1, ctx.n_args)) } end)
  end
  -- forward's generator state for the recompute, the caller's back after it whatever raised
  local function recompute_with_rng() return with_forward_cuda_states(torch, ctx, recompute) end
  local outs = ctx.preserve and guard.rng(torch.get_rng_state(), ctx.rng, recompute_with_rng) or recompute()
  -- Backward through the recomputed segment; inputs' grads are read back from the detached copies.
  local ts, gs = {}, {}
  local k = 0
  for _, o in ipairs(outs) do
    if istype(Ref, o) then
      k = k + 1
      if o.requires_grad and grads_out[k] ~= nil then
        ts[#ts + 1], gs[#gs + 1] = o, grads_out[k]
      end
    end
  end
  if #ts > 0 then af.backward(ts, gs, false, torch.is_grad_enabled(), "checkpoint backward") end
  local result = {}
  -- backward returns one value per forward argument: fn, preserve, anchor, then fn's arguments
  for _, i in ipairs(want) do result[i + 3] = detached[i].grad end
  return result
end

function Checkpoint.backward(ctx, ...)
  -- the scope frees the recomputed activations as soon as this segment is done
  local result = scope(recompute_backward, ctx, ...)
  for i = 1, ctx.n_args do
    if istype(Ref, ctx.args[i]) then memory.free(ctx.args[i]) end
  end
  ctx.args, ctx.rng, ctx.device_states = nil, nil, nil
  return unpack(result, 1, ctx.n_args + 3)
end

--[[ checkpoint(fn, ...[, {preserve_rng_state=true}]) — returns fn(...)'s results. ]]
function M.checkpoint(fn, ...)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    error("bad argument #1 to 'checkpoint' (function expected, got " .. type(fn) .. ")", 2)
  end
  local args, n = pack(...)
  local preserve = true
  local last = args[n]
  if n > 0 and type(last) == "table" and not istype(Ref, last) and getmetatable(last) == nil
      and last.preserve_rng_state ~= nil then
    preserve = last.preserve_rng_state ~= false
    n = n - 1
  end
  local torch = require "torch"
  local anchor = nil
  if torch.is_grad_enabled() then anchor = torch.empty(0, { requires_grad = true }) end
  return Checkpoint.apply(fn, preserve, anchor, unpack(args, 1, n))
end

return setmetatable(M, { __call = function(_, ...) return M.checkpoint(...) end })
