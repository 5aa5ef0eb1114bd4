--[[
  torch.autograd — gradients: x.requires_grad, x.grad, x.is_leaf, x.grad_fn, x:backward(),
  x:retain_grad(), torch.autograd.grad, and the modes: torch.no_grad(fn), torch.enable_grad(fn),
  torch.set_grad_enabled(bool), torch.inference_mode(fn), torch.set_detect_anomaly(bool);
  torch.autograd.Function and x:register_hook come from torch.autograd_function, gradcheck and
  gradgradcheck from torch.gradcheck (installed by torch/init.lua).

  PyTorch's `with torch.no_grad():` becomes a function call: torch.no_grad(function() ... end)
  runs the function with gradient tracking off and restores the previous mode even if it errors;
  it returns the function's results.

  Usage:  local x = torch.randn(3, {requires_grad = true})
          (x * x):sum():backward()          -- x.grad == 2 * x
          local gx = torch.autograd.grad({(x ^ 3):sum()}, {x})[1]
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local guard = require "torch._guard"
local T = require "torch._tensor"

local C, check, Ref = _C.C, _C.check, _C.Ref
local wrap = memory.wrap
local Tensor, getters, setters = T.Tensor, T.getters, T.setters
local istype = ffi.istype

local custom = require "torch.autograd_function"

local M = {}
M.Function = custom.Function
--[[ torch.autograd.backward(tensors, grad_tensors=nil, {retain_graph=, create_graph=}) ]]
function M.backward(tensors, grads, opts)
  if istype(Ref, tensors) then tensors = { tensors } end
  if istype(Ref, grads) then grads = { grads } end
  opts = opts or {}
  -- a tail call: the engine's errors (backward twice, ...) then name the caller's line
  return custom.backward(tensors, grads, opts.retain_graph, opts.create_graph, "autograd.backward")
end
local out = _C.TensorOut()
local int_out = _C.IntOut()
local str_out = ffi.new("const char*[1]")

---------------------------------------------------------------- per-tensor state
getters.requires_grad = function(self)
  check(C.lt_tensor_requires_grad(self.h, int_out), "requires_grad")
  return int_out[0] == 1
end
setters.requires_grad = function(self, v)
  if type(v) ~= "boolean" then error("requires_grad must be a boolean, got " .. args.typename(v), 3) end
  check(C.lt_tensor_set_requires_grad(self.h, v and 1 or 0), "requires_grad", 3)
end
function Tensor.requires_grad_(self, v)
  T.handle("requires_grad_", 1, self)
  if v == nil then v = true end
  if type(v) ~= "boolean" then args.bad("requires_grad_", 2, "boolean", args.typename(v)) end
  check(C.lt_tensor_set_requires_grad(self.h, v and 1 or 0), "requires_grad_")
  return self
end

getters.is_leaf = function(self)
  check(C.lt_tensor_is_leaf(self.h, int_out), "is_leaf")
  return int_out[0] == 1
end

getters.grad = function(self)
  check(C.lt_tensor_grad(out, self.h), "grad")
  return wrap(out[0])
end
setters.grad = function(self, g)
  if g ~= nil and not istype(Ref, g) then error("grad must be a Tensor or nil, got " .. args.typename(g), 3) end
  check(C.lt_tensor_set_grad(self.h, g and g.h or nil), "grad", 3)
end

-- The name of the op that made this tensor ("MulBackward0"), or nil for leaves.
function Tensor.grad_fn_name(self)
  check(C.lt_tensor_grad_fn_name(self.h, str_out), "grad_fn")
  if str_out[0] == nil then return nil end
  return ffi.string(str_out[0])
end

--[[ x.grad_fn: the autograd node that made x (nil for a leaf), as PyTorch's Node object:
       g:name()           "MulBackward0" (the C++ node's name, as PyTorch's name():
                          "torch::autograd::AccumulateGrad" for a leaf's node)
       g.next_functions   a list of {node, input_nr} pairs, one per input of the op, node nil for
                          an input that needs no grad (PyTorch's tuple of (Node|None, int))
       g.variable         on an AccumulateGrad node: the leaf tensor its gradient goes to
                          (nil on other nodes, where PyTorch has no such attribute)
       g == h             the same node (a node reached by two branches is equal to itself)
       g:id()             a number naming the node while it lives (its address), for tables
     tostring(g) is "<MulBackward0>", as the grad_fn=<...> of a tensor's repr ("<AccumulateGrad>").
     A GradFn keeps its node, and so the graph above it, alive while Lua holds it. ]]
local GradFn = {}
local gradfn_methods = {}
local node_out = ffi.new("lt_node*[1]")
local u64_out = ffi.new("uint64_t[1]")

local function node_object(h)
  if h == nil then return nil end
  h = ffi.gc(h, C.lt_node_free)
  check(C.lt_node_name(h, str_out), "grad_fn")
  return setmetatable({ _h = h, _name = ffi.string(str_out[0]) }, GradFn)
end

function gradfn_methods.name(g) return g._name end
function gradfn_methods.id(g)
  check(C.lt_node_id(g._h, u64_out), "grad_fn")
  return tonumber(u64_out[0])
end

local gradfn_fields = {}
function gradfn_fields.next_functions(g)
  check(C.lt_node_num_next(g._h, int_out), "next_functions")
  local n, list = int_out[0], {}
  for i = 0, n - 1 do
    check(C.lt_node_next(g._h, i, node_out, int_out), "next_functions")
    list[i + 1] = { node_object(node_out[0]), int_out[0] }
  end
  return list
end
function gradfn_fields.variable(g)
  check(C.lt_node_variable(g._h, out), "variable")
  return wrap(out[0])
end

GradFn.__index = function(g, k)
  local m = gradfn_methods[k]
  if m ~= nil then return m end
  local f = gradfn_fields[k]
  if f ~= nil then return f(g) end
  return nil
end
-- PyTorch's repr names a node by its Python type: "AccumulateGrad" for the C++ node whose
-- name() is "torch::autograd::AccumulateGrad"
GradFn.__tostring = function(g) return "<" .. g._name:gsub("^torch::autograd::", "") .. ">" end
GradFn.__eq = function(a, b)
  if getmetatable(a) ~= GradFn or getmetatable(b) ~= GradFn then return false end
  check(C.lt_node_same(a._h, b._h, int_out), "grad_fn")
  return int_out[0] == 1
end

getters.grad_fn = function(self)
  check(C.lt_tensor_grad_fn(self.h, node_out), "grad_fn")
  return node_object(node_out[0])
end

function Tensor.retain_grad(self)
  T.handle("retain_grad", 1, self)
  check(C.lt_tensor_retain_grad(self.h), "retain_grad")
  return self
end

--[[ backward(gradient=nil, {retain_graph=, create_graph=}) — gradient is required for
     non-scalar outputs, as in PyTorch. ]]
function Tensor.backward(self, gradient, opts)
  T.handle("backward", 1, self)
  if args.is_options(gradient) then gradient, opts = nil, gradient end
  if gradient ~= nil and not istype(Ref, gradient) then
    args.bad("backward", 2, "Tensor or nil", args.typename(gradient))
  end
  opts = args.opt_table("backward", 3, opts) or {}
  -- through a job (torch.autograd_function): the engine runs off this thread, so Lua Functions
  -- and hooks in the graph are called back on this thread. A tail call, so the engine's errors
  -- (backward twice, ...) name the caller's line.
  return custom.backward({ self }, { gradient }, opts.retain_graph, opts.create_graph, "backward")
end

---------------------------------------------------------------- torch.autograd.grad
local function as_list(name, pos, v)
  if istype(Ref, v) then return { v } end
  if type(v) ~= "table" or #v == 0 then args.bad(name, pos, "Tensor or non-empty table of Tensors", args.typename(v), 3) end
  for i = 1, #v do
    if not istype(Ref, v[i]) then
      error(("bad argument #%d to '%s' (Tensor expected at position %d, got %s)"):format(pos, name, i, args.typename(v[i])), 3)
    end
  end
  return v
end

--[[ autograd.grad(outputs, inputs, {grad_outputs=, retain_graph=, create_graph=, allow_unused=})
     returns a Lua array of gradients, one per input (nil where unused and allow_unused). ]]
function M.grad(outputs, inputs, opts)
  outputs = as_list("grad", 1, outputs)
  inputs = as_list("grad", 2, inputs)
  opts = args.opt_table("grad", 3, opts) or {}
  local n_out, n_in = #outputs, #inputs
  local outs, ins = _C.TensorArray(n_out), _C.TensorArray(n_in)
  for i = 1, n_out do outs[i - 1] = outputs[i].h end
  for i = 1, n_in do ins[i - 1] = inputs[i].h end
  local gouts = nil
  if opts.grad_outputs ~= nil then
    local g = istype(Ref, opts.grad_outputs) and { opts.grad_outputs } or opts.grad_outputs
    if type(g) ~= "table" then error("grad: grad_outputs must be a Tensor or a table of Tensors", 2) end
    gouts = _C.TensorArray(n_out)
    for i = 1, n_out do
      if g[i] ~= nil and not istype(Ref, g[i]) then error("grad: grad_outputs[" .. i .. "] must be a Tensor or nil", 2) end
      gouts[i - 1] = g[i] and g[i].h or nil
    end
  end
  local retain = opts.retain_graph
  return custom.grad(outs, n_out, gouts, ins, n_in, retain == nil and -1 or (retain and 1 or 0),
    opts.create_graph and 1 or 0, opts.allow_unused and 1 or 0)
end

---------------------------------------------------------------- modes
function M.is_grad_enabled()
  C.lt_grad_enabled(int_out)
  return int_out[0] == 1
end

function M.set_grad_enabled(enabled)
  if type(enabled) ~= "boolean" then args.bad("set_grad_enabled", 1, "boolean", args.typename(enabled)) end
  check(C.lt_set_grad_enabled(enabled and 1 or 0), "set_grad_enabled")
end

-- Runs fn(...) with grad mode set to `enabled`, restoring the previous mode afterwards whatever
-- raised (torch._guard).
local function with_grad_mode(name, enabled, fn, ...)
  if type(fn) ~= "function" then args.bad(name, 1, "function", args.typename(fn), 2) end
  return guard.checked(name, guard.grad(enabled, fn, ...))
end

function M.no_grad(fn, ...) return with_grad_mode("no_grad", false, fn, ...) end
function M.enable_grad(fn, ...) return with_grad_mode("enable_grad", true, fn, ...) end

-- torch.inference_mode(fn, ...): like no_grad, and tensors made inside can never join autograd.
function M.inference_mode(fn, ...)
  if type(fn) ~= "function" then args.bad("inference_mode", 1, "function", args.typename(fn)) end
  return guard.checked("inference_mode", guard.inference(fn, ...))
end

function M.is_inference_mode_enabled()
  C.lt_is_inference_mode(int_out)
  return int_out[0] == 1
end

-- Anomaly detection: backward errors name the forward op that produced a NaN, with its trace.
-- libtorch records a C++ backtrace of every forward op in this mode, and the unwinder aborts the
-- process on LuaJIT's compiled trace frames: the JIT is off (traces flushed) while it is on.
local function set_anomaly(enabled)
  check(C.lt_set_anomaly_enabled(enabled and 1 or 0), "set_detect_anomaly", 3)
  local state = _C.state
  if enabled then
    if state.anomaly_jit_was_on == nil then state.anomaly_jit_was_on = (jit.status()) end
    if jit.status() then
      jit.off()
      jit.flush()
    end
  elseif state.anomaly_jit_was_on ~= nil then
    if state.anomaly_jit_was_on then jit.on() end
    state.anomaly_jit_was_on = nil
  end
end

function M.set_detect_anomaly(enabled)
  if type(enabled) ~= "boolean" then args.bad("set_detect_anomaly", 1, "boolean", args.typename(enabled)) end
  set_anomaly(enabled)
end

function M.is_anomaly_enabled()
  C.lt_anomaly_enabled(int_out)
  return int_out[0] == 1
end

-- detect_anomaly(fn, ...): runs fn with anomaly detection on, restoring the previous setting (and
-- the JIT) whatever raised (torch._guard).
function M.detect_anomaly(fn, ...)
  if type(fn) ~= "function" then args.bad("detect_anomaly", 1, "function", args.typename(fn)) end
  return guard.checked("detect_anomaly", guard.anomaly(true, fn, ...))
end

return M
