--[[
  torch — ltorch's Lua library: PyTorch's tensor engine (libtorch) with PyTorch's names.

      local torch = require "torch"
      local x = torch.randn(3, 4, {requires_grad = true})
      local loss = (x * x):sum()
      loss:backward()
      print(x.grad)                    -- 2 * x

  Conventions (README has the full list): dims and indices are 0-based as in PyTorch; Lua
  tables (shapes from x:size(), x:tolist()) stay 1-based; keyword arguments are a trailing
  table; comparisons are methods (x:lt(y)); no_grad and friends take a function.

  This file only assembles the namespace from the modules that implement it.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"
local args = require "torch._args"
local dtype_mod = require "torch.dtype"
local device_mod = require "torch.device"
local T = require "torch._tensor"
local creation = require "torch._creation"
local math_ops = require "torch._ops_math"
local reduce_ops = require "torch._ops_reduce"
local views = require "torch._views"
local indexing = require "torch._indexing"
require "torch._tensor_str"
local autograd = require "torch.autograd"
local gradcheck = require "torch.gradcheck"

local C, check = _C.C, _C.check

local torch = {}

local function merge(src)
  for k, v in pairs(src) do torch[k] = v end
end
merge(creation)
merge(math_ops)
merge(reduce_ops)
merge(views)
local crash_guards = require "torch._crash_guards"
for k, v in pairs(crash_guards) do if k ~= "linalg" then torch[k] = v end end
merge(require "torch._type_info")

-- dtypes: torch.float32, torch.float, torch.int64, torch.long, ...
for name, d in pairs(dtype_mod.by_name) do torch[name] = d end

torch.Tensor = T.Tensor
-- torch.Size(list) builds a new Size from a list of integers (as PyTorch's torch.Size(iterable));
-- it never adopts its argument: setmetatable on a caller's table would turn, say, torch.float32
-- into a Size (found by tools/api_fuzz.lua).
torch.Size = function(list)
  if list == nil then return T.new_size({}) end
  local mt = getmetatable(list)
  if type(list) ~= "table" or (mt ~= nil and mt ~= T.Size) then args.bad("Size", 1, "list of integers", args.typename(list)) end
  local s = {}
  for i = 1, #list do
    local v = list[i]
    if not args.is_int(v) then
      error(("torch.Size: element %d must be an integer, got %s"):format(i, type(v) == "number" and tostring(v) or args.typename(v)), 2)
    end
    s[i] = v
  end
  return T.new_size(s)
end
torch.is_tensor = T.is_tensor
torch.newaxis = indexing.newaxis

torch.device = function(spec, index)
  if index ~= nil and type(spec) == "string" then spec = spec .. ":" .. tostring(index) end
  local d = device_mod.resolve(spec, "device", 2)  -- not a tail call: errors blame the caller
  return d
end
torch.cuda = device_mod.cuda

torch.autograd = autograd
autograd.gradcheck, autograd.gradgradcheck = gradcheck.gradcheck, gradcheck.gradgradcheck
torch.no_grad = autograd.no_grad
torch.enable_grad = autograd.enable_grad
torch.set_grad_enabled = autograd.set_grad_enabled
torch.is_grad_enabled = autograd.is_grad_enabled
torch.inference_mode = autograd.inference_mode
torch.is_inference_mode_enabled = autograd.is_inference_mode_enabled
torch.set_detect_anomaly = autograd.set_detect_anomaly
torch.is_anomaly_enabled = autograd.is_anomaly_enabled

-- mixed precision: torch.autocast(device_type, fn, opts), torch.amp.GradScaler, autocast queries
torch.amp = require "torch.amp"
merge(torch.amp.torch_functions)

torch.scope = require("torch._scope").scope
torch.free = function(x) return T.Tensor.free(x) end
torch.memory_stats = memory.stats
torch.collect = memory.collect

torch.__version__ = "0.1.0"
torch.libtorch_version = ffi.string(C.lt_version())
require("torch.backends").install(torch)   -- torch.backends.cuda/cudnn, torch.version, torch.cuda's memory

function torch.manual_seed(seed)
  seed = args.int("manual_seed", 1, seed)
  if seed < 0 then error("manual_seed: seed must be non-negative, got " .. seed, 2) end
  check(C.lt_manual_seed(seed), "manual_seed")
end

-- PyTorch's torch.seed(): no argument; seeds the CPU and every CUDA generator with a fresh
-- non-deterministic seed and returns it (53 bits, so torch.manual_seed(s) repeats the run).
function torch.seed(...)
  if select("#", ...) > 0 then
    error("seed: takes no argument (it picks a fresh random seed and returns it); " ..
      "use torch.manual_seed(n) to set one", 2)
  end
  local out = ffi.new("uint64_t[1]")
  check(C.lt_seed(out), "seed")
  return tonumber(out[0])
end

-- The seed the CPU generator was last seeded with. A fresh process starts from a non-deterministic
-- 64-bit seed, as PyTorch's does, which a Lua number rounds above 2^53; the seeds manual_seed and
-- seed() set come back exactly.
function torch.initial_seed()
  local out = ffi.new("uint64_t[1]")
  check(C.lt_initial_seed(out), "initial_seed")
  return tonumber(out[0])
end

function torch.set_num_threads(n)
  check(C.lt_set_num_threads(args.int("set_num_threads", 1, n)), "set_num_threads")
end

function torch.get_num_threads()
  local n = _C.IntOut()
  check(C.lt_get_num_threads(n), "get_num_threads")
  return n[0]
end

function torch.get_default_dtype() return dtype_mod.default_float end
function torch.set_default_dtype(d)
  d = dtype_mod.resolve(d, "set_default_dtype", 2)
  if not d.is_floating_point then
    error("set_default_dtype: only floating-point types are supported as the default type, got " .. tostring(d), 2)
  end
  dtype_mod.default_float = d
end

function torch.numel(x, extra) T.handle("numel", 1, x); return T.Tensor.numel(x, extra) end

-- Checkpoints: torch.serialization, torch.training_state and torch.jit load on first use
-- (torch._lazy_modules), as do torch.nn, torch.optim, torch.distributed and torch.utils.
function torch.save(value, path) return require("torch.serialization").save(value, path) end
function torch.load(path, opts) return require("torch.serialization").load(path, opts) end
function torch.get_rng_state() return require("torch.serialization").get_rng_state() end
function torch.set_rng_state(state) return require("torch.serialization").set_rng_state(state) end

-- Keyword forms the fast paths do not take go to the generated ops (torch.cat(xs, {dim = 1})).
local fallback = require "torch._fallback"
fallback.keywords_to_generated(torch, fallback.positional_only)
fallback.keywords_to_generated(T.Tensor, fallback.positional_only)

-- x:describe() (a summary string: torch._describe) and torch.breakpoint() (a debugger REPL at
-- the caller; needs the ltorch executable; torch._lazy_modules loads the REPL when it is called).
require "torch._describe"
torch.breakpoint = require("torch._lazy_modules").breakpoint

-- The generated op surface and the lazily loaded namespaces (torch._ops_lookup).
require("torch._ops_lookup").install(torch)
for k, v in pairs(crash_guards.linalg) do torch.linalg[k] = v end
-- stft's center=True, a default of PyTorch's Python wrapper (torch._python_defaults).
require("torch._python_defaults").install(torch, T.Tensor)
-- x.mT, x.H, x.real, x.nbytes, x.is_cpu, ...: PyTorch's attributes as values (torch._tensor_properties).
require("torch._tensor_properties").install()

-- PyTorch's Python-level torch.* functions and Tensor methods, written in Lua: warnings once per
-- call site, determinism switches, unique, lu and low-rank SVD/PCA, shapes and print options,
-- and Tensor methods such as resize and register_post_accumulate_grad_hook.
require("torch._warnings").install(torch)
require("torch._determinism").install(torch)
require("torch._python_utils").install(torch)
require("torch._unique").install(torch, T.Tensor)
require("torch._linalg_python").install(torch, T.Tensor)
require("torch._tensor_python").install(T.Tensor)

return torch
