--[[
  torch.autograd_function — custom autograd in Lua: torch.autograd.Function (a forward and a
  hand-written backward), tensor gradient hooks (x:register_hook) and the backward runner they
  need. (torch.autograd.gradcheck lives in torch.gradcheck.)

  How backward reaches Lua: libtorch runs backward nodes on its own threads, and a Lua state may
  only be entered by its own thread. So backward never runs the engine on the Lua thread: `run`
  starts a job (bindings/lt_function.cpp) that runs the engine on a helper thread, and this thread
  answers the Lua calls the engine posts (a Function's backward, a hook) until the job finishes.
  An error raised in a Lua backward or hook aborts the engine and is raised again here, at the
  backward()/autograd.grad() call, with the Lua traceback of where it happened.

  Usage:
      local Swish = torch.autograd.Function("Swish")
      function Swish.forward(ctx, x)
        ctx:save_for_backward(x)
        return x * torch.sigmoid(x)
      end
      function Swish.backward(ctx, g)
        local x = unpack(ctx.saved_tensors)
        local s = torch.sigmoid(x)
        return g * (s * (1 + x * (1 - s)))
      end
      local y = Swish.apply(x)                      -- y.grad_fn is <Swish>
      local h = x:register_hook(function(g) return g * 2 end); h:remove()
      torch.autograd.gradcheck(Swish.apply, { x64 })   -- raises on a mismatch

  Limits: tensors saved in forward are kept as they were (no version check against later in-place
  changes); double backward through a Function works only where its backward is itself
  differentiable with ordinary ops and does not need the Function's own outputs to carry history.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local T = require "torch._tensor"
local pack = require("torch._args").pack
local guard = require "torch._guard"

local C, check, Ref = _C.C, _C.check, _C.Ref
local wrap = memory.wrap
local Tensor = T.Tensor
local istype = ffi.istype

local M = {}

-- Lua-side state lives in the registry so that module reloads (busted) share it with the C side.
local registry = debug.getregistry()
local S = registry["ltorch.autograd_function"]
if not S then
  -- Ids of contexts and hooks come from this state's own range (serial * 2^32 and up), so the
  -- release queue, shared by every Lua state in the process, hands each state only its own.
  local base = tonumber(C.lt_next_state_serial()) * 2 ^ 32
  S = { contexts = {}, hooks = {}, next_id = base, lo = base, hi = base + 2 ^ 32 }
  registry["ltorch.autograd_function"] = S
end

local function new_id()
  S.next_id = S.next_id + 1
  return S.next_id
end

local released_buf = ffi.new("int64_t[64]")
local int_out = ffi.new("int[1]")
-- Drops the Lua contexts of nodes libtorch has released or destroyed.
local function drain()
  while true do
    if C.lt_autograd_released(S.lo, S.hi, released_buf, 64, int_out) ~= 0 then return end
    local n = int_out[0]
    for i = 0, n - 1 do S.contexts[tonumber(released_buf[i])] = nil end
    if n < 64 then return end
  end
end
M.drain = drain

local function grad_enabled()
  C.lt_grad_enabled(int_out)
  return int_out[0] == 1
end
M.grad_enabled = grad_enabled

---------------------------------------------------------------- dispatch of engine requests
local function call_function(id, grads)
  local ctx = S.contexts[id]
  if ctx == nil then
    error("Trying to backward through the graph a second time (or directly access saved tensors after " ..
      "they have already been freed). Specify retain_graph=true on the first backward call.", 0)
  end
  local cls = ctx._class
  local results = { cls.backward(ctx, unpack(grads, 1, ctx._n_outputs)) }
  local out = {}
  for k, pos in ipairs(ctx._tensor_positions) do
    local g = results[pos]
    if g ~= nil and not istype(Ref, g) then
      error(("%s.backward returned %s for argument %d; expected a Tensor or nil"):format(
        cls.__name, type(g), pos), 0)
    end
    out[k] = g
  end
  return out, #ctx._tensor_positions
end

local function call_hook(id, grads)
  local fn = S.hooks[id]
  if fn == nil then return {}, 0 end
  local r = fn(grads[1])
  if r ~= nil and not istype(Ref, r) then error("a tensor hook must return a Tensor or nil, got " .. type(r), 0) end
  if r == nil then return {}, 0 end
  return { r }, 1
end

local req_out = ffi.new("lt_autograd_request*[1]")
local kind_out, count_out, gm_out = ffi.new("int[1]"), ffi.new("int[1]"), ffi.new("int[1]")
local id_out = ffi.new("int64_t[1]")
local tensor_out = ffi.new("lt_tensor*[1]")
local job_out = ffi.new("lt_autograd_job*[1]")

-- Answers one request: its Lua call runs protected, and its error is the reply. The call runs
-- in the engine's grad mode, restored after it whatever raised (torch._guard); an error outside
-- the xpcall (a hook, a memory error) reaches run's guard, which answers and ends the job.
local function answer(req, kind, id, n, gm)
  local grads = {}
  for i = 1, n do
    if C.lt_autograd_request_input(req, i - 1, tensor_out) == 0 then grads[i] = wrap(tensor_out[0]) end
  end
  local ok, res, count = guard.grad(gm, xpcall, function()
    if kind == C.LT_AUTOGRAD_CALL_FUNCTION then return call_function(id, grads) end
    return call_hook(id, grads)
  end, debug.traceback)
  if not ok then
    C.lt_autograd_reply(req, nil, 0, tostring(res))
    return
  end
  local arr = _C.TensorArray(math.max(count, 1))
  for i = 1, count do arr[i - 1] = res[i] and res[i].h or nil end
  C.lt_autograd_reply(req, arr, count, nil)
  -- internal Functions that keep no reference to their grads (checkpoint) release them now
  local ctx = kind == C.LT_AUTOGRAD_CALL_FUNCTION and S.contexts[id]
  if ctx and ctx._class._release_grads then
    for i = 1, n do if grads[i] then memory.free(grads[i]) end end
    for i = 1, count do if res[i] then memory.free(res[i]) end end
  end
end

-- Starts a job with start(job_out, ...) and services it until it finishes; returns the status of
-- the start or of lt_autograd_job_finish (the engine's error).
local function serve(results, capacity, start, ...)
  local status = start(job_out, ...)
  if status ~= 0 then return status end
  local job = job_out[0]
  while true do
    status = C.lt_autograd_job_next(job, req_out, kind_out, id_out, count_out, gm_out)
    if status ~= 0 then break end
    local req = req_out[0]
    if req == nil then break end
    answer(req, kind_out[0], tonumber(id_out[0]), count_out[0], gm_out[0] == 1)
  end
  return C.lt_autograd_job_finish(job, results, capacity)
end

--[[ Runs a job (see serve) and raises its error at stack level `level` of the caller. An error
     or interrupt at any instruction of serve (even between taking a request and replying) is
     caught by one C call (torch._guard job), which answers what the job took, waits for its
     engine, frees it and restores the grad mode before the error goes on: autograd is never
     left waiting on Lua. ]]
local function run(what, level, results, capacity, start, ...)
  local status = guard.checked(what, guard.job(serve, results, capacity, start, ...))
  drain()
  check(status, what, level + 1)
end

--[[ Runs backward from `tensors` (a list) with `grads` (a list, entries may be nil). ]]
function M.backward(tensors, grads, retain, create, what)
  memory.before_backward()   -- garbage handles of the forward's activations go first (torch._memory)
  local n = #tensors
  local ts, gs = _C.TensorArray(n), _C.TensorArray(n)
  for i = 1, n do
    ts[i - 1] = tensors[i].h
    gs[i - 1] = grads and grads[i] and grads[i].h or nil
  end
  run(what or "backward", 2, nil, 0, C.lt_autograd_backward_start, ts, n, gs,
    retain == nil and -1 or (retain and 1 or 0), create and 1 or 0)
  memory.after_backward()   -- the next forward's growth is measured from here (torch._memory)
end

--[[ torch.autograd.grad through a job: arrays of handles in, a Lua array of results out. ]]
function M.grad(outs, n_out, gouts, ins, n_in, retain, create, allow_unused)
  local results = ffi.new("lt_tensor*[?]", n_in)
  run("autograd.grad", 3, results, n_in, C.lt_autograd_grad_start, outs, n_out, gouts, ins, n_in, retain, create,
    allow_unused)
  local grads = {}
  for i = 1, n_in do grads[i] = wrap(results[i - 1]) end
  return grads
end

---------------------------------------------------------------- tensor hooks
local Handle = {}
Handle.__index = Handle
function Handle.remove(h)
  if h._removed then return end
  h._removed = true
  S.hooks[h._id] = nil
  if h._tensor.h ~= nil then C.lt_tensor_remove_hook(h._tensor.h, h._pos) end
end

--[[ x:register_hook(fn): fn(grad) runs when x's gradient is computed; returning a Tensor replaces
     the gradient. Returns a handle with :remove(). ]]
function Tensor.register_hook(self, fn)
  T.handle("register_hook", 1, self)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    error("bad argument #2 to 'register_hook' (function expected, got " .. type(fn) .. ")", 2)
  end
  local id = new_id()
  check(C.lt_tensor_register_hook(self.h, id, int_out), "register_hook")
  S.hooks[id] = fn
  return setmetatable({ _id = id, _pos = int_out[0], _tensor = self }, Handle)
end

---------------------------------------------------------------- torch.autograd.Function
local Ctx = {}
Ctx.__index = Ctx
function Ctx.save_for_backward(ctx, ...)
  ctx.saved_tensors = (pack(...))
end
function Ctx.mark_dirty(ctx, ...)
  for _, t in ipairs({ ... }) do ctx._dirty[#ctx._dirty + 1] = t end
end
function Ctx.mark_non_differentiable(ctx, ...)
  for _, t in ipairs({ ... }) do ctx._nondiff[#ctx._nondiff + 1] = t end
end
function Ctx.set_materialize_grads(_, _) end  -- grads are always materialized (as zeros)

local function in_list(list, t)
  for _, u in ipairs(list) do
    if istype(Ref, u) and u:is_same(t) then return true end
  end
  return false
end

local function apply(cls, ...)
  drain()
  local args, n_args = pack(...)   -- not { ... }: see torch._args.pack
  local enabled = grad_enabled()
  local ctx = setmetatable({ needs_input_grad = {}, saved_tensors = {}, _dirty = {}, _nondiff = {}, _class = cls,
    _tensor_positions = {} }, Ctx)
  local any = false
  for i = 1, n_args do
    local a = args[i]
    if istype(Ref, a) then
      ctx._tensor_positions[#ctx._tensor_positions + 1] = i
      local needs = enabled and a.requires_grad
      ctx.needs_input_grad[i] = needs
      any = any or needs
    else
      ctx.needs_input_grad[i] = false
    end
  end
  -- forward runs without recording: its ops are replaced by this Function's node.
  -- (grad off and back in one guarded call: torch._guard)
  local outputs = pack(guard.grad(false, cls.forward, ctx, ...))   -- not { ... }: see torch._args.pack
  local n_results = table.maxn(outputs)
  if not any then return unpack(outputs, 1, n_results) end

  local out_pos = {}
  for i = 1, n_results do
    if istype(Ref, outputs[i]) then out_pos[#out_pos + 1] = i end
  end
  local n_out, n_in = #out_pos, #ctx._tensor_positions
  local outs, ins = _C.TensorArray(math.max(n_out, 1)), _C.TensorArray(n_in)
  local flags = ffi.new("int[?]", math.max(n_out, 1))
  for k, pos in ipairs(out_pos) do
    local o = outputs[pos]
    outs[k - 1] = o.h
    flags[k - 1] = (in_list(ctx._dirty, o) and C.LT_FUNCTION_DIRTY or 0) +
      (in_list(ctx._nondiff, o) and C.LT_FUNCTION_NON_DIFFERENTIABLE or 0)
  end
  for k, pos in ipairs(ctx._tensor_positions) do ins[k - 1] = args[pos].h end
  local id = new_id()
  ctx._n_outputs = n_out
  local new = ffi.new("lt_tensor*[?]", math.max(n_out, 1))
  S.contexts[id] = ctx
  local status = C.lt_function_attach(new, outs, n_out, ins, n_in, flags, id, cls.__name or "LuaFunction")
  if status ~= 0 then
    S.contexts[id] = nil
    check(status, (cls.__name or "Function") .. ".apply", 2)
  end
  for k, pos in ipairs(out_pos) do outputs[pos] = wrap(new[k - 1]) end
  return unpack(outputs, 1, n_results)
end

local Function = {}
Function.__index = Function

--[[ torch.autograd.Function(name) or torch.autograd.Function{forward=, backward=, name=}:
     a new Function class; define forward(ctx, ...) and backward(ctx, grad_outputs...) on it and
     call Class.apply(...). ]]
local function new_class(spec)
  local cls = {}
  if type(spec) == "table" then
    for k, v in pairs(spec) do cls[k] = v end
    cls.__name = spec.name or spec.__name or "LuaFunctionBackward"
  else
    cls.__name = spec and tostring(spec) or "LuaFunctionBackward"
  end
  cls.apply = function(...) return apply(cls, ...) end
  return setmetatable(cls, Function)
end
function Function.extend(_, spec) return new_class(spec) end
setmetatable(Function, { __call = function(_, spec) return new_class(spec) end })
function Function.forward() error("torch.autograd.Function: forward is not defined", 2) end
function Function.backward() error("torch.autograd.Function: backward is not defined", 2) end
M.Function = Function

return M
