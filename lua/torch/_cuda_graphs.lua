--[==[
  torch._cuda_graphs — CUDA graphs from Lua (PyTorch's torch/cuda/graphs.py), over
  at::cuda::CUDAGraph (bindings/lt_cuda_graph.cpp). A graph records the kernels a piece of work
  queues, once; replaying it relaunches them all in one call, with no Lua, no dispatcher and no
  allocator work: for a launch-bound step (a small model) that is where the time goes.

      -- whole-step capture, as in PyTorch's docs (static input/target tensors, an optimizer
      -- whose step queues only device work: SGD, or one with capturable = true)
      local g = torch.cuda.CUDAGraph()
      torch.cuda.stream(side, function() for _ = 1, 3 do step() end end)   -- warm up first
      torch.cuda.graph(g, function() loss = step() end)     -- capture (on a side stream)
      static_x:copy_(next_x); g:replay()                    -- rerun every kernel, nothing else
      torch.cuda.graph(g, fn, {pool = torch.cuda.graph_pool_handle(), stream = s,
                               capture_error_mode = "thread_local"})   -- PyTorch's keywords
      g:capture_begin([pool[, capture_error_mode]]), g:capture_end(), g:replay(), g:reset(),
      g:pool() --> handle, g:instantiate(), g:enable_debug_mode()
      torch.cuda.is_current_stream_capturing()

      -- a function or module, forward and backward each captured (PyTorch's make_graphed_callables)
      local graphed = torch.cuda.make_graphed_callables(model, { x_sample },
                                                        {num_warmup_iters = 3, allow_unused_input = false})
      local y = graphed(x)          -- replays the forward graph; y:backward() replays the backward one

  make_graphed_callables takes one callable (a function of tensors, or an nn.Module, whose
  parameters then count as inputs) and a list of sample tensors, or PyTorch's tuple form: a table
  of callables and a table of their sample lists, giving a table of graphed callables that share
  one memory pool. For a module it returns a function that replays the graphs while the module's
  `training` flag is what it was at capture and calls the module itself otherwise (PyTorch
  replaces the module's forward and returns the module). Pool handles are tables {a, b}
  (PyTorch's tuples).

  Without the CUDA toolkit at build time, or without a GPU, every call raises: CUDAGraph() gives
  libtorch's error prefixed by "cuda.CUDAGraph" (PyTorch: "CUDA error: CUDA driver version is
  insufficient ..." on a machine without a driver). graph_pool_handle needs no device, as in PyTorch.

  Usage (internal): require("torch._cuda_graphs").install(torch), from torch.backends.
]==]
local ffi = require "ffi"
local _C = require "torch._C"
local P = require "torch._pysig"
local W = require "torch._pywrap"
local args = require "torch._args"
local streams = require "torch._cuda_streams"

local C = _C.C
local M = {}

local ptr_out, int_out = ffi.new("void *[1]"), ffi.new("int[1]")
local pool_out = ffi.new("uint64_t[2]")

local function check(status, level)
  if status ~= 0 then error(_C.last_error(), level + 1) end
end

local function pack(...) return { n = select("#", ...), ... } end

local MODES = { global = 0, thread_local = 1, relaxed = 2 }

-- a new memory pool's handle, {a, b} (PyTorch's tuple); level: the caller to blame for an error
local function pool_handle(level)
  check(C.lt_cuda_graph_pool_handle(pool_out), level + 1)
  return { tonumber(pool_out[0]), tonumber(pool_out[1]) }
end

local function pool_arg(pool, what, level)
  if pool == nil then return 0, 0 end
  if type(pool) ~= "table" or type(pool[1]) ~= "number" or type(pool[2]) ~= "number" then
    error(what .. ": pool must be a handle from torch.cuda.graph_pool_handle() or CUDAGraph:pool()", level + 1)
  end
  return pool[1], pool[2]
end

local function mode_arg(mode, what, level)
  local m = MODES[mode]
  if m == nil then
    error(("%s: capture_error_mode must be 'global', 'thread_local' or 'relaxed', got %s"):format(what,
      type(mode) == "string" and ("'" .. mode .. "'") or args.typename(mode)), level + 1)
  end
  return m
end

---------------------------------------------------------------- CUDAGraph

local Graph = {}
Graph.__index = Graph
Graph.__tostring = function() return "<torch.cuda.CUDAGraph>" end

local function op(g, code, p0, p1, mode)
  check(C.lt_cuda_graph_op(g._h, code, p0 or 0, p1 or 0, mode or 0, pool_out), 3)
end

local BEGIN = P.signature("capture_begin", "pool=None, capture_error_mode='global'")
function Graph:capture_begin(...)
  local a = W.bind(BEGIN, 2, ...)
  local p0, p1 = pool_arg(a.pool, "CUDAGraph.capture_begin", 2)
  op(self, 0, p0, p1, mode_arg(a.capture_error_mode, "CUDAGraph.capture_begin", 2))
end
function Graph:capture_end() op(self, 1) end
function Graph:replay() op(self, 2) end
function Graph:reset() op(self, 3) end
function Graph:pool()
  op(self, 4)
  return { tonumber(pool_out[0]), tonumber(pool_out[1]) }
end
function Graph:instantiate() op(self, 5) end
function Graph:enable_debug_mode() op(self, 6) end

local NEW = P.signature("CUDAGraph", "keep_graph=False")
local GraphClass = setmetatable({ __signature = NEW }, {
  __call = function(_, ...)
    local a = W.bind(NEW, 2, ...)
    W.bool(NEW, a, "keep_graph", 2)
    check(C.lt_cuda_graph_new(a.keep_graph and 1 or 0, ptr_out), 2)
    return setmetatable({ _h = ffi.gc(ptr_out[0], C.lt_cuda_graph_free) }, Graph)
  end,
})

local function is_graph(v) return getmetatable(v) == Graph end

---------------------------------------------------------------- graph(g, fn, opts)

local side_stream   -- PyTorch's graph.default_capture_stream: one side stream for every capture

--[[ Captures fn(...) into g as PyTorch's `with torch.cuda.graph(g, pool=, stream=,
     capture_error_mode=):` does: synchronize, a full collection and empty_cache, then on the
     capture stream capture_begin, fn, capture_end. The stream is put back whatever happens; an
     error in fn is raised after capture_end has been tried. Returns fn's results. ]]
local torch   -- the torch table, set by install (this file loads while torch/init.lua runs)

local function capture(g, fn, opts, ...)
  local level = 1
  if not is_graph(g) then args.bad("cuda.graph", 1, "torch.cuda.CUDAGraph", args.typename(g), level + 1) end
  if type(fn) ~= "function" then args.bad("cuda.graph", 2, "function", args.typename(fn), level + 1) end
  opts = args.opt_table("cuda.graph", 3, opts) or {}
  for k in pairs(opts) do
    if k ~= "pool" and k ~= "stream" and k ~= "capture_error_mode" then
      error(("bad argument #3 to 'cuda.graph' (unknown option '%s'; expected pool, stream, capture_error_mode)")
        :format(tostring(k)), level + 1)
    end
  end
  local p0, p1 = pool_arg(opts.pool, "cuda.graph", level + 1)
  local mode = mode_arg(opts.capture_error_mode or "global", "cuda.graph", level + 1)
  local stream = opts.stream
  if stream ~= nil and not streams.is_stream(stream) then
    error("cuda.graph: stream must be a torch.cuda.Stream", level + 1)
  end
  torch.cuda.synchronize()
  collectgarbage()
  torch.cuda.empty_cache()
  if stream == nil then
    side_stream = side_stream or torch.cuda.Stream()
    stream = side_stream
  end
  local function captured(...)
    local st = C.lt_cuda_graph_op(g._h, 0, p0, p1, mode, pool_out)
    if st ~= 0 then error(_C.last_error(), 0) end
    local res = pack(pcall(fn, ...))
    st = C.lt_cuda_graph_op(g._h, 1, 0, 0, 0, pool_out)
    if not res[1] then error(res[2], 0) end
    if st ~= 0 then error(_C.last_error(), 0) end
    return unpack(res, 2, res.n)
  end
  return streams.run_on(stream, captured, ...)
end

---------------------------------------------------------------- make_graphed_callables

local function tensor_list(v, what, level)
  if torch.is_tensor(v) then return { v } end
  if type(v) ~= "table" then args.bad(what, 2, "table of Tensors", args.typename(v), level + 1) end
  for i, t in ipairs(v) do
    if not torch.is_tensor(t) then
      error(("%s: sample_args[%d] must be a Tensor, got %s"):format(what, i, args.typename(t)), level + 1)
    end
  end
  return v
end

local function outputs_of(...)
  local out = pack(...)
  for i = 1, out.n do
    if not torch.is_tensor(out[i]) then
      error(("cuda.make_graphed_callables: the callable's result %d is %s; only Tensor results can be graphed")
        :format(i, args.typename(out[i])), 0)
    end
  end
  return out
end

local function requiring_grad(list)
  local out = {}
  for _, t in ipairs(list) do if t.requires_grad then out[#out + 1] = t end end
  return out
end

--[[ PyTorch's warmup and captures (torch/cuda/graphs.py), for the callables in order: on a side
     stream `warm` iterations of each forward and autograd.grad (autograd's and cuBLAS's lazy setup
     happens outside capture); then each forward captured into its graph, in order, and each
     backward (grads of the outputs that require grad w.r.t. the inputs that do) into its own, in
     reverse order, all in one memory pool, so a later callable's backward can reuse what an
     earlier one's forward freed. entries[i] = {run =, user_args =, surface =, fwd =, bwd =};
     each gets out, grad_out and grad_in: the static tensors its graphs read and write. ]]
local function capture_all(entries, a)
  local grad_opts = { allow_unused = a.allow_unused_input }
  local mempool = a.pool or pool_handle(3)
  torch.cuda.synchronize()
  torch.cuda.stream(torch.cuda.Stream(), function()
    for _, e in ipairs(entries) do
      for _ = 1, a.num_warmup_iters do
        local outs = requiring_grad(outputs_of(e.callable(unpack(e.user_args, 1, #e.user_args))))
        local ins = requiring_grad(e.surface)
        if #outs > 0 and #ins > 0 then
          local gos = {}
          for i, o in ipairs(outs) do gos[i] = torch.empty_like(o) end
          torch.autograd.grad(outs, ins, { grad_outputs = gos, allow_unused = a.allow_unused_input })
        end
      end
    end
  end)
  torch.cuda.synchronize()

  for _, e in ipairs(entries) do
    capture(e.fwd, function() e.out = outputs_of(e.callable(unpack(e.user_args, 1, #e.user_args))) end,
      { pool = mempool })
  end
  for k = #entries, 1, -1 do
    local e = entries[k]
    local static_out, static_grad_out, diff_out = e.out, {}, {}
    for i = 1, static_out.n do
      if static_out[i].requires_grad then
        static_grad_out[i] = torch.empty_like(static_out[i])
        diff_out[#diff_out + 1] = static_out[i]
      end
    end
    local grad_ins, static_grad_in = requiring_grad(e.surface), {}
    local has_bwd = #diff_out > 0 and #grad_ins > 0
    if has_bwd then
      capture(e.bwd, function()
        local gos = {}
        for i = 1, static_out.n do if static_grad_out[i] then gos[#gos + 1] = static_grad_out[i] end end
        grad_opts.grad_outputs = gos
        local gi = torch.autograd.grad(diff_out, grad_ins, grad_opts)
        local j = 0
        for i, t in ipairs(e.surface) do
          if t.requires_grad then j = j + 1; static_grad_in[i] = gi[j] end
        end
      end, { pool = mempool })
    end
    e.grad_out, e.grad_in, e.has_bwd = static_grad_out, static_grad_in, has_bwd
  end
end

-- The autograd Function that copies new inputs into the static ones and replays the graphs.
local function graphed_function(st, surface, n_user)
  local fwd, bwd, static_out, static_grad_out, static_grad_in = st.fwd, st.bwd, st.out, st.grad_out, st.grad_in
  local has_bwd = st.has_bwd
  local Graphed = torch.autograd.Function("Graphed")
  function Graphed.forward(_, ...)
    for i = 1, n_user do
      local x = select(i, ...)
      if x:data_ptr() ~= surface[i]:data_ptr() then surface[i]:copy_(x) end
    end
    fwd:replay()
    local res = {}
    for i = 1, static_out.n do res[i] = static_out[i]:detach() end
    return unpack(res, 1, static_out.n)
  end
  function Graphed.backward(_, ...)
    for i = 1, static_out.n do
      local g = select(i, ...)
      if static_grad_out[i] and g ~= nil and g:data_ptr() ~= static_grad_out[i]:data_ptr() then
        static_grad_out[i]:copy_(g)
      end
    end
    if has_bwd then bwd:replay() end
    local res = {}
    for i = 1, #surface do res[i] = static_grad_in[i] and static_grad_in[i]:detach() or nil end
    return unpack(res, 1, #surface)
  end
  return Graphed
end

local MGC = P.signature("make_graphed_callables",
  "callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None")

-- One callable's surface (its sample tensors, then a module's parameters) and its graphed
-- function, checked as PyTorch checks it: no hooks on a module, no buffer requiring grad.
local WHAT = "cuda.make_graphed_callables"
local function prepare(callable, sample, what_i, level)
  -- an nn.Module instance, recognised by its state (the core does not require torch.nn)
  local is_module = type(callable) == "table" and rawget(callable, "_class") ~= nil
  if not is_module and type(callable) ~= "function" then
    error(("%s: %s must be a function or an nn.Module, got %s"):format(WHAT, what_i, args.typename(callable)), level + 1)
  end
  if is_module then
    local pre, post = rawget(callable, "_forward_pre_hooks"), rawget(callable, "_forward_hooks")
    if (pre and #pre > 0) or (post and #post > 0) then
      error(WHAT .. ": Modules must not have hooks registered at the time they are passed. However, registering "
        .. "hooks on modules after passing them through make_graphed_callables is allowed.", level + 1)
    end
    for _, b in ipairs(callable:buffers()) do
      if b.requires_grad then
        error(WHAT .. ": In any nn.Module passed to make_graphed_callables, only parameters may be trainable. "
          .. "All buffers must have requires_grad=False.", level + 1)
      end
    end
  end
  local user_args = tensor_list(sample, WHAT, level + 1)
  local surface = {}
  for i, t in ipairs(user_args) do surface[i] = t end
  if is_module then
    for _, p in ipairs(callable:parameters()) do surface[#surface + 1] = p end
  end
  return { callable = callable, is_module = is_module, user_args = user_args, surface = surface,
    training = is_module and callable.training }
end

local function graphed_callable(e)
  local Graphed = graphed_function(e, e.surface, #e.user_args)
  local n_user, callable, is_module, training = #e.user_args, e.callable, e.is_module, e.training
  local extra = {}
  for i = n_user + 1, #e.surface do extra[#extra + 1] = e.surface[i] end
  return function(...)
    if select("#", ...) ~= n_user then
      error(("%s: the graphed callable takes %d tensors, got %d"):format(WHAT, n_user, select("#", ...)), 2)
    end
    if is_module and callable.training ~= training then return callable(...) end
    local all = pack(...)
    for i, t in ipairs(extra) do all[n_user + i] = t end
    return Graphed.apply(unpack(all, 1, n_user + #extra))
  end
end

-- make_graphed_callables(callable, sample_args) -> a graphed callable, or
-- make_graphed_callables({c1, c2, ...}, {{args of c1}, {args of c2}, ...}) -> {g1, g2, ...}
-- (PyTorch's tuple form: one memory pool, forwards captured in order, backwards in reverse).
local function make_graphed(...)
  local a = W.bind(MGC, 2, ...)
  local callables = a.callables
  local many = type(callables) == "table" and rawget(callables, "_class") == nil and getmetatable(callables) == nil
  if not args.is_int(a.num_warmup_iters) or a.num_warmup_iters < 0 then
    error(WHAT .. ": num_warmup_iters must be a non-negative integer", 2)
  end
  W.bool(MGC, a, "allow_unused_input", 2)
  local entries = {}
  if many then
    local samples = a.sample_args
    if type(samples) ~= "table" or getmetatable(samples) ~= nil or #samples ~= #callables then
      error(("%s: with a table of %d callables, sample_args must be a table of %d tables of Tensors (one per "
        .. "callable), got %s"):format(WHAT, #callables, #callables, args.typename(samples)), 2)
    end
    if #callables == 0 then error(WHAT .. ": the table of callables is empty", 2) end
    for i, c in ipairs(callables) do entries[i] = prepare(c, samples[i], ("callables[%d]"):format(i), 2) end
  else
    entries[1] = prepare(callables, a.sample_args, "callables", 2)
  end
  -- the graphs first: without a GPU their error (PyTorch's) is the one raised, at the caller's line
  local ok, first = pcall(GraphClass)
  if not ok then error((tostring(first):gsub("^[^\n:]+:%d+: ", "")), 2) end
  for i, e in ipairs(entries) do e.fwd = i == 1 and first or GraphClass() end
  for _, e in ipairs(entries) do e.bwd = GraphClass() end
  capture_all(entries, a)
  if not many then return graphed_callable(entries[1]) end
  local out = {}
  for i, e in ipairs(entries) do out[i] = graphed_callable(e) end
  return out
end

function M.install(t)
  torch = t
  local cuda = torch.cuda
  cuda.CUDAGraph = GraphClass
  cuda.graph = capture
  cuda.graph_pool_handle = function()
    local h = pool_handle(2)   -- not a tail call: level 2 is this function's caller
    return h
  end
  cuda.is_current_stream_capturing = function()
    check(C.lt_cuda_is_current_stream_capturing(int_out), 2)
    return int_out[0] ~= 0
  end
  cuda.make_graphed_callables = make_graphed
  cuda.graphs = { CUDAGraph = GraphClass, graph = cuda.graph, graph_pool_handle = cuda.graph_pool_handle,
    is_current_stream_capturing = cuda.is_current_stream_capturing,
    make_graphed_callables = cuda.make_graphed_callables }
end

return M
