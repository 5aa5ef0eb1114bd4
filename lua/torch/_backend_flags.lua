--[[
  torch._backend_flags — torch.backends' switches as PyTorch 2.11 spells them, set in libtorch's
  global context (bindings/lt_cuda.cpp) and read back from it:

      torch.backends.cudnn.benchmark = true          -- enabled, deterministic, allow_tf32,
      print(torch.backends.cudnn.benchmark)          --   benchmark_limit, fp32_precision
      torch.backends.cuda.matmul.allow_tf32 = true   -- allow_fp16_reduced_precision_reduction
                                                     --   (true, or {allow, allow_split_k}), ...
      torch.backends.mkldnn.enabled = false
      torch.backends.cudnn.flags({benchmark = true}, function() ... end)   -- PyTorch's `with flags(...)`
      torch.backends.cuda.enable_flash_sdp(false); torch.backends.cuda.preferred_linalg_library("cusolver")

  A flag is an assignment, as in PyTorch. One deliberate difference: assigning a name the table
  does not know (`torch.backends.cudnn.benchmarkk = true`) is an error here, where PyTorch would
  quietly add an attribute that changes nothing; a typo must not silently do nothing. Reading an
  unknown name is an error too (PyTorch's AttributeError). A flag takes PyTorch's value type (a
  boolean, an integer limit, a precision name) and anything else is an error, as PyTorch's setters
  raise. Without a GPU the switches still set and read back, as PyTorch's do: they are libtorch's
  process-wide settings, consulted when a CUDA kernel is chosen.

  Usage (internal): require("torch._backend_flags").install(torch), from torch.backends.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local args = require "torch._args"

local C = _C.C
local M = {}

local function pack(...) return { n = select("#", ...), ... } end

local out64 = ffi.new("int64_t[1]")
local precision_buf = ffi.new("char[16]")

local function check(status, level)
  if status ~= 0 then error(_C.last_error(), level + 1) end
end

local function get_flag(which) check(C.lt_backend_flag_get(which, out64), 3); return tonumber(out64[0]) end
local function set_flag(which, v) check(C.lt_backend_flag_set(which, v), 3) end

-- A boolean flag: { get, set } calling libtorch with PyTorch's type check.
local function bool_flag(name, which)
  return {
    get = function() return get_flag(which) ~= 0 end,
    set = function(v)
      if type(v) ~= "boolean" then error(("%s expects a boolean, got %s"):format(name, args.typename(v)), 3) end
      set_flag(which, v and 1 or 0)
    end,
  }
end

-- allow_fp16/bf16_reduced_precision_reduction: a boolean, or {allow_reduced_precision[, allow_split_k]}.
local function reduction_flag(name, which)
  return {
    get = function() return get_flag(which) ~= 0 end,
    set = function(v)
      local allow, split = v, true
      if type(v) == "table" then
        if #v < 1 or #v > 2 then error(("%s expects one or two booleans, got %d"):format(name, #v), 3) end
        allow, split = v[1], v[2] == nil or v[2]
      end
      if type(allow) ~= "boolean" or type(split) ~= "boolean" then
        error(("%s expects a boolean or {allow_reduced_precision, allow_split_k} booleans"):format(name), 3)
      end
      set_flag(which, (allow and 1 or 0) + (split and 2 or 0))
    end,
  }
end

local PRECISIONS = { ieee = true, tf32 = true, bf16 = true, none = true }
local function precision_flag(name, backend, op)
  return {
    get = function()
      check(C.lt_fp32_precision_get(backend, op, precision_buf, 16), 2)
      return ffi.string(precision_buf)
    end,
    set = function(v)
      if not PRECISIONS[v] then
        error(("%s: expected 'ieee', 'tf32', 'bf16' or 'none', got %s"):format(name,
          type(v) == "string" and ("'" .. v .. "'") or args.typename(v)), 3)
      end
      check(C.lt_fp32_precision_set(backend, op, v), 2)
    end,
  }
end

--[[ A namespace whose `flags` are read and assigned through libtorch and whose `fns` are plain
     values; any other name read or assigned is an error naming the namespace. ]]
function M.namespace(name, flags, fns)
  return setmetatable({}, {
    __index = function(_, k)
      local f = flags[k]
      if f then return f.get() end
      local v = fns[k]
      if v == nil then error(("%s has no attribute '%s'"):format(name, tostring(k)), 2) end
      return v
    end,
    __newindex = function(_, k, v)
      local f = flags[k]
      if f == nil then
        error(("%s has no flag '%s' (an unknown name is an error in ltorch, where PyTorch would add an unused " ..
          "attribute)"):format(name, tostring(k)), 2)
      end
      f.set(v)
    end,
    __tostring = function() return "<module '" .. name .. "'>" end,
  })
end

local F = C
local CUDNN = "torch.backends.cudnn"
local cudnn_flags = {
  enabled = bool_flag(CUDNN .. ".enabled", F.LT_FLAG_CUDNN_ENABLED),
  benchmark = bool_flag(CUDNN .. ".benchmark", F.LT_FLAG_CUDNN_BENCHMARK),
  deterministic = bool_flag(CUDNN .. ".deterministic", F.LT_FLAG_CUDNN_DETERMINISTIC),
  allow_tf32 = bool_flag(CUDNN .. ".allow_tf32", F.LT_FLAG_CUDNN_ALLOW_TF32),
  benchmark_limit = {
    get = function() return get_flag(F.LT_FLAG_CUDNN_BENCHMARK_LIMIT) end,
    set = function(v)
      if not args.is_int(v) or v < 0 or v >= 2 ^ 31 then
        error(CUDNN .. ".benchmark_limit expects a non-negative integer, got " .. tostring(v), 3)
      end
      set_flag(F.LT_FLAG_CUDNN_BENCHMARK_LIMIT, v)
    end,
  },
  fp32_precision = precision_flag(CUDNN .. ".fp32_precision", "cuda", "all"),
}

local MATMUL = "torch.backends.cuda.matmul"
local matmul_flags = {
  allow_tf32 = bool_flag(MATMUL .. ".allow_tf32", F.LT_FLAG_MATMUL_ALLOW_TF32),
  allow_fp16_reduced_precision_reduction = reduction_flag(MATMUL .. ".allow_fp16_reduced_precision_reduction",
    F.LT_FLAG_MATMUL_FP16_REDUCTION),
  allow_bf16_reduced_precision_reduction = reduction_flag(MATMUL .. ".allow_bf16_reduced_precision_reduction",
    F.LT_FLAG_MATMUL_BF16_REDUCTION),
  allow_fp16_accumulation = bool_flag(MATMUL .. ".allow_fp16_accumulation", F.LT_FLAG_MATMUL_FP16_ACCUMULATION),
  fp32_precision = precision_flag(MATMUL .. ".fp32_precision", "cuda", "matmul"),
}
-- the split-k halves read back; they are set with the pair form of the flag above
matmul_flags.allow_fp16_reduced_precision_reduction_split_k = {
  get = function() return get_flag(F.LT_FLAG_MATMUL_FP16_SPLIT_K) ~= 0 end,
  set = function() error(MATMUL .. ".allow_fp16_reduced_precision_reduction_split_k is read-only: assign " ..
    "allow_fp16_reduced_precision_reduction = {allow, allow_split_k}", 3) end,
}
matmul_flags.allow_bf16_reduced_precision_reduction_split_k = {
  get = function() return get_flag(F.LT_FLAG_MATMUL_BF16_SPLIT_K) ~= 0 end,
  set = function() error(MATMUL .. ".allow_bf16_reduced_precision_reduction_split_k is read-only: assign " ..
    "allow_bf16_reduced_precision_reduction = {allow, allow_split_k}", 3) end,
}

-- torch.backends.fp32_precision: the generic backend's setting for every op
M.top_level = { fp32_precision = precision_flag("torch.backends.fp32_precision", "generic", "all") }

local MKLDNN = "torch.backends.mkldnn"
local mkldnn_flags = {
  enabled = bool_flag(MKLDNN .. ".enabled", F.LT_FLAG_MKLDNN_ENABLED),
  deterministic = bool_flag(MKLDNN .. ".deterministic", F.LT_FLAG_MKLDNN_DETERMINISTIC),
  fp32_precision = precision_flag(MKLDNN .. ".fp32_precision", "mkldnn", "all"),
}

--[[ PyTorch's `with torch.backends.cudnn.flags(...)`: sets every flag of `names` (from opts, else
     PyTorch's default for flags()), runs fn, and restores the previous values even if fn raises. ]]
local function flags_context(ns_name, flags, defaults)
  return function(opts, fn)
    if type(opts) == "function" and fn == nil then opts, fn = {}, opts end
    opts = args.opt_table(ns_name .. ".flags", 1, opts) or {}
    if type(fn) ~= "function" then args.bad(ns_name .. ".flags", 2, "function", args.typename(fn)) end
    for k in pairs(opts) do
      if defaults[k] == nil then error(("%s.flags: unknown flag '%s'"):format(ns_name, tostring(k)), 2) end
    end
    local saved = {}
    for k in pairs(defaults) do saved[k] = flags[k].get() end
    local ok, err = pcall(function()
      for k, d in pairs(defaults) do
        local v = opts[k]
        if v == nil then v = d end
        flags[k].set(v)
      end
    end)
    if not ok then
      for k, v in pairs(saved) do flags[k].set(v) end
      error(err, 2)
    end
    local res = pack(pcall(fn))
    for k, v in pairs(saved) do flags[k].set(v) end
    if not res[1] then error(res[2], 0) end
    return unpack(res, 2, res.n)
  end
end

-- set_flags({benchmark = true, ...}): sets the given flags only; returns the previous values.
local function set_flags(ns_name, flags)
  return function(opts)
    opts = args.opt_table(ns_name .. ".set_flags", 1, opts) or {}
    local old = {}
    for k in pairs(flags) do old[k] = flags[k].get() end
    for k, v in pairs(opts) do
      local key = type(k) == "string" and k:gsub("^_", "") or k
      if flags[key] == nil then error(("%s.set_flags: unknown flag '%s'"):format(ns_name, tostring(k)), 2) end
      flags[key].set(v)
    end
    return old
  end
end

local LINALG = { [0] = "default", "cusolver", "magma" }
local BLAS = { [0] = "default", "cublas", "cublaslt", "ck" }
local function library_switch(fname, which, names, aliases)
  return function(backend)
    if backend ~= nil then
      local code
      for i = 0, #names do if names[i] == backend or aliases[backend] == i then code = i end end
      if code == nil then
        error(("%s: unknown backend %s"):format(fname, type(backend) == "string" and ("'" .. backend .. "'")
          or args.typename(backend)), 2)
      end
      set_flag(which, code)
    end
    return names[get_flag(which)]
  end
end

local function sdp_switch(which, fname)
  return function(enabled)
    if type(enabled) ~= "boolean" then args.bad(fname, 1, "boolean", args.typename(enabled)) end
    set_flag(which, enabled and 1 or 0)
  end
end
local function sdp_query(which) return function() return get_flag(which) ~= 0 end end

function M.install(torch, backends)
  local cudnn_fns = backends.cudnn
  cudnn_fns.flags = flags_context(CUDNN, cudnn_flags, { enabled = false, benchmark = false,
    benchmark_limit = 10, deterministic = false, allow_tf32 = true, fp32_precision = "none" })
  cudnn_fns.set_flags = set_flags(CUDNN, cudnn_flags)
  cudnn_fns.is_acceptable = function(t)
    if not torch.is_tensor(t) then args.bad("torch.backends.cudnn.is_acceptable", 1, "Tensor", args.typename(t)) end
    if not cudnn_flags.enabled.get() or t.device.type ~= "cuda" then return false end
    local d = t.dtype
    return (d == torch.float16 or d == torch.bfloat16 or d == torch.float32 or d == torch.float64)
      and cudnn_fns.is_available()
  end
  cudnn_fns.conv = M.namespace(CUDNN .. ".conv", { fp32_precision = precision_flag(CUDNN .. ".conv.fp32_precision",
    "cuda", "conv") }, {})
  cudnn_fns.rnn = M.namespace(CUDNN .. ".rnn", { fp32_precision = precision_flag(CUDNN .. ".rnn.fp32_precision",
    "cuda", "rnn") }, {})
  backends.cudnn = M.namespace(CUDNN, cudnn_flags, cudnn_fns)

  local cuda_fns = backends.cuda
  cuda_fns.matmul = M.namespace(MATMUL, matmul_flags, {})
  cuda_fns.preferred_linalg_library = library_switch("torch.backends.cuda.preferred_linalg_library",
    F.LT_FLAG_LINALG_BACKEND, LINALG, {})
  cuda_fns.preferred_blas_library = library_switch("torch.backends.cuda.preferred_blas_library",
    F.LT_FLAG_BLAS_BACKEND, BLAS, { hipblaslt = 2 })
  for _, s in ipairs { { "flash", F.LT_FLAG_SDP_FLASH }, { "mem_efficient", F.LT_FLAG_SDP_MEM_EFFICIENT },
    { "math", F.LT_FLAG_SDP_MATH }, { "cudnn", F.LT_FLAG_SDP_CUDNN } } do
    cuda_fns["enable_" .. s[1] .. "_sdp"] = sdp_switch(s[2], "torch.backends.cuda.enable_" .. s[1] .. "_sdp")
    cuda_fns[s[1] .. "_sdp_enabled"] = sdp_query(s[2])
  end
  cuda_fns.allow_fp16_bf16_reduction_math_sdp = sdp_switch(F.LT_FLAG_SDP_FP16_BF16_REDUCTION_MATH,
    "torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp")
  cuda_fns.fp16_bf16_reduction_math_sdp_allowed = sdp_query(F.LT_FLAG_SDP_FP16_BF16_REDUCTION_MATH)
  backends.cuda = M.namespace("torch.backends.cuda", {}, cuda_fns)

  backends.mkldnn = M.namespace(MKLDNN, mkldnn_flags, {
    is_available = function() return get_flag(F.LT_FLAG_HAS_MKLDNN) ~= 0 end,
    flags = flags_context(MKLDNN, mkldnn_flags, { enabled = false, deterministic = false, fp32_precision = "none" }),
    set_flags = set_flags(MKLDNN, mkldnn_flags),
  })
  backends.openmp = { is_available = function() return get_flag(F.LT_FLAG_HAS_OPENMP) ~= 0 end }
  backends.mkl = { is_available = function() return get_flag(F.LT_FLAG_HAS_MKL) ~= 0 end }
end

return M
